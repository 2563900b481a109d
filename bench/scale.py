"""Heartbeats as the fleet grows: `python -m bench.scale` (also in `make bench`).

L live leases, held by 4 worker processes, each lease renewed every ttl/3 (20 s with the
default 60 s ttl) while a fifth process claims and completes a trickle of tasks. Three ways
to renew them, each on a fresh table of L leases, one after the other:
- heartbeat_many (the core): each process renews all its leases in one call per interval,
  the four processes a quarter of an interval apart, as processes started apart would;
- heartbeat (the core): one call (one transaction, one event row) per lease, spread evenly
  over the interval, the way a process renewed its leases before `heartbeat_many`;
- bare UPDATE: the same guard (owner, lease token, fence token, status, live by the
  database's clock) as one autocommitted UPDATE per lease, no event row, on the raw driver.
A renewal's latency is its end minus the moment it was due (so a side that falls behind
shows it); a renewal is missed when it ends more than one interval late, or not at all
before the point's time runs out, or is refused. A side keeps up at L when it misses none.
CPU per heartbeat is the holders' own CPU (and, for a PostgreSQL server on this machine, its
processes') over the renewals done.

Per database the last line is `heartbeats: keeps up to L live leases (...)`.

`BK_BENCH_QUICK=1` (or `python -m bench --quick`) measures 1k and 10k leases renewed every
5 s, in about a minute; the full run (1k, 10k, 100k, and 200k on SQLite, every 20 s) takes
several minutes. Every point is bounded in count and in time and touches only loopback (a
file, or the PostgreSQL server of `bench.postgres.server`).
"""

import asyncio
import multiprocessing
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from rich.console import Console
from rich.table import Table

from bench.results import quick, record
from core.engine.backends import POSTGRESQL_CLOCK_MS
from core.engine.backends import postgresql as pg_backend
from core.engine.backends import sqlite as sqlite_backend
from core.engine.clock import DatabaseClock
from core.engine.config import LeaseConfig
from core.engine.errors import LeaseRejected, StoreError
from core.engine.records import Lease
from core.engine.store import LeaseStore

HOLDERS = 4
CLAIMS_PER_S = 20  # the trickle of claims (and completes) beside the renewals
SQLITE_CLOCK_MS = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"


@dataclass(frozen=True)
class Plan:
    levels: tuple[int, ...]
    interval_s: float

    @property
    def config(self) -> LeaseConfig:
        return LeaseConfig(ttl_ms=int(self.interval_s * 3_000))


def plan(database: str) -> Plan:
    if quick():
        return Plan((1_000, 10_000), 5.0)
    if database == "sqlite":
        return Plan((1_000, 10_000, 100_000, 200_000), 20.0)
    return Plan((1_000, 10_000, 100_000), 20.0)


MANY, ONE, BARE = "heartbeat_many", "heartbeat", "bare UPDATE"
SIDES = (MANY, ONE, BARE)


# -- the table of L live leases ---------------------------------------------------------------


def _owner(i: int) -> str:
    return f"holder-{i % HOLDERS}"


def _fill_sqlite(path: Path, leases: int, queued: int, config: LeaseConfig) -> None:
    conn = sqlite_backend.connect(path)
    sqlite_backend.create_schema(conn)
    now = int(conn.execute(f"SELECT {SQLITE_CLOCK_MS}").fetchone()[0])
    # Live well past the first interval: the holders load their leases before they start.
    expires = now + config.ttl_ms + 60_000
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO agent_tasks (task_id, kind, status, owner_id, attempt, max_attempts,"
        " lease_token, fence_token, lease_expires_at, renew_deadline, input_payload,"
        " updated_at) VALUES (?, 'ledger', 'running', ?, 1, 5, 1, ?, ?, ?, 'null', ?)",
        (
            (f"lease-{i:06d}", _owner(i), i + 1, expires, expires - 20_000, now)
            for i in range(leases)
        ),
    )
    conn.executemany(
        "INSERT INTO agent_tasks (task_id, kind, status, attempt, max_attempts,"
        " lease_token, fence_token, input_payload, updated_at, queue_seq)"
        " VALUES (?, 'ledger', 'queued', 0, 5, 0, 0, 'null', ?, ?)",
        ((f"queued-{i:06d}", now, i + 1) for i in range(queued)),
    )
    conn.execute("UPDATE fence_counter SET value = ?", (leases,))
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def _pg_url(base: str, schema: str) -> str:
    return f"{base}{'&' if '?' in base else '?'}schema={schema}"


