"""Clocks. The store's clock alone judges lease expiry (the seed's fifth mistake).

All times in the core are integer milliseconds: integers keep virtual runs exact and
replayable byte for byte, and map to BIGINT on any database.

A store on real time never judges a lease by the clock of the process that calls it: with a
`DatabaseClock`, `now` is read by SQL inside each transaction (on SQLite the machine's clock,
read under the write lock), so a worker whose clock is skewed changes nothing. Simulations
inject a `VirtualClock` instead.
"""

import os
import tempfile
import time
from typing import Protocol


class Clock(Protocol):
    """Anything that can tell the time in integer milliseconds."""

    def now_ms(self) -> int: ...


class DatabaseClock:
    """Real time as the database tells it; the store reads it inside each transaction.

    `now_ms()` is only this process's wall clock, for a worker's own bookkeeping (when it
    last renewed, what to print); the store never uses it to judge a lease.
    """

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


# The earlier name: real time, for a store, is the database's.
RealClock = DatabaseClock


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


def machine_clock_gap_ms() -> int:
    """This process's clock minus the machine's, in ms (positive: this process is ahead).

    The machine's clock is read as the kernel stamps a file just written: a process can
    have a clock of its own (libfaketime replaces the C library's calls, which SQLite's
    `'now'` goes through too), but a file's times are written by the kernel. On SQLite the
    store's clock is each process's own, so a gap here is a gap in how leases are judged.
    """
    with tempfile.TemporaryFile() as f:
        f.write(b"t")
        f.flush()
        stamped = os.fstat(f.fileno()).st_mtime_ns
    return (time.time_ns() - stamped) // 1_000_000
