"""One judge: the rules the explorer finds broken are the rules the safety light, `play`'s
summary and the checker count, each at the instant it happens.

Every written counterexample of every mode is played as the app plays it (a Session, the
light drawn from its snapshot) and as `play` does (its summary record): the light turns
red at the last step for the rule the file is named after, never before, and `play`
reports that rule. A rule that only the explorer knew would fail here.
"""

import re
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.engine.records import EventRow
from core.scenarios.format import Scenario, load_scenario
from core.scenarios.glossary import violation_word
from core.scenarios.harm import harm_line, harm_shown
from core.scenarios.player import play, render_line
from core.sim.checker import SafetyChecker
from core.sim.rules import MODE_HARM, Harm, ViolationKind

# Deep enough for every mode's shortest trace in the default world (the longest is 5).
DEPTH = 5


RULE_IDS = re.compile("|".join(v.value for v in ViolationKind))


def narration_faults(scenario: Scenario, rule: str) -> list[str]:
    """What the file's words get wrong: a `None`, a rule id, "task(s)", or a violating
    step that does not say why it is one."""
    faults: list[str] = []
    words = [scenario.title, scenario.title_zh, scenario.summary, scenario.summary_zh]
    for step in scenario.steps:
        words += [step.say, step.say_zh]
    for text in filter(None, words):
        if "None" in text or "task(s)" in text or RULE_IDS.search(text):
            faults.append(f"says {text!r}")
    last = scenario.steps[-1]
    en, zh = violation_word(rule, "en"), violation_word(rule, "zh")
    if f"Broken: {en}: " not in (last.say or "") or f"违反规则：{zh}：" not in (last.say_zh or ""):
        faults.append(f"the last step does not say why: {last.say!r}")
    return faults


@pytest.mark.parametrize("mode", sorted(MODE_HARM))
def test_a_mode_whose_harm_is_not_safety_says_so_with_its_figure(mode: Mode) -> None:
    shown = harm_shown(mode)
    assert shown is not None
    # the bundled run shows the harm: more than the same run done right
    assert shown.value > shown.correct
    scenario = load_scenario(Path("scenarios") / f"{shown.scenario}.toml")
    if scenario.settings.mode is mode:
        summary = list(play(scenario))[-1]
        line = "".join(text for text, _ in render_line(summary, "en"))
        assert "violations: none; this mode's harm is not safety but " in line
    for lang in ("en", "zh"):
        said = harm_line(mode, lang)
        assert said is not None and shown.scenario in said


def test_steps_done_again_and_time_out_of_reach_are_each_shown() -> None:
    summary = list(play(load_scenario(Path("scenarios/10_mistake_no_checkpoint.toml"))))[-1]
    assert summary["harm"] == {"name": Harm.STEPS_DONE_AGAIN, "value": 3}
    line = "".join(text for text, _ in render_line(summary, "zh"))
    assert "安全违规：无；这个模式的害处不在安全，而在重做的步数：3" in line
    summary = list(play(load_scenario(Path("scenarios/08_mistake_long_lease.toml"))))[-1]
    assert summary["harm"] is not None and summary["harm"]["name"] == Harm.TIME_OUT_OF_REACH
    line = "".join(text for text, _ in render_line(summary, "en"))
    assert "the longest a task stayed out of reach: 60 min 5 s" in line
    line = "".join(text for text, _ in render_line(summary, "zh"))
    assert "任务无人可接的最长时间：60 分 5 秒" in line  # Chinese units, never "3605s"


# -- the rules, one at a time ------------------------------------------------------------------


TTL = 30_000


def _ev(seq: int, at: int, event: str, worker: str, token: int, **detail: object) -> EventRow:
    return EventRow(seq, at, event, "t1", worker, token, token, None, dict(detail))


def test_a_claim_over_a_live_lease_is_two_live_leases_whoever_claims() -> None:
    checker = SafetyChecker(ttl_ms=TTL)
    checker.observe(_ev(1, 0, "claimed", "a", 1, expires_at=TTL))
    (found,) = checker.observe(_ev(2, 10, "claimed", "a", 2, expires_at=TTL + 10))
    assert found.name is ViolationKind.DOUBLE_OWNER


def test_a_claim_after_the_end_of_a_task_lends_it_out_again() -> None:
    checker = SafetyChecker(ttl_ms=TTL)
    checker.observe(_ev(1, 0, "claimed", "a", 1, expires_at=TTL))
    checker.observe(_ev(2, 5, "completed", "a", 1))
    (found,) = checker.observe(_ev(3, TTL + 1, "claimed", "b", 2, expires_at=2 * TTL + 1))
    assert found.name is ViolationKind.RECLAIMED_AFTER_END
    # a task failed back to the queue may be claimed again
    checker = SafetyChecker(ttl_ms=TTL)
    checker.observe(_ev(1, 0, "claimed", "a", 1, expires_at=TTL))
    checker.observe(_ev(2, 5, "failed", "a", 1))
    assert checker.observe(_ev(3, 6, "claimed", "b", 2, expires_at=TTL + 6)) == []


def test_a_claim_without_a_newer_fence_token_is_judged_where_claims_issue_them() -> None:
    checker = SafetyChecker(ttl_ms=TTL)
    checker.observe(_ev(1, 0, "claimed", "a", 2, expires_at=TTL))
    (found,) = checker.observe(_ev(2, TTL + 1, "claimed", "b", 2, expires_at=2 * TTL + 1))
    assert found.name is ViolationKind.FENCE_NOT_NEWER
    # before the fence tag a claim issues none, by design: its harm is judged at the page
    checker = SafetyChecker(ttl_ms=TTL, fence_tokens=False)
    checker.observe(_ev(1, 0, "claimed", "a", 0, expires_at=TTL))
    assert checker.observe(_ev(2, TTL + 1, "claimed", "b", 0, expires_at=2 * TTL + 1)) == []


def test_a_page_breaks_one_rule_at_most() -> None:
    checker = SafetyChecker(ttl_ms=TTL)
    checker.observe(_ev(1, 0, "claimed", "a", 1, expires_at=TTL))
    checker.observe(_ev(2, TTL + 1, "claimed", "b", 2, expires_at=2 * TTL + 1))
    # stale, and not from the live lease: named once, as stale
    (found,) = checker.observe(_ev(3, TTL + 2, "write_accepted", "a", 1, key="p"))
    assert found.name is ViolationKind.STALE_WRITE_ACCEPTED
    assert checker.observe(_ev(4, TTL + 3, "write_accepted", "b", 2, key="p")) == []
    # the current lease's own page after its end: no newer token, the live-lease rule
    (late,) = checker.observe(_ev(5, 2 * TTL + 2, "write_accepted", "b", 2, key="q"))
    assert late.name is ViolationKind.PAGE_WITHOUT_LIVE_LEASE


def test_explore_says_a_mode_whose_harm_is_not_safety_with_its_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.tools.cli import main

    assert main(["explore", "--mode", "no_checkpoint", "--depth", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no violation" in out
    assert (
        "This mode's harm is not safety but steps done again, which a search of free choices "
        "cannot measure (a worker may always wait, or start over): 3 in "
        "10_mistake_no_checkpoint, against 0 in its correct run"
    ) in out
