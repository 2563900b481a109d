"""The lease engine on PostgreSQL, measured: `python -m bench.postgres` (also in `make bench`).

(a) The lease cycle (enqueue, claim, 3 heartbeats, complete) per task: through the core on
    its production driver (a psycopg connection on a thread of its own, the loop awaiting
    it), and the same compiled statements, event rows included, run by raw psycopg on the
    same server, one transaction per operation. Prints `ratio core/raw (postgresql): 0.NN`.
(b) Claims and completes per second of 8,000 tasks by 1, 4 and 16 worker processes at once,
    and how many tasks were handed out twice (must be 0): the core one task a call (claim,
    complete) and ten a call (claim_many, then each batch finished and the next taken in
    one transaction by complete_many_and_claim); pgqueuer (the PostgreSQL queue a
    Python user would pick) with batch 1 and its default batch of 10, through its own
    dequeue and completion log; procrastinate (defer, fetch, finish). Every side is timed
    from the release of its processes to its last closed connection; three rounds, the
    sides taking turns at each fleet size, each figure the median of the three. Prints
    `ratio core/pgqueuer (16 workers): N.NN` (claim_many 10 against pgqueuer's default
    batch) and `ratio core/procrastinate (16 workers): N.NN`.
(c) One claim with 1,000 and with 20,000 finished tasks in the table (within 1.5x), the
    finished ones claimed and completed for real first (dead tuples and all).

`BK_BENCH_QUICK=1` (`python -m bench --quick`): 1,600 tasks in (b), one round.

The server: `BK_BENCH_POSTGRES_URL` (or `BK_TEST_POSTGRES_URL`) if set, else a PostgreSQL
started from the `pgserver` wheel in a temporary folder. On a server it starts itself, the
bench sets `synchronous_commit = off` for every side alike: on this VM a commit waiting for
the disk costs ~3 ms and would measure the disk, not the engines.
"""

import asyncio
import logging
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
from rich.console import Console
from rich.table import Table

from bench.results import quick, record
from core.engine.backends import postgresql as backend
from core.engine.batch_statements import batch_statements_for
from core.engine.clock import RealClock
from core.engine.policies import Policy
from core.engine.records import Lease, dump_json
from core.engine.statements import statements_for
from core.engine.store import LeaseStore

CYCLE_TASKS = 600
CYCLE_BATCH = 25  # the sides take turns this many cycles at a time
HEARTBEATS = 3
RATIO_TARGET = 0.6
CLAIMERS = (1, 4, 16)
CLAIM_TASKS = 8_000  # 1,600 would let fixed costs (start, connect, close) flatter the slower side
CLAIM_TASKS_QUICK = 1_600
# Three rounds, the sides in turns, each figure the median of its three: one round's
# figures moved by a fifth from one run to the next on the shared machine.
CLAIM_ROUNDS = 3
PGQUEUER_BATCH = 10  # pgqueuer's QueueManager.run default batch_size
PGQUEUER_TARGET = 1.0
CLAIM_HISTORY = (1_000, 20_000)
CLAIM_SAMPLES = 300
CLAIM_LIMIT = 1.5
TTL, DEADLINE = 60_000, 40_000


def _url(base: str, schema: str) -> str:
    return f"{base}{'&' if '?' in base else '?'}schema={schema}"


def _admin(base: str) -> psycopg.Connection[Any]:
    return psycopg.connect(backend.Target.parse(base).conninfo, autocommit=True)


def _drop(base: str, schema: str) -> None:
    with _admin(base) as conn:
        backend.drop_schema(conn, schema)


# -- (a) the cycle --------------------------------------------------------------------------


def _ids(n: int, prefix: str = "task") -> list[str]:
    return [f"{prefix}-{i:05d}" for i in range(n)]


