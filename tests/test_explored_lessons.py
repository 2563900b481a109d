"""The bundled lessons taken from the explorer's shortest traces stay shortest: if the engine
changes so that the explorer finds a shorter way to the same broken rule (or none), a test
says so, and the lesson's "none shorter" claim must be looked at again."""

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.explore import ExploreParams, explore
from core.scenarios.format import load_scenario
from core.sim.simulation import Simulation
from tests.simkit import named

SCENARIOS = Path(__file__).parent.parent / "scenarios"


@dataclass(frozen=True)
class Lesson:
    file: str
    mode: Mode
    rule: str  # the rule the scenario's last step breaks


LESSONS = [Lesson("21_explored_done_twice.toml", Mode.SEED_SQL, "completed_twice")]


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


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.file)
def test_the_lesson_breaks_its_rule_only_at_its_last_step(lesson: Lesson) -> None:
    scenario = load_scenario(SCENARIOS / lesson.file)
    sim = Simulation(scenario.settings)
    actions = [s.action for s in scenario.steps if s.action is not None]
    for action in actions[:-1]:
        assert sim.apply(action).ok
        assert lesson.rule not in sim.snapshot().violations
    assert sim.apply(actions[-1]).ok
    assert sim.snapshot().violations == {lesson.rule: 1}
    sim.close()


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
