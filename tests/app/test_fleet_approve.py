"""The fleet app's `a`: a task parked for a person shows as waiting, and the key approves
it with the store's own approve (the call `borrowed-keys approve TASK --db ...` makes): the
task is queued again and the register says it was approved. No worker process runs: the
task is parked by a lease taken in the test."""

from pathlib import Path

import pytest

from core.engine.clock import DatabaseClock
from core.engine.store import LeaseStore
from core.engine.vocabulary import TaskStatus
from core.fleet.supervisor import Fleet, FleetSettings
from core.sim.simulation import run_inline
from demo.fleet_app import FleetApp
from demo.screens.fleet import FleetScreen
from demo.widgets.keybar import KeyBar, fit


def _status(fleet: Fleet, task: str) -> TaskStatus:
    rows, _, _ = fleet.rows()
    return TaskStatus(next(r.status for r in rows if r.task_id == task))


@pytest.mark.parametrize(
    ("key", "after", "lang", "said"),
    [
        ("a", TaskStatus.QUEUED, "en", "Approved t1: a worker takes it again"),
        ("x", TaskStatus.DEAD, "zh", "已驳回任务 1：它进入死信"),
    ],
)
async def test_a_key_decides_the_waiting_task(
    tmp_path: Path, key: str, after: TaskStatus, lang: str, said: str
) -> None:
    db = str(tmp_path / "approve.db")
    fleet = Fleet(FleetSettings(db=db, ttl_ms=1500, poll_ms=150, steps=2), tmp_path / "logs")
    try:
        (task,) = fleet.enqueue(1)
        store = LeaseStore.open_inline(db, clock=DatabaseClock())
        lease = run_inline(store.claim("acheng"))
        assert lease is not None
        run_inline(store.park(lease))
        run_inline(store.close())
        assert _status(fleet, task) == TaskStatus.WAITING
        app = FleetApp(fleet, lang, tmp_path / "saves")
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            for _ in range(200):
                await pilot.pause(0.05)
                if screen.frame is not None and screen.frame.snap.tasks:
                    break
            assert screen.frame is not None
            assert screen.frame.snap.tasks[0].row.status == TaskStatus.WAITING
            # the bar leads with the keys that answer a waiting task, kept at 80 columns
            shown = fit(screen.query_one("#keybar", KeyBar).items, 80)
            assert [h.key for h in shown[:2]] == ["a", "x"]
            await pilot.press(key)
            for _ in range(200):
                await pilot.pause(0.05)
                if _status(fleet, task) != TaskStatus.WAITING:
                    break
            for _ in range(100):  # the toast follows the store's answer, from its thread
                toasts = [str(n.message) for n in app._notifications]
                if said in toasts:
                    break
                await pilot.pause(0.05)
            # the task by its name, never its id on a Chinese screen
            assert said in toasts
        assert _status(fleet, task) == after
        said = {ev.event for ev in fleet.final_events()}
        assert ("approved" if key == "a" else "rejected") in said
    finally:
        fleet.close()
