"""The store on SQLite (`python -m bench store`): its hot path against raw sqlite3, and claim
cost vs history.

(a) The cycle claim + 3 heartbeats + complete, per task, for 2,000 tasks on a file database
    (WAL, synchronous=NORMAL): through the core on the AsyncSqliteDriver (production), through
    the core on the InlineDriver (reference), and the same compiled statements, event rows,
    database-clock reads and fence-counter bumps included, run by raw sqlite3 in the same way
    (one transaction per operation).
(b) The time of one claim with 1,000 and with 20,000 finished tasks in the table.

The section's last line is `ratio core/raw: 0.NN` (core on AsyncSqliteDriver over raw sqlite3).
"""

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.results import record
from core.engine.backends import sqlite as backend
from core.engine.clock import DatabaseClock
from core.engine.policies import Policy
from core.engine.records import dump_json
from core.engine.statements import statements_for
from core.engine.store import LeaseStore

TASKS = 2_000
HEARTBEATS = 3
ROUNDS = 5  # each side runs this many times, interleaved; the best round counts
CLAIM_HISTORY = (1_000, 20_000)
CLAIM_SAMPLES = 400
CLAIM_LIMIT = 1.5  # the 20,000 figure must stay within this factor of the 1,000 figure
RATIO_TARGET = 0.35


# -- (a) the cycle ----------------------------------------------------------------------------


def _task_ids(n: int) -> list[str]:
    return [f"task-{i:05d}" for i in range(n)]


async def _core_cycle(store: LeaseStore, n: int) -> float:
    for task_id in _task_ids(n):
        await store.enqueue(task_id)
    start = time.perf_counter()
    for _ in range(n):
        lease = await store.claim("bench-worker")
        assert lease is not None
        for _ in range(HEARTBEATS):
            lease = await store.heartbeat(lease)
        await store.complete(lease, None)
    return n / (time.perf_counter() - start)


def core_async(folder: Path, n: int) -> float:
    async def run() -> float:
        store = await LeaseStore.open_async(folder / "core-async.db", clock=DatabaseClock())
        try:
            return await _core_cycle(store, n)
        finally:
            await store.close()

    return asyncio.run(run())


def core_inline(folder: Path, n: int) -> float:
    async def run() -> float:
        store = LeaseStore.open_inline(folder / "core-inline.db", clock=DatabaseClock())
        try:
            return await _core_cycle(store, n)
        finally:
            await store.close()

    return asyncio.run(run())


def raw_sqlite3(folder: Path, n: int) -> float:
    """The core's statements and event rows, by hand on a plain sqlite3 connection."""
    path = folder / "raw.db"
    conn = backend.connect(path)  # the same PRAGMAs: WAL, synchronous=NORMAL, busy_timeout
    backend.create_schema(conn)
    sql = statements_for(backend.dialect(), Policy())
    ttl, deadline = 60_000, 40_000

    def db_now() -> int:
        return int(sql.now.run(conn)[0][0])

    def txn(fn: Callable[[], Any]) -> Any:
        conn.execute("BEGIN IMMEDIATE")
        result = fn()
        conn.execute("COMMIT")
        return result

    def event(now: int, name: str, row: Any, worker: str | None, **detail: Any) -> None:
        sql.event_insert.run(
            conn,
            {
                "at": now,
                "event": name,
                "task_id": row[0],
                "worker_id": worker,
                "lease_token": row[4],
                "fence_token": row[5],
                "reason": None,
                "detail": dump_json(detail),
            },
        )

    for task_id in _task_ids(n):
        now = db_now()
        params = {
            "task_id": task_id,
            "kind": "ledger",
            "max_attempts": 5,
            "input_payload": "null",
            "now": now,
        }
        conn.execute("BEGIN IMMEDIATE")
        sql.enqueue.run(conn, params)
        conn.execute("COMMIT")

    def claim() -> Any:
        now = db_now()
        p = {"worker_id": "w", "now": now, "judge_now": now, "ttl": ttl, "deadline": deadline}
        row = sql.claim_any.run(conn, p)[0]
        assert sql.fence_issued is not None
        sql.fence_issued.run(conn, {"fence_token": row[5]})
        event(now, "claimed", row, "w", attempt=row[3], expires_at=row[6])
        return row

    def gated(stmt: Any, name: str, row: Any, **extra: Any) -> Any:
        now = db_now()
        p = {
            "task_id": row[0],
            "worker_id": "w",
            "lease_token": row[4],
            "fence_token": row[5],
            "now": now,
            "ttl": ttl,
            "deadline": deadline,
            **extra,
        }
        new = stmt.run(conn, p)[0]
        if name == "renewed":
            event(now, name, new, "w", expires_at=new[6])
        else:
            event(now, name, new, "w")
        return new

    start = time.perf_counter()
    for _ in range(n):
        row = txn(claim)
        for _ in range(HEARTBEATS):
            row = txn(partial(gated, sql.heartbeat, "renewed", row))
        txn(partial(gated, sql.complete, "completed", row, result="null"))
    rate = n / (time.perf_counter() - start)
    done = conn.execute("SELECT count(*) FROM agent_tasks WHERE status = 'done'").fetchone()[0]
    assert done == n, done
    conn.close()
    return rate