def _fill_pg(base: str, schema: str, leases: int, queued: int, config: LeaseConfig) -> None:
    pg_backend.Session.open(pg_backend.Target.parse(_pg_url(base, schema))).close()
    with psycopg.connect(pg_backend.Target.parse(base).conninfo, autocommit=True) as conn:
        conn.execute(
            f'INSERT INTO "{schema}".agent_tasks (task_id, kind, status, owner_id, attempt,'
            " max_attempts, lease_token, fence_token, lease_expires_at, renew_deadline,"
            " input_payload, updated_at)"
            " SELECT 'lease-' || lpad(i::text, 6, '0'), 'ledger', 'running',"
            f" 'holder-' || (i %% {HOLDERS}), 1, 5, 1, i + 1, now_ms + %s, now_ms + %s - 20000,"
            f" 'null', now_ms FROM generate_series(0, %s - 1) AS i,"
            f" (SELECT {POSTGRESQL_CLOCK_MS} AS now_ms) AS c",
            (config.ttl_ms + 60_000, config.ttl_ms + 60_000, leases),
        )
        conn.execute(
            f'INSERT INTO "{schema}".agent_tasks (task_id, kind, status, attempt,'
            " max_attempts, lease_token, fence_token, input_payload, updated_at, queue_seq)"
            " SELECT 'queued-' || lpad(i::text, 6, '0'), 'ledger', 'queued', 0, 5, 0, 0,"
            " 'null', 0, i FROM generate_series(1, %s) AS i",
            (queued,),
        )
        conn.execute(f"SELECT setval('\"{schema}\".fence_tokens', %s)", (leases + 1,))
        conn.execute(f'ANALYZE "{schema}".agent_tasks')


def _drop_pg(base: str, schema: str) -> None:
    with psycopg.connect(pg_backend.Target.parse(base).conninfo, autocommit=True) as conn:
        pg_backend.drop_schema(conn, schema)


# -- one holder process -------------------------------------------------------------------------


@dataclass
class Tally:
    """What one holder did: latencies (seconds after due) with a count each, and misses."""

    latencies: list[tuple[float, int]]
    missed: int
    done: int
    cpu_s: float


_LEASE_COLUMNS = (
    "task_id, owner_id, lease_token, fence_token, attempt, lease_expires_at, renew_deadline, kind"
)


def _my_leases(rows: list[Any]) -> list[Lease]:
    return [Lease(*row) for row in rows]


async def _core_holder(
    url: str, owner: str, side: str, p: Plan, start: Any, may_close: Any, out: Any
) -> None:
    store = await LeaseStore.open_async(url, clock=DatabaseClock(), config=p.config)
    try:
        sql = f"SELECT {_LEASE_COLUMNS} FROM agent_tasks WHERE owner_id = '{owner}'"
        leases = await store.driver.read(lambda conn: _my_leases(conn.execute(sql).fetchall()))
        start.wait()
        # Reported before closing: the server's CPU is read while every holder is connected.
        out.put(await _renew_all(store, leases, side, p, int(owner.rsplit("-", 1)[1]) / HOLDERS))
    finally:
        await asyncio.to_thread(may_close.wait)
        await store.close()


async def _renew_all(
    store: LeaseStore, leases: list[Lease], side: str, p: Plan, offset: float
) -> Tally:
    interval = p.interval_s
    t0 = time.perf_counter()
    give_up = t0 + 2 * interval  # a point runs one interval; a late side gets one more
    cpu0 = time.process_time()
    latencies: list[tuple[float, int]] = []
    missed = done = 0
    if side == MANY:
        # The processes take turns through the interval, as processes started at different
        # moments do, rather than all renewing at the same instant.
        due = t0 + offset * interval
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        cpu0 = time.process_time()
        results = await store.heartbeat_many(leases)
        late = time.perf_counter() - due
        ok = sum(1 for r in results if isinstance(r, Lease))
        if late > interval:
            missed += len(results)
        else:
            missed += len(results) - ok
            latencies.append((late, ok))
        done = len(results)
        # The rest of the interval is idle: the next call is due one interval later.
    else:
        n = len(leases)
        for i, lease in enumerate(leases):
            due = t0 + i * interval / n
            now = time.perf_counter()
            if now > give_up:
                missed += n - i
                break
            if now < due:
                await asyncio.sleep(due - now)
            try:
                await store.heartbeat(lease)
            except (LeaseRejected, StoreError):  # refused, or the database stayed busy
                missed += 1
                continue
            late = time.perf_counter() - due
            done += 1
            if late > interval:
                missed += 1
            else:
                latencies.append((late, 1))
    return Tally(latencies, missed, done, time.process_time() - cpu0)


