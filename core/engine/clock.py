"""Clocks. The store's clock alone judges lease expiry (the seed's fifth mistake).

All times in the core are integer milliseconds: integers keep virtual runs exact and
replayable byte for byte, and map to BIGINT on any database.
"""

import time
from typing import Protocol


class Clock(Protocol):
    """Anything that can tell the time in integer milliseconds."""

    def now_ms(self) -> int: ...


class RealClock:
    """Wall-clock time, milliseconds since the Unix epoch."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class VirtualClock:
    """A clock that moves only when told; virtual runs start at 0."""

    def __init__(self, start_ms: int = 0) -> None:
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance_to(self, at_ms: int) -> None:
        """Move to an instant; time never runs backwards."""
        if at_ms < self._now:
            raise ValueError(f"virtual time cannot go back from {self._now} to {at_ms}")
        self._now = at_ms

    def advance(self, by_ms: int) -> None:
        self.advance_to(self._now + by_ms)
