"""The PostgreSQL backend: what it refuses, and what it survives.

Lost connections are real here: another connection ends the store's server process with
`pg_terminate_backend`, before a transaction, in the middle of one, and as it commits.
"""

import asyncio
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.engine import models
from core.engine.backends import postgresql as backend
from core.engine.backends import sqlite_path
from core.engine.clock import VirtualClock
from core.engine.errors import SchemaVersionError, StoreError
from core.engine.records import Lease
from core.engine.store import LeaseStore
from core.sim.simulation import run_inline
from tests.pgserver_kit import with_schema


@pytest.fixture
def url(postgres_url: str) -> Iterator[str]:
    """A URL naming a schema of its own (dropped afterwards)."""
    schema_url = with_schema(postgres_url)
    yield schema_url
    schema = schema_url.rsplit("schema=", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        backend.drop_schema(conn, schema)


def _admin(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(backend.Target.parse(url).conninfo, autocommit=True)


def _tables(url: str) -> dict[str, list[Any]]:
    target = backend.Target.parse(url)
    with _admin(url) as conn:
        names = [
            name
            for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "ORDER BY table_name",
                (target.schema,),
            )
        ]
        return {
            name: conn.execute(f'SELECT * FROM "{target.schema}"."{name}" ORDER BY 1').fetchall()
            for name in names
        }


def _open(url: str, clock: VirtualClock | None = None) -> LeaseStore:
    return LeaseStore.open_inline(url, clock=clock or VirtualClock())


def _kill(url: str, pid: int) -> None:
    """End one server process and wait until it is gone."""
    with _admin(url) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))


def _pid(store: LeaseStore) -> int:
    conn = store.driver.session.conn  # type: ignore[attr-defined]
    return int(conn.info.backend_pid)


# -- what it refuses ------------------------------------------------------------------------


def test_someone_elses_schema_is_refused_untouched(url: str) -> None:
    target = backend.Target.parse(url)
    with _admin(url) as conn:
        conn.execute(f'CREATE SCHEMA "{target.schema}"')
        conn.execute(f'CREATE TABLE "{target.schema}".orders (id int primary key)')
        conn.execute(f'INSERT INTO "{target.schema}".orders VALUES (7)')
    before = _tables(url)
    with pytest.raises(StoreError, match="not a borrowed-keys store") as err:
        _open(url)
    assert "\n" not in str(err.value)
    assert _tables(url) == before == {"orders": [(7,)]}


def test_a_newer_schema_version_is_refused_untouched(url: str) -> None:
    run_inline(_open(url).close())
    with _admin(url) as conn:
        conn.execute(
            f'UPDATE "{backend.Target.parse(url).schema}".store_meta SET value = %s',
            (str(models.SCHEMA_VERSION + 1),),
        )
    before = _tables(url)
    with pytest.raises(SchemaVersionError, match="newer"):
        _open(url)
    assert _tables(url) == before


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    url = "postgresql://keeper:s3cret@/postgres?host=/nonexistent-dir&connect_timeout=2"
    with pytest.raises(StoreError, match="cannot connect") as err:
        _open(url)
    assert "s3cret" not in str(err.value) and "\n" not in str(err.value)


def test_a_bad_schema_name_is_refused(postgres_url: str) -> None:
    with pytest.raises(StoreError, match="schema"):
        _open(with_schema(postgres_url, "Robert'); DROP TABLE x;--"))


def test_the_same_url_reopens_the_same_store(url: str) -> None:
    first = _open(url)
    run_inline(first.enqueue("t1"))
    run_inline(first.close())
    second = _open(url)
    assert [t.task_id for t in run_inline(second.tasks())] == ["t1"]
    run_inline(second.close())


