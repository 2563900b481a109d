"""Worker behaviour under each fault, on the virtual clock."""

import json
from typing import Any

import pytest

from core.engine.config import LeaseConfig, Mode
from core.sim.books import check_books, figures
from core.sim.kinds import KINDS
from core.sim.simulation import Simulation
from core.sim.spec import (
    AddWorker,
    Advance,
    Approve,
    Claim,
    Kill,
    SimSettings,
    TaskSpec,
    WorkerSpec,
    Write,
)
from tests.simkit import act, advance, make_sim, named, refused


def test_healthy_worker_claims_renews_checkpoints_and_completes() -> None:
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("floor6", steps=3),))
    advance(sim, 60)
    task = sim.snapshot().task("floor6")
    assert task is not None
    assert task.row.status == "done" and task.row.owner_id == "acheng"
    assert task.checkpoint_step == 3
    assert [e.detail["key"] for e in named(sim, "write_accepted")] == [
        "floor6/1",
        "floor6/2",
        "floor6/3",
    ]
    assert named(sim, "renewed"), "heartbeats run on their own while work goes on"
    assert sim.snapshot().violations == {}


def test_heartbeats_renew_before_each_step_ends_even_when_steps_are_long() -> None:
    # One step of 150 s with a 60 s ttl: only an independent heartbeat keeps the lease.
    sim = make_sim(
        workers=("acheng", "linzhou"), tasks=(TaskSpec("t", steps=1, step_time_ms=150_000),)
    )
    advance(sim, 200)
    assert [e.worker_id for e in named(sim, "claimed")] == ["acheng"]
    assert len(named(sim, "renewed")) >= 7
    task = sim.snapshot().task("t")
    assert task is not None and task.row.status == "done"


def test_frozen_heartbeat_loses_the_lease_to_a_higher_fence_token() -> None:
    sim = make_sim()
    advance(sim, 25)
    act(sim, "freeze_heartbeat", worker="acheng")
    advance(sim, 70)
    snap = sim.snapshot()
    task = snap.task("floor6")
    assert task is not None
    assert task.row.owner_id == "linzhou"
    assert task.row.fence_token == 2 and task.row.lease_token == 2
    (expired,) = named(sim, "lease_expired")
    assert expired.at == 80_001  # the instant now > lease_expires_at (80 000 ms)
    # Acheng kept working through the fog; her next page is behind the task's newest fence.
    (refused,) = named(sim, "write_rejected", worker_id="acheng", reason="fenced")
    assert (refused.fence_token, refused.detail["current_fence_token"]) == (1, 2)
    assert not named(sim, "checkpoint_rejected", worker_id="acheng")  # she stopped there
    # Linzhou resumed after Acheng's last accepted checkpoint instead of from step 1.
    claimed = named(sim, "claimed", worker_id="linzhou")[0]
    first_write = named(sim, "write_accepted", worker_id="linzhou")[0]
    assert first_write.at > claimed.at
    assert first_write.detail["key"] == "floor6/9"
    assert snap.violations == {}


def test_frozen_holder_is_fenced_on_a_page_the_successor_already_wrote() -> None:
    sim = make_sim(manual=("acheng", "linzhou"))
    act(sim, "claim", worker="acheng")
    act(sim, "freeze_heartbeat", worker="acheng")
    advance(sim, 60)
    assert refused(sim, "claim", worker="linzhou").message == "nothing to claim"
    assert not named(sim, "claimed", worker_id="linzhou"), "a live lease cannot be claimed"
    advance(sim, 0.001)  # now > lease_expires_at: expired, claimable
    act(sim, "claim", worker="linzhou")
    act(sim, "write", worker="linzhou", key="floor6/1", value="linzhou's page")
    refused(sim, "write", worker="acheng", key="floor6/1", value="stale page")
    snap = sim.snapshot()
    rejection = snap.rejections[-1]
    assert (rejection.worker_id, rejection.reason, rejection.fence_token) == ("acheng", "fenced", 1)
    assert rejection.current_fence_token == 2
    page = next(p for p in snap.ledger if p.key == "floor6/1")
    assert page.writer == "linzhou" and page.fence_token == 2
    # The manual holder keeps its stale lease in memory; every later call is refused too.
    refused(sim, "checkpoint", worker="acheng", step=1)
    refused(sim, "complete", worker="acheng")
    reasons = [(r.operation, r.reason) for r in sim.snapshot().rejections]
    assert reasons[-2:] == [("checkpoint", "superseded"), ("complete", "superseded")]


