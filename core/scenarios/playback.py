"""Playing a scenario's script over one deterministic Simulation: the steps in order, each
judged against the run, a question put before its step, and a step back by rebuilding and
replaying (determinism makes it exact). What the person does on top of it, the fork and its
undo and redo, is history.py's; saving the run as a scenario is session.py's.
"""

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from core.engine.config import LeaseConfig, Mode
from core.engine.records import EventRow, dump_json
from core.engine.vocabulary import RESTING_STATUSES, EventKind
from core.scenarios.format import Expectation, Panel, Question, Scenario, Step
from core.scenarios.glossary import SANDBOX_TITLE, SANDBOX_TITLE_ZH
from core.scenarios.guess import GuessRound
from core.scenarios.interview import Interview, Verdict
from core.scenarios.panels import panel_for
from core.scenarios.player import as_played, event_record, judge_expectation
from core.sim.checker import ViolationKind
from core.sim.simulation import IN_MEMORY, ActionError, ActionResult, Simulation
from core.sim.snapshot import SNAPSHOT_PARTS, WITH_TIMELINE, Snapshot, SnapshotPart
from core.sim.spec import SimSettings, TaskSpec, WorkerSpec


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


# What a step without expectations reads after it: the timeline, to see belief part from truth.
_TIMELINE_ONLY: frozenset[SnapshotPart] = frozenset({"timeline"})


def judge(expects: Sequence[Expectation], snapshot: Snapshot) -> tuple[CheckResult, ...]:
    """Every expectation against one snapshot."""
    out = []
    for exp in expects:
        ok, found, seen = judge_expectation(exp, snapshot)
        out.append(CheckResult(exp, ok, found, seen))
    return tuple(out)


class Playback:
    """The script's playback over one deterministic Simulation, and what the run looks like."""

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
        # Whether an act of the person left the script (History forks; playback only reads it).
        self.forked = False
        self.last_outcome: StepOutcome | None = None
        # The next step's question is on screen and the step has not been played yet.
        self.asking = False
        # Where the run stood when the last step's expectations were judged (clock, event).
        self._judged_at: tuple[int, int] = (0, 0)
        self._marks: tuple[tuple[int, int, int], tuple[Mark, ...]] | None = None

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
    def work_over(self) -> bool:
        """Whether the run's work is over: it has tasks, and every one rests (done, dead, or
        parked for a person), so nothing more happens until someone acts. A fork that
        dropped the script ends there, and is reported as a script's end is."""
        tasks = self.sim.snapshot(()).tasks
        return bool(tasks) and all(t.row.status in RESTING_STATUSES for t in tasks)

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

    def transcript_jsonl(self) -> str:
        """The event history as JSON lines, one event per line (the player's `--json` lines)."""
        return "".join(dump_json(event_record(ev)) + "\n" for ev in self.sim.events(0))

    # -- playback ----------------------------------------------------------------------------

    def _play(self, index: int) -> StepOutcome:
        step = self.steps[index]
        action = step.action
        before, since = self.sim.last_event_seq, self.sim.now_ms
        broken_before = self.sim.violations()
        self.sim.start()  # a step with nothing to do still begins the run
        stopped: ActionError | None = None
        try:
            result = (
                None if action is None else self.sim.apply(as_played(action, self.sim, self.lang))
            )
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

    def close(self) -> None:
        self.sim.close()
