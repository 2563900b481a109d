"""The twin modes on screen: the panes and the task table of a run and its twin."""

from pathlib import Path

from core.scenarios.format import load_scenario
from tests.sim.test_mode_twins import SCENARIOS


async def test_panes_and_table_show_the_renew_deadline_and_a_task_with_no_version(
    tmp_path: Path,
) -> None:
    from demo.app import BorrowedKeysApp
    from demo.screens.main import MainScreen
    from demo.widgets.task_table import task_row
    from demo.widgets.worker_pane import WorkerGrid

    def body(app: BorrowedKeysApp, worker: str) -> str:
        assert isinstance(app.screen, MainScreen)
        pane = app.screen.query_one("#workers", WorkerGrid).panes[worker]
        return pane.text.plain

    app = BorrowedKeysApp(
        load_scenario(SCENARIOS / "17_self_fencing.toml"),
        open_directly=True,
        live_clock=False,
        save_dir=tmp_path,
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert "self-fencing" in body(app, "acheng")
        assert "renew by 0:01:00" in body(app, "acheng")
        assert "renew by 0:01:00" in body(app, "linzhou")
        assert "self-fencing" not in body(app, "linzhou")

    app = BorrowedKeysApp(
        load_scenario(SCENARIOS / "07_mistake_no_expiry.toml"),
        open_directly=True,
        live_clock=False,
        save_dir=tmp_path,
        lang="zh",
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        text = body(app, "acheng")
        assert "无过期、无版本" in text and "租约 " not in text and "续约截止" not in text
        assert isinstance(app.screen, MainScreen)
        view = app.screen.session.snapshot().task("floor6")
        assert view is not None
        cells = [str(c) for c in task_row(view, 35_000, "zh")]
        # task, kind, status, owner, attempt, then no lease token, no fence token, no expiry
        assert cells[3:8] == ["阿澄", "1", "", "", ""]  # the story's name, not the id
