"""One judge, on screen: the safety light turns red at a counterexample's last step for the
rule it is named after, as the explorer and the checker count it."""

import itertools
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import load_scenario
from core.scenarios.player import play, render_line
from core.scenarios.session import Session
from core.search.explore import branch as explore_branch
from core.search.explore import world as explore_world
from core.search.explore.bfs import ExploreParams, explore
from core.search.explore.story import write_counterexamples
from core.sim.simulation import Simulation, run_inline
from demo.widgets.status_header import HeaderState, header_fields
from tests.search.test_one_judge import DEPTH, narration_faults


def light(session: Session, lang: str = "en") -> str:
    """The safety light's field of the header, as the app draws it from the session."""
    snap = session.snapshot()
    state = HeaderState(
        title="",
        now_ms=snap.now_ms,
        speed=1.0,
        mode=snap.mode,
        playing=False,
        forked=False,
        dropped_script=False,
        on_their_own=False,
        violations=tuple((k, v) for k, v in sorted(snap.violations.items()) if v),
        lang=lang,
    )
    field = next(f for f in header_fields(state) if "●" in f.plain)
    return field.plain


@pytest.mark.parametrize("mode", list(Mode))
def test_every_counterexample_turns_the_light_red_at_its_last_step(
    mode: Mode, tmp_path: Path
) -> None:
    assert disagreements(mode, tmp_path) == []


def test_the_light_and_the_summary_name_what_broke_in_words() -> None:
    scenario = load_scenario(Path("scenarios/09_mistake_no_fencing.toml"))
    session = Session(scenario)
    while not session.at_end:
        session.next_step()  # a step that asks first is played by the next call
    assert light(session, "en").endswith("stale write accepted × 1")
    assert light(session, "zh").endswith("过期写入被接受 × 1")
    session.close()
    for lang, words in (("en", "stale write accepted × 1"), ("zh", "过期写入被接受 × 1")):
        summary = list(play(scenario, lang=lang))[-1]
        line = "".join(text for text, _ in render_line(summary, lang))
        assert words in line and "stale_write_accepted" not in line


def disagreements(mode: Mode, out: Path) -> list[str]:
    """Each written counterexample whose light or summary does not say its rule at its
    last step (or says it before)."""
    params = ExploreParams(mode=mode, depth=DEPTH)
    found = write_counterexamples(params, explore(params).counterexamples, out)
    wrong: list[str] = []
    for cex in found:
        assert cex.path is not None and cex.verified, cex
        scenario = load_scenario(cex.path)
        session = Session(scenario)
        counts: list[int] = []
        totals = [0]
        while session.next_step() is not None:
            counts.append(session.snapshot().violations.get(cex.rule, 0))
            totals.append(sum(session.snapshot().violations.values()))
        red = light(session)
        session.close()
        for step, (was, now) in zip(scenario.steps, itertools.pairwise(totals), strict=True):
            if now > was and "Broken: " not in (step.say or ""):
                wrong.append(f"{cex.rule}: the light turns red at {step.say!r}, unsaid")
        if not (counts[-1] >= 1 and all(n == 0 for n in counts[:-1])):
            wrong.append(f"{cex.rule}: the checker counts {counts} step by step")
        if "safe" in red:
            wrong.append(f"{cex.rule}: the light is green at the end ({red})")
        summary = list(play(scenario))[-1]
        if not summary["violations"].get(cex.rule):
            wrong.append(f"{cex.rule}: play reports {summary['violations']}")
        wrong += [f"{cex.rule}: {w}" for w in narration_faults(scenario, cex.rule)]
    return wrong


def test_a_rule_only_the_explorer_knew_would_be_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plant a rule in the explorer's judgement that the checker does not know (any page
    in the ledger is "broken"): its counterexample ends green, and the test above says so."""
    judged = explore_world.broken_rules

    def planted(sim: Simulation, found_before: int) -> list[str]:
        rules = judged(sim, found_before)
        return [*rules, "planted_page_rule"] if run_inline(sim.store.ledger()) else rules

    monkeypatch.setattr(explore_branch, "broken_rules", planted)
    wrong = disagreements(Mode.CORRECT, tmp_path)
    assert wrong and all(w.startswith("planted_page_rule") for w in wrong)