class RawClient:
    """The core's statements and event rows, by hand on a plain psycopg connection.

    Like the core with a database clock, each transaction first reads the server's time.
    """

    def __init__(self, url: str) -> None:
        target = backend.Target.parse(url)
        backend.Session.open(target).close()  # the same tables, indexes and sequence
        self.conn = backend.connect(target)
        self.sql = statements_for(backend.dialect(), Policy())
        self.batch = batch_statements_for(backend.dialect(), Policy())

    def clock(self) -> int:
        return int(self.sql.now.run(self.conn)[0][0])

    def txn(self, fn: Any) -> Any:
        self.conn.execute("BEGIN")
        result = fn()
        self.conn.execute("COMMIT")
        return result

    def event(self, at: int, name: str, row: Any, worker: str | None, **detail: Any) -> None:
        self.sql.event_insert.run(
            self.conn,
            {
                "at": at,
                "event": name,
                "task_id": row[0],
                "worker_id": worker,
                "lease_token": row[4],
                "fence_token": row[5],
                "reason": None,
                "detail": dump_json(detail),
            },
        )

    def enqueue(self, task_id: str) -> None:
        def body() -> None:
            at = self.clock()
            params = {"task_id": task_id, "kind": "ledger", "max_attempts": 5}
            params.update(input_payload="null", now=at)
            assert self.sql.enqueue.run(self.conn, params)
            self.event(at, "enqueued", (task_id, 0, 0, 0, None, None), None, kind="ledger")

        self.txn(body)

    def cycle(self) -> None:
        sql, conn = self.sql, self.conn

        def claim() -> Any:
            at = self.clock()
            params = {"worker_id": "raw", "now": at, "judge_now": at}
            params.update(ttl=TTL, deadline=DEADLINE)
            row = sql.claim_any.run(conn, params)[0]
            self.event(at, "claimed", row, "raw", attempt=row[3], expires_at=row[6])
            return row

        row = self.txn(claim)
        gate = {"task_id": row[0], "worker_id": "raw", "lease_token": row[4]}
        gate.update(fence_token=row[5], ttl=TTL, deadline=DEADLINE)

        def beat() -> None:
            # The core's heartbeat on PostgreSQL: the renewal and its line in one statement.
            at = self.clock()
            assert self.batch.renew_logged is not None
            assert self.batch.renew_logged.run(conn, {**gate, "now": at})

        for _ in range(HEARTBEATS):
            self.txn(beat)

        def complete() -> None:
            at = self.clock()
            done = sql.complete.run(conn, {**gate, "now": at, "result": "null"})
            assert done
            self.event(at, "completed", done[0], "raw")

        self.txn(complete)


async def _core_cycle(store: LeaseStore) -> None:
    lease = await store.claim("bench-worker")
    assert lease is not None
    for _ in range(HEARTBEATS):
        lease = await store.heartbeat(lease)
    await store.complete(lease, None)


