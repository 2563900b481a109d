"""The presenter's small words: labels take each language's colon, counts read right for one
and for many."""

from __future__ import annotations

import pytest

from core.scenarios.library import open_scenario
from core.scenarios.player import render_line
from core.scenarios.session import Session
from core.sim.spec import Kill, Stall
from demo.export.frames import Frame
from demo.export.page import _question_html
from demo.widgets.narration import narration_text


def _at_fog_question() -> Session:
    session = Session(open_scenario("01_fog"))
    while session.question is None:
        session.next_step()
    return session


def test_the_question_and_answer_labels_take_the_full_width_colon_in_chinese() -> None:
    session = _at_fog_question()
    zh, en = narration_text(session, "zh").plain, narration_text(session, "en").plain
    assert "提问：" in zh and "提问:" not in zh
    assert "Question: " in en
    session.reveal()
    zh, en = narration_text(session, "zh").plain, narration_text(session, "en").plain
    assert "答案：" in zh and "答案:" not in zh
    assert "Answer: " in en


def test_the_pages_question_and_answer_labels_take_the_full_width_colon_in_chinese() -> None:
    question = _at_fog_question().question
    frame = Frame(index=1, keys=(), panel="tab-events", svg="", question=question)
    asked, answer = _question_html(frame, "zh")
    assert "<b>提问：</b>" in asked and "<b>答案：</b>" in answer and ":</b>" not in asked + answer
    asked, answer = _question_html(frame, "en")
    assert "<b>Question:</b> " in asked and "<b>Answer:</b> " in answer


def test_the_players_labels_take_the_full_width_colon_in_chinese() -> None:
    record = {"type": "scenario", "title": "t", "mode": "correct", "seed": 7}
    zh = "".join(text for text, _style in render_line(record, "zh"))
    assert "模式：正确做法" in zh and "种子：7" in zh and ": " not in zh
    en = "".join(text for text, _style in render_line(record, "en"))
    assert "mode: the correct run" in en


@pytest.mark.parametrize(
    ("lang", "one", "two"),
    [("en", "1 act so far", "2 acts so far"), ("zh", "1 个动作）", "2 个动作）")],
)
def test_the_count_of_acts_reads_right_for_one_and_for_many(lang: str, one: str, two: str) -> None:
    sandbox = Session(None)
    script_over = Session(open_scenario("14_sandbox"))
    script_over.next_step()  # its one narrated step: then time runs on and acts are recorded
    dropped = Session(open_scenario("01_fog"))
    dropped.next_step()  # an act here drops the rest of the script
    for session in (sandbox, script_over, dropped):
        session.act(Stall(worker="acheng"))
        said = narration_text(session, lang).plain
        assert one.replace("act so far", "act of yours") in said or one in said, said
        session.act(Kill(worker="acheng"))
        said = narration_text(session, lang).plain
        assert two.replace("acts so far", "acts of yours") in said or two in said, said