def cycle_bench(console: Console) -> float:
    """Print the three rates; return core on the AsyncSqliteDriver over raw sqlite3."""
    sides: dict[str, Callable[[Path, int], float]] = {
        "raw sqlite3 (same statements and event rows)": raw_sqlite3,
        "core, AsyncSqliteDriver (production)": core_async,
        "core, InlineDriver (reference)": core_inline,
    }
    best = dict.fromkeys(sides, 0.0)
    for _ in range(ROUNDS):
        for name, side in sides.items():
            with tempfile.TemporaryDirectory(prefix="bk-bench-") as tmp:
                best[name] = max(best[name], side(Path(tmp), TASKS))
    raw = best["raw sqlite3 (same statements and event rows)"]
    table = Table(
        title=f"claim + {HEARTBEATS} heartbeats + complete, {TASKS:,} tasks, "
        f"file DB (WAL, synchronous=NORMAL), best of {ROUNDS}"
    )
    table.add_column("side")
    table.add_column("cycles/s", justify="right")
    table.add_column("ops/s", justify="right")
    table.add_column("x raw", justify="right")
    for name, rate in best.items():
        table.add_row(name, f"{rate:,.0f}", f"{rate * (HEARTBEATS + 2):,.0f}", f"{rate / raw:.2f}")
    console.print(table)
    core = best["core, AsyncSqliteDriver (production)"]
    inline = best["core, InlineDriver (reference)"]
    cycle = f"claim + {HEARTBEATS} heartbeats + complete, {TASKS:,} tasks, SQLite file"
    record("store", "raw_cycles", f"{cycle}: raw sqlite3, same statements", raw, "per s")
    record("store", "core_cycles", f"{cycle}: core on the AsyncSqliteDriver", core, "per s")
    record(
        "store",
        "ratio",
        f"{cycle}: core on the AsyncSqliteDriver over raw sqlite3",
        round(core / raw, 2),
        "x",
        target=RATIO_TARGET,
        aim="at least",
    )
    record(
        "store",
        "inline_ratio",
        f"{cycle}: core on the InlineDriver over raw sqlite3",
        round(inline / raw, 2),
        "x",
    )
    return core / raw


# -- (b) claim cost against history -----------------------------------------------------------


def _fill_history(path: Path, finished: int, queued: int) -> None:
    """`finished` done tasks (each claimed once) and `queued` tasks waiting, written fast."""
    conn = backend.connect(path)
    backend.create_schema(conn)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO agent_tasks (task_id, kind, status, owner_id, attempt, max_attempts,"
        " lease_token, fence_token, result, updated_at)"
        " VALUES (?, 'ledger', 'done', 'old-worker', 1, 5, 1, ?, 'null', ?)",
        ((f"done-{i:06d}", i + 1, i) for i in range(finished)),
    )
    conn.executemany(
        "INSERT INTO agent_tasks (task_id, kind, status, attempt, max_attempts,"
        " lease_token, fence_token, input_payload, updated_at, queue_seq)"
        " VALUES (?, 'ledger', 'queued', 0, 5, 0, 0, 'null', ?, ?)",
        ((f"queued-{i:06d}", finished + i, i + 1) for i in range(queued)),
    )
    # The done tasks drew fence tokens 1..finished: so did the counter.
    conn.execute("UPDATE fence_counter SET value = ?", (finished,))
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def _claim_median_us(path: Path, aio: bool, samples_wanted: int) -> float:
    async def run() -> float:
        if aio:
            store = await LeaseStore.open_async(path, clock=DatabaseClock())
        else:
            store = LeaseStore.open_inline(path, clock=DatabaseClock())
        samples = []
        try:
            for _ in range(samples_wanted):
                start = time.perf_counter()
                lease = await store.claim("bench-worker")
                samples.append(time.perf_counter() - start)
                assert lease is not None
        finally:
            await store.close()
        return statistics.median(samples) * 1e6

    return asyncio.run(run())