def cycle_bench(console: Console, base: str) -> float:
    """Both sides take turns in batches, in one process: load on the machine hits both."""
    core_url, raw_url = _url(base, "bench_cycle_core"), _url(base, "bench_cycle_raw")

    async def run() -> tuple[float, float]:
        store = await LeaseStore.open_async(core_url, clock=RealClock())
        raw = RawClient(raw_url)
        try:
            for task_id in _ids(CYCLE_TASKS):
                await store.enqueue(task_id)
                raw.enqueue(task_id)
            spent = {"core": 0.0, "raw": 0.0}
            for _ in range(CYCLE_TASKS // CYCLE_BATCH):
                start = time.perf_counter()
                for _ in range(CYCLE_BATCH):
                    await _core_cycle(store)
                spent["core"] += time.perf_counter() - start
                start = time.perf_counter()
                for _ in range(CYCLE_BATCH):
                    raw.cycle()
                spent["raw"] += time.perf_counter() - start
            return CYCLE_TASKS / spent["core"], CYCLE_TASKS / spent["raw"]
        finally:
            await store.close()
            raw.conn.close()

    try:
        core, raw = asyncio.run(run())
    finally:
        _drop(base, "bench_cycle_core")
        _drop(base, "bench_cycle_raw")
    table = Table(title=f"lease cycle on PostgreSQL, {CYCLE_TASKS} each, in turns of {CYCLE_BATCH}")
    table.add_column("side")
    table.add_column("cycles/s", justify="right")
    table.add_row("core (psycopg on its own thread)", f"{core:,.0f}")
    table.add_row("raw psycopg, same statements", f"{raw:,.0f}")
    console.print(table)
    cycle = f"claim + 3 heartbeats + complete, {CYCLE_TASKS} tasks, PostgreSQL"
    record("postgres", "raw_cycles", f"{cycle}: raw psycopg, same statements", raw, "per s")
    record("postgres", "core_cycles", f"{cycle}: core (psycopg on its thread)", core, "per s")
    record(
        "postgres",
        "ratio",
        f"{cycle}: core over raw psycopg",
        round(core / raw, 2),
        "x",
        target=RATIO_TARGET,
        aim="at least",
    )
    return core / raw


# -- (b) many claimers ----------------------------------------------------------------------


class Round(NamedTuple):
    """One side's race: claims a second, claims, tasks handed out twice, and the processor
    time its processes spent a task (every thread: the core's driver thread too)."""

    rate: float
    claims: int
    duplicates: int
    cpu_us: float


# A claimer process's processor time when its race began (each claimer is a process).
_CPU_AT_RELEASE = [0.0]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _released(barrier: Any) -> None:
    barrier.wait()
    _CPU_AT_RELEASE[0] = _cpu()


def _spent() -> float:
    return _cpu() - _CPU_AT_RELEASE[0]


def _any_queued(conn: Any) -> bool:
    return bool(
        conn.execute("SELECT 1 FROM agent_tasks WHERE status = 'queued' LIMIT 1").fetchall()
    )


def _core_claimer(url: str, batch: int, barrier: Any, results: Any) -> None:
    async def run() -> list[str]:
        store = await LeaseStore.open_async(url, clock=RealClock())
        got: list[str] = []
        try:
            _released(barrier)
            worker = f"w{os.getpid()}"
            finished: list[Lease] = []
            while True:
                if batch == 1:
                    lease = await store.claim(worker)
                    leases = [] if lease is None else [lease]
                elif finished:
                    # A batch finished and the next taken in one transaction: one commit a
                    # batch, as pgqueuer's dequeue and its log of the last batch take two.
                    done, leases = await store.complete_many_and_claim(finished, worker, batch)
                    assert done == [None] * len(finished), done
                    finished = []
                else:
                    leases = await store.claim_many(worker, batch)
                if not leases:
                    # SKIP LOCKED passes over rows other claims hold: stop only when
                    # nothing is queued any more.
                    if not await store.driver.read(_any_queued):
                        break
                    continue
                got.extend(lease.task_id for lease in leases)
                if batch == 1:
                    await store.complete(leases[0], None)
                else:
                    finished = leases
        finally:
            await store.close()
        return got

    got = asyncio.run(run())
    results.put((got, time.perf_counter(), _spent()))  # the end: after the connection closed


def _procrastinate_claimer(conninfo: str, barrier: Any, results: Any) -> None:
    import procrastinate
    from procrastinate import jobs

    async def run() -> list[str]:
        app = procrastinate.App(
            connector=procrastinate.PsycopgConnector(conninfo=conninfo, min_size=1, max_size=1)
        )
        got: list[str] = []
        async with app.open_async():
            worker_id = await app.job_manager.register_worker()
            _released(barrier)
            while True:
                job = await app.job_manager.fetch_job(queues=None, worker_id=worker_id)
                if job is None:
                    break
                got.append(str(job.id))
                await app.job_manager.finish_job(job, jobs.Status.SUCCEEDED, delete_job=False)
            await app.job_manager.unregister_worker(worker_id)
        return got

    got = asyncio.run(run())
    results.put((got, time.perf_counter(), _spent()))  # the end: after the pool closed


def _pgqueuer_claimer(conninfo: str, batch: int, barrier: Any, results: Any) -> None:
    """pgqueuer's own dequeue and completion log, as its QueueManager drives them: take up
    to `batch` jobs a query, log their completion `batch` at a time (its JobStatusLogBuffer
    flushes at `batch_size` jobs)."""
    from datetime import timedelta

    from pgqueuer.adapters.drivers.psycopg import PsycopgDriver
    from pgqueuer.queries import EntrypointExecutionParameter, Queries
    from pgqueuer.types import QueueEntrypoint, QueueManagerId

    async def run() -> list[str]:
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
        got: list[str] = []
        try:
            queries = Queries(PsycopgDriver(conn))
            entrypoints = {QueueEntrypoint(PGQUEUER_ENTRYPOINT): EntrypointExecutionParameter(0)}
            manager = QueueManagerId(uuid.uuid4())
            _released(barrier)
            while True:
                jobs = await queries.dequeue(
                    batch_size=batch,
                    entrypoints=entrypoints,
                    queue_manager_id=manager,
                    global_concurrency_limit=None,
                    heartbeat_timeout=timedelta(seconds=30),
                )
                if not jobs:
                    break
                got.extend(str(job.id) for job in jobs)
                await queries.log_jobs([(job, "successful", None) for job in jobs])
        finally:
            await conn.close()
        return got

    got = asyncio.run(run())
    results.put((got, time.perf_counter(), _spent()))  # the end: after the connection closed


def _race(target: Any, args: tuple[Any, ...], workers: int) -> Round:
    """Start `workers` processes, release them together; (claims/s, claims, duplicates).

    Every side is timed from the release to the moment its last process has closed its
    connection (or pool), so no side leaves work to a close that is not counted.
    """
    # Forked: the children start with everything imported (16 fresh interpreters importing
    # SQLAlchemy would take longer than the race). The parent holds no connection now.
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(workers + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, barrier, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    barrier.wait(timeout=120)
    start = time.perf_counter()
    claimed: list[str] = []
    ends: list[float] = []
    cpu = 0.0
    for _ in procs:
        got, end, spent = results.get(timeout=600)
        claimed.extend(got)
        ends.append(end)
        cpu += spent
    for p in procs:
        p.join(timeout=60)
    elapsed = max(ends) - start
    duplicates = len(claimed) - len(set(claimed))
    per_task = cpu / max(1, len(claimed)) * 1e6  # (a side that claimed nothing: its total)
    return Round(len(claimed) / elapsed, len(claimed), duplicates, per_task)


def claim_tasks() -> int:
    return CLAIM_TASKS_QUICK if quick() else CLAIM_TASKS


def _core_round(base: str, workers: int, tag: str, batch: int) -> Round:
    schema = f"bench_claims_{tag}"
    url = _url(base, schema)
    n = claim_tasks()

    async def fill() -> None:
        store = await LeaseStore.open_async(url, clock=RealClock())
        await store.close()
        with _admin(base) as conn:
            conn.execute(
                f'INSERT INTO "{schema}".agent_tasks (task_id, kind, status, attempt,'
                " max_attempts, lease_token, fence_token, input_payload, updated_at, queue_seq)"
                " SELECT 'task-' || lpad(i::text, 6, '0'), 'ledger', 'queued', 0, 5, 0, 0,"
                " 'null', i, i FROM generate_series(1, %s) AS i",
                (n,),
            )
            conn.execute(f'ANALYZE "{schema}".agent_tasks')

    asyncio.run(fill())
    try:
        race = _race(_core_claimer, (url, batch), workers)
        with _admin(base) as conn:
            twice = conn.execute(
                f'SELECT count(*) FROM (SELECT task_id FROM "{schema}".events'
                " WHERE event = 'claimed' GROUP BY task_id HAVING count(*) > 1) AS t"
            ).fetchone()
            done = conn.execute(
                f"SELECT count(*) FROM \"{schema}\".agent_tasks WHERE status = 'done'"
            ).fetchone()
        assert done is not None and done[0] == n == race.claims, (done, race.claims)
        return race._replace(duplicates=race.duplicates + (twice[0] if twice else 0))
    finally:
        _drop(base, schema)


# procrastinate warns once per App made in a `__main__` module (this bench runs as one); the
# bench makes one per process and round, so the warning would bury the figures.
logging.getLogger("procrastinate").setLevel(logging.ERROR)

PROCRASTINATE_DB = "bk_bench_procrastinate"
PGQUEUER_DB = "bk_bench_pgqueuer"
PGQUEUER_ENTRYPOINT = "bench.noop"


def _fresh_database(base: str, name: str) -> str:
    """A new, empty database on the server (each queue library gets its own schema)."""
    target = backend.Target.parse(base)
    with _admin(base) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    info = psycopg.conninfo.conninfo_to_dict(target.conninfo)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})


