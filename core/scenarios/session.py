"""A playback session: a scenario (or the sandbox) plus the simulation that runs it.

The TUI drives a `Session`; the session owns everything that is not drawing: which step of
the script comes next, stepping back (rebuild and replay: determinism makes it exact),
restarting in another mode, live ticking, and fork-and-record. Any act of the person during
a playback forks it: the rest of the script is dropped and every later action, with the
`advance` spans between them, is recorded so the session can be saved as a scenario that
replays it exactly.

Three jobs, three modules: the script's playback (playback.py), the person's acts on top of
it with their fork, undo and redo (history.py), and saving the run as a scenario (here).
"""

import dataclasses
from pathlib import Path

from core.scenarios.format import Expectation, Step, Subject
from core.scenarios.history import MAX_UNDO as MAX_UNDO
from core.scenarios.history import History
from core.scenarios.history import Recorded as Recorded
from core.scenarios.playback import CheckResult as CheckResult
from core.scenarios.playback import Mark as Mark
from core.scenarios.playback import StepOutcome as StepOutcome
from core.scenarios.playback import judge as judge
from core.scenarios.playback import sandbox_settings as sandbox_settings
from core.scenarios.player import as_played
from core.scenarios.writer import dump_scenario, recorded_say
from core.sim.checker import ViolationKind
from core.sim.simulation import Simulation
from core.sim.spec import Advance


def figures_expectations(violations: dict[str, int]) -> tuple[Expectation, ...]:
    """The safety checker's figures as `expect` lines: zero overall, or each name's count."""
    counted = {name: n for name, n in violations.items() if n}
    if not counted:
        return (Expectation(Subject.VIOLATION, "any", (("count", 0),)),)
    return tuple(
        Expectation(Subject.VIOLATION, name.value, (("count", counted[name]),))
        for name in ViolationKind
        if name in counted
    )


class Session(History):
    """Playback of a scenario, or the sandbox, over one deterministic Simulation."""

    # -- saving ------------------------------------------------------------------------------

    def recorded_steps(self) -> list[Step]:
        steps = []
        events = self.events() if self.recorded else []
        for entry in self.recorded:
            action = entry.action
            end = entry.at_ms + (action.by_ms if isinstance(action, Advance) else 0)
            happened = [ev for ev in events if entry.at_ms < ev.at <= end]
            said = {
                lang: recorded_say(
                    entry.at_ms, action, lang, happened=happened, handed_over=entry.handed_over
                )
                for lang in ("en", "zh")
            }
            steps.append(Step(say=said["en"], say_zh=said["zh"], action=action))
        return steps

    def scenario_text(self) -> str:
        """A TOML scenario that replays this session exactly, figures turned into expects."""
        played: list[Step] = []
        for step, checks in zip(self.steps[: self.position], self._replayed_checks(), strict=True):
            # Keep only what held in this run: the file must play clean in its own mode.
            kept = tuple(c.expectation for c in checks if c.ok)
            played.append(dataclasses.replace(step, expects=kept))
        steps = played + self.recorded_steps()
        final = Step(
            say="The safety checker's figures at the end.",
            say_zh="结束时安全检查器的数字。",
            expects=figures_expectations(self.sim.violations()),
        )
        steps.append(final)
        base = self.scenario
        title = f"{self.title('en')} (recorded)"
        title_zh = f"{self.title('zh')}（录制）"
        summary = "Recorded in the app" + (
            f" from step {self.position} of {base.title!r}" if base is not None else " sandbox"
        )
        summary_zh = (
            f"在应用中录制：从《{base.title_in('zh')}》的第 {self.position} 步起"
            if base is not None
            else "在应用中从沙盒录制"
        ) + f"，{self.acts_count} 个动作。"
        summary += f", {self.acts_count} act(s)."
        return dump_scenario(
            title,
            self.settings,
            steps,
            title_zh=title_zh,
            summary=summary,
            summary_zh=summary_zh,
            comments=("Saved by borrowed-keys (save as scenario).",),
        )

    def _replayed_checks(self) -> list[tuple[CheckResult, ...]]:
        """The checks of each played script step, as they come out in a fresh replay."""
        sim = Simulation(self.settings, db_path=self.database)
        out = []
        try:
            for step in self.steps[: self.position]:
                if step.action is not None:
                    sim.apply(as_played(step.action, sim, self.lang))
                out.append(judge(step.expects, sim.snapshot()) if step.expects else ())
        finally:
            sim.close()
        return out

    def save_as_scenario(self, path: str | Path) -> Path:
        out = Path(path)
        out.write_text(self.scenario_text(), encoding="utf-8")
        self._unsaved = False
        return out
