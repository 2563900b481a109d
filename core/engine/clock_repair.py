"""Bringing a SQLite store back after a process whose clock ran ahead wrote to it.

On SQLite each process's own clock judges (see `clock_judge.CLOCK_TOLERANCE_MS`): once a
process whose clock is ahead has written, every process on the machine's clock finds an
instant later than its own and stops, until real time catches up (a year, for a year's
skew). The repair moves the store's newest instant back to the machine's clock by writing
one register line at that instant (the history before it is kept as it was written), and
expires the leases the clock ahead granted, which no process on the machine's clock could
have granted. It refuses while a lease granted on the machine's clock is live: that holder
is working, and nothing about it needs repair.
"""

import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.engine.backends.sqlite import connect, run_write
from core.engine.errors import StoreError
from core.engine.vocabulary import EventKind, TaskStatus

# As the store's own tolerance: an instant this far ahead is another clock's.
TOLERANCE_MS = 500


def instant(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


@dataclass
class Repair:
    """What a repair found and did."""

    now: int
    newest: int | None
    expired: list[str] = field(default_factory=list)  # tasks whose ahead lease it expired
    live: list[tuple[str, str | None, int]] = field(default_factory=list)  # task, owner, until

    @property
    def needed(self) -> bool:
        return self.newest is not None and self.newest - self.now > TOLERANCE_MS


def repair_clock(path: str, *, now_ms: int | None = None) -> Repair:
    """Repair the store at `path` (a SQLite file) if a clock ahead locked it; see above."""
    if not os.path.isfile(path):
        raise StoreError(f"{path}: no such store file")
    conn = connect(path)
    try:

        def body(c: sqlite3.Connection) -> Repair:
            now = now_ms if now_ms is not None else int(time.time() * 1000)
            row = c.execute("SELECT at FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            repair = Repair(now, None if row is None else int(row[0]))
            if not repair.needed:
                return repair
            running = c.execute(
                "SELECT task_id, owner_id, lease_token, fence_token, lease_expires_at "
                "FROM agent_tasks WHERE status = ? AND lease_expires_at IS NOT NULL "
                "AND lease_expires_at >= ?",
                (str(TaskStatus.RUNNING), now),
            ).fetchall()
            ahead = []
            for task_id, owner, lease_token, fence_token, expires in running:
                granted = c.execute(
                    "SELECT max(at) FROM events WHERE task_id = ? AND event IN (?, ?, ?) "
                    "AND lease_token = ?",
                    (
                        task_id,
                        str(EventKind.CLAIMED),
                        str(EventKind.RENEWED),
                        str(EventKind.HEARTBEAT_NOTED),
                        lease_token,
                    ),
                ).fetchone()[0]
                if granted is not None and granted - now > TOLERANCE_MS:
                    ahead.append((task_id, owner, lease_token, fence_token, expires))
                else:
                    repair.live.append((task_id, owner, int(expires)))
            if repair.live:
                return repair  # nothing is changed while a holder on this clock works
            for task_id, owner, lease_token, fence_token, expires in ahead:
                c.execute(
                    "UPDATE agent_tasks SET lease_expires_at = ?, renew_deadline = ? "
                    "WHERE task_id = ?",
                    (now - 1, now - 1, task_id),
                )
                _line(
                    c,
                    now,
                    EventKind.LEASE_EXPIRED,
                    task_id,
                    owner,
                    lease_token,
                    fence_token,
                    {"expired_at": now - 1, "granted_until": int(expires), "by": "repair_clock"},
                )
                repair.expired.append(task_id)
            _line(
                c,
                now,
                EventKind.SKEWED,
                None,
                None,
                None,
                None,
                {"store_clock_from": repair.newest, "store_clock_to": now, "by": "repair_clock"},
            )
            return repair

        return run_write(conn, body)
    finally:
        conn.close()


def _line(
    c: sqlite3.Connection,
    at: int,
    event: EventKind,
    task_id: str | None,
    worker_id: str | None,
    lease_token: int | None,
    fence_token: int | None,
    detail: dict[str, object],
) -> None:
    c.execute(
        "INSERT INTO events (at, event, task_id, worker_id, lease_token, fence_token, reason, "
        "detail) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
        (
            at,
            str(event),
            task_id,
            worker_id,
            lease_token,
            fence_token,
            json.dumps(detail, sort_keys=True, separators=(",", ":")),
        ),
    )
