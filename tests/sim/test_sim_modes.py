"""Each mistake mode shows its damage beside the correct run, under the same faults."""

import json
import random

import pytest

from core.engine.config import LeaseConfig, Mode
from core.sim.simulation import Simulation
from core.sim.spec import (
    ACTION_TYPES,
    WORKER_ACTIONS,
    Action,
    Advance,
    Approve,
    Restart,
    Resume,
    SimSettings,
    TaskSpec,
    WorkerSpec,
)
from tests.simkit import act, advance, history, make_sim, named


def kill_the_holder(mode: Mode) -> Simulation:
    sim = make_sim(mode=mode, tasks=(TaskSpec("floor6", steps=6),))
    advance(sim, 25)
    act(sim, "kill", worker="acheng")
    advance(sim, 4000)
    return sim


def test_correct_mode_recovers_a_killed_holder_within_a_ttl() -> None:
    sim = kill_the_holder(Mode.CORRECT)
    snap = sim.snapshot()
    assert snap.violations == {}
    assert snap.task("floor6").row.status == "done"  # type: ignore[union-attr]
    assert snap.metrics.recovery_time_ms <= 60_000 + 5_000 + 1


def test_no_expiry_leaves_the_task_stuck_forever() -> None:
    sim = kill_the_holder(Mode.NO_EXPIRY)
    snap = sim.snapshot()
    assert snap.violations == {"stuck_task": 1}
    assert snap.task("floor6").row.status == "running"  # type: ignore[union-attr]
    assert snap.task("floor6").row.owner_id == "acheng"  # type: ignore[union-attr]
    (violation,) = named(sim, "violation")
    assert violation.reason == "stuck_task" and violation.task_id == "floor6"
    assert violation.at == 20_000 + 3 * 60_000 + 1  # 3 x ttl after its last heartbeat


def test_long_lease_shows_in_recovery_time_not_as_a_violation() -> None:
    sim = kill_the_holder(Mode.LONG_LEASE)
    snap = sim.snapshot()
    assert snap.violations == {}
    assert snap.task("floor6").row.status == "done"  # type: ignore[union-attr]
    assert snap.metrics.recovery_time_ms >= 3_600_000


def stall_and_return(mode: Mode) -> Simulation:
    sim = make_sim(mode=mode, workers=("linzhou", "elder"), tasks=(TaskSpec("floor6", steps=8),))
    advance(sim, 25)  # linzhou is 5 s from the end of step 3
    act(sim, "stall", worker="linzhou")
    advance(sim, 95)  # the elder claims at 80 s+ and rewrites page 3 from the checkpoint
    act(sim, "resume", worker="linzhou")
    advance(sim, 300)
    return sim


def test_correct_mode_fences_the_midnight_return() -> None:
    sim = stall_and_return(Mode.CORRECT)
    snap = sim.snapshot()
    assert snap.violations == {}
    assert named(sim, "write_rejected", worker_id="linzhou", reason="fenced")
    page = next(p for p in snap.ledger if p.key == "floor6/3")
    assert page.writer == "elder"


def test_no_fencing_lets_the_stale_page_overwrite_the_new_one() -> None:
    sim = stall_and_return(Mode.NO_FENCING)
    snap = sim.snapshot()
    assert snap.violations == {"stale_write_accepted": 1}
    page = next(p for p in snap.ledger if p.key == "floor6/3")
    assert (page.writer, page.fence_token) == ("linzhou", 1)


def test_no_checkpoint_redoes_the_work_from_step_one() -> None:
    correct = kill_the_holder(Mode.CORRECT).snapshot()
    mistake = kill_the_holder(Mode.NO_CHECKPOINT).snapshot()
    assert mistake.violations == {}
    assert correct.metrics.wasted_steps == 0
    assert mistake.metrics.wasted_steps == 2  # pages 1 and 2 written again


def skewed_claimer(mode: Mode) -> Simulation:
    sim = make_sim(mode=mode, tasks=(TaskSpec("floor6", steps=12),), skew={"linzhou": 70_000})
    advance(sim, 200)
    return sim


def test_client_clock_lets_a_fast_clock_steal_a_live_lease() -> None:
    sim = skewed_claimer(Mode.CLIENT_CLOCK)
    assert sim.snapshot().violations.get("double_owner", 0) >= 1
    assert skewed_claimer(Mode.CORRECT).snapshot().violations == {}


