"""SQLite's clock as the judge: a process whose clock stands behind an instant already written
to the store is stopped before it writes (`LeaseStore`'s reading of the time)."""

from datetime import UTC, datetime

from core.engine.durations import format_duration
from core.engine.errors import ClockBehind

# "Lease 的时间边界最好由统一的服务端时钟或数据库时钟裁决。否则不同机器各自判断“到没到点”，会
# 把时钟漂移重新带回系统。" SQLite has no server clock: its `'now'` is the clock of the
# process that asks. Processes on one machine read one clock, so an instant already in the
# store (written under the write lock, before ours) is never later than our own; one that
# is, by more than a step of the machine's time service could make, means this process's
# clock is not the others' (libfaketime, a container with its own time namespace, a file
# shared between machines), and nothing it judged about a lease could be trusted.
CLOCK_TOLERANCE_MS = 500


def clock_behind(now: int, newest: int) -> ClockBehind:
    def at(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")

    return ClockBehind(
        f"this process's clock ({at(now)}) is {format_duration(round(newest - now, -3))} "
        f"behind an instant already written to the store ({at(newest)}); on SQLite each "
        f"process's own clock judges leases, so a process whose clock disagrees cannot be "
        f"judged safely (one machine, one clock: use PostgreSQL, whose server clock judges, "
        f"across machines). The store stays so until {at(newest)} by this clock; once the "
        f"process whose clock is ahead has stopped, `borrowed-keys store repair-clock --db "
        f"FILE` brings it back now",
        until=at(newest),
    )