def _bare_sql(postgresql: bool) -> str:
    clock = POSTGRESQL_CLOCK_MS if postgresql else SQLITE_CLOCK_MS

    def p(name: str) -> str:
        return f"%({name})s" if postgresql else f":{name}"

    return (
        f"UPDATE agent_tasks SET lease_expires_at = {clock} + {p('ttl')},"
        f" renew_deadline = {clock} + {p('deadline')}, last_heartbeat_at = {clock},"
        f" updated_at = {clock}"
        f" WHERE task_id = {p('task_id')} AND owner_id = {p('worker_id')}"
        f" AND lease_token = {p('lease_token')} AND fence_token = {p('fence_token')}"
        f" AND status = 'running' AND lease_expires_at >= {clock}"
    )


def _bare_holder(url: str, owner: str, p: Plan, start: Any, may_close: Any, out: Any) -> None:
    postgresql = url.startswith("postgresql")
    conn: Any
    if postgresql:
        conn = psycopg.connect(pg_backend.Target.parse(url).conninfo, autocommit=True)
        schema = pg_backend.Target.parse(url).schema
        conn.execute(f'SET search_path TO "{schema}"')
    else:
        conn = sqlite_backend.connect(url)  # autocommit, the store's PRAGMAs
    try:
        rows = conn.execute(
            f"SELECT {_LEASE_COLUMNS} FROM agent_tasks WHERE owner_id = '{owner}'"
        ).fetchall()
        leases = _my_leases(rows)
        sql = _bare_sql(postgresql)
        config = p.config
        start.wait()
        interval = p.interval_s
        t0 = time.perf_counter()
        give_up = t0 + 2 * interval
        cpu0 = time.process_time()
        latencies: list[tuple[float, int]] = []
        missed = done = 0
        n = len(leases)
        for i, lease in enumerate(leases):
            due = t0 + i * interval / n
            now = time.perf_counter()
            if now > give_up:
                missed += n - i
                break
            if now < due:
                time.sleep(due - now)
            params = {
                "task_id": lease.task_id,
                "worker_id": lease.owner_id,
                "lease_token": lease.lease_token,
                "fence_token": lease.fence_token,
                "ttl": config.ttl_ms,
                "deadline": config.deadline_ms,
            }
            try:
                renewed = conn.execute(sql, params).rowcount == 1
            except sqlite3.OperationalError:  # SQLite stayed locked past busy_timeout
                renewed = False
            late = time.perf_counter() - due
            done += 1
            if not renewed or late > interval:
                missed += 1
            else:
                latencies.append((late, 1))
        out.put(Tally(latencies, missed, done, time.process_time() - cpu0))
    finally:
        may_close.wait()
        conn.close()


def _holder(url: str, owner: str, side: str, p: Plan, start: Any, may_close: Any, out: Any) -> None:
    if side == BARE:
        _bare_holder(url, owner, p, start, may_close, out)
    else:
        asyncio.run(_core_holder(url, owner, side, p, start, may_close, out))


def _claimer(url: str, p: Plan, start: Any, may_close: Any, out: Any) -> None:
    """Claims and completes CLAIMS_PER_S tasks a second while the holders renew."""

    async def run() -> None:
        store = await LeaseStore.open_async(url, clock=DatabaseClock(), config=p.config)
        claims = 0
        try:
            start.wait()
            t0 = time.perf_counter()
            while (now := time.perf_counter()) < t0 + p.interval_s:
                due = t0 + claims / CLAIMS_PER_S
                if now < due:
                    await asyncio.sleep(due - now)
                try:
                    lease = await store.claim("claimer")
                    if lease is None:
                        break
                    await store.complete(lease)
                except StoreError:  # the database stayed busy: the next claim tries again
                    continue
                claims += 1
            out.put(claims)
        finally:
            await asyncio.to_thread(may_close.wait)
            await store.close()

    asyncio.run(run())


# -- a point --------------------------------------------------------------------------------------


