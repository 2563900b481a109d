"""Agent work writes to the downstream service: the fleet's Ledger shows the service's
artifacts as its pages, named in the run's language, and marks the one a stale write put
there with the newest fence token beside its own (the harm drawn, as the simulations draw a
page of another world).

The screen is fed a frame (no processes), as `FrameMaker` makes it from the service's books
(`service_pages`, tested on a real service in tests/real/test_agents.py).
"""

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from core.engine.config import LeaseConfig
from core.engine.records import LedgerRow, TaskRow
from core.fleet.frame import FleetFrame
from core.sim.snapshot import Snapshot, TaskView
from demo.screens.fleet import FleetScreen
from demo.widgets.panels import LedgerTable
from tests.app.apps import FleetHost


def _done(task_id: str, owner: str, fence: int) -> TaskView:
    row = TaskRow(
        task_id,
        "tools",
        "done",
        owner,
        2,
        3,
        2,
        fence,
        None,
        None,
        None,
        None,
        None,
        "ok",
        None,
        None,
        9000,
    )
    return TaskView(row, None, 3)


def _frame() -> FleetFrame:
    ledger = (
        LedgerRow("t1/result", '["ch_1"]', 1, "elder", 4000, "t1"),
        LedgerRow("t2/result", '["ch_2"]', 2, "acheng", 9000, "t2"),
    )
    snap = Snapshot(
        10_000,
        "no_fencing",
        (_done("t1", "elder", 1), _done("t2", "linzhou", 9)),
        (),
        ledger,
        (),
        (),
        (),
        stale_pages={"t2/result": "stale_write_accepted"},
    )
    return FleetFrame(snap, {}, frozenset(), {}, {}, (), (), ())


@pytest.mark.parametrize(
    ("lang", "sound", "stale"),
    [("en", "t1/result", "✗ t2/result"), ("zh", "任务 1 的结果", "✗ 任务 2 的结果")],
)
async def test_the_service_artifacts_are_the_ledger_and_the_stale_one_is_marked(
    lang: str, sound: str, stale: str
) -> None:
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.query_one("#panels", TabbedContent).active = "tab-ledger"
        screen.show_frame(_frame())
        await pilot.pause()
        table = screen.query_one("#ledger", LedgerTable)
        rows = [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]
        assert [r[1] for r in rows] == [sound, stale]
        # the sound page's token alone; the stale one's beside the newest its task was issued
        assert rows[0][3] == "1"
        assert rows[1][3] != "2" and "9" in rows[1][3]
