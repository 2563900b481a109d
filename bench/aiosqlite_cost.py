"""What aiosqlite would cost the asyncio SQLite path (`python -m bench aiosqlite`).

The design card names aiosqlite for the async SQLite path; the store runs its own
AsyncSqliteDriver there (core/engine/drivers.py). This section measures the two on the same
statements, so the choice rests on a figure:

(a) The lease cycle, claim + 3 heartbeats + complete per task, 2,000 tasks on a file database
    (WAL, synchronous=NORMAL): raw sqlite3 (bench/store.py's side), the same compiled
    statements and event rows through aiosqlite's public API (one `await` per statement, each
    transaction under an asyncio.Lock, since one aiosqlite connection would otherwise let
    another task's statement into an open transaction), and the core on the AsyncSqliteDriver.
(b) Heartbeats at scale: L live leases held by one process, every one of them due at the
    same instant (`asyncio.gather` of L renewals, one transaction and one event row each), on
    aiosqlite and on the core's driver: the time to renew them all and the slowest renewal's
    wait. A renewal that waits longer than the lease's renew deadline is a lease lost.
"""

import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite
from rich.console import Console
from rich.table import Table

from bench.results import record
from bench.store import HEARTBEATS, ROUNDS, TASKS, _task_ids, core_async, raw_sqlite3
from core.engine.backends import sqlite as backend
from core.engine.clock import DatabaseClock
from core.engine.policies import Policy
from core.engine.records import Lease, dump_json
from core.engine.statements import Statements, statements_for
from core.engine.store import LeaseStore

SCALE = (1_000, 10_000)
TTL, DEADLINE = 60_000, 40_000


