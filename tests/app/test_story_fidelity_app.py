"""The story's chapters on screen: no fence before the fence tag, the columns and tabs as
the chapter has them."""

from pathlib import Path

import pytest
from rich.text import Text

from core.scenarios.format import load_scenario
from core.scenarios.player import play, render_line
from core.sim.simulation import Simulation
from core.sim.snapshot import Snapshot
from demo.widgets.panels import _fenced
from demo.widgets.task_table import task_row
from tests.scenarios.test_story_fidelity import path, played


def test_the_ledger_checkpoint_and_effect_columns_drop_the_fence_before_the_fence() -> None:
    sim = played("00_story_3_box")
    snap = sim.snapshot()
    columns = [("key", "key"), ("fence", "fence"), ("writer", "writer")]
    rows = [("a", ("a", "0", "acheng"))]
    assert _fenced(snap, columns, rows) == (
        [("key", "key"), ("writer", "writer")],
        [("a", ("a", "acheng"))],
    )
    fenced = Snapshot(
        now_ms=0,
        mode="correct",
        tasks=(),
        workers=(),
        ledger=(),
        checkpoints=(),
        effects=(),
        rejections=(),
    )
    assert _fenced(fenced, columns, rows) == (columns, rows)
    sim.close()


def test_the_task_is_lendable_again_from_the_instant_its_lease_expires() -> None:
    """ "他把第六层的钥匙状态改成'可再借出'": the table says so until someone claims it."""
    scenario = load_scenario(path("00_story_2_fog"))
    sim = Simulation(scenario.settings)
    words: list[str] = []
    for step in scenario.steps:
        if step.action is not None:
            sim.apply(step.action)
        snap = sim.snapshot()
        view = snap.task("floor6")
        assert view is not None
        cell = task_row(view, snap.now_ms, "zh")[2]
        words.append(cell.plain if isinstance(cell, Text) else str(cell))
    # running while Acheng's sand runs, lendable from 0:01:50 until Linzhou claims it
    lendable = [i for i, w in enumerate(words) if w == "可再借出"]
    assert lendable, words
    claim_step = next(
        i
        for i, s in enumerate(scenario.steps)
        if s.action is not None
        and s.action.name == "claim"
        and getattr(s.action, "worker", "") == "linzhou"
    )
    assert max(lendable) < claim_step and words[claim_step] == "运行中"
    transcript = "".join(t for r in play(scenario) for t, _ in render_line(r, "zh"))
    assert "阿澄在第六层上的租约到期：第六层可再借出" in transcript
    sim.close()


@pytest.mark.parametrize("size", [(160, 50), (200, 60)], ids=str)
async def test_the_app_shows_no_fence_before_the_fence_tag(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The task table, the panes and the Ledger and Checkpoints tabs of chapter 3."""
    from textual.widgets import DataTable

    from core.scenarios.library import open_scenario
    from demo.app import BorrowedKeysApp
    from demo.screens.main import MainScreen
    from demo.widgets.panels import CheckpointTable, LedgerTable
    from demo.widgets.task_table import TaskTable

    app = BorrowedKeysApp(
        open_scenario("00_story_3_box"),
        open_directly=True,
        lang="zh",
        live_clock=False,
        save_dir=tmp_path,
    )
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await pilot.press("n")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        tables = (("0", "#tasks", TaskTable), ("1", "#ledger", LedgerTable))
        for key, where, table in (*tables, ("2", "#checkpoints", CheckpointTable)):
            await pilot.press(key)
            await pilot.pause()
            widget = screen.query_one(where, table)
            labels = [str(c.label) for c in widget.columns.values()]
            assert widget.row_count and not any("围栏" in label for label in labels), labels
            # nor the second panel beside it, on a screen tall enough for one
            for side in screen.query("#side-ledger, #side-rejected").results(DataTable):
                if side.display:
                    cells = [str(c.label) for c in side.columns.values()]
                    cells += [str(v) for r in range(side.row_count) for v in side.get_row_at(r)]
                    assert not any("围栏" in cell for cell in cells), cells
        await pilot.press("3")  # the refused writes chosen: on a tall screen the ledger beside
        await pilot.pause()
        for side in screen.query("#side-ledger").results(DataTable):
            if side.display:
                cells = [str(c.label) for c in side.columns.values()]
                cells += [str(v) for r in range(side.row_count) for v in side.get_row_at(r)]
                assert side.row_count and not any("围栏" in cell for cell in cells), cells
        await pilot.press("0")
        await pilot.pause()
        panes = " ".join(str(w.render()) for w in screen.query(".worker-pane"))
        assert "围栏" not in panes


@pytest.mark.parametrize(
    ("name", "lang", "first", "dedup"),
    [
        ("12_mistake_no_idempotency", "en", "Call", None),
        ("12_mistake_no_idempotency", "zh", "调用", None),
        ("06_tool_calling", "zh", "键", "已去重"),
    ],
)
async def test_the_effects_tab_names_a_call_not_a_key_where_no_key_is_sent(
    tmp_path: Path, name: str, lang: str, first: str, dedup: str | None
) -> None:
    """Without idempotency keys "the effect carries none": the calls are named, not keyed, and
    nothing is deduplicated; with them a repeat is answered from its key."""
    from core.scenarios.library import open_scenario
    from demo.app import BorrowedKeysApp
    from demo.screens.main import MainScreen
    from demo.widgets.panels import EffectsTable

    app = BorrowedKeysApp(
        open_scenario(name), open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        while not screen.session.at_end:
            await pilot.press("v" if screen.session.question is not None else "n")
        await pilot.press("4")
        await pilot.pause()
        table = screen.query_one(EffectsTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert table.row_count and first in labels, labels
        cells = " ".join(str(c) for n in range(table.row_count) for c in table.get_row_at(n))
        assert (dedup in cells) if dedup else not ("去重" in cells or "dedup" in cells)
