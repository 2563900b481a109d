"""A shrunk schedule as a reproducer: the scenario file whose last step expects the
failure, and the check that the file, loaded and played, fails so."""

from core.engine.config import Mode
from core.engine.durations import format_duration
from core.scenarios.format import Expectation, Step, Subject, parse_scenario
from core.scenarios.writer import dump_scenario
from core.search.fuzz.generate import Failure, Schedule, liveness_bound_ms
from core.sim.simulation import IN_MEMORY, Simulation


def scenario_text(schedule: Schedule, failure: Failure, *, run: int, seed: int, faults: int) -> str:
    """The schedule as a scenario file whose last step expects the failure."""
    if failure.violation is not None:
        expect = Expectation(subject=Subject.VIOLATION, value=failure.violation)
        what = f"the {failure.violation} violation"
    else:
        expect = Expectation(
            subject=Subject.TASK,
            value=failure.task or "",
            params=(("status", failure.status or ""),),
        )
        what = (
            f"task {failure.task} still {failure.status} "
            f"{format_duration(liveness_bound_ms(schedule.settings))} after the last fault"
        )
    actions = schedule.actions()
    steps = [Step(action=a) for a in actions]
    if steps:
        last = steps[-1]
        steps[-1] = Step(action=last.action, expects=(expect,))
    else:
        steps = [Step(say="", expects=(expect,))]
    mode = schedule.settings.mode.value
    return dump_scenario(
        f"Chaos reproducer: {failure.label} in {mode} mode (seed {seed})",
        schedule.settings,
        steps,
        summary=(
            f"Found by borrowed-keys chaos (run {run}, seed {seed}) and shrunk from {faults} "
            f"to {schedule.faults} actions; the last step shows {what}."
        ),
        comments=(
            f"borrowed-keys chaos reproducer: run {run}, seed {seed}, mode {mode}",
            f"failure: {failure.label}; actions {faults} -> {schedule.faults} after shrinking",
            "replay: borrowed-keys play THIS_FILE",
        ),
    )


def verify_text(text: str, failure: Failure, database: str = IN_MEMORY) -> bool:
    """Load a reproducer's text with the scenario loader and play it: does it fail so?"""
    scenario = parse_scenario(text, "<reproducer>")
    sim = Simulation(scenario.settings, db_path=database)
    try:
        for step in scenario.steps:
            if step.action is not None:
                sim.apply(step.action)
        if failure.violation is not None:
            return sim.violations().get(failure.violation, 0) > 0
        return sim.task_statuses().get(failure.task or "") == failure.status
    finally:
        sim.close()


def file_name(mode: Mode, failure: Failure, seed: int) -> str:
    label = failure.label.replace(":", "-")
    return f"chaos-{mode.value}-{label}-seed{seed}.toml"
