"""stuck_task: a task held out of reach by a down holder for over 3 x ttl while another
worker looks for work. The rule holds at the instant of the act that makes it true, not
one poll later: a worker idle at that instant may take other work before the next look."""

from core.engine.config import LeaseConfig, Mode
from core.sim.spec import TaskSpec
from tests.simkit import act, advance, make_sim, named

TTL = 10_000


def test_a_kill_past_the_mark_is_stuck_at_once_even_if_the_idle_worker_then_claims() -> None:
    sim = make_sim(
        ("w1", "w2"),
        (TaskSpec("t1"), TaskSpec("t2")),
        mode=Mode.NO_EXPIRY,
        manual=("w1", "w2"),
        config=LeaseConfig(TTL),
    )
    act(sim, "claim", worker="w1", task="t1")
    advance(sim, 31)  # past 3 x ttl since w1's claim; w1 is alive, so nothing is stuck yet
    assert sim.snapshot().violations == {}
    act(sim, "kill", worker="w1")  # w2 is idle at this instant: t1 is stuck now
    act(sim, "claim", worker="w2", task="t2")  # the same instant: w2 is no longer idle
    advance(sim, 60)
    assert sim.snapshot().violations == {"stuck_task": 1}
    (ev,) = named(sim, "violation")
    assert (ev.task_id, ev.at) == ("t1", 31_000)


def test_a_stall_past_the_mark_is_stuck_at_the_instant_of_the_stall() -> None:
    sim = make_sim(
        ("w1", "w2"),
        (TaskSpec("t1"), TaskSpec("t2")),
        mode=Mode.NO_EXPIRY,
        manual=("w1", "w2"),
        config=LeaseConfig(TTL),
    )
    act(sim, "claim", worker="w1", task="t1")
    advance(sim, 40)
    act(sim, "stall", worker="w1")
    act(sim, "claim", worker="w2", task="t2")
    assert sim.snapshot().violations == {"stuck_task": 1}


def test_nothing_is_stuck_when_nobody_is_idle_at_the_instant() -> None:
    sim = make_sim(
        ("w1", "w2"),
        (TaskSpec("t1"), TaskSpec("t2")),
        mode=Mode.NO_EXPIRY,
        manual=("w1", "w2"),
        config=LeaseConfig(TTL),
    )
    act(sim, "claim", worker="w1", task="t1")
    act(sim, "claim", worker="w2", task="t2")
    advance(sim, 31)
    act(sim, "kill", worker="w1")
    advance(sim, 60)
    assert sim.snapshot().violations == {}