def test_stalled_worker_returns_at_midnight_and_is_fenced_out() -> None:
    sim = make_sim(workers=("linzhou", "elder"), tasks=(TaskSpec("floor6", steps=8),))
    advance(sim, 25)  # linzhou is in step 3
    act(sim, "stall", worker="linzhou")
    advance(sim, 120)  # the lease expires; the elder claims and works on
    assert sim.snapshot().worker("linzhou").state == "stalled"  # type: ignore[union-attr]
    act(sim, "resume", worker="linzhou")
    advance(sim, 120)
    snap = sim.snapshot()
    task = snap.task("floor6")
    assert task is not None and task.row.status == "done" and task.row.owner_id == "elder"
    stale = [r for r in snap.rejections if r.worker_id == "linzhou"]
    assert stale, "linzhou's return with the old key is refused"
    assert {r.reason for r in stale} <= {"fenced", "superseded", "expired"}
    assert snap.violations == {}


def test_stall_keeps_memory_and_remaining_step_time() -> None:
    sim = make_sim(workers=("linzhou",), tasks=(TaskSpec("t", steps=1, step_time_ms=10_000),))
    advance(sim, 4)
    act(sim, "stall", worker="linzhou")
    advance(sim, 30)
    act(sim, "resume", worker="linzhou")
    advance(sim, 5.999)
    assert not named(sim, "write_accepted")  # 6 s of the step were still to go
    advance(sim, 0.001)
    assert named(sim, "write_accepted", worker_id="linzhou")


def test_killed_worker_leaves_the_lease_to_expire_and_successor_resumes_from_checkpoint() -> None:
    sim = make_sim(tasks=(TaskSpec("floor6", steps=6),))
    advance(sim, 35)  # acheng has checkpointed step 3
    act(sim, "kill", worker="acheng")
    snap = sim.snapshot()
    assert snap.worker("acheng").state == "dead"  # type: ignore[union-attr]
    assert snap.task("floor6").row.owner_id == "acheng"  # type: ignore[union-attr]
    advance(sim, 120)
    snap = sim.snapshot()
    task = snap.task("floor6")
    assert task is not None and task.row.status == "done" and task.row.owner_id == "linzhou"
    assert snap.metrics.wasted_steps == 0
    keys = [e.detail["key"] for e in named(sim, "write_accepted", worker_id="linzhou")]
    assert keys == ["floor6/4", "floor6/5", "floor6/6"]
    # Recovery ran from acheng's last heartbeat (20 s) to linzhou's claim.
    claim = named(sim, "claimed", worker_id="linzhou")[0]
    assert snap.metrics.recovery_time_ms == claim.at - 20_000


def test_restart_brings_back_a_fresh_worker_with_the_same_id() -> None:
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=3),))
    advance(sim, 15)
    act(sim, "kill", worker="acheng")
    act(sim, "restart", worker="acheng")
    w = sim.snapshot().worker("acheng")
    assert w is not None and w.state == "idle" and w.lease_token is None
    advance(sim, 120)
    task = sim.snapshot().task("t")
    assert task is not None and task.row.status == "done" and task.row.lease_token == 2


def test_partition_fails_calls_and_heal_ends_it() -> None:
    sim = make_sim(workers=("acheng", "linzhou"), tasks=(TaskSpec("t", steps=10),))
    advance(sim, 15)
    act(sim, "partition", worker="acheng")
    assert sim.snapshot().worker("acheng").state == "partitioned"  # type: ignore[union-attr]
    advance(sim, 90)
    snap = sim.snapshot()
    assert any(r.reason == "partitioned" and r.worker_id == "acheng" for r in snap.rejections)
    assert snap.task("t").row.owner_id == "linzhou"  # type: ignore[union-attr]
    act(sim, "heal", worker="acheng")
    advance(sim, 200)
    snap = sim.snapshot()
    assert snap.task("t").row.status == "done"  # type: ignore[union-attr]
    assert snap.violations == {}


