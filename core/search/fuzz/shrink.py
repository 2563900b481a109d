"""Shrinking a failing schedule: delta debugging over its actions, keeping their instants,
to the fewest that still show the failure."""

import math
from collections.abc import Sequence

from core.search.fuzz.generate import Failure, Schedule, Timed
from core.search.fuzz.replay import replay
from core.sim.simulation import IN_MEMORY

# Replays one shrink may spend; shrinking stops early (still valid, less small) past this.
MAX_SHRINK_REPLAYS = 400


class _Shrinker:
    def __init__(self, schedule: Schedule, failure: Failure, database: str) -> None:
        self.settings = schedule.settings
        self.failure = failure
        self.database = database
        self.end_ms = schedule.end_ms
        self.replays = 0

    def test(self, items: Sequence[Timed]) -> tuple[Timed, ...] | None:
        """The smaller schedule (refused actions dropped, cut at the failure), or None."""
        if self.replays >= MAX_SHRINK_REPLAYS:
            return None
        self.replays += 1
        schedule = Schedule(self.settings, tuple(items), self.end_ms)
        got = replay(schedule, self.failure, self.database)
        if not got.shows:
            return None
        if got.at_ms is not None and got.at_ms < self.end_ms:
            self.end_ms = got.at_ms
        return tuple(x for x in got.kept if x[0] <= self.end_ms)

    def ddmin(self, items: tuple[Timed, ...]) -> tuple[Timed, ...]:
        """Zeller's delta debugging over the actions, then one-at-a-time removal."""
        empty = self.test(())
        if empty is not None:
            return empty
        n = 2
        while len(items) >= 2:
            size = math.ceil(len(items) / n)
            chunks = [items[i : i + size] for i in range(0, len(items), size)]
            reduced = False
            for i in range(len(chunks)):
                for candidate in (
                    chunks[i],
                    tuple(x for j, c in enumerate(chunks) if j != i for x in c),
                ):
                    smaller = self.test(candidate)
                    if smaller is not None and len(smaller) < len(items):
                        items, reduced = smaller, True
                        n = max(2, n - 1) if candidate is not chunks[i] else 2
                        break
                if reduced:
                    break
            if not reduced:
                if n >= len(items):
                    break
                n = min(len(items), 2 * n)
        i = 0
        while i < len(items):
            smaller = self.test(items[:i] + items[i + 1 :])
            if smaller is not None and len(smaller) < len(items):
                items = smaller
            else:
                i += 1
        return items


def shrink(schedule: Schedule, failure: Failure, database: str = IN_MEMORY) -> tuple[Schedule, int]:
    """The fewest actions (at their original instants) that still show the failure."""
    shrinker = _Shrinker(schedule, failure, database)
    first = shrinker.test(schedule.timed)
    if first is None:  # pragma: no cover - the simulation is deterministic
        return schedule, shrinker.replays
    items = shrinker.ddmin(first)
    # Trim the end once more, now that the failure may show earlier.
    final = shrinker.test(items) or items
    return Schedule(schedule.settings, final, shrinker.end_ms), shrinker.replays
