"""The app says an error the core raised in the language on screen: a scripted step whose
act does not fit the run (said as `play` says it, and the run goes on), a refused act, an
ignored one. No Pilot: the words are made outside the widgets."""

import re

from core.scenarios.format import parse_scenario
from core.scenarios.session import Session
from core.sim.spec import Approve, Kill
from demo.widgets.narration import ignored_text, narration_text, refusal_text
from tests.scenarios.test_engine_errors_zh import NO_LEASE

_LATIN_WORD = re.compile(r"[A-Za-z_]{2,}")


def _session(lang: str) -> Session:
    return Session(parse_scenario(NO_LEASE, "bad.toml"), lang=lang)


def test_a_scripted_step_the_engine_refuses_is_said_in_the_language_on_screen() -> None:
    session = _session("zh")
    outcome = session.next_step()  # the app used to stop here with a traceback
    assert outcome is not None and outcome.stopped is not None
    said = narration_text(session, "zh").plain
    assert "第 1 步无法执行：阿澄的记忆里没有租约，写入总册做不成" in said
    english = narration_text(session, "en").plain
    assert "step 1 cannot run: write: acheng holds no lease in its memory" in english


def test_a_refused_act_and_an_ignored_one_are_said_in_chinese() -> None:
    session = _session("zh")
    refused = session.act(Kill("nobody"))
    assert refusal_text(refused, "zh") == "被拒绝：没有 “nobody” 这个执行者"
    assert refusal_text(refused, "en") == "kill: unknown worker 'nobody'"
    ignored = session.act(Approve("sixth"))
    assert ignored.ignored
    zh = ignored_text(ignored, "zh")
    assert zh == "已忽略：无法批准任务 “sixth”：它现在排队中，并不在等待审批"
    assert not _LATIN_WORD.search(zh.replace("sixth", ""))
    assert ignored_text(ignored, "en").startswith("ignored: cannot approve sixth: it is queued")