class AioStatements:
    """The store's compiled statements, run one `await` each on an aiosqlite connection."""

    def __init__(self, conn: aiosqlite.Connection, sql: Statements) -> None:
        self.conn, self.sql = conn, sql
        self.lock = asyncio.Lock()

    async def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        return list(await self.conn.execute_fetchall(sql, params or {}))

    async def txn(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = await fn()
            except BaseException:
                await self.conn.execute("ROLLBACK")
                raise
            await self.conn.execute("COMMIT")
            return result

    async def now(self) -> int:
        return int((await self.rows(self.sql.now.sql))[0][0])

    async def event(self, now: int, name: str, row: Any, **detail: Any) -> None:
        params = {
            "at": now,
            "event": name,
            "task_id": row[0],
            "worker_id": "w",
            "lease_token": row[4],
            "fence_token": row[5],
            "reason": None,
            "detail": dump_json(detail),
        }
        await self.rows(self.sql.event_insert.sql, params)

    async def enqueue(self, task_id: str) -> None:
        async def go() -> None:
            params = {"task_id": task_id, "kind": "ledger", "max_attempts": 5}
            await self.rows(
                self.sql.enqueue.sql, {**params, "input_payload": "null", "now": await self.now()}
            )

        await self.txn(go)

    async def claim(self) -> Any:
        async def go() -> Any:
            now = await self.now()
            p = {"worker_id": "w", "now": now, "judge_now": now, "ttl": TTL, "deadline": DEADLINE}
            row = (await self.rows(self.sql.claim_any.sql, p))[0]
            assert self.sql.fence_issued is not None
            await self.rows(self.sql.fence_issued.sql, {"fence_token": row[5]})
            await self.event(now, "claimed", row, attempt=row[3], expires_at=row[6])
            return row

        return await self.txn(go)

    async def gated(self, which: str, row: Any) -> Any:
        async def go() -> Any:
            now = await self.now()
            p = {
                "task_id": row[0],
                "worker_id": "w",
                "lease_token": row[4],
                "fence_token": row[5],
                "now": now,
                "ttl": TTL,
                "deadline": DEADLINE,
                "result": "null",
            }
            stmt = self.sql.heartbeat if which == "renewed" else self.sql.complete
            found = await self.rows(stmt.sql, p)
            assert found, f"{which} refused"
            await self.event(now, which, found[0], expires_at=found[0][6])
            return found[0]

        return await self.txn(go)


async def _open_aio(path: Path) -> AioStatements:
    backend.create_schema(backend.connect(path))  # the schema and the WAL, as the store's
    conn = await aiosqlite.connect(path, isolation_level=None)
    for pragma in (
        f"PRAGMA busy_timeout = {backend.BUSY_TIMEOUT_MS}",
        "PRAGMA foreign_keys = ON",
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = NORMAL",
    ):
        await conn.execute(pragma)
    return AioStatements(conn, statements_for(backend.dialect(), Policy()))


def aio_cycle(folder: Path, n: int) -> float:
    async def run() -> float:
        aio = await _open_aio(folder / "aio.db")
        try:
            for task_id in _task_ids(n):
                await aio.enqueue(task_id)
            start = time.perf_counter()
            for _ in range(n):
                row = await aio.claim()
                for _ in range(HEARTBEATS):
                    row = await aio.gated("renewed", row)
                await aio.gated("completed", row)
            return n / (time.perf_counter() - start)
        finally:
            await aio.conn.close()

    return asyncio.run(run())


def cycle(console: Console) -> dict[str, float]:
    sides: dict[str, Callable[[Path, int], float]] = {
        "raw sqlite3": raw_sqlite3,
        "aiosqlite (same statements)": aio_cycle,
        "core, AsyncSqliteDriver": core_async,
    }
    best = dict.fromkeys(sides, 0.0)
    for _ in range(ROUNDS):
        for name, side in sides.items():
            with tempfile.TemporaryDirectory(prefix="bk-bench-") as tmp:
                best[name] = max(best[name], side(Path(tmp), TASKS))
    raw = best["raw sqlite3"]
    table = Table(
        title=f"claim + {HEARTBEATS} heartbeats + complete, {TASKS:,} tasks, file DB, "
        f"best of {ROUNDS}"
    )
    for col in ("side", "cycles/s", "x raw"):
        table.add_column(col, justify="left" if col == "side" else "right")
    for name, rate in best.items():
        table.add_row(name, f"{rate:,.0f}", f"{rate / raw:.2f}")
    console.print(table)
    what = f"claim + {HEARTBEATS} heartbeats + complete, {TASKS:,} tasks, SQLite file"
    record(
        "aiosqlite",
        "aio_ratio",
        f"{what}: aiosqlite over raw sqlite3",
        round(best["aiosqlite (same statements)"] / raw, 2),
        "x",
    )
    record(
        "aiosqlite",
        "core_ratio",
        f"{what}: core (AsyncSqliteDriver) over raw sqlite3",
        round(best["core, AsyncSqliteDriver"] / raw, 2),
        "x",
    )
    return best


async def _renew_all(renew: Callable[[int], Awaitable[None]], leases: int) -> tuple[float, float]:
    """Every lease due now: (seconds to renew them all, the slowest renewal's seconds)."""
    start = time.perf_counter()
    slowest = 0.0

    async def one(i: int) -> None:
        nonlocal slowest
        await renew(i)
        slowest = max(slowest, time.perf_counter() - start)

    await asyncio.gather(*(one(i) for i in range(leases)))
    return time.perf_counter() - start, slowest


def aio_scale(folder: Path, leases: int) -> tuple[float, float]:
    async def run() -> tuple[float, float]:
        aio = await _open_aio(folder / "aio-scale.db")
        try:
            for task_id in _task_ids(leases):
                await aio.enqueue(task_id)
            rows = [await aio.claim() for _ in range(leases)]

            async def renew(i: int) -> None:
                rows[i] = await aio.gated("renewed", rows[i])

            return await _renew_all(renew, leases)
        finally:
            await aio.conn.close()

    return asyncio.run(run())


def core_scale(folder: Path, leases: int) -> tuple[float, float]:
    async def run() -> tuple[float, float]:
        store = await LeaseStore.open_async(folder / "core-scale.db", clock=DatabaseClock())
        try:
            for task_id in _task_ids(leases):
                await store.enqueue(task_id)
            held: list[Lease] = []
            for _ in range(leases):
                lease = await store.claim("w")
                assert lease is not None
                held.append(lease)

            async def renew(i: int) -> None:
                held[i] = await store.heartbeat(held[i])

            return await _renew_all(renew, leases)
        finally:
            await store.close()

    return asyncio.run(run())


def scale(console: Console) -> None:
    table = Table(title="every lease due at once, one process, one heartbeat each (file DB)")
    for col in ("leases", "side", "all renewed in", "per heartbeat", "slowest wait"):
        table.add_column(col, justify="left" if col == "side" else "right")
    for leases in SCALE:
        for name, side in (("aiosqlite", aio_scale), ("core, AsyncSqliteDriver", core_scale)):
            with tempfile.TemporaryDirectory(prefix="bk-bench-") as tmp:
                total, slowest = side(Path(tmp), leases)
            table.add_row(
                f"{leases:,}",
                name,
                f"{total:.2f} s",
                f"{total / leases * 1e6:,.0f} µs",
                f"{slowest:.2f} s",
            )
            key = "aio" if name == "aiosqlite" else "core"
            record(
                "aiosqlite",
                f"{key}_heartbeat_us_{leases}",
                f"{leases:,} leases due at once: one heartbeat on {name}",
                round(total / leases * 1e6),
                "µs",
            )
    console.print(table)


def aiosqlite_bench(console: Console) -> None:
    cycle(console)
    scale(console)


if __name__ == "__main__":
    aiosqlite_bench(Console())
    sys.exit(0)
