"""At 80 x 24 the panes are compact and show one row of workers, so that a step's panes keep
their titles (the worker's name) and the task table keeps rows in sight beside the step's
question or panel.

The live clock is off: time moves only by key presses.
"""

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widget import Widget

from demo.screens.main import MainScreen
from demo.widgets.task_table import TaskTable, fit_columns
from demo.widgets.worker_pane import WorkerGrid
from tests.app.apps import at_step, scenario_app


def whole_in(part: Widget, view: Region) -> bool:
    return part.region.height > 0 and view.contains_region(part.region)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_80x24_the_fog_keeps_every_pane_whole_with_its_name(
    tmp_path: Path, lang: str
) -> None:
    app = scenario_app("01_fog", tmp_path, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        for _ in range(8):
            await pilot.press("n")
            await pilot.pause()
            step = screen.session.position
            if step not in (4, 6, 8):
                continue
            body = screen.query_one("#body").region
            grid = screen.query_one("#workers", WorkerGrid)
            for worker_id, pane in grid.panes.items():
                assert whole_in(pane, body), (step, worker_id, pane.region, body)
            table = screen.query_one("#tasks", TaskTable)
            assert whole_in(table, body), (step, table.region, body)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_80x24_three_workers_leave_the_task_table_rows_and_the_chosen_one_in_sight(
    tmp_path: Path, lang: str
) -> None:
    app = scenario_app("14_sandbox", tmp_path, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await at_step(pilot, 1)
        body = screen.query_one("#body").region
        table = screen.query_one("#tasks", TaskTable)
        in_sight = table.region.intersection(body)
        assert in_sight.height >= 2 + 4, (table.region, body)  # its header and four tasks
        grid = screen.query_one("#workers", WorkerGrid)
        for worker_id in ("linzhou", "elder"):
            await pilot.press("w")  # choose the next worker: its pane is scrolled to
            await pilot.pause()
            pane = grid.panes[worker_id]
            assert whole_in(pane, grid.region.intersection(body)), (worker_id, pane.region)
            assert "\n\n" not in pane.text.plain, pane.text.plain  # compact: no blank line


def test_the_roomy_task_table_widens_its_task_column_to_the_names_shown() -> None:
    assert fit_columns(200, "zh", task_cells=10)["task"] >= 10  # "Agent 任务", not "Agent 任"
    assert fit_columns(200, "en")["task"] == 9
