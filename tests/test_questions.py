"""Interview mode: a step's question is read, printed by the player, and held by the Session
until the presenter reveals it."""

from pathlib import Path

from core.scenarios.format import Question, load_scenario, parse_scenario
from core.scenarios.player import play, render_line
from core.scenarios.session import Session
from core.scenarios.writer import dump

HERE = Path(__file__).parent
INTERVIEW = HERE / "scenarios_ok" / "interview.toml"
FOG = HERE / "scenarios_ok" / "fog.toml"


def test_the_loader_reads_a_question() -> None:
    s = load_scenario(INTERVIEW)
    assert s.steps[0].question is None
    q = s.steps[1].question
    assert q is not None
    assert q.text("en").startswith("Her heartbeats stop.")
    assert q.text("zh").startswith("她的心跳停了")
    assert len(q.choices) == 3 and len(q.choices_zh) == 3
    assert q.answer == 2
    assert q.right_choice("en") == "Linzhou, with a higher fence token"
    assert q.right_choice("zh") == "临舟，拿着更大的围栏令牌"
    open_question = s.steps[2].question
    assert open_question is not None and open_question.choices == ()
    assert open_question.answer is None and open_question.why_in("en")


def test_a_question_falls_back_to_the_other_language() -> None:
    q = Question(ask="Who holds it?", choices=("a", "b"), answer=1, why="Because.")
    assert q.text("zh") == "Who holds it?"
    assert q.choices_in("zh") == ("a", "b")
    assert q.why_in("zh") == "Because."


def test_json_step_records_carry_a_question_only_when_there_is_one() -> None:
    steps = [r for r in play(load_scenario(INTERVIEW)) if r["type"] == "step"]
    assert "ask" not in steps[0] and "choices" not in steps[0]
    assert steps[1]["ask"].startswith("Her heartbeats stop.")
    assert steps[1]["choices"][1] == "Linzhou, with a higher fence token"
    assert steps[1]["answer"] == 2
    assert steps[1]["why"].startswith("The lease expires")
    assert "choices" not in steps[2] and "answer" not in steps[2]
    assert steps[2]["why"].startswith("From Acheng's last saved checkpoint")
    plain = [r for r in play(load_scenario(FOG)) if r["type"] == "step"]
    assert all(set(r) == {"type", "step", "line", "t", "say", "do", "act"} for r in plain)


def test_the_transcript_prints_question_choices_and_answer() -> None:
    step = next(r for r in play(load_scenario(INTERVIEW), lang="zh") if r.get("step") == 2)
    text = "".join(piece for piece, _style in render_line(step, "zh"))
    assert "问： 她的心跳停了。90 秒之后，谁持有租约？" in text
    assert "     3. 没有人\n" in text
    assert "答： 2. 临舟，拿着更大的围栏令牌 — 最后一次心跳" in text


def test_the_session_pauses_on_the_question_until_revealed() -> None:
    s = Session(load_scenario(INTERVIEW))
    assert s.next_step() is not None  # step 1 has no question: it plays at once
    assert s.question is None and s.reveal() is None  # nothing to reveal
    now = s.now_ms
    assert s.next_step() is None  # step 2 asks first
    assert s.question is not None and s.question.answer == 2
    assert s.position == 1 and s.now_ms == now  # nothing played yet
    assert s.snapshot().worker("acheng").state == "working"
    outcome = s.reveal()
    assert outcome is not None and outcome.index == 1
    assert s.question is None and s.position == 2
    assert s.snapshot().worker("acheng").state == "frozen"


def test_next_step_reveals_a_waiting_question_and_previous_takes_it_back() -> None:
    s = Session(load_scenario(INTERVIEW))
    s.next_step()
    s.next_step()
    assert s.question is not None
    assert s.previous_step() is True  # back to before the question, nothing replayed
    assert s.question is None and s.position == 1
    s.next_step()
    outcome = s.next_step()  # the second press plays the asked step
    assert outcome is not None and outcome.index == 1 and s.question is None


def test_stepping_back_over_a_played_question_asks_it_again() -> None:
    s = Session(load_scenario(INTERVIEW))
    for _ in range(3):
        s.next_step()
    assert s.position == 2
    s.previous_step()
    assert s.position == 1 and s.question is None
    assert s.next_step() is None and s.question is not None


def test_an_act_drops_the_question() -> None:
    from core.sim.spec import Kill

    s = Session(load_scenario(INTERVIEW))
    s.next_step()
    s.next_step()
    assert s.question is not None
    assert s.act(Kill("linzhou")).ok
    assert s.question is None and s.forked


def test_questions_round_trip_through_the_writer() -> None:
    original = load_scenario(INTERVIEW)
    again = parse_scenario(dump(original), "again.toml")
    assert again.steps == original.steps


# -- an interview's worth: a question in every engineering scenario ---------------------------

ENGINEERING = sorted(
    p
    for p in (HERE.parent / "scenarios").glob("*.toml")
    if p.name[:2].isdigit() and p.name[:2] != "00"
)


def test_every_engineering_scenario_asks_at_least_one_question_with_its_why() -> None:
    assert len(ENGINEERING) >= 18
    for path in ENGINEERING:
        questions = [s.question for s in load_scenario(path).steps if s.question is not None]
        assert questions, path.name
        for q in questions:
            assert q.why_in("en") and q.why_in("zh") != q.why_in("en"), path.name
            assert q.choices and len(q.choices_zh) == len(q.choices), path.name


def test_no_answer_gives_itself_away() -> None:
    """The right choice is not the one long, careful answer among short straw men, and it
    is not always in the same place."""
    places = []
    for path in ENGINEERING:
        for q in (s.question for s in load_scenario(path).steps if s.question is not None):
            assert q.answer is not None
            places.append(q.answer)
            for choices in (q.choices, q.choices_zh):
                right = len(choices[q.answer - 1])
                longest_wrong = max(len(c) for i, c in enumerate(choices, 1) if i != q.answer)
                assert right <= 1.4 * longest_wrong, (path.name, choices)
    assert len(set(places)) == 3 and max(places.count(p) for p in set(places)) < len(places) / 2