def kill_after_api_call(mode: Mode) -> Simulation:
    sim = make_sim(mode=mode, tasks=(TaskSpec("agent", kind="tools", steps=4),))
    advance(sim, 30.5)  # step 3 called the API at 30 s; its answer comes at 31 s
    act(sim, "kill", worker="acheng")
    advance(sim, 300)
    return sim


def test_idempotency_key_deduplicates_the_repeated_api_call() -> None:
    sim = kill_after_api_call(Mode.CORRECT)
    snap = sim.snapshot()
    assert snap.violations == {}
    (effect,) = snap.effects
    assert effect.idempotency_key == "agent/3/api_call" and effect.applied_count == 1
    assert named(sim, "effect_deduplicated", worker_id="linzhou")
    # the simulation counts the repeats itself: the snapshot needs no patching after
    assert snap.dedup == {"agent/3/api_call": 1}


def test_no_idempotency_applies_the_api_call_twice() -> None:
    snap = kill_after_api_call(Mode.NO_IDEMPOTENCY).snapshot()
    assert snap.violations == {"duplicate_effect": 1}
    assert snap.effects[0].applied_count == 2


def test_approval_parks_releases_and_resumes_under_a_new_fence_token() -> None:
    sim = make_sim(tasks=(TaskSpec("grant", kind="approval", steps=4),))
    advance(sim, 21)
    snap = sim.snapshot()
    task = snap.task("grant")
    assert task is not None
    assert (task.row.status, task.row.owner_id, task.row.lease_expires_at) == (
        "waiting",
        None,
        None,
    )
    assert task.checkpoint_step == 2
    advance(sim, 3600)  # nothing expires and nobody claims while a human decides
    assert not named(sim, "lease_expired") and len(named(sim, "claimed")) == 1
    act(sim, "approve", task="grant")
    advance(sim, 60)
    task = sim.snapshot().task("grant")
    assert task is not None and task.row.status == "done"
    first, second = named(sim, "claimed")
    assert second.fence_token > first.fence_token and second.lease_token == 2
    keys = [e.detail["key"] for e in named(sim, "write_accepted")]
    assert keys == ["grant/1", "grant/2", "grant/3", "grant/4"]


def test_rejected_approval_makes_the_task_dead() -> None:
    sim = make_sim(tasks=(TaskSpec("grant", kind="approval", steps=4),))
    advance(sim, 21)
    act(sim, "reject", task="grant")
    task = sim.snapshot().task("grant")
    assert task is not None and (task.row.status, task.row.error_code) == (
        "dead",
        "rejected_by_human",
    )
    result = sim.apply(Approve(task="grant"))
    assert result.ok and result.ignored and "not waiting" in result.message
    assert named(sim, "approve_ignored", reason="not_waiting")
    assert sim.snapshot().rejections == ()


def test_browser_successor_continues_from_the_saved_url_and_actions() -> None:
    sim = make_sim(tasks=(TaskSpec("crawl", kind="browser", steps=6),))
    advance(sim, 35)
    act(sim, "kill", worker="acheng")
    advance(sim, 200)
    cp = next(c for c in sim.snapshot().checkpoints if c.task_id == "crawl")
    assert cp.step == 6
    assert cp.state["actions"] == [
        "1:open",
        "2:act",
        "3:extract",
        "4:screenshot",
        "5:open",
        "6:act",
    ]
    assert cp.state["next_action"] == "finish"


def script(seed: int) -> list[Action]:
    rng = random.Random(seed)
    actions: list[Action] = []
    workers = ["w1", "w2", "w3"]
    for _ in range(6):
        actions.append(Advance(by_ms=rng.randint(1, 40_000)))
        name = rng.choice(["freeze_heartbeat", "stall", "kill", "partition", "resume", "restart"])
        actions.append(WORKER_ACTIONS[name](rng.choice(workers)))
    actions += [Resume(worker=w) for w in workers]
    actions += [Restart(worker=w) for w in workers]
    actions.append(Advance(by_ms=900_000))
    return actions