def _server_cpu_s(postmaster_pid: int | None) -> float | None:
    """CPU seconds used so far by the server's live processes (None: not ours to see)."""
    if postmaster_pid is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[1] is the parent's pid; utime and stime are fields 14 and 15 of stat
        if int(entry) == postmaster_pid or int(fields[1]) == postmaster_pid:
            total += int(fields[11]) + int(fields[12])
    return total / tick


@dataclass
class Point:
    side: str
    leases: int
    p50_ms: float
    p99_ms: float
    missed: int
    client_us: float  # CPU per heartbeat in the holders
    server_us: float | None  # and in the server, where it can be seen

    @property
    def keeps_up(self) -> bool:
        return self.missed == 0


def _percentile(latencies: list[tuple[float, int]], q: float) -> float:
    total = sum(n for _, n in latencies)
    if total == 0:
        return float("nan")
    want = q * (total - 1)
    seen = 0
    for value, n in sorted(latencies):
        seen += n
        if seen > want:
            return value
    return sorted(latencies)[-1][0]


def run_point(url: str, side: str, leases: int, p: Plan, postmaster_pid: int | None) -> Point:
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(HOLDERS + 2)
    may_close = ctx.Event()
    out = ctx.Queue()
    claims = ctx.Queue()
    procs = [
        ctx.Process(target=_holder, args=(url, _owner(i), side, p, start, may_close, out))
        for i in range(HOLDERS)
    ]
    procs.append(ctx.Process(target=_claimer, args=(url, p, start, may_close, claims)))
    for proc in procs:
        proc.start()
    try:
        start.wait(timeout=300)
        server0 = _server_cpu_s(postmaster_pid)
        tallies: list[Tally] = [out.get(timeout=6 * p.interval_s + 120) for _ in range(HOLDERS)]
        claims.get(timeout=120)
        server1 = _server_cpu_s(postmaster_pid)
    finally:
        may_close.set()
        for proc in procs:
            proc.join(timeout=60)
            if proc.is_alive():  # pragma: no cover - a hung holder must not outlive the bench
                proc.kill()
    latencies = [x for t in tallies for x in t.latencies]
    done = sum(t.done for t in tallies) or 1
    server_us = None
    if server0 is not None and server1 is not None:
        server_us = (server1 - server0) / done * 1e6
    return Point(
        side=side,
        leases=leases,
        p50_ms=_percentile(latencies, 0.50) * 1e3,
        p99_ms=_percentile(latencies, 0.99) * 1e3,
        missed=sum(t.missed for t in tallies),
        client_us=sum(t.cpu_s for t in tallies) / done * 1e6,
        server_us=server_us,
    )


# -- the section ---------------------------------------------------------------------------------


def _measure(
    database: str,
    console: Console,
    fresh: Callable[[int, int, LeaseConfig], str],
    done_with: Callable[[str], None],
    postmaster_pid: int | None,
) -> list[Point]:
    p = plan(database)
    points: list[Point] = []
    stopped: set[str] = set()  # a side that missed at one L is not run at a larger one
    for leases in p.levels:
        for side in SIDES:
            if side in stopped:
                continue
            queued = int(CLAIMS_PER_S * p.interval_s * 1.5) + 10
            url = fresh(leases, queued, p.config)
            try:
                point = run_point(url, side, leases, p, postmaster_pid)
            finally:
                done_with(url)
            points.append(point)
            if not point.keeps_up:
                stopped.add(side)
    _print(database, console, p, points)
    return points