def _drop_database(base: str, name: str) -> None:
    with _admin(base) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _procrastinate_round(base: str, workers: int) -> Round:
    import procrastinate

    conninfo = _fresh_database(base, PROCRASTINATE_DB)

    async def fill() -> None:
        app = procrastinate.App(
            connector=procrastinate.PsycopgConnector(conninfo=conninfo, min_size=1, max_size=2)
        )
        async with app.open_async():
            await app.schema_manager.apply_schema_async()
            deferrer = app.configure_task("bench.noop", allow_unknown=True)
            await deferrer.batch_defer_async(*({"n": i} for i in range(claim_tasks())))

    asyncio.run(fill())
    try:
        return _race(_procrastinate_claimer, (conninfo,), workers)
    finally:
        _drop_database(base, PROCRASTINATE_DB)


def _pgqueuer_round(base: str, workers: int, batch: int) -> Round:
    from pgqueuer.adapters.drivers.psycopg import PsycopgDriver
    from pgqueuer.queries import Queries

    conninfo = _fresh_database(base, PGQUEUER_DB)
    n = claim_tasks()

    async def fill() -> None:
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
        try:
            queries = Queries(PsycopgDriver(conn))
            await queries.install()
            await queries.enqueue([PGQUEUER_ENTRYPOINT] * n, [None] * n, [0] * n)
            await conn.execute("ANALYZE")
        finally:
            await conn.close()

    asyncio.run(fill())
    try:
        race = _race(_pgqueuer_claimer, (conninfo, batch), workers)
        assert race.claims == n, (race.claims, n)
        return race
    finally:
        _drop_database(base, PGQUEUER_DB)


