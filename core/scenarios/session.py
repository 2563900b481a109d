"""A playback session: a scenario (or the sandbox) plus the simulation that runs it.

The TUI drives a `Session`; the session owns everything that is not drawing: which step of
the script comes next, stepping back (rebuild and replay: determinism makes it exact),
restarting in another mode, live ticking, and fork-and-record. Any act of the person during
a playback forks it: the rest of the script is dropped and every later action, with the
`advance` spans between them, is recorded so the session can be saved as a scenario that
replays it exactly.
"""

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.engine.config import LeaseConfig, Mode
from core.engine.records import EventRow, dump_json
from core.engine.vocabulary import EventKind
from core.scenarios.format import Expectation, Panel, Question, Scenario, Step, Subject
from core.scenarios.glossary import SANDBOX_TITLE, SANDBOX_TITLE_ZH
from core.scenarios.guess import GuessRound
from core.scenarios.interview import Interview, Verdict
from core.scenarios.panels import panel_for
from core.scenarios.player import event_record, judge_expectation
from core.scenarios.writer import dump_scenario, recorded_say
from core.sim.checker import ViolationKind
from core.sim.simulation import IN_MEMORY, ActionError, ActionResult, Simulation
from core.sim.snapshot import SNAPSHOT_PARTS, WITH_TIMELINE, Snapshot, SnapshotPart
from core.sim.spec import (
    Action,
    Advance,
    Autopilot,
    SimSettings,
    TaskSpec,
    WorkerSpec,
    in_language,
)


def sandbox_settings(mode: Mode = Mode.CORRECT) -> SimSettings:
    """The sandbox: the story's three scribes and two tasks, nothing scripted."""
    return SimSettings(
        mode=mode,
        workers=(WorkerSpec("acheng"), WorkerSpec("linzhou"), WorkerSpec("elder")),
        tasks=(
            TaskSpec("sixth-floor", kind="ledger", steps=8, step_time_ms=10_000),
            TaskSpec("river-tax", kind="tools", steps=5, step_time_ms=8_000),
        ),
    )


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One expectation of a step, judged against the snapshot after it."""

    expectation: Expectation
    ok: bool
    found: str  # in the file's spelling, for --json and the logs
    seen: tuple[str, str] = ("", "")  # what the run has instead, as a sentence (en, zh)


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What playing one script step did."""

    index: int  # 0-based index of the step in the script
    step: Step
    result: ActionResult | None
    checks: tuple[CheckResult, ...]
    # The panel the step is about (the app opens it; the exported page shows it), or None.
    panel: Panel | None = None
    # The step's act does not fit this run (the player stops there: "step 3 cannot run");
    # here the run goes on without it, and the screen says why.
    stopped: ActionError | None = None

    @property
    def ok(self) -> bool:
        return (self.result is None or self.result.ok) and all(c.ok for c in self.checks)


@dataclass(frozen=True, slots=True)
class Mark:
    """One expectation of the last step played, as the screen shows it now.

    `now` is the same expectation judged again against the run as it is now, once the run
    has moved on from the step (a fork, a sandbox's time): a ✓ that no longer holds is
    then shown dated ("at step 8"), never as a stale ✓ beside a pane that says otherwise.
    None while the run stands where the step left it.
    """

    check: CheckResult  # as judged right after the step
    now: CheckResult | None
    step: int  # the step's number, from 1

    @property
    def holds(self) -> bool:
        """Whether the mark is true of what the screen shows now."""
        return self.check.ok if self.now is None else self.now.ok


@dataclass(frozen=True, slots=True)
class Recorded:
    """An action the person did (or time that passed) after the fork, at virtual time `at_ms`.

    `handed_over`: not the person's act but the fork's own: a worker the script drove
    going on by itself (`autopilot`), recorded so the saved run replays exactly.
    """

    at_ms: int
    action: Action
    handed_over: bool = False


# What a step without expectations reads after it: the timeline, to see belief part from truth.
_TIMELINE_ONLY: frozenset[SnapshotPart] = frozenset({"timeline"})


@dataclass(frozen=True, slots=True)
class _Undone:
    """The run as it stood before an undo: what was recorded, whether it was forked, and
    whether those acts were saved."""

    recorded: tuple[Recorded, ...]
    forked: bool
    unsaved: bool
    act: Action  # the act the undo took back (what redo says it brings back)


