"""The person's acts on top of a playback: the fork (the rest of the script dropped, the
workers it drove handed over to themselves), the recording of every act and of the time
between, and undo and redo over that recording (the run rebuilt and replayed: determinism).
"""

import dataclasses
from dataclasses import dataclass

from core.engine.config import Mode
from core.scenarios.format import Scenario
from core.scenarios.guess import GuessRound
from core.scenarios.playback import Playback
from core.sim.simulation import IN_MEMORY, ActionError, ActionResult
from core.sim.spec import Action, Advance, Autopilot, SimSettings


@dataclass(frozen=True, slots=True)
class Recorded:
    """An action the person did (or time that passed) after the fork, at virtual time `at_ms`.

    `handed_over`: not the person's act but the fork's own: a worker the script drove
    going on by itself (`autopilot`), recorded so the saved run replays exactly.
    """

    at_ms: int
    action: Action
    handed_over: bool = False


@dataclass(frozen=True, slots=True)
class _Undone:
    """The run as it stood before an undo: what was recorded, whether it was forked, and
    whether those acts were saved."""

    recorded: tuple[Recorded, ...]
    forked: bool
    unsaved: bool
    act: Action  # the act the undo took back (what redo says it brings back)


# How many acts in a row `previous_step` undoes. Each undo keeps the run as it stood (the
# whole recording) for redo and replays the rest: unbounded, a long sandbox session would
# keep a copy of its recording per undo. The help page says the bound.
MAX_UNDO = 100


class History(Playback):
    """A playback the person acts on: forks, the recording, undo and redo."""

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
        super().__init__(
            scenario,
            settings=settings,
            mode=mode,
            lang=lang,
            interview=interview,
            database=database,
            guess=guess,
        )
        self.recorded: list[Recorded] = []
        self._unsaved = False  # acts recorded since the last save
        # What each undo left behind, newest last: the run as it stood before it, so redo
        # brings back the act and the time after it exactly (replayed: determinism).
        self._redo: list[_Undone] = []

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