def test_slow_worker_takes_factor_times_longer_per_step() -> None:
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=3),))
    act(sim, "slow", worker="acheng", factor=3.0)  # step 1 is already under way at t=0
    advance(sim, 10)
    assert len(named(sim, "write_accepted")) == 1
    advance(sim, 29.999)  # step 2 started slowed: 30 s
    assert len(named(sim, "write_accepted")) == 1
    advance(sim, 0.001)
    assert len(named(sim, "write_accepted")) == 2
    act(sim, "resume", worker="acheng")  # the step under way keeps its pace
    advance(sim, 30)
    assert len(named(sim, "write_accepted")) == 3


def test_skew_does_not_matter_when_the_store_clock_judges() -> None:
    sim = make_sim(skew={"linzhou": 50_000}, tasks=(TaskSpec("t", steps=12),))
    advance(sim, 200)
    assert [e.worker_id for e in named(sim, "claimed")] == ["acheng"]
    assert sim.snapshot().violations == {}


def test_resume_ends_freeze_stall_partition_and_slow() -> None:
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=2),))
    for fault in ("freeze_heartbeat", "stall", "partition"):
        act(sim, fault, worker="acheng")
    act(sim, "slow", worker="acheng", factor=2.0)
    act(sim, "resume", worker="acheng")
    w = sim.snapshot().worker("acheng")
    assert w is not None
    assert (w.heartbeat_frozen, w.stalled, w.partitioned, w.slow_factor) == (
        False,
        False,
        False,
        1.0,
    )
    (resumed,) = named(sim, "resumed")
    assert resumed.detail["ended"] == "freeze,stall,partition,slow"


def test_self_fencing_worker_stops_by_itself_after_its_renew_deadline() -> None:
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=12),), self_fencing=True)
    advance(sim, 5)
    act(sim, "freeze_heartbeat", worker="acheng")
    advance(sim, 60)
    (fenced,) = named(sim, "self_fenced")
    assert fenced.worker_id == "acheng"
    # At its renew deadline (2/3 of the ttl), not at the end of the step it was on, and
    # before its lease expires.
    assert fenced.at == 40_000 < fenced.detail["expires_at"]
    # It wrote nothing after its deadline.
    assert all(e.at <= 40_000 for e in named(sim, "write_accepted"))


def test_worker_view_shows_what_the_worker_believes() -> None:
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=12),), skew={"acheng": 5_000})
    advance(sim, 25)
    w = sim.snapshot().worker("acheng")
    assert w is not None
    assert (w.state, w.task_id, w.step, w.lease_token, w.fence_token) == ("working", "t", 3, 1, 1)
    assert w.store_remaining_ms == 80_000 - 25_000
    assert w.believed_remaining_ms == 80_000 - 30_000  # its clock runs 5 s ahead
    assert w.heartbeat_age_ms == 5_000


def test_long_ttl_config_is_validated() -> None:
    import pytest

    from core.engine.errors import ConfigError

    with pytest.raises(ConfigError):
        make_sim(
            config=LeaseConfig(ttl_ms=10_000, heartbeat_every_ms=8_000, renew_deadline_ms=5_000)
        )


def test_the_keeper_notes_an_expiry_before_a_claim_due_at_the_same_instant() -> None:
    # A poll slower than the ttl can be booked for exactly expires_at + 1 before the keeper's
    # look is; the expiry must still be on the register before the task changes hands.
    config = LeaseConfig(
        ttl_ms=10_000, heartbeat_every_ms=3_000, renew_deadline_ms=6_000, poll_every_ms=12_000
    )
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=20),), config=config)
    advance(sim, 1.001)
    act(sim, "add_worker", worker="linzhou")  # polls now, then at 13.001 s
    advance(sim, 2.499)  # acheng renews at 3 s: her lease now runs to 13 s
    act(sim, "kill", worker="acheng")
    advance(sim, 10.001)
    names = [e.event for e in sim.events() if e.at == 13_001]
    assert names[:2] == ["lease_expired", "claimed"]


def test_an_action_that_does_not_fit_the_run_is_an_action_error() -> None:
    import pytest

    from core.sim.simulation import ActionError
    from core.sim.spec import Approve, Enqueue

    sim = make_sim()
    with pytest.raises(ActionError, match="already exists"):
        sim.apply(Enqueue(task="floor6"))
    with pytest.raises(ActionError, match="unknown task"):
        sim.apply(Approve(task="nowhere"))


