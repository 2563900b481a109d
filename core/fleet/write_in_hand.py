"""A stall of agent work stopped with its downstream write on its way out (the DDIA fencing
figure: a pause right before the write, which then lands late with its old token).

The simulation's stall freezes a worker with its step, its write included, still to finish;
a SIGSTOP lands wherever the process happens to be. So for agent work whose writes go
through the service's client, the fleet first has the worker hold its next write, then
freezes its renewals, then stops it; `Fleet.resume` lets the write go.
"""

from typing import Protocol

from core.engine.records import EffectRow, LedgerRow, TaskRow
from core.fleet.process import WorkerProcess
from core.fleet.settings import FleetSettings


class _Fleet(Protocol):
    """What the question needs of a `Fleet` (which imports this module)."""

    settings: FleetSettings
    workers: dict[str, WorkerProcess]

    def newest(
        self, finished: int, pages: int, effects: int
    ) -> tuple[list[TaskRow], list[LedgerRow], list[EffectRow], dict[str, int]]: ...


# Agent work whose downstream writes the service's client can hold on their way out (a
# stall can stop the worker with one): its own writes, and a browser walk's form submit.
HELD_WORK = ("tools", "approval", "browser")


def writes_through_service(fleet: _Fleet, worker_id: str) -> bool:
    """Whether the worker's next downstream write is one the service's client can hold,
    which its control channel asks for: every agent work's (a browser walk's form submit
    waits at the client before it is sent)."""
    work = fleet.settings.work
    if work is None or fleet.settings.service_url is None:
        return False
    if work == "mixed":  # by the kind of the task it holds (none held: as ever)
        task = fleet.workers[worker_id].belief.task
        kinds = {r.task_id: r.kind for r in fleet.newest(0, 0, 0)[0]}  # those still to do
        work = kinds.get(task or "")
    return work in HELD_WORK


def stop_with_write(
    w: WorkerProcess, bound_s: float, stalling: set[str], called_off_ids: set[str]
) -> None:
    """Have the worker keep its next downstream write on its way out, then freeze its
    renewals: it says `frozen` once none is on its way, so the SIGSTOP after it finds no
    transaction open (on SQLite a stopped process holding the write lock would stop
    every other worker too). Each wait is bounded by `bound_s` (a lease length); a resume
    meanwhile (its id in `called_off_ids`) calls it off."""
    wid = w.worker_id

    def called_off() -> bool:
        return not w.alive or wid in called_off_ids

    mark = w.said_count
    stalling.add(wid)
    try:
        if not w.hold_writes():
            return
        held = w.wait_for(lambda line: line.get("line") == "write_held", bound_s, mark, called_off)
        if held is None or called_off():
            w.send_writes()  # none came in time: the next goes straight through
            return
        w.write_held = held
        if w.freeze():
            w.wait_for(lambda line: line.get("line") == "frozen", bound_s, mark, called_off)
    finally:
        stalling.discard(wid)