def _print(database: str, console: Console, p: Plan, points: list[Point]) -> None:
    table = Table(
        title=f"{database}: L live leases renewed every {p.interval_s:.0f} s (ttl/3) by "
        f"{HOLDERS} processes, {CLAIMS_PER_S} claims/s beside them; CPU per heartbeat"
    )
    for name in ("L", "side", "p50 ms", "p99 ms", "missed", "client us", "server us"):
        table.add_column(name, justify="left" if name == "side" else "right")
    for pt in points:
        table.add_row(
            f"{pt.leases:,}",
            pt.side,
            f"{pt.p50_ms:,.1f}",
            f"{pt.p99_ms:,.1f}",
            f"{pt.missed:,}",
            f"{pt.client_us:,.1f}",
            "n/a" if pt.server_us is None else f"{pt.server_us:,.1f}",
        )
    console.print(table)
    where = "SQLite file" if database == "sqlite" else "PostgreSQL"
    largest = p.levels[-1]
    for side, key in ((MANY, "many"), (ONE, "one"), (BARE, "bare")):
        held = [pt.leases for pt in points if pt.side == side and pt.keeps_up]
        record(
            "scale",
            f"{database}_{key}_keeps_up",
            f"{where}: live leases that {side} (renewing every {p.interval_s:.0f} s from "
            f"{HOLDERS} processes) keeps alive, none missed; largest tried {largest:,}",
            max(held, default=0),
            "leases",
            # The engine's own path must hold the largest fleet tried; the others are measured
            # beside it, without a target.
            target=largest if side == MANY else None,
            aim="at least" if side == MANY else None,
        )
        missed = [pt for pt in points if pt.side == side and not pt.keeps_up]
        if missed:
            record(
                "scale",
                f"{database}_{key}_missed",
                f"{where}: heartbeats missed by {side} at {missed[0].leases:,} live leases",
                missed[0].missed,
                "heartbeats",
            )
    for side in SIDES:
        held = [pt.leases for pt in points if pt.side == side and pt.keeps_up]
        lost = [pt.leases for pt in points if pt.side == side and not pt.keeps_up]
        console.print(
            f"  {side}: keeps up to {max(held, default=0):,}"
            + (f", stops keeping up at {min(lost):,}" if lost else "")
        )
    core = {pt.leases: pt for pt in points if pt.side == SIDES[0] and pt.keeps_up}
    bare = {pt.leases: pt for pt in points if pt.side == SIDES[2] and pt.keeps_up}
    best = max(core, default=0)
    cpu = ""
    both = sorted(set(core) & set(bare))
    if both:
        at = both[-1]

        def total(pt: Point) -> float:
            return pt.client_us + (pt.server_us or 0.0)

        ratio = total(core[at]) / total(bare[at])
        cpu = f", CPU per heartbeat {ratio:.2f}x a bare UPDATE's at {at:,}"
        record(
            "scale",
            f"{database}_cpu_ratio",
            f"{where}: CPU per heartbeat of heartbeat_many over a bare guarded UPDATE's, "
            f"at {at:,} live leases (client and server)",
            round(ratio, 2),
            "x",
        )
    bare_best = max(bare, default=0)
    sys.stdout.flush()
    print(
        f"heartbeats: keeps up to {best:,} live leases ({database}, heartbeat_many; "
        f"bare UPDATE {bare_best:,}{cpu}; largest L tried {p.levels[-1]:,})",
        flush=True,
    )


def sqlite_scale(console: Console) -> list[Point]:
    with tempfile.TemporaryDirectory(prefix="bk-bench-scale-") as tmp:
        count = iter(range(1_000_000))

        def fresh(leases: int, queued: int, config: LeaseConfig) -> str:
            path = Path(tmp) / f"scale-{next(count)}.db"
            _fill_sqlite(path, leases, queued, config)
            return str(path)

        def done_with(url: str) -> None:
            for suffix in ("", "-wal", "-shm"):
                Path(url + suffix).unlink(missing_ok=True)

        return _measure("sqlite", console, fresh, done_with, None)


def postgres_scale(console: Console, base: str, postmaster_pid: int | None) -> list[Point]:
    count = iter(range(1_000_000))

    def fresh(leases: int, queued: int, config: LeaseConfig) -> str:
        schema = f"bench_scale_{next(count)}"
        _fill_pg(base, schema, leases, queued, config)
        return _pg_url(base, schema)

    def done_with(url: str) -> None:
        _drop_pg(base, pg_backend.Target.parse(url).schema)

    return _measure("postgresql", console, fresh, done_with, postmaster_pid)


def postmaster_of(base: str) -> int | None:
    """The server's pid, if it runs on this machine (its data folder is readable here)."""
    with psycopg.connect(pg_backend.Target.parse(base).conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting('data_directory')").fetchone()
    try:
        first = (Path(str(row[0] if row else "")) / "postmaster.pid").read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(first)


def scale_bench(console: Console) -> None:
    """Both databases (the PostgreSQL one from `bench.postgres.server`)."""
    from bench.postgres import server

    sqlite_scale(console)
    with ExitStack() as stack:
        base = server(stack)
        postgres_scale(console, base, postmaster_of(base))


def main() -> int:
    if "--quick" in sys.argv:
        os.environ["BK_BENCH_QUICK"] = "1"
    scale_bench(Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
