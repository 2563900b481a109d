"""The fleet screen's Ledger, Rejected, Effects and Event log follow their newest rows as
frames come, and stop following while the presenter has scrolled up to read.

The screen is fed synthetic frames (the saved-run screen, no processes): each frame adds a
page, a refusal, an effect and an event.
"""

from pathlib import Path

import pytest
from textual.scroll_view import ScrollView
from textual.widgets import TabbedContent

from core.engine.config import LeaseConfig
from core.engine.records import EffectRow, EventRow, LedgerRow
from core.engine.vocabulary import Operation
from core.fleet.frame import FleetFrame
from core.sim.snapshot import Rejection, Snapshot
from demo.screens.fleet import FleetScreen
from tests.app.apps import FleetHost


def frame(n: int) -> FleetFrame:
    """The n-th frame: n pages, n refusals, n effects, and the n-th event fresh."""
    ledger = tuple(
        LedgerRow(f"page-{i:03}", f"v{i}", i, "acheng", i * 1000, "t1") for i in range(n)
    )
    refused = tuple(
        Rejection(
            seq=i + 1,
            at=i * 1000,
            worker_id="acheng",
            task_id=f"t{i}",
            operation=Operation.WRITE,
            reason="fenced",
            lease_token=1,
            fence_token=1,
            current_lease_token=2,
            current_fence_token=2,
            key=f"page-{i:03}",
        )
        for i in range(n)
    )
    effects = tuple(
        EffectRow(f"key-{i:03}", f"t{i}", "api_call", 1, {}, i * 1000, 1) for i in range(n)
    )
    event = EventRow(n, n * 1000, "claimed", f"t{n}", "acheng", 1, 1)
    snap = Snapshot(
        now_ms=n * 1000,
        mode="correct",
        tasks=(),
        workers=(),
        ledger=ledger,
        checkpoints=(),
        effects=effects,
        rejections=refused,
        last_event_seq=n,
    )
    return FleetFrame(snap, {}, frozenset(), {}, {}, (), (event,), ())


TABS = [
    ("tab-ledger", "#ledger"),
    ("tab-rejected", "#rejected"),
    ("tab-effects", "#effects"),
    ("tab-events", "#events"),
]


@pytest.mark.parametrize(("tab", "table"), TABS)
async def test_a_table_follows_new_rows_unless_scrolled_up(tab: str, table: str) -> None:
    screen = FleetScreen(None, "en", Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    app = FleetHost(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen.query_one("#panels", TabbedContent).active = tab
        await pilot.pause()
        view = screen.query_one(table, ScrollView)
        frames = iter(range(1, 100))

        async def show(count: int) -> None:
            for _ in range(count):
                screen.show_frame(frame(next(frames)))
                await pilot.pause()
            await pilot.pause()

        await show(39)
        assert view.max_scroll_y > 0, "the rows overflow the panel"
        assert view.scroll_y == view.max_scroll_y, "it follows the newest row"

        view.scroll_home(animate=False)
        await pilot.pause()
        await show(9)
        assert view.scroll_y == 0, "scrolled up to read, it stays where the presenter put it"

        view.scroll_end(animate=False)
        await pilot.pause()
        await show(4)
        assert view.scroll_y == view.max_scroll_y, "back at the end, it follows again"
