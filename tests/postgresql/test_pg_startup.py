"""A worker starting on PostgreSQL never holds up the fleet's lease path.

A store that is complete is opened without locking any table; schema work that must lock
one waits a short while, steps aside and tries again; a connection lost while the store is
opened is retried like any other. Durations are read from the database's own clock.
"""

import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from core.engine.backends import postgresql as backend
from core.engine.clock import VirtualClock
from core.engine.records import Lease
from core.engine.store import LeaseStore
from core.sim.simulation import run_inline
from tests.pgserver_kit import with_schema

# Far above what a heartbeat takes, far below the old behaviour (it waited to the end).
HEARTBEAT_BOUND_S = 3.0
WAIT_S = 10.0  # a deadline for the test's own waits, never a pause


@pytest.fixture
def url(postgres_url: str) -> Iterator[str]:
    schema_url = with_schema(postgres_url)
    yield schema_url
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        backend.drop_schema(conn, schema_url.rsplit("schema=", 1)[1])


def _admin(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(backend.Target.parse(url).conninfo, autocommit=True)


def _db_now(url: str) -> float:
    with _admin(url) as conn:
        row = conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8").fetchone()
    assert row is not None
    return float(row[0])


def _holding_a_lease(url: str) -> tuple[LeaseStore, Lease]:
    store = LeaseStore.open_inline(url, clock=VirtualClock())
    run_inline(store.enqueue("t1"))
    lease = run_inline(store.claim("w1"))
    assert lease is not None
    return store, lease


def _timed_heartbeat(
    url: str, store: LeaseStore, lease: Lease, release: Callable[[], None]
) -> float:
    """Seconds one heartbeat took by the database's clock; `release` ends the hold if the
    heartbeat is still waiting at the deadline (so a failing test ends too)."""
    done: list[float] = []

    def beat() -> None:
        start = _db_now(url)
        run_inline(store.heartbeat(lease))
        done.append(_db_now(url) - start)

    thread = threading.Thread(target=beat)
    thread.start()
    thread.join(WAIT_S)
    waited = thread.is_alive()
    release()
    thread.join(WAIT_S)
    assert not waited, "the heartbeat was still waiting for the starting worker"
    return done[0]


def test_a_worker_held_up_in_start_up_does_not_stop_heartbeats(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, lease = _holding_a_lease(url)
    inside, release = threading.Event(), threading.Event()
    real = backend._transaction

    def held(conn: backend.DBConnection, fn: Callable[[backend.DBConnection], Any]) -> Any:
        # The starting worker stops (SIGSTOP, a slow machine) before its schema work commits.
        def body(c: backend.DBConnection) -> Any:
            result = fn(c)
            inside.set()
            release.wait(WAIT_S)
            return result

        return real(conn, body)

    monkeypatch.setattr(backend, "_transaction", held)
    opened: list[LeaseStore] = []
    starting = threading.Thread(
        target=lambda: opened.append(LeaseStore.open_inline(url, clock=VirtualClock()))
    )
    starting.start()
    try:
        # Either it is inside its start-up transaction now, or it needed none.
        while not inside.wait(0.01) and starting.is_alive():
            pass
        took = _timed_heartbeat(url, store, lease, release.set)
    finally:
        release.set()
        starting.join(WAIT_S)
    assert took < HEARTBEAT_BOUND_S
    assert len(opened) == 1
    run_inline(opened[0].close())
    run_inline(store.close())


def test_schema_work_that_must_wait_for_a_lock_steps_aside(url: str) -> None:
    store, lease = _holding_a_lease(url)
    schema = backend.Target.parse(url).schema
    with _admin(url) as conn:
        conn.execute(f'DROP INDEX "{schema}".ix_agent_tasks_fence')
    # A long transaction on the hot table: a new index must wait for it to end.
    holder = _admin(url)
    holder.execute("BEGIN")
    holder.execute(f'LOCK TABLE "{schema}".agent_tasks IN ROW EXCLUSIVE MODE')
    opened: list[LeaseStore] = []
    starting = threading.Thread(
        target=lambda: opened.append(LeaseStore.open_inline(url, clock=VirtualClock()))
    )
    starting.start()
    try:
        with _admin(url) as conn:
            # Wait until the starting worker is queued for its lock on agent_tasks.
            for _ in range(1000):
                row = conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND mode = 'ShareLock'"
                ).fetchone()
                if (row is not None and row[0] > 0) or not starting.is_alive():
                    break
                threading.Event().wait(0.01)
        took = _timed_heartbeat(url, store, lease, holder.rollback)
        assert starting.is_alive(), "it cannot have built the index while the table was held"
    finally:
        holder.rollback()
        starting.join(WAIT_S)
        holder.close()
    assert took < HEARTBEAT_BOUND_S
    assert len(opened) == 1  # once the table was free, it did its work
    with _admin(url) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = 'ix_agent_tasks_fence'",
            (schema,),
        ).fetchone()
    assert found is not None
    run_inline(opened[0].close())
    run_inline(store.close())