def test_a_scratch_store_leaves_nothing_behind(postgres_url: str) -> None:
    store = LeaseStore.open_inline(postgres_url, clock=VirtualClock(), scratch=True)
    schema = store.driver.session.target.schema  # type: ignore[attr-defined]
    run_inline(store.enqueue("t1"))
    run_inline(store.close())
    with _admin(postgres_url) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        assert found.fetchone() is None
    with pytest.raises(StoreError, match="closed"):
        run_inline(store.tasks())


# -- what it survives -----------------------------------------------------------------------


def test_a_connection_lost_between_calls_is_reopened(url: str) -> None:
    store = _open(url)
    run_inline(store.enqueue("t1"))
    old = _pid(store)
    _kill(url, old)
    lease = run_inline(store.claim("w1"))
    assert lease is not None and lease.fence_token == 1
    assert _pid(store) != old
    assert [e.event for e in run_inline(store.events())] == ["enqueued", "claimed"]
    run_inline(store.close())


def test_a_connection_lost_mid_transaction_runs_it_again_whole(url: str) -> None:
    store = _open(url)
    session: backend.Session = store.driver.session  # type: ignore[attr-defined]
    runs = 0

    def body(conn: Any) -> str:
        nonlocal runs
        runs += 1
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('note', %s)", (f"run {runs}",))
        if runs == 1:
            _kill(url, conn.info.backend_pid)
            conn.execute("SELECT 1")  # the server is gone: this raises
        return f"run {runs}"

    assert session.write(body) == "run 2"
    rows = session.read(lambda c: c.execute("SELECT value FROM store_meta WHERE key = 'note'"))
    assert rows.fetchall() == [("run 2",)]  # the first run's insert died with its connection
    run_inline(store.close())


def _cut_while_committing(
    session: backend.Session, url: str, monkeypatch: pytest.MonkeyPatch, *, after: bool
) -> None:
    """The next COMMIT loses its connection: after the server committed, or before."""
    real = psycopg.Connection.execute
    done = False

    def execute(self: psycopg.Connection[Any], query: Any, *args: Any, **kw: Any) -> Any:
        nonlocal done
        if query == "COMMIT" and not done:
            done = True
            if after:
                real(self, query)
            _kill(url, self.info.backend_pid)
            return real(self, "SELECT 1")  # raises: the connection is gone
        return real(self, query, *args, **kw)

    monkeypatch.setattr(psycopg.Connection, "execute", execute)


@pytest.mark.parametrize("committed", [True, False], ids=["after-commit", "before-commit"])
def test_a_connection_lost_while_committing_learns_the_outcome(
    url: str, monkeypatch: pytest.MonkeyPatch, committed: bool
) -> None:
    store = _open(url)
    run_inline(store.enqueue("t1"))
    _cut_while_committing(
        store.driver.session,  # type: ignore[attr-defined]
        url,
        monkeypatch,
        after=committed,
    )
    lease = run_inline(store.claim("w1"))
    monkeypatch.undo()
    # Either way the caller holds exactly one lease, and the log says it once. (A sequence
    # never hands a number out twice, not even one a rolled-back transaction drew.)
    assert lease is not None and lease.lease_token == 1
    assert lease.fence_token == (1 if committed else 2)
    assert [e.event for e in run_inline(store.events())] == ["enqueued", "claimed"]
    row = run_inline(store.task("t1"))
    assert (row.status, row.owner_id, row.lease_token) == ("running", "w1", 1)
    run_inline(store.close())


def test_a_serialization_failure_is_run_again(url: str) -> None:
    store = _open(url)
    session: backend.Session = store.driver.session  # type: ignore[attr-defined]
    runs = 0

    def body(conn: Any) -> int:
        nonlocal runs
        runs += 1
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('try', %s)", (str(runs),))
        if runs < 3:
            conn.execute("DO $$ BEGIN RAISE EXCEPTION 'collide' USING ERRCODE = '40001'; END $$")
        return runs

    assert session.write(body) == 3
    got = session.read(lambda c: c.execute("SELECT value FROM store_meta WHERE key = 'try'"))
    assert got.fetchall() == [("3",)]
    run_inline(store.close())


