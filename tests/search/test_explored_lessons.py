"""The bundled lessons taken from the explorer's shortest traces stay shortest: if the engine
changes so that the explorer finds a shorter way to the same broken rule (or none), a test
says so, and the lesson's "none shorter" claim must be looked at again."""

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import load_scenario
from core.search.explore.bfs import ExploreParams, explore
from core.search.explore.world import broken_rules
from core.sim.simulation import Simulation
from tests.simkit import named

SCENARIOS = Path(__file__).parents[2] / "scenarios"


@dataclass(frozen=True)
class Lesson:
    file: str
    mode: Mode
    rule: str  # the rule the scenario's last step breaks


LESSONS = [
    Lesson("21_explored_done_twice.toml", Mode.SEED_SQL, "completed_twice"),
    Lesson("22_explored_page_after_done.toml", Mode.NO_FENCING, "page_without_live_lease"),
]


def acting_steps(file: str) -> int:
    return sum(1 for s in load_scenario(SCENARIOS / file).steps if s.action is not None)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.file)
def test_the_lesson_is_still_a_shortest_trace_of_its_mode(lesson: Lesson) -> None:
    steps = acting_steps(lesson.file)
    params = ExploreParams(mode=lesson.mode, depth=steps)
    # the same world as the explorer's, so its lengths are the scenario's
    assert load_scenario(SCENARIOS / lesson.file).settings == params.settings()
    report = explore(params)
    shortest = {c.rule: c.length for c in report.counterexamples}
    assert shortest.get(lesson.rule) == steps, shortest


def rules_broken_by_each_step(file: str) -> list[list[str]]:
    """The rules each acting step breaks, judged as the explorer judges a transition (by
    the checker behind the safety light)."""
    scenario = load_scenario(SCENARIOS / file)
    sim = Simulation(scenario.settings)
    out = []
    for step in scenario.steps:
        if step.action is None:
            continue
        found = len(sim.checker.found)
        assert sim.apply(step.action).ok
        out.append(broken_rules(sim, found))
    sim.close()
    return out


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.file)
def test_the_lesson_breaks_its_rule_at_its_last_step_and_not_before(lesson: Lesson) -> None:
    *before, last = rules_broken_by_each_step(lesson.file)
    assert all(lesson.rule not in rules for rules in before)
    assert lesson.rule in last


def test_21_in_its_correct_twin_lends_the_finished_task_out_once() -> None:
    # its last narration's claim: "her claim at 0:00:30.001 finds nothing and t1 is done once"
    scenario = load_scenario(SCENARIOS / "21_explored_done_twice.toml")
    sim = Simulation(replace(scenario.settings, mode=Mode.CORRECT))
    outcomes = [sim.apply(s.action) for s in scenario.steps if s.action is not None]
    claimed, completed = named(sim, "claimed"), named(sim, "completed")
    assert [(e.at, e.lease_token) for e in claimed] == [(0, 1)]
    assert [e.at for e in completed] == [0]
    assert not outcomes[3].ok and not outcomes[4].ok  # nothing to claim, nothing to complete
    assert sim.snapshot().violations == {}
    sim.close()


def test_22_in_its_correct_twin_refuses_the_page_as_not_running() -> None:
    # its last narration's claim: "the page is refused, the task is not running"
    scenario = load_scenario(SCENARIOS / "22_explored_page_after_done.toml")
    sim = Simulation(replace(scenario.settings, mode=Mode.CORRECT))
    for step in scenario.steps:
        if step.action is not None:
            sim.apply(step.action)
    (refused,) = named(sim, "write_rejected")
    assert (refused.worker_id, refused.reason, refused.fence_token) == ("acheng", "not_running", 1)
    assert named(sim, "write_accepted") == [] and sim.snapshot().violations == {}
    sim.close()


def test_22_breaks_the_live_lease_rule_not_the_stale_write_rule() -> None:
    # "No newer token exists, so this is not a stale write; the seed's rule is broken"
    assert rules_broken_by_each_step("22_explored_page_after_done.toml")[-1] == [
        "page_without_live_lease"
    ]