def run_script(seed: int, mode: Mode = Mode.CORRECT) -> Simulation:
    kinds = ("ledger", "browser", "tools", "approval")
    sim = Simulation(
        SimSettings(
            mode=mode,
            seed=seed,
            workers=tuple(WorkerSpec(w) for w in ("w1", "w2", "w3")),
            tasks=tuple(TaskSpec(f"t{i}", kind=kinds[i % 4], steps=4) for i in range(5)),
        )
    )
    for action in script(seed):
        sim.apply(action)
    for _ in range(4):  # a human approves whatever is parked, then the workers carry on
        for task in sim.snapshot().tasks:
            if task.row.status == "waiting":
                sim.apply(Approve(task=task.task_id))
        sim.apply(Advance(by_ms=300_000))
    return sim


def test_same_script_gives_the_same_history_byte_for_byte() -> None:
    first = json.dumps(history(run_script(7)), sort_keys=True)
    second = json.dumps(history(run_script(7)), sort_keys=True)
    assert first == second
    assert first != json.dumps(history(run_script(8)), sort_keys=True)


@pytest.mark.parametrize("seed", range(40))
def test_random_faults_in_correct_mode_never_violate_and_every_task_finishes(seed: int) -> None:
    sim = run_script(seed)
    snap = sim.snapshot()
    assert snap.violations == {}, [e.reason for e in named(sim, "violation")]
    assert {t.row.status for t in snap.tasks} <= {"done", "dead"}


def test_a_task_orphaned_by_a_crash_is_stuck_even_after_its_worker_restarts() -> None:
    # no_expiry: the restarted worker has an empty memory, so nobody renews or frees the
    # task it held before the crash; the checker must still call it stuck.
    sim = make_sim(mode=Mode.NO_EXPIRY, workers=("acheng",), tasks=(TaskSpec("t", steps=6),))
    advance(sim, 15)
    act(sim, "kill", worker="acheng")
    act(sim, "restart", worker="acheng")
    advance(sim, 400)
    assert sim.snapshot().violations == {"stuck_task": 1}
    # In correct mode the same crash and restart recover: the restarted worker reclaims it.
    sim = make_sim(workers=("acheng",), tasks=(TaskSpec("t", steps=6),))
    advance(sim, 15)
    act(sim, "kill", worker="acheng")
    act(sim, "restart", worker="acheng")
    advance(sim, 400)
    snap = sim.snapshot()
    assert snap.violations == {} and snap.task("t").row.status == "done"  # type: ignore[union-attr]


def test_no_expiry_a_call_on_a_task_another_has_claimed_since_is_a_rejection() -> None:
    """Without expiry no claim writes a token (all stay 0): after linzhou's `fail` put the
    task back and acheng claimed it, linzhou's lease (0, 0) was issued and is now someone
    else's round. His call is refused and recorded, like any other rejection."""
    sim = make_sim(mode=Mode.NO_EXPIRY, manual=("acheng", "linzhou"))
    act(sim, "claim", worker="linzhou")
    act(sim, "fail", worker="linzhou", retry=True)
    act(sim, "claim", worker="acheng")
    result = sim.apply(ACTION_TYPES["heartbeat"](worker="linzhou"))
    assert not result.ok
    (ev,) = named(sim, "renew_rejected")
    assert (ev.worker_id, ev.reason, ev.lease_token) == ("linzhou", "superseded", 0)
    task = sim.snapshot().task("floor6")
    assert task is not None and task.row.owner_id == "acheng"


def test_no_expiry_a_heartbeat_renews_nothing_and_says_what_it_writes() -> None:
    sim = kill_the_holder(Mode.NO_EXPIRY)
    assert named(sim, "renewed") == []
    noted = named(sim, "heartbeat_noted")
    assert noted and all(set(e.detail) == {"last_heartbeat_at"} for e in noted)
    sim.close()


def test_no_idempotency_the_effect_carries_no_key() -> None:
    sim = kill_after_api_call(Mode.NO_IDEMPOTENCY)
    applied = named(sim, "effect_applied")
    assert len(applied) == 2 and all("key" not in e.detail and e.detail["call"] for e in applied)
    twin = kill_after_api_call(Mode.CORRECT)
    assert all("key" in e.detail and "call" not in e.detail for e in named(twin, "effect_applied"))


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
