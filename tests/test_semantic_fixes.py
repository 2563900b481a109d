"""Semantics the format document and the README promise, each once found broken by
playing generated scenarios: queue order, where a partitioned claim is filed, when a task
is stuck, approvals of a task that is not waiting, and checkpoints that carry the work."""

import json
from typing import Any

import pytest

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode
from core.engine.store import LeaseStore
from core.scenarios.format import parse_scenario
from core.scenarios.player import PlayResult, play, render_line
from core.scenarios.session import Session
from core.sim.kinds import KINDS
from core.sim.simulation import Simulation
from core.sim.spec import Action, SimSettings, TaskSpec, WorkerSpec
from tests.simkit import act, advance, make_sim, named

TTL = 60_000

# -- queue order: first in, first out -------------------------------------------------------


async def test_an_untargeted_claim_takes_the_task_enqueued_first(store: LeaseStore) -> None:
    for task_id in ("zeta", "alpha", "mu"):
        await store.enqueue(task_id)  # the same millisecond: only the order tells them apart
    claimed = [await store.claim(w) for w in ("w1", "w2", "w3")]
    assert [(c.task_id, c.fence_token) for c in claimed if c] == [
        ("zeta", 1),
        ("alpha", 2),
        ("mu", 3),
    ]


async def test_a_task_back_in_the_queue_goes_behind_those_waiting(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await store.enqueue("first")
    await store.enqueue("second")
    lease = await store.claim("w1")
    assert lease is not None and lease.task_id == "first"
    assert await store.fail(lease, "flaky", retry=True) == "queued"
    await store.enqueue("third")
    order = [await store.claim(w) for w in ("w2", "w3", "w4")]
    assert [c.task_id for c in order if c] == ["second", "first", "third"]


async def test_an_approved_task_queues_behind_those_waiting(store: LeaseStore) -> None:
    await store.enqueue("grant")
    lease = await store.claim("w1")
    assert lease is not None
    await store.park(lease)
    await store.enqueue("other")
    await store.approve("grant")
    order = [await store.claim(w) for w in ("w2", "w3")]
    assert [c.task_id for c in order if c] == ["other", "grant"]


async def test_an_expired_task_is_rescued_before_the_queue(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await store.enqueue("held")
    lease = await store.claim("w1")
    assert lease is not None
    await store.enqueue("waiting")
    clock.advance(TTL + 1)
    rescued = await store.claim("w2")
    assert rescued is not None and rescued.task_id == "held"


def test_the_claim_and_the_queue_draw_read_the_queue_index(store: LeaseStore, backend: str) -> None:
    if backend != "sqlite":
        pytest.skip("reads SQLite's EXPLAIN QUERY PLAN")
    conn = store.driver.conn  # type: ignore[attr-defined]
    names = ("now", "judge_now", "ttl", "deadline", "worker_id", "task_id", "kind")
    params = dict.fromkeys(names, 0) | {"max_attempts": 1, "input_payload": "null"}
    for stmt in (store.sql.claim_any, store.sql.enqueue, store.sql.approve, store.sql.fail):
        plan = " | ".join(
            str(row[3])
            for row in conn.execute(
                "EXPLAIN QUERY PLAN " + stmt.sql,
                params | {"retry": 1, "error_code": "", "lease_token": 0, "fence_token": 0},
            )
        )
        assert "ix_agent_tasks_queue" in plan, plan
        assert "SCAN agent_tasks |" not in plan + " |"  # never the whole table


def test_tasks_enqueued_in_the_app_are_claimed_in_that_order() -> None:
    sim = make_sim(("w1",), ())
    for task_id in ("d", "c", "b", "a"):
        act(sim, "enqueue", task=task_id, steps=1, step_time_ms=1_000)
    advance(sim, 30)
    claims = named(sim, "claimed")
    assert [(e.task_id, e.fence_token) for e in claims] == [("d", 1), ("c", 2), ("b", 3), ("a", 4)]


# -- a partitioned claim is about the task it asked for ---------------------------------------


def test_a_partitioned_claim_is_filed_under_the_task_asked_for() -> None:
    sim = make_sim(
        ("w1",), (TaskSpec("t1"), TaskSpec("t2")), manual=("w1",), config=LeaseConfig(10_000)
    )
    act(sim, "claim", worker="w1", task="t1")
    act(sim, "partition", worker="w1")
    result = sim.apply(Action("claim", worker="w1", task="t2"))
    assert not result.ok
    (refused,) = named(sim, "claim_rejected")
    assert (refused.task_id, refused.reason) == ("t2", "partitioned")
    assert (refused.lease_token, refused.fence_token) == (None, None)  # t1's are not t2's
    (rejection,) = sim.snapshot().rejections
    assert (rejection.task_id, rejection.operation) == ("t2", "claim")
    # An untargeted claim names no task.
    sim.apply(Action("claim", worker="w1"))
    assert named(sim, "claim_rejected")[-1].task_id is None


# -- stuck_task: out of reach for too long while someone looks for work --------------------


def _stuck_after_kill(mode: Mode) -> Simulation:
    sim = make_sim(
        ("w1", "w2"), (TaskSpec("t1"),), mode=mode, manual=("w1", "w2"), config=LeaseConfig(10_000)
    )
    act(sim, "claim", worker="w1")
    act(sim, "kill", worker="w1")
    advance(sim, 31)
    return sim


def test_a_claimable_task_is_not_stuck() -> None:
    """The lease ran out at 10 s; from then on anyone may claim it, so nothing is stuck
    even if nobody does (both workers here are manual)."""
    sim = _stuck_after_kill(Mode.CORRECT)
    assert sim.snapshot().violations == {}
    advance(sim, 600)
    assert sim.snapshot().violations == {}


def test_a_task_whose_lease_cannot_expire_is_stuck() -> None:
    sim = _stuck_after_kill(Mode.NO_EXPIRY)
    assert sim.snapshot().violations == {"stuck_task": 1}


def test_a_long_lease_is_out_of_reach_until_it_expires() -> None:
    """long_lease: one hour of lease, three of bound; the dead holder's task is claimable
    after the hour, so it is never stuck, only slow to recover."""
    sim = make_sim(("w1", "w2"), (TaskSpec("t1", steps=3),), mode=Mode.LONG_LEASE)
    advance(sim, 5)
    act(sim, "kill", worker=next(iter(named(sim, "claimed"))).worker_id)
    advance(sim, 4 * 3600)
    assert sim.snapshot().violations == {}
    task = sim.snapshot().task("t1")
    assert task is not None and task.row.status == "done"


# -- approving a task that is not waiting: ignored, not a rejection ---------------------------


def test_approving_a_running_task_is_ignored_and_not_a_rejection() -> None:
    sim = make_sim(("w1",), (TaskSpec("t1"),))
    advance(sim, 1)
    result = sim.apply(Action("approve", task="t1"))
    assert (result.ok, result.ignored) == (True, True)
    assert "t1" in result.message and "not waiting" in result.message
    assert sim.snapshot().rejections == ()
    (ev,) = named(sim, "approve_ignored")
    assert (ev.reason, ev.detail) == ("not_waiting", {"status": "running"})
    task = sim.snapshot().task("t1")
    assert task is not None and task.row.status == "running"


SCENARIO = """
title = "approve too early"
lease_ttl = "60s"

[[workers]]
id = "w1"

[[tasks]]
id = "t1"

[[step]]
do = "advance"
by = "1s"

[[step]]
do = "reject"
task = "t1"
expect = [{ rejected = "any", count = 0 }, { task = "t1", status = "running" }]
"""


def test_the_player_and_the_session_say_the_decision_was_ignored() -> None:
    scenario = parse_scenario(SCENARIO, "early.toml")
    result = PlayResult()
    records = list(play(scenario, result=result))
    assert (result.passed, result.failed) == (2, 0)
    (ignored,) = [r for r in records if r.get("event") == "reject_ignored"]
    line = "".join(text for text, _ in render_line(ignored))
    assert "reject_ignored" in line and "t1" in line and "not_waiting" in line
    zh = "".join(text for text, _ in render_line(ignored, "zh"))
    assert "驳回被忽略" in zh
    session = Session(scenario)
    session.next_step()
    outcome = session.next_step()
    assert outcome is not None and outcome.ok
    assert outcome.result is not None and outcome.result.ignored


# -- the checkpoint carries the work -----------------------------------------------------------


def test_a_checkpoint_by_hand_carries_the_running_total() -> None:
    """Scenario 01's walk: Acheng writes pages of 120 and 95 by hand and checkpoints; the
    fog takes her lease and Linzhou goes on from the box, total included."""
    sim = make_sim(("acheng",), (TaskSpec("floor6", steps=6),), manual=("acheng",))
    act(sim, "claim", worker="acheng")
    advance(sim, 10)
    act(sim, "write", worker="acheng", key="floor6/1", value="page 1: north bank, 120 dan")
    act(sim, "checkpoint", worker="acheng", step=1)
    advance(sim, 10)
    act(sim, "write", worker="acheng", key="floor6/2", value="page 2: south bank, 95 dan")
    act(sim, "checkpoint", worker="acheng", step=2)
    saved = sim.snapshot().checkpoints[0]
    assert (saved.step, saved.state["total"], saved.state["reconciled"]) == (2, 215, 2)
    act(sim, "add_worker", worker="linzhou")
    advance(sim, 120)
    snap = sim.snapshot()
    page3 = next(p for p in snap.ledger if p.key == "floor6/3")
    grain = int(page3.value.split(" dan")[0].rsplit(" ", 1)[1])
    assert page3.writer == "linzhou" and page3.value.endswith(f"(total {215 + grain})")
    task = snap.task("floor6")
    assert task is not None and task.row.result is not None
    pages = [p for p in snap.ledger if p.key.startswith("floor6/")]
    total = sum(int(p.value.split(" dan")[0].rsplit(" ", 1)[1]) for p in pages)
    assert json.loads(task.row.result) == {"pages": 6, "total": total}


def test_a_checkpoint_by_hand_of_an_unwritten_step_is_worked_from_the_last_known() -> None:
    sim = make_sim(("w1",), (TaskSpec("t", kind="browser", steps=4),), manual=("w1",))
    act(sim, "claim", worker="w1")
    act(sim, "checkpoint", worker="w1", step=2)
    kind = KINDS["browser"]
    state = kind.initial_state("t", 4)
    for step in (1, 2):
        state = kind.run_step("t", step, 4, state).state
    assert sim.snapshot().checkpoints[0].state == state


def _clean_result(kind: str, steps: int) -> Any:
    sim = make_sim(("w1",), (TaskSpec("t", kind=kind, steps=steps, step_time_ms=1_000),))
    advance(sim, 30)
    if kind == "approval":
        act(sim, "approve", task="t")
        advance(sim, 30)
    task = sim.snapshot().task("t")
    assert task is not None and task.row.status == "done"
    return json.loads(task.row.result or "null")


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("kill_at_ms", [1_500, 2_500, 3_200, 4_900])
def test_every_kind_finishes_with_the_same_result_after_a_handover(
    kind: str, kill_at_ms: int
) -> None:
    """Whoever takes over from the box ends with the result of an uninterrupted run: the
    checkpoint held everything the successor needed."""
    steps = 6
    settings = SimSettings(
        config=LeaseConfig(ttl_ms=3_000),
        workers=(WorkerSpec("first"),),
        tasks=(TaskSpec("t", kind=kind, steps=steps, step_time_ms=1_000),),
    )
    sim = Simulation(settings)
    sim.apply(Action("advance", by_ms=kill_at_ms))
    sim.apply(Action("kill", worker="first"))
    sim.apply(Action("add_worker", worker="second"))
    sim.apply(Action("advance", by_ms=30_000))
    if kind == "approval":
        sim.apply(Action("approve", task="t"))
        sim.apply(Action("advance", by_ms=30_000))
    task = sim.snapshot().task("t")
    assert task is not None and task.row.status == "done"
    assert named(sim, "claimed", worker_id="second")
    assert json.loads(task.row.result or "null") == _clean_result(kind, steps)
