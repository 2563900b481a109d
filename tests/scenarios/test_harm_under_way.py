"""What is true of a mode's harm at each step, not only at the end: the steps due again once
the work is lost (mistake four), and a task out of reach while its lease still holds it
(mistake two), in the header's figure, the bill and `play`'s transcript."""

from collections.abc import Iterator

from core.engine.config import Mode
from core.scenarios.library import open_scenario
from core.scenarios.player import play
from core.scenarios.report import bill_of, held_sentence, steps_due_again
from core.scenarios.session import Session
from core.scenarios.twin import header_harm
from core.sim.rules import Harm


def steps(name: str, mode: Mode) -> Iterator[Session]:
    """The session after each script step of `name` under `mode`, questions revealed."""
    session = Session(open_scenario(name), mode=mode)
    try:
        while not session.at_end:
            if session.next_step() is None:
                session.reveal()
            yield session
    finally:
        session.close()


def test_mistake_four_says_the_redo_from_the_claim_that_starts_over() -> None:
    # "下一位拿到的只是空白现场，成本会被重复执行吃掉": once Linzhou claims with no box
    # (step 12), Acheng's pages 1 and 2 are due again; her refused page 3 too once refused
    lights = {}
    for session in steps("01_fog", Mode.NO_CHECKPOINT):
        snap = session.snapshot()
        lights[session.position] = (
            snap.metrics.wasted_steps,
            steps_due_again(snap),
            header_harm(session, snap),
        )
    assert all(lights[k][2] is None for k in range(1, 12)), "nothing is lost before the claim"
    assert lights[12][:2] == (0, 2)
    assert lights[16][:2] == (1, 2)
    end = max(lights)
    assert lights[end][:2] == (3, 0)
    # from the claim on the header never says safe, and never more than the run comes to
    for k in range(12, end + 1):
        light = lights[k][2]
        assert light is not None and light[0] is Harm.STEPS_DONE_AGAIN, k
        assert light[1] <= 3, k
    assert lights[16][2] == (Harm.STEPS_DONE_AGAIN, 3, 1)


def test_the_correct_run_owes_no_step_it_read_from_the_box() -> None:
    for session in steps("01_fog", Mode.CORRECT):
        if session.position in (12, 13, 16):
            assert steps_due_again(session.snapshot()) == 0, session.position


def test_a_long_lease_is_out_of_reach_while_it_still_holds() -> None:
    # "一个已经死掉的 worker 会霸占任务很久": after the kill, before any claim
    for session in steps("08_mistake_long_lease", Mode.LONG_LEASE):
        if session.position != 7:  # ten minutes after the kill at 0:00:48
            continue
        snap = session.snapshot()
        assert snap.metrics.recovery_time_ms == 0  # no claim has ended the wait
        assert (snap.metrics.out_of_reach_now_ms, snap.metrics.out_of_reach_until) == (
            608_000,
            3_640_000,
        )
        assert bill_of(snap).out_of_reach_ms == 608_000
        assert held_sentence(snap, "en") == (
            "floor6 has been out of reach for 10 min 8 s, since its holder's last sign of "
            "life: its lease holds it until 1:00:40."
        )
        assert held_sentence(snap, "zh") == (
            "第六层已经无人可接 10 分 8 秒，从持有人最后一次报平安算起："
            "它的租约要到 1:00:40 才放手。"
        )
        assert header_harm(session, snap) == (Harm.TIME_OUT_OF_REACH, 608_000, 35_000)


def test_a_stuck_task_is_billed_out_of_reach() -> None:
    # 07 ends with the task stuck behind a dead holder: its bill once said "never out of
    # reach"
    session = Session(open_scenario("07_mistake_no_expiry"))
    try:
        while not session.at_end:
            if session.next_step() is None:
                session.reveal()
        snap = session.snapshot()
        assert snap.metrics.out_of_reach_until is None
        assert bill_of(snap).out_of_reach_ms == snap.now_ms - 20_000
        assert held_sentence(snap, "en") is not None
        assert "no lease end will let it go" in str(held_sentence(snap, "en"))
    finally:
        session.close()


def test_play_says_how_long_the_long_lease_holds_the_task() -> None:
    said = [r for r in play(open_scenario("08_mistake_long_lease")) if r["type"] == "reach"]
    assert [(r["step"], r["so_far"], r["until"]) for r in said] == [
        (6, 8.0, 3640.0),
        (7, 608.0, 3640.0),
    ]


def test_play_says_the_work_lost_when_it_is_lost() -> None:
    # mistake four: the kill loses the three pages no box holds; the correct run's box
    # holds them, and nothing is due again
    said = [r for r in play(open_scenario("10_mistake_no_checkpoint")) if r["type"] == "due"]
    assert [(r["step"], r["worker"], r["from_step"], r["steps"]) for r in said] == [
        (2, None, 1, [1, 2, 3])
    ]
    assert said[0]["say"] == (
        "Whoever takes floor6 next starts at step 1: steps 1, 2, 3, already worked, must be "
        "done again."
    )
    zh = [r.get("say") for r in play(open_scenario("10_mistake_no_checkpoint"), lang="zh")]
    assert "下一个领到第六层的人从第 1 步做起：已经做过的第 1、2、3 步还得再做一遍。" in zh
    assert not [r for r in play(open_scenario("03_crash_resume")) if r["type"] == "due"]