@pytest.mark.parametrize("step", ["create_schema", "_check_version"])
def test_a_connection_lost_during_start_up_is_retried(
    url: str, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    run_inline(LeaseStore.open_inline(url, clock=VirtualClock()).close())
    real = getattr(backend, step)
    cut: list[int] = []

    def cut_once(conn: backend.DBConnection, target: backend.Target) -> None:
        if not cut:
            cut.append(conn.info.backend_pid)
            with _admin(url) as admin:
                admin.execute("SELECT pg_terminate_backend(%s, 5000)", (cut[0],))
        real(conn, target)

    monkeypatch.setattr(backend, step, cut_once)
    store = LeaseStore.open_inline(url, clock=VirtualClock())
    assert cut
    run_inline(store.enqueue("t1"))
    assert [t.task_id for t in run_inline(store.tasks())] == ["t1"]
    run_inline(store.close())


def test_a_session_idle_inside_a_transaction_is_ended_by_the_server(url: str) -> None:
    store = LeaseStore.open_inline(url, clock=VirtualClock())
    session: backend.Session = store.driver.session  # type: ignore[attr-defined]
    shown = session.read(lambda c: c.execute("SHOW idle_in_transaction_session_timeout").fetchone())
    assert shown == (f"{backend.IDLE_IN_TRANSACTION_TIMEOUT_MS // 1000}s",)
    run_inline(store.close())


def test_a_server_still_starting_up_is_waited_for_within_the_reconnect_bound(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'the database system is starting up' is a passing answer: the store asks again (the
    server's refusal is played by the first two connection attempts)."""
    real = psycopg.connect
    refusals: list[str] = []

    def starting_up(*args: Any, **kwargs: Any) -> Any:
        if len(refusals) < 2:
            refusals.append("refused")
            raise psycopg.OperationalError(
                "connection to server failed: FATAL:  the database system is starting up"
            )
        return real(*args, **kwargs)

    monkeypatch.setattr(backend.psycopg, "connect", starting_up)
    store = LeaseStore.open_inline(url, clock=VirtualClock())
    run_inline(store.enqueue("t1"))
    assert [t.task_id for t in run_inline(store.tasks())] == ["t1"]
    run_inline(store.close())
    assert refusals == ["refused", "refused"]


def test_a_refusal_that_will_not_pass_is_still_one_line_at_once(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def wrong_password(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise psycopg.OperationalError(
            'connection to server failed: FATAL:  password authentication failed for user "x"'
        )

    monkeypatch.setattr(backend.psycopg, "connect", wrong_password)
    with pytest.raises(backend.StoreError, match=r"cannot connect: .*password authentication"):
        LeaseStore.open_inline(url, clock=VirtualClock())
    assert calls == [1]
