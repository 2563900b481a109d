"""Replaying a schedule exactly as its scenario file would, to see whether it still shows
the failure."""

from dataclasses import dataclass

from core.search.fuzz.generate import Failure, Schedule, Timed
from core.sim.simulation import IN_MEMORY, Simulation
from core.sim.spec import Advance


@dataclass(frozen=True, slots=True)
class Replay:
    shows: bool
    at_ms: int | None  # when the failure first showed (violations only)
    kept: tuple[Timed, ...]  # the actions that applied (refused ones do nothing; dropped)


def replay(schedule: Schedule, failure: Failure, database: str = IN_MEMORY) -> Replay:
    """Play a schedule exactly as its scenario file would; does it show the failure?"""
    sim = Simulation(schedule.settings, db_path=database)
    kept: list[Timed] = []
    try:
        now = 0
        for at, action in schedule.timed:
            if at > now:
                sim.apply(Advance(at - now))
                now = at
            if failure.violation is not None and sim.violations().get(failure.violation):
                break
            if sim.apply(action).ok:
                kept.append((at, action))
        if schedule.end_ms > now:
            sim.apply(Advance(schedule.end_ms - now))
        if failure.violation is not None:
            found = [v.at for v in sim.violations_found() if v.name == failure.violation]
            return Replay(bool(found), min(found) if found else None, tuple(kept))
        status = sim.task_statuses().get(failure.task or "")
        return Replay(status == failure.status, None, tuple(kept))
    finally:
        sim.close()