def judge(expects: Sequence[Expectation], snapshot: Snapshot) -> tuple[CheckResult, ...]:
    """Every expectation against one snapshot."""
    out = []
    for exp in expects:
        ok, found, seen = judge_expectation(exp, snapshot)
        out.append(CheckResult(exp, ok, found, seen))
    return tuple(out)


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


# How many acts in a row `previous_step` undoes. Each undo keeps the run as it stood (the
# whole recording) for redo and replays the rest: unbounded, a long sandbox session would
# keep a copy of its recording per undo. The help page says the bound.
MAX_UNDO = 100


class Session:
    """Playback of a scenario, or the sandbox, over one deterministic Simulation."""

    def __init__(
        self,
        scenario: Scenario | None = None,
        *,
        settings: SimSettings | None = None,
        mode: Mode | None = None,
        lang: str = "en",
        interview: bool = False,
        database: str = IN_MEMORY,
        guess: GuessRound | None = None,
    ) -> None:
        self.scenario = scenario
        # A "which mistake is this?" round: the run is played under its mode, which the
        # screen keeps from the room until it has guessed.
        self.guess = guess
        if guess is not None:
            mode = guess.mode
        # The room's answers to the questions (interview mode), kept over steps back and forth.
        self.interview = Interview(on=interview)
        # Where every run of this session keeps its store: SQLite in memory, or a PostgreSQL
        # URL (`--db`), where each run gets a schema of its own.
        self.database = database
        # The language the script's pages are written in (a write's value or value_zh);
        # the app keeps it to the language on screen.
        self.lang = lang
        base = scenario.settings if scenario is not None else (settings or sandbox_settings())
        if mode is not None:
            base = dataclasses.replace(base, mode=mode)
        self.settings = base
        # Step 0 shows the scenario before it starts: nobody has claimed anything yet.
        self.sim = Simulation(self.settings, db_path=database, generation=1, start=False)
        self.position = 0  # script steps played
        self.forked = False
        self.recorded: list[Recorded] = []
        self.last_outcome: StepOutcome | None = None
        self._unsaved = False  # acts recorded since the last save
        # The next step's question is on screen and the step has not been played yet.
        self.asking = False
        # Where the run stood when the last step's expectations were judged (clock, event).
        self._judged_at: tuple[int, int] = (0, 0)
        self._marks: tuple[tuple[int, int, int], tuple[Mark, ...]] | None = None
        # What each undo left behind, newest last: the run as it stood before it, so redo
        # brings back the act and the time after it exactly (replayed: determinism).
        self._redo: list[_Undone] = []

    def _new_simulation(self) -> Simulation:
        return Simulation(
            self.settings,
            db_path=self.database,
            generation=self.sim.generation + 1,
            start=False,
        )

    # -- what the session is -----------------------------------------------------------------

    @property
    def is_sandbox(self) -> bool:
        return self.scenario is None

    @property
    def live(self) -> bool:
        """Whether virtual time runs by itself: the sandbox, a fork, or a finished script.

        Once the script has played out, letting time run carries the scenario on as a
        sandbox (the bundled sandbox scenario is one narrated step, then free play).
        """
        return self.is_sandbox or self.at_end

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.scenario.steps if self.scenario is not None else ()

    @property
    def step_count(self) -> int:
        return len(self.steps)

    @property
    def dropped_script(self) -> bool:
        """Whether an act cut the script short (acts after its end drop nothing)."""
        return self.forked and self.position < self.step_count

    @property
    def at_end(self) -> bool:
        return self.forked or self.position >= self.step_count

    @property
    def mode(self) -> Mode:
        return self.settings.mode

    @property
    def now_ms(self) -> int:
        return self.sim.now_ms

    @property
    def generation(self) -> int:
        """Bumped whenever the simulation is rebuilt (a step back, a restart, a new mode): a
        screen that keeps things between refreshes (an event log, highlights) starts over."""
        return self.sim.generation

    @property
    def last_event_seq(self) -> int:
        return self.sim.last_event_seq

    @property
    def config(self) -> LeaseConfig:
        """The lease timing this run uses (long_lease swaps in its one-hour ttl)."""
        return self.sim.config

    @property
    def acts_count(self) -> int:
        """The person's acts recorded since the fork (time passing is not an act)."""
        return sum(
            1 for r in self.recorded if not isinstance(r.action, Advance) and not r.handed_over
        )

    @property
    def has_unsaved_acts(self) -> bool:
        """Whether acts were recorded since the run was last saved (restart would lose them)."""
        return self._unsaved and self.acts_count > 0

    @property
    def undo_target(self) -> Action | None:
        """What `previous_step` would undo in the sandbox or after a fork: the person's
        last act (None: nothing)."""
        if not self.undoes:
            return None
        return next(
            (
                r.action
                for r in reversed(self.recorded)
                if not isinstance(r.action, Advance) and not r.handed_over
            ),
            None,
        )

    def new_task_id(self, prefix: str = "task") -> str:
        """A task id not used in this run: task-N, N one more than the tasks so far."""
        taken = {t.task_id for t in self.sim.snapshot(()).tasks}
        n = len(taken) + 1
        while f"{prefix}-{n}" in taken:
            n += 1
        return f"{prefix}-{n}"

    def new_worker_id(self, prefix: str = "w") -> str:
        """A worker id not used in this run: wN."""
        taken = set(self.sim.worker_ids())
        n = len(taken) + 1
        while f"{prefix}{n}" in taken:
            n += 1
        return f"{prefix}{n}"

    def title(self, lang: str = "en") -> str:
        if self.scenario is None:
            return SANDBOX_TITLE_ZH if lang == "zh" else SANDBOX_TITLE
        return self.scenario.title_in(lang)

    def snapshot(self, include: Collection[SnapshotPart] = SNAPSHOT_PARTS) -> Snapshot:
        """The simulation's snapshot; `include` may leave out lists nobody looks at now."""
        return self.sim.snapshot(include)

    def events(self, since_seq: int = 0) -> list[EventRow]:
        return self.sim.events(since_seq)

    # -- playback ----------------------------------------------------------------------------

    def _play(self, index: int) -> StepOutcome:
        step = self.steps[index]
        action = step.action
        before, since = self.sim.last_event_seq, self.sim.now_ms
        broken_before = self.sim.violations()
        self.sim.start()  # a step with nothing to do still begins the run
        stopped: ActionError | None = None
        try:
            result = None if action is None else self.sim.apply(in_language(action, self.lang))
        except ActionError as err:
            result, stopped = ActionResult(False, str(err), error=err), err
        snap = self.sim.snapshot(WITH_TIMELINE if step.expects else _TIMELINE_ONLY)
        checks = judge(step.expects, snap) if step.expects else ()
        self._judged_at = (self.sim.now_ms, self.sim.last_event_seq)
        events = self.sim.events(before) if self.sim.last_event_seq > before else []
        # the whole register only when a claim may have taken over a checkpointed task
        claimed = any(ev.event == EventKind.CLAIMED for ev in events)
        history = self.sim.events(0) if claimed else events
        broken = {
            ViolationKind(kind)
            for kind, count in snap.violations.items()
            if count > broken_before.get(kind, 0)
        }
        panel = panel_for(step, events, history, snap.timeline, since, broken)
        return StepOutcome(index, step, result, checks, panel, stopped)

    def marks(self) -> tuple[Mark, ...]:
        """The last step's expectations as they stand now: judged again on every new
        instant or event once the run has moved on from the step."""
        outcome = self.last_outcome
        if outcome is None or not outcome.checks:
            return ()
        where = (self.sim.now_ms, self.sim.last_event_seq)
        number = outcome.index + 1
        if where == self._judged_at:
            return tuple(Mark(c, None, number) for c in outcome.checks)
        key = (self.generation, *where)
        if self._marks is None or self._marks[0] != key:
            again = judge([c.expectation for c in outcome.checks], self.sim.snapshot())
            marks = tuple(Mark(c, n, number) for c, n in zip(outcome.checks, again, strict=True))
            self._marks = (key, marks)
        return self._marks[1]

    @property
    def question(self) -> Question | None:
        """The question put to the audience before the next step, while it is unrevealed."""
        return self.steps[self.position].question if self.asking else None

    def next_step(self) -> StepOutcome | None:
        """Play the next script step; None when nothing was played: at the end of the script
        (or once forked), or when the step asks a question first. Then `question` is set
        and `reveal()` (or another next_step) plays the step."""
        if self.at_end:
            return None
        if self.steps[self.position].question is not None and not self.asking:
            self.asking = True
            return None
        return self._play_next()

    @property
    def awaited(self) -> Question | None:
        """Interview mode: what a number key answers now (the question on screen, then its
        follow-up), or None."""
        question = self.question
        if not self.interview.on or question is None:
            return None
        return self.interview.waiting(self.position, question)

    def answer(self, chosen: int) -> Verdict | None:
        """Interview mode: the room's answer to the question on screen (or, once that is
        answered, to its follow-up); None when nothing waits for one. The step stays unplayed
        until `reveal`."""
        question = self.question
        if not self.interview.on or question is None:
            return None
        return self.interview.answer(self.position, question, chosen)

    def reveal(self) -> StepOutcome | None:
        """Play the step whose question is on screen; None if no question is waiting."""
        return self._play_next() if self.asking else None

    def _play_next(self) -> StepOutcome:
        self.asking = False
        outcome = self._play(self.position)
        self.position += 1
        self.last_outcome = outcome
        return outcome

    def _rebuild(self, played: int) -> None:
        self.asking = False
        self.sim.close()
        self.sim = self._new_simulation()
        self.position = 0
        self.last_outcome = None
        for index in range(played):
            self.last_outcome = self._play(index)
            self.position += 1

    @property
    def on_network(self) -> bool:
        """Whether the run's store is across a network: a screen does its work off its loop."""
        return self.sim.on_network

    @property
    def undoes(self) -> bool:
        """Whether `previous_step` undoes an act (the sandbox, and any run after a fork, a
        finished script's free play included) rather than stepping back in the script."""
        return self.is_sandbox or self.forked

    def previous_step(self) -> bool:
        """Step back. An unrevealed question is taken back first.

        In the sandbox and after a fork, one meaning: the last act (and the time after it)
        is undone, and kept for `redo`; with no act left after a fork, back to the fork
        point. A sandbox with no act to undo is left exactly as it is. Returns whether
        anything changed.
        """
        if self.asking:
            self.asking = False
            return True
        if self.undoes:
            act = self.undo_target
            if act is None:
                if not self.forked:
                    return False  # nothing to undo: the run goes on untouched
                self._unfork()
                return True
            if self.undo_limit_reached:
                return False
            undone = _Undone(tuple(self.recorded), self.forked, self._unsaved, act)
            while self.recorded and (
                isinstance(self.recorded[-1].action, Advance) or self.recorded[-1].handed_over
            ):
                self.recorded.pop()
            self.recorded.pop()
            if self.forked and self.undo_target is None:
                self._unfork()  # the fork's first act undone: the script is back
            else:
                self._replay_recording()
            self._redo.append(undone)
            return True
        if self.position == 0:
            return False
        self._rebuild(self.position - 1)
        return True

    @property
    def undo_limit_reached(self) -> bool:
        """Whether `previous_step` has undone MAX_UNDO acts in a row, and undoes no more."""
        return len(self._redo) >= MAX_UNDO

    @property
    def redo_target(self) -> Action | None:
        """The act `redo` would bring back (None: nothing was undone since the last act)."""
        return self._redo[-1].act if self._redo else None

    def redo(self) -> bool:
        """Bring back what the last undo took away: its act and the time that had passed
        after it, exactly as they were (time let pass since the undo is dropped: the run
        goes back to where it stood). A new act of the person ends what can be redone.
        Returns whether anything changed."""
        if not self._redo:
            return False
        undone = self._redo.pop()
        self.forked = undone.forked
        self.asking = False
        self.recorded = list(undone.recorded)
        self._unsaved = undone.unsaved
        self._replay_recording()
        return True

    def _unfork(self) -> None:
        self.forked = False
        self.recorded.clear()
        self._unsaved = False
        self._rebuild(self.position)

    def _replay_recording(self) -> None:
        """The script as far as it was played, then what was recorded after it."""
        self._rebuild(self.position)
        for entry in self.recorded:
            self.sim.apply(entry.action)

    def _drop_recording(self) -> None:
        self.recorded.clear()
        self._unsaved = False
        self._redo.clear()

    def restart(self) -> None:
        """Back to the start of the scenario (or an empty sandbox), not forked."""
        self.forked = False
        self._drop_recording()
        self.interview.clear()  # a new run, a new interview
        self._rebuild(0)

    def next_mode(self) -> Mode:
        """The mode `m` switches to: a mistake and its correct twin, side by side.

        A scenario written for a mistake toggles between that mistake and `correct` (the
        same faults with every safety on), so "press m to see the correct run" and "press
        m again" lead where the narration says. A correct scenario, or the sandbox, cycles
        through every mode.
        """
        home = self.scenario.settings.mode if self.scenario is not None else Mode.CORRECT
        if home is not Mode.CORRECT:
            return Mode.CORRECT if self.mode is home else home
        modes = list(Mode)
        return modes[(modes.index(self.mode) + 1) % len(modes)]

    def set_mode(self, mode: Mode, *, keep_step: bool = False) -> int:
        """The same scenario in another mode: from the start, or (`keep_step`) replayed
        under the new mode to the step the run stood at. Acts after a fork are dropped (the
        script is what is replayed). A step that cannot be played in the new mode (its act
        does not fit that run) stops the replay before it. Returns the steps played."""
        target = self.position if keep_step else 0
        self.settings = dataclasses.replace(self.settings, mode=mode)
        self.forked = False
        self._drop_recording()
        self._rebuild(0)
        while self.position < target:
            outcome = self._play(self.position)
            if outcome.stopped is not None:
                break
            self.last_outcome = outcome
            self.position += 1
        return self.position

    def goto(self, position: int) -> None:
        """Jump to just after `position` script steps (replaying from the start)."""
        position = max(0, min(position, self.step_count))
        self.forked = False
        self._drop_recording()
        self._rebuild(position)

    # -- the person's acts and live time -----------------------------------------------------

    def _record(self, action: Action, at: int) -> None:
        if isinstance(action, Advance) and self.recorded:
            last = self.recorded[-1]
            if isinstance(last.action, Advance):
                total = last.action.by_ms + action.by_ms
                self.recorded[-1] = Recorded(last.at_ms, Advance(total))
                return
        self.recorded.append(Recorded(at, action))

    def act(self, action: Action) -> ActionResult:
        """Apply an act of the person; during a playback an act that happens forks it.

        A refused act that changed nothing (an unknown worker, a task that does not wait,
        a call that never reached the store) leaves the playback as it was: no fork,
        nothing recorded, the rest of the script still there. One the store refused with
        an event is part of the run's history, so it forks and is recorded like any other.
        """
        at = self.sim.now_ms  # when the act began: an advance ends later
        before = self.sim.last_event_seq
        try:
            result = self.sim.apply(action)
        except ActionError as err:
            return ActionResult(False, str(err), error=err)
        if not result.ok and self.sim.last_event_seq == before:
            return result
        forks = not self.is_sandbox and not self.forked
        if forks:
            self.forked = True
            self.asking = False
        if isinstance(action, Advance):
            self._record(action, at)
        else:
            self.recorded.append(Recorded(at, action))
            self._unsaved = True
            self._redo.clear()  # a new act: what was undone before it cannot come back
        if forks:
            self._hand_over()
        return result

    def _hand_over(self) -> None:
        """The fork: the workers the script drove by hand go on by themselves from where
        they stand (their memory, stale or not, kept), so the world does not stand still
        waiting for a script that was dropped."""
        at = self.sim.now_ms
        for view in self.sim.snapshot(()).workers:
            if view.autopilot:
                continue
            action = Autopilot(view.id)
            self.sim.apply(action)
            self.recorded.append(Recorded(at, action, handed_over=True))

    @property
    def handed_over(self) -> tuple[str, ...]:
        """The workers the fork handed over to themselves (the header says so)."""
        return tuple(str(getattr(r.action, "worker", "")) for r in self.recorded if r.handed_over)

    def tick(self, ms: int) -> None:
        """Let live virtual time pass (sandbox or forked); recorded as coalesced `advance`."""
        if ms <= 0 or not self.live:
            return
        self.act(Advance(ms))

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
                    sim.apply(in_language(step.action, self.lang))
                out.append(judge(step.expects, sim.snapshot()) if step.expects else ())
        finally:
            sim.close()
        return out

    def save_as_scenario(self, path: str | Path) -> Path:
        out = Path(path)
        out.write_text(self.scenario_text(), encoding="utf-8")
        self._unsaved = False
        return out

    def transcript_jsonl(self) -> str:
        """The event history as JSON lines, one event per line (the player's `--json` lines)."""
        return "".join(dump_json(event_record(ev)) + "\n" for ev in self.sim.events(0))

    def close(self) -> None:
        self.sim.close()
