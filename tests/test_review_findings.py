"""Regression tests from a correctness review of the engine, simulation and checker."""

import sqlite3
import time

import pytest

from core.engine.backends import sqlite as backend
from core.engine.config import Mode
from core.engine.errors import StoreError
from core.sim.spec import TaskSpec
from tests.simkit import act, advance, make_sim, named


def test_restarting_a_live_worker_orphans_its_task_like_a_kill() -> None:
    # A restart without a kill first is a crash too: the fresh worker has an empty memory.
    # In no_expiry mode nobody can ever free the task it held, so it is stuck.
    sim = make_sim(
        mode=Mode.NO_EXPIRY, workers=("acheng", "linzhou"), tasks=(TaskSpec("t", steps=6),)
    )
    advance(sim, 15)
    holder = sim.snapshot().task("t").row.owner_id  # type: ignore[union-attr]
    assert holder is not None
    act(sim, "restart", worker=holder)
    advance(sim, 400)
    assert sim.snapshot().violations == {"stuck_task": 1}


def test_a_worker_stalled_then_killed_and_restarted_is_not_stalled_any_more() -> None:
    # no_expiry: acheng is stalled, killed and restarted; the fresh acheng claims the second
    # task and works it with its heartbeat frozen. It is alive and working, not stalled or
    # dead, so its task is not stuck however old its last heartbeat.
    sim = make_sim(
        mode=Mode.NO_EXPIRY,
        workers=("acheng", "linzhou"),
        tasks=(TaskSpec("t1", steps=40), TaskSpec("t2", steps=60)),
    )
    advance(sim, 1)
    t1 = sim.snapshot().task("t1").row.owner_id  # type: ignore[union-attr]
    act(sim, "stall", worker=t1)
    act(sim, "kill", worker=t1)
    advance(sim, 1)
    # t1 is orphaned for ever in no_expiry mode: one stuck_task, rightly.
    act(sim, "restart", worker=t1)
    advance(sim, 1)
    act(sim, "enqueue", task="t3", steps=60, step_time_ms=10_000)
    advance(sim, 10)
    t3 = sim.snapshot().task("t3").row.owner_id  # type: ignore[union-attr]
    assert t3 == t1
    act(sim, "add_worker", worker="elder")  # someone idle, who could take a stuck task
    act(sim, "freeze_heartbeat", worker=t1)
    advance(sim, 500)
    stuck = [e.task_id for e in named(sim, "violation", reason="stuck_task")]
    assert stuck == ["t1"]


def test_a_stuck_task_found_while_an_older_look_is_pending_is_not_missed() -> None:
    # no_expiry: linzhou's heartbeat is frozen from its claim at 0 s; acheng renews until it
    # stalls at 100 s; linzhou stalls at 101 s. linzhou's task is stuck from 181 s (3 x ttl
    # after its last heartbeat, elder idle), before acheng's; linzhou resumes at 250 s.
    sim = make_sim(
        mode=Mode.NO_EXPIRY,
        workers=("acheng", "linzhou", "elder"),
        tasks=(TaskSpec("a", steps=60), TaskSpec("b", steps=60)),
    )
    snap = sim.snapshot()
    owners = {t.row.task_id: t.row.owner_id for t in snap.tasks}
    first, second = owners["a"], owners["b"]
    assert first and second and first != second
    act(sim, "freeze_heartbeat", worker=second)
    advance(sim, 100)
    act(sim, "stall", worker=first)
    advance(sim, 1)
    act(sim, "stall", worker=second)
    advance(sim, 149)
    act(sim, "resume", worker=second)
    advance(sim, 1)
    stuck = [(e.task_id, e.at) for e in named(sim, "violation", reason="stuck_task")]
    assert stuck and stuck[0][0] == "b" and stuck[0][1] <= 182_000, stuck


def test_a_busy_error_that_already_rolled_the_transaction_back_is_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SQLite may roll a transaction back by itself on SQLITE_BUSY (and on FULL, IOERR,
    # NOMEM); the retry must not trip over a ROLLBACK with no transaction left.
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    conn = backend.connect(":memory:")
    backend.create_schema(conn)
    calls: list[int] = []

    def fn(c: sqlite3.Connection) -> int:
        calls.append(1)
        if len(calls) == 1:
            c.execute("ROLLBACK")  # what SQLite's automatic rollback leaves behind
            raise sqlite3.OperationalError("database is locked")
        c.execute("INSERT INTO store_meta (key, value) VALUES ('probe', 'x')")
        return 7

    assert backend.run_write(conn, fn) == 7
    assert len(calls) == 2 and not conn.in_transaction
    assert conn.execute("SELECT value FROM store_meta WHERE key = 'probe'").fetchall() == [("x",)]
    conn.close()


def test_a_statement_that_stays_busy_is_reported_as_a_store_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    conn = backend.connect(":memory:")
    backend.create_schema(conn)

    def fn(c: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(StoreError, match="busy"):
        backend.run_write(conn, fn)
    assert not conn.in_transaction
    conn.close()


def test_a_lease_of_another_task_with_the_same_lease_token_is_not_mistaken_for_its_own() -> None:
    # lease_token counts per task, so two tasks' first leases both have token 1. A manual
    # claim through the facade by an autopilot worker busy on "a" hands it b's lease 1; its
    # work loop and heartbeat for "a" must not take that lease for theirs (they did: a's
    # pages went into the ledger under b's fence, a's checkpoints were saved as b's, and b
    # was completed without one of its own steps).
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("a", steps=3),))
    advance(sim, 1)
    act(sim, "enqueue", task="b", steps=3)
    act(sim, "claim", worker="acheng", task="b")
    advance(sim, 400)
    for ev in named(sim, "write_accepted"):
        assert str(ev.detail["key"]).startswith(f"{ev.task_id}/"), ev
    snap = sim.snapshot()
    assert {t.row.task_id: t.row.status for t in snap.tasks} == {"a": "done", "b": "done"}
    assert snap.violations == {}
