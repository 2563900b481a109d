"""What a mistake costs where it breaks no safety rule, as a figure from a bundled run.

The explorer's workers are manual and every call is a free choice, so a search of them
cannot measure steps done again or the time a task stays out of reach: a worker may
always choose to wait, or to start over. These modes' harm is shown instead by the
bundled scenario that teaches it, played headless in the mode and in the correct run,
so the explorer's "no safety rule broken" never reads as a pass.
"""

import dataclasses
from dataclasses import dataclass
from functools import cache

from core.engine.config import Mode
from core.engine.durations import format_duration
from core.scenarios.glossary import TRANSCRIPT, harm_word, lookup
from core.scenarios.library import open_scenario
from core.sim.rules import MODE_HARM, Harm
from core.sim.simulation import Simulation
from core.sim.spec import in_language

# The bundled scenario that shows each mode's harm (unread_checkpoint has none of its own:
# any run with a crash and a checkpoint shows it, as `m` does in the app).
HARM_SCENARIO: dict[Mode, str] = {
    Mode.NO_CHECKPOINT: "10_mistake_no_checkpoint",
    Mode.UNREAD_CHECKPOINT: "03_crash_resume",
    Mode.HEARTBEAT_IN_WORK: "16_heartbeat_in_work",
    Mode.LONG_LEASE: "08_mistake_long_lease",
}


@dataclass(frozen=True, slots=True)
class HarmShown:
    """A mode's harm in one bundled run, beside the same run done right."""

    harm: Harm
    scenario: str
    value: int  # steps, or milliseconds
    correct: int  # the same figure in the correct run


def _figure(name: str, mode: Mode, harm: Harm) -> int:
    scenario = open_scenario(name)
    sim = Simulation(dataclasses.replace(scenario.settings, mode=mode))
    try:
        for step in scenario.steps:
            if step.action is not None:
                sim.apply(in_language(step.action, "en"))
        metrics = sim.snapshot().metrics
    finally:
        sim.close()
    return metrics.wasted_steps if harm is Harm.STEPS_DONE_AGAIN else metrics.recovery_time_ms


@cache
def harm_shown(mode: Mode) -> HarmShown | None:
    """The figure of `mode`'s harm in its bundled run and in that run done right; None for
    a mode whose mistake is a safety rule (or the correct run)."""
    harm = MODE_HARM.get(mode)
    name = HARM_SCENARIO.get(mode)
    if harm is None or name is None:
        return None
    return HarmShown(harm, name, _figure(name, mode, harm), _figure(name, Mode.CORRECT, harm))


def harm_line(mode: Mode, lang: str) -> str | None:
    """Where the mode's harm is not safety, what it is and its figure in the bundled run
    that shows it, beside the correct run's: the search of free choices cannot measure
    it, and "no violation" alone would read as a pass."""
    shown = harm_shown(mode)
    if shown is None:
        return None

    def figure(value: int) -> str:
        return str(value) if shown.harm is Harm.STEPS_DONE_AGAIN else format_duration(value)

    return lookup(
        TRANSCRIPT,
        "harm_in_run",
        lang,
        harm=harm_word(shown.harm, lang),
        value=figure(shown.value),
        scenario=shown.scenario,
        correct=figure(shown.correct),
    )