def test_an_error_that_is_not_a_collision_is_a_store_error(url: str) -> None:
    store = _open(url)
    session: backend.Session = store.driver.session  # type: ignore[attr-defined]

    def body(conn: Any) -> None:
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('x', '1')")
        conn.execute("SELECT 1 / 0")

    with pytest.raises(StoreError, match="division by zero"):
        session.write(body)
    assert session.read(lambda c: c.execute("SELECT count(*) FROM store_meta").fetchone()) == (
        1,
    )  # only the schema version: the insert was rolled back
    run_inline(store.close())


# -- many claimers at once ------------------------------------------------------------------


def test_many_threads_claiming_at_once_never_share_a_task(url: str) -> None:
    setup = _open(url)
    tasks = [f"t{i:03d}" for i in range(120)]
    for task_id in tasks:
        run_inline(setup.enqueue(task_id))
    leases: list[Lease] = []
    lock = threading.Lock()
    failures: list[BaseException] = []

    def claimer(worker: str) -> None:
        try:
            store = _open(url)
            while True:
                lease = run_inline(store.claim(worker))
                if lease is None:
                    # SKIP LOCKED may pass over a row another claim holds: look once more.
                    if all(t.status == "running" for t in run_inline(store.tasks())):
                        break
                    continue
                with lock:
                    leases.append(lease)
            run_inline(store.close())
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert failures == []
    assert sorted(lease.task_id for lease in leases) == tasks
    assert sorted(lease.fence_token for lease in leases) == list(range(1, len(tasks) + 1))
    claimed = Counter(e.task_id for e in run_inline(setup.events()) if e.event == "claimed")
    assert set(claimed.values()) == {1}
    run_inline(setup.close())


async def test_the_async_driver_does_the_whole_cycle_off_the_loop(url: str) -> None:
    clock = VirtualClock()
    store = await LeaseStore.open_async(url, clock=clock)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(ticker())
    await store.enqueue("t1")
    lease = await store.claim("w1")
    assert lease is not None
    for _ in range(3):
        clock.advance(10_000)
        lease = await store.heartbeat(lease)
    await store.complete(lease, {"ok": True})
    other.cancel()
    assert (await store.task("t1")).status == "done"
    assert ticks >= 6  # the loop ran other work while each call was on the thread
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.tasks()


def test_workers_on_one_url_share_the_store(url: str) -> None:
    a, b = _open(url), _open(url)
    run_inline(a.enqueue("t1"))
    lease = run_inline(b.claim("w2"))
    assert lease is not None
    assert run_inline(a.task("t1")).owner_id == "w2"
    for s in (a, b):
        run_inline(s.close())


async def test_close_waits_for_the_call_in_flight_then_refuses(url: str) -> None:
    store = await LeaseStore.open_async(url, clock=VirtualClock())
    await store.enqueue("t1")
    claim = asyncio.create_task(store.claim("w1"))
    await asyncio.sleep(0)  # the claim is on the driver's thread now
    await store.close()
    lease = await claim
    assert lease is not None and lease.task_id == "t1"
    with pytest.raises(StoreError, match="closed"):
        await store.enqueue("t2")
    reopened = _open(url)
    assert run_inline(reopened.task("t1")).status == "running"  # the claim committed
    run_inline(reopened.close())


@pytest.mark.parametrize("spelling", ["{path}", "sqlite:///{path}"])
def test_one_name_chooses_the_backend(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "keys.db"
    store = LeaseStore.open_inline(spelling.format(path=path), clock=VirtualClock())
    assert store.sql.enqueue.sql.count(":task_id") == 1  # SQLite's named parameters
    run_inline(store.enqueue("t1"))
    run_inline(store.close())
    assert path.exists()
    assert sqlite_path(f"sqlite:///{path}") == str(path)
    assert sqlite_path("postgresql://u@h/db") is None
    assert sqlite_path("postgres://u@h/db") is None
