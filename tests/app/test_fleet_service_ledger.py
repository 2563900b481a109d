"""Agent work writes to the downstream service: the fleet's Ledger shows the service's
artifacts as its pages, named in the run's language, and marks the one a stale write put
there with the newest fence token beside its own (the harm drawn, as the simulations draw a
page of another world).

The screen is fed a frame (no processes), as `FrameMaker` makes it from the service's books
(`service_pages`, tested on a real service in tests/real/test_agents.py).
"""

import dataclasses
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from core.engine.config import LeaseConfig
from core.engine.records import LedgerRow, TaskRow
from core.fleet.frame import FleetFrame
from core.sim.snapshot import EffectCall, Snapshot, TaskView
from demo.i18n import tr
from demo.screens.fleet import FleetScreen
from demo.widgets.panels import EffectsTable, LedgerTable
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


def _charged(at: int, who: str, step: int, *, replayed: bool, times: int) -> EffectCall:
    return EffectCall(
        at, who, "t1", f"t1/call-{step}", "charge", step, None, replayed, times, 10 * step
    )


@pytest.mark.parametrize(
    ("lang", "called", "again"),
    [
        ("en", "step 2: the payments tool", "✗ charged twice: 2 × 20"),
        ("zh", "第 2 步：调用收费接口", "✗ 扣了两次：2 × 20"),
    ],
)
async def test_the_service_charges_are_the_effects_and_a_second_charge_is_marked(
    lang: str, called: str, again: str
) -> None:
    calls = (
        _charged(4000, "acheng", 2, replayed=False, times=1),
        _charged(9000, "linzhou", 2, replayed=True, times=1),
        _charged(9500, "linzhou", 2, replayed=False, times=2),
    )
    snap = dataclasses.replace(_frame().snap, effect_calls=calls, ledger=(), stale_pages={})
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.query_one("#panels", TabbedContent).active = "tab-effects"
        screen.show_frame(FleetFrame(snap, {}, frozenset(), {}, {}, (), (), ()))
        await pilot.pause()
        table = screen.query_one("#effects", EffectsTable)
        header = [str(c.label) for c in table.columns.values()]
        rows = [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]
        # who asked, by name; the call by its step; no column of blank fence tokens
        assert len(header) == 5 and all(len(r) == 5 for r in rows)
        assert [r[1] for r in rows][:2] == (
            ["Acheng", "Linzhou"] if lang == "en" else ["阿澄", "临舟"]
        )
        assert {r[3] for r in rows} == {called}
        assert rows[2][4] == again
        assert rows[1][4] == tr("effect_answered", lang)  # the redo answered from its key