def claim_growth_bench(console: Console) -> float:
    """Print the median claim time per history size; return the growth factor.

    The verdict uses the InlineDriver, where the claim's own SQL is the whole cost; the
    AsyncSqliteDriver runs uncontended transactions on the loop too, so its figures match.
    """
    # The sizes take turns, twice, and each keeps its lower median: a burst of load on the
    # machine then cannot land on one size only.
    medians: dict[int, tuple[float, float]] = {
        n: (float("inf"), float("inf")) for n in CLAIM_HISTORY
    }
    quarter = CLAIM_SAMPLES // 4
    with tempfile.TemporaryDirectory(prefix="bk-bench-") as tmp:
        for n in CLAIM_HISTORY:
            _fill_history(Path(tmp) / f"history-{n}.db", n, CLAIM_SAMPLES)
        for _ in range(2):
            for n in CLAIM_HISTORY:
                path = Path(tmp) / f"history-{n}.db"
                inline_us = _claim_median_us(path, aio=False, samples_wanted=quarter)
                aio_us = _claim_median_us(path, aio=True, samples_wanted=quarter)
                medians[n] = (min(medians[n][0], inline_us), min(medians[n][1], aio_us))
    low, high = (medians[n][0] for n in CLAIM_HISTORY)
    growth = high / low
    table = Table(title=f"one claim, lower of two medians of {quarter}")
    table.add_column("finished tasks in the table", justify="right")
    table.add_column("InlineDriver (us)", justify="right")
    table.add_column("AsyncSqliteDriver (us)", justify="right")
    for n, (inline_us, aio_us) in medians.items():
        table.add_row(f"{n:,}", f"{inline_us:,.0f}", f"{aio_us:,.0f}")
    console.print(table)
    aio_growth = medians[CLAIM_HISTORY[1]][1] / medians[CLAIM_HISTORY[0]][1]
    verdict = "ok" if growth <= CLAIM_LIMIT else "TOO SLOW"
    console.print(
        f"claim {CLAIM_HISTORY[1]:,} / {CLAIM_HISTORY[0]:,} finished: {growth:.2f}x "
        f"(AsyncSqliteDriver {aio_growth:.2f}x; limit {CLAIM_LIMIT}x) {verdict}"
    )
    for n in CLAIM_HISTORY:
        record(
            "store",
            f"claim_{n}",
            f"one claim with {n:,} finished tasks in the table (InlineDriver, median)",
            round(medians[n][0]),
            "us",
        )
    record(
        "store",
        "claim_growth",
        f"one claim with {CLAIM_HISTORY[1]:,} finished tasks over one with {CLAIM_HISTORY[0]:,}",
        round(growth, 2),
        "x",
        target=CLAIM_LIMIT,
        aim="at most",
    )
    return growth


def hop_us() -> float:
    """One round trip to a one-thread executor doing nothing: what the AsyncSqliteDriver's
    transaction pays when it must wait on its thread."""

    async def run() -> float:
        thread = ThreadPoolExecutor(max_workers=1)
        loop = asyncio.get_running_loop()
        try:
            samples = []
            for _ in range(2_000):
                start = time.perf_counter()
                await loop.run_in_executor(thread, lambda: None)
                samples.append(time.perf_counter() - start)
        finally:
            thread.shutdown()
        return statistics.median(samples) * 1e6

    return asyncio.run(run())


# -- the section ---------------------------------------------------------------------------------


def store_bench(console: Console) -> None:
    """The store on SQLite: the cycle against raw sqlite3, and one claim against history."""
    hop = hop_us()
    record("store", "hop", "one round trip to a thread doing nothing (median)", round(hop), "us")
    console.print(
        f"thread round trip (no-op), median: {hop:.0f} us "
        "(20-130 us seen on this VM, by its load; the core pays it only when another "
        "connection holds the lock)"
    )
    ratio = cycle_bench(console)
    claim_growth_bench(console)
    verdict = "ok" if ratio >= RATIO_TARGET else "below target"
    console.print(
        f"core on AsyncSqliteDriver reaches {ratio:.2f} of raw sqlite3 "
        f"(target {RATIO_TARGET}): {verdict}"
    )
    sys.stdout.flush()
    print(f"ratio core/raw: {ratio:.2f}")


if __name__ == "__main__":
    store_bench(Console())
