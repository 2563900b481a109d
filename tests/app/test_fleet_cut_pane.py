"""A pane the grid's edge cuts in two still says what its worker does now.

At 100 x 30 the fleet's grid of panes (45% of the screen) shows the first row of panes whole
and the top of the second. A pane is drawn while any line of it is in sight: drawn only while
its ticking lines were, the cut pane kept the head it first had ("idle, holds no lease")
while the task table beside it showed the worker at work.
"""

from pathlib import Path

import pytest

from core.engine.config import LeaseConfig
from core.fleet.frame import FleetFrame
from core.sim.snapshot import Snapshot, WorkerView
from core.sim.spec import WorkerState
from demo.screens.fleet import FleetScreen
from demo.widgets.worker_pane import WorkerGrid
from tests.app.apps import FleetHost

WORKERS = ("acheng", "linzhou", "elder")


def _frame(working: bool) -> FleetFrame:
    def view(n: int, w: str) -> WorkerView:
        if not working:
            return WorkerView(w, WorkerState.IDLE, True, None, None, None, None, None, None, None)
        return WorkerView(w, WorkerState.WORKING, True, f"t{n + 1}", 2, 1, n + 1, 4000, 4000, 500)

    views = tuple(view(n, w) for n, w in enumerate(WORKERS))
    snap = Snapshot(1000, "correct", (), views, (), (), (), ())
    pids: dict[str, int | None] = {w: 100 + n for n, w in enumerate(WORKERS)}
    return FleetFrame(snap, pids, frozenset(WORKERS), {}, {}, (), (), ())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_pane_cut_by_the_grids_edge_says_what_its_worker_does_now(lang: str) -> None:
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=6000))
    async with FleetHost(screen).run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen.show_frame(_frame(working=False))
        await pilot.pause()
        screen.show_frame(_frame(working=True))
        await pilot.pause()
        grid = screen.query_one("#workers", WorkerGrid)
        elder = grid.panes["elder"]
        seen = grid.scrollable_content_region
        # the premise: the grid's edge cuts elder's pane, its head in sight, its bars not
        assert elder.region.y < seen.bottom < elder.region.bottom - 4
        head = elder.text.plain.splitlines()
        assert head[0] == ("working" if lang == "en" else "工作中")
        assert "t3" in head[1] or "任务 3" in head[1]


@pytest.mark.parametrize(("size", "short"), [((80, 24), True), ((100, 30), False)])
async def test_the_screen_never_scrolls_its_key_bar_under_a_scrollbar(
    size: tuple[int, int], short: bool
) -> None:
    """At 80 x 24 the header's note, the panes, the task table and the lower panels came to
    a row more than the screen: the screen scrolled, and its scrollbar covered the key bar's
    last word ("q 退"). A short screen leaves the note to the help page instead."""
    screen = FleetScreen(None, "zh", Path("."), live=False, config=LeaseConfig(ttl_ms=6000))
    async with FleetHost(screen).run_test(size=size) as pilot:
        await pilot.pause()
        screen.show_frame(_frame(working=True))
        await pilot.pause()
        assert not screen.show_vertical_scrollbar
        assert screen.max_scroll_y == 0
        note = screen.query_one("#fleet-note")
        assert note.display is (not short)
        keybar = screen.query_one("#keybar")
        assert keybar.region.width == size[0]