def _installed(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


CORE_1, CORE_N = "core, claim (1 a call)", f"core, claim_many ({PGQUEUER_BATCH} a call)"
PGQ_1, PGQ_N = "pgqueuer, batch 1", f"pgqueuer, batch {PGQUEUER_BATCH} (its default)"
PROCRASTINATE = "procrastinate"


def _procs(n: int) -> str:
    return "1 process" if n == 1 else f"{n} processes"


def claims_bench(console: Console, base: str) -> dict[str, float]:
    """Claims and completes per second by 1, 4 and 16 processes, each side on the same
    server in turn; returns the 16-process ratios the section prints."""
    sides: dict[str, Callable[[int, str], Round]] = {
        CORE_1: lambda w, tag: _core_round(base, w, f"{tag}_1", 1),
        CORE_N: lambda w, tag: _core_round(base, w, f"{tag}_n", PGQUEUER_BATCH),
    }
    if _installed("pgqueuer"):
        sides[PGQ_1] = lambda w, tag: _pgqueuer_round(base, w, 1)
        sides[PGQ_N] = lambda w, tag: _pgqueuer_round(base, w, PGQUEUER_BATCH)
    if _installed("procrastinate"):
        sides[PROCRASTINATE] = lambda w, tag: _procrastinate_round(base, w)
    runs: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    dups: dict[tuple[str, int], int] = {}
    rounds = 1 if quick() else CLAIM_ROUNDS
    for round_no in range(rounds):
        for workers in CLAIMERS:
            # The sides take turns at each fleet size, in the other order every other
            # round: a burst of load, or a server warmed by the side before, cannot favour
            # one side in every round.
            # Past the first round only the two sides of the target's ratio run again (the
            # others at one task a call take minutes a round).
            # The two sides of the ratio run one after the other.
            pair = [(n, f) for n, f in sides.items() if n in (CORE_N, PGQ_N)]
            rest = [(n, f) for n, f in sides.items() if n not in (CORE_N, PGQ_N)]
            order = pair + rest if round_no == 0 else pair
            if round_no % 2:
                order.reverse()
            for name, side in order:
                race = side(workers, f"{workers}_{round_no}")
                runs.setdefault((name, workers), []).append(race.rate)
                cpus.setdefault((name, workers), []).append(race.cpu_us)
                dups[name, workers] = dups.get((name, workers), 0) + race.duplicates
    # Each figure is the median of its rounds; a ratio is the median of the rounds' ratios
    # (each taken from two runs minutes apart at most, at the same load).
    best = {key: (statistics.median(got), dups[key]) for key, got in runs.items()}

    def ratio(name: str, other: str, workers: int) -> float:
        # A side that ran in the first round only is set against that round's run of the
        # other: the two were measured minutes apart, not rounds apart.
        mine, theirs = runs[name, workers], runs[other, workers]
        rounds = min(len(mine), len(theirs))
        return statistics.median(a / b for a, b in zip(mine[:rounds], theirs[:rounds], strict=True))

    table = Table(
        title=f"claim + complete of {claim_tasks():,} tasks, median of {rounds} round(s) for "
        f"{CORE_N} and {PGQ_N}, one for the others, "
        "timed to the last process's closed connection (dup: tasks handed out twice)"
    )
    table.add_column("side")
    for workers in CLAIMERS:
        table.add_column(f"{workers} proc/s", justify="right")
    table.add_column("dup", justify="right")
    for name in sides:
        rates = [f"{best[name, w][0]:,.0f}" for w in CLAIMERS]
        table.add_row(name, *rates, str(sum(best[name, w][1] for w in CLAIMERS)))
    console.print(table)
    if not _installed("pgqueuer") or not _installed("procrastinate"):
        console.print("pgqueuer or procrastinate is not installed: pip install -e '.[bench]'")
    most = CLAIMERS[-1]
    ratios: dict[str, float] = {}
    for name, other in (
        ("core/pgqueuer", PGQ_N),
        ("core/pgqueuer batch 1", PGQ_1),
        ("core/procrastinate", PROCRASTINATE),
    ):
        ratios[name] = ratio(CORE_N, other, most) if other in sides else float("nan")
    record(
        "postgres",
        "duplicates",
        "claims of the same task twice, every side and fleet size together",
        sum(dup for _rate, dup in best.values()),
        "",
        target=0,
        aim="at most",
    )
    for workers in CLAIMERS:
        record(
            "postgres",
            f"claim_many_{workers}",
            f"claim_many + complete_many of {claim_tasks():,} tasks by {_procs(workers)}",
            round(best[CORE_N, workers][0]),
            "per s",
        )
    for workers in CLAIMERS:
        if PGQ_N in sides:
            record(
                "postgres",
                f"pgqueuer_{workers}",
                f"pgqueuer (batch {PGQUEUER_BATCH}), the same by {_procs(workers)}",
                round(best[PGQ_N, workers][0]),
                "per s",
            )
            # The aim is pgqueuer's pace at every fleet size, one process included.
            record(
                "postgres",
                f"vs_pgqueuer_{workers}",
                f"claim_many over pgqueuer's default batch, {_procs(workers)}",
                round(ratio(CORE_N, PGQ_N, workers), 2),
                "x",
                target=PGQUEUER_TARGET,
                aim="at least",
            )
    if PGQ_N in sides:
        # Where the time goes besides the trips: what each side's own processes spend on a
        # task (its Python, its driver), which the server's cores are shared with.
        for name, key in ((CORE_N, "client_cpu_core"), (PGQ_N, "client_cpu_pgqueuer")):
            record(
                "postgres",
                key,
                f"{name}: processor time of its own processes a task, 1 process",
                round(statistics.median(cpus[name, 1]), 1),
                "µs",
            )
        console.print(
            f"  processor time a task in the claimers' own processes, 1 process: "
            f"core {statistics.median(cpus[CORE_N, 1]):.0f} µs, "
            f"pgqueuer {statistics.median(cpus[PGQ_N, 1]):.0f} µs"
        )
    for workers in CLAIMERS:
        if PGQ_N in sides:
            console.print(
                f"  {workers} processes: core {PGQUEUER_BATCH} a call / pgqueuer batch "
                f"{PGQUEUER_BATCH}: {ratio(CORE_N, PGQ_N, workers):.2f}; "
                f"core 1 / pgqueuer 1: {ratio(CORE_1, PGQ_1, workers):.2f}"
            )
    return ratios


# -- (c) claim cost in history --------------------------------------------------------------


CHURN_BATCH = 50


def _fill_history(base: str, schema: str, finished: int, queued: int) -> None:
    """`finished` tasks that went through real claims and completes, then `queued` waiting.

    Inserting finished rows and running ANALYZE would measure a table no queue ever has:
    here every finished row was claimed and completed by the store's own statements (two
    updates each), leaving the dead tuples and index entries that churn leaves for vacuum.
    """
    url = _url(base, schema)
    backend.Session.open(backend.Target.parse(url)).close()

    def add(prefix: str, count: int, first_seq: int) -> None:
        with _admin(base) as conn:
            conn.execute(
                f'INSERT INTO "{schema}".agent_tasks (task_id, kind, status, attempt,'
                " max_attempts, lease_token, fence_token, input_payload, updated_at, queue_seq)"
                f" SELECT '{prefix}-' || lpad(i::text, 6, '0'), 'ledger', 'queued', 0, 5, 0, 0,"
                " 'null', 0, %s + i FROM generate_series(1, %s) AS i",
                (first_seq, count),
            )

    async def churn() -> None:
        store = LeaseStore.open_inline(url, clock=RealClock())
        try:
            while leases := await store.claim_many("old-worker", CHURN_BATCH):
                await store.complete_many(leases)
        finally:
            await store.close()

    add("done", finished, 0)
    asyncio.run(churn())
    add("queued", queued, finished)


def _claim_median_us(url: str, samples: int) -> float:
    async def run() -> float:
        store = LeaseStore.open_inline(url, clock=RealClock())
        times = []
        try:
            for _ in range(samples):
                start = time.perf_counter()
                lease = await store.claim("bench-worker")
                times.append(time.perf_counter() - start)
                assert lease is not None
        finally:
            await store.close()
        return statistics.median(times) * 1e6

    return asyncio.run(run())


def claim_growth_bench(console: Console, base: str) -> float:
    medians = dict.fromkeys(CLAIM_HISTORY, float("inf"))
    half = CLAIM_SAMPLES // 2
    schemas = {n: f"bench_history_{n}" for n in CLAIM_HISTORY}
    try:
        for n, schema in schemas.items():
            _fill_history(base, schema, n, CLAIM_SAMPLES)
        for _ in range(2):  # the sizes take turns, so a burst of load cannot hit one only
            for n, schema in schemas.items():
                medians[n] = min(medians[n], _claim_median_us(_url(base, schema), half))
    finally:
        for schema in schemas.values():
            _drop(base, schema)
    table = Table(title=f"one claim on PostgreSQL, lower of two medians of {half}")
    table.add_column("finished tasks in the table", justify="right")
    table.add_column("claim (us)", justify="right")
    for n, us in medians.items():
        table.add_row(f"{n:,}", f"{us:,.0f}")
    console.print(table)
    low, high = (medians[n] for n in CLAIM_HISTORY)
    for n, us in medians.items():
        record(
            "postgres",
            f"claim_{n}",
            f"one claim with {n:,} finished tasks in the table (median)",
            round(us),
            "us",
        )
    record(
        "postgres",
        "claim_growth",
        f"one claim with {CLAIM_HISTORY[1]:,} finished tasks over one with {CLAIM_HISTORY[0]:,}",
        round(high / low, 2),
        "x",
        target=CLAIM_LIMIT,
        aim="at most",
    )
    return high / low


# -- the server and the section -------------------------------------------------------------


def server(stack: ExitStack) -> str:
    """A server URL: from the environment, or one started here (stopped on exit)."""
    url = os.environ.get("BK_BENCH_POSTGRES_URL") or os.environ.get("BK_TEST_POSTGRES_URL")
    if url:
        return url
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bk-bench-pg-")))
        os.chmod(folder, 0o755)  # as root, the server runs as another user
        srv = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    stack.callback(srv.cleanup)
    uri = str(srv.get_uri())
    with _admin(uri) as conn:
        conn.execute("ALTER SYSTEM SET synchronous_commit = off")
        conn.execute("SELECT pg_reload_conf()")
    return uri


def postgres_bench(console: Console) -> None:
    """The PostgreSQL section of `make bench` (its ratio lines are printed as it goes)."""
    with ExitStack() as stack:
        base = server(stack)
        with _admin(base) as conn:
            row = conn.execute("SELECT version(), current_setting('synchronous_commit')").fetchone()
        assert row is not None
        console.print(f"PostgreSQL: {str(row[0]).split(' on ')[0]}, synchronous_commit={row[1]}")
        ratio = cycle_bench(console, base)
        verdict = "ok" if ratio >= RATIO_TARGET else "below target"
        console.print(f"core reaches {ratio:.2f} of raw psycopg (target {RATIO_TARGET}): {verdict}")
        print(f"ratio core/raw (postgresql): {ratio:.2f}", flush=True)
        ratios = claims_bench(console, base)
        against = ratios["core/pgqueuer"]
        verdict = "ok" if against >= PGQUEUER_TARGET else "below target"
        console.print(
            f"core (claim_many {PGQUEUER_BATCH}) against pgqueuer's default batch "
            f"(target {PGQUEUER_TARGET}): {verdict}"
        )
        most = CLAIMERS[-1]
        print(f"ratio core/pgqueuer ({most} workers): {against:.2f}", flush=True)
        print(f"ratio core/procrastinate ({most} workers): {ratios['core/procrastinate']:.2f}")
        growth = claim_growth_bench(console, base)
        verdict = "ok" if growth <= CLAIM_LIMIT else "TOO SLOW"
        console.print(
            f"claim {CLAIM_HISTORY[1]:,} / {CLAIM_HISTORY[0]:,} finished on PostgreSQL: "
            f"{growth:.2f}x (limit {CLAIM_LIMIT}x) {verdict}"
        )


def main() -> int:
    postgres_bench(Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