def test_apply_returns_the_refusal_it_caused_with_its_row() -> None:
    sim = make_sim(manual=("acheng", "linzhou"))
    act(sim, "claim", worker="acheng")
    act(sim, "freeze_heartbeat", worker="acheng")
    advance(sim, 60.001)
    act(sim, "claim", worker="linzhou")
    result = sim.apply(Write(worker="acheng", key="floor6/1", value="stale page"))
    assert not result.ok and result.rejection is not None
    assert (result.rejection.operation, result.rejection.reason) == ("write", "fenced")
    assert result.rejection == sim.rejections[-1]
    # each refusal carries its own row; one the store never wrote (a dead worker) none
    again = sim.apply(Write(worker="acheng", key="floor6/1", value="x"))
    sim.apply(Kill(worker="acheng"))
    dead = sim.apply(Write(worker="acheng", key="floor6/1", value="x"))
    assert again.rejection is not None and again.rejection.seq > result.rejection.seq
    assert not dead.ok and dead.rejection is None


def test_worker_faults_are_copies() -> None:
    sim = make_sim()
    act(sim, "partition", worker="acheng")
    faults = sim.worker_faults()
    assert faults["acheng"].partitioned and not faults["linzhou"].partitioned
    faults["acheng"].partitioned = False
    assert sim.worker_faults()["acheng"].partitioned
    assert sim.worker_ids() == ("acheng", "linzhou")


# -- queue order, partitioned claims, ignored approvals, checkpoints that carry the work ----


def test_tasks_enqueued_in_the_app_are_claimed_in_that_order() -> None:
    sim = make_sim(("w1",), ())
    for task_id in ("d", "c", "b", "a"):
        act(sim, "enqueue", task=task_id, steps=1, step_time_ms=1_000)
    advance(sim, 30)
    claims = named(sim, "claimed")
    assert [(e.task_id, e.fence_token) for e in claims] == [("d", 1), ("c", 2), ("b", 3), ("a", 4)]


def test_a_partitioned_claim_is_filed_under_the_task_asked_for() -> None:
    sim = make_sim(
        ("w1",), (TaskSpec("t1"), TaskSpec("t2")), manual=("w1",), config=LeaseConfig(10_000)
    )
    act(sim, "claim", worker="w1", task="t1")
    act(sim, "partition", worker="w1")
    result = sim.apply(Claim(worker="w1", task="t2"))
    assert not result.ok
    (refused,) = named(sim, "claim_rejected")
    assert (refused.task_id, refused.reason) == ("t2", "partitioned")
    assert (refused.lease_token, refused.fence_token) == (None, None)  # t1's are not t2's
    (rejection,) = sim.snapshot().rejections
    assert (rejection.task_id, rejection.operation) == ("t2", "claim")
    # An untargeted claim names no task.
    sim.apply(Claim(worker="w1"))
    assert named(sim, "claim_rejected")[-1].task_id is None


def test_approving_a_running_task_is_ignored_and_not_a_rejection() -> None:
    sim = make_sim(("w1",), (TaskSpec("t1"),))
    advance(sim, 1)
    result = sim.apply(Approve(task="t1"))
    assert (result.ok, result.ignored) == (True, True)
    assert "t1" in result.message and "not waiting" in result.message
    assert sim.snapshot().rejections == ()
    (ev,) = named(sim, "approve_ignored")
    assert (ev.reason, ev.detail) == ("not_waiting", {"status": "running"})
    task = sim.snapshot().task("t1")
    assert task is not None and task.row.status == "running"


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
    sim.apply(Advance(by_ms=kill_at_ms))
    sim.apply(Kill(worker="first"))
    sim.apply(AddWorker(worker="second"))
    sim.apply(Advance(by_ms=30_000))
    if kind == "approval":
        sim.apply(Approve(task="t"))
        sim.apply(Advance(by_ms=30_000))
    task = sim.snapshot().task("t")
    assert task is not None and task.row.status == "done"
    assert named(sim, "claimed", worker_id="second")
    result = json.loads(task.row.result or "null")
    if kind != "ledger":
        assert result == _clean_result(kind, steps)
        return
    # The successor reads the village reports as counted again at the handover: the books
    # it finishes add up from the box on, and the result is their last total.
    ledger = sim.snapshot().ledger
    assert check_books(ledger) == ()
    last = figures(next(p.value for p in ledger if p.key == f"t/{steps}"))
    assert last is not None and result == {"pages": steps, "total": last.total}


# -- restarts, stuck tasks and lease identity ------------------------------------------------


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
