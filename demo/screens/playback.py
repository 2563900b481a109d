"""The main screen's playback: the clock, play and pause, a step forward or back, redo, a
jump to any step, restart, and the pace (a part of `MainScreen`, demo/screens/main.py).

What a step does is the Session's; this part only turns keys into Session calls, on the
screen's worker (`_work`), and says in a toast what the Session answered.
"""

import time
from functools import partial

from core.scenarios.session import MAX_UNDO, StepOutcome
from core.sim.spec import Advance
from demo.i18n import act_words, tr
from demo.screens.main_part import MainPart

SANDBOX_STEP_MS = 5_000  # "next" in a live run lets this much virtual time pass
AUTOPLAY_S = 3.0  # seconds between steps of an auto-playing script at x1


class Playback(MainPart):
    """The keys that move the run through time."""

    def on_tick(self) -> None:
        """The fixed-interval refresh: live time in a live run, auto-steps in playback."""
        now = time.monotonic()
        if self.playing and self.session.live:
            self.pacer.paused = False
            self._owed_ms += self.pacer.tick(now)
            if not self.runner.busy:  # off the loop, time owed goes with the next tick
                ms, self._owed_ms = self._owed_ms, 0
                self._work(partial(self.session.tick, ms))
        else:
            self.pacer.paused = True
            self.pacer.tick(now)
            due = now - self._autoplay_wall >= AUTOPLAY_S / self.pacer.speed
            if self.playing and due and not self.runner.busy:
                self._autoplay_wall = now
                self._work(self._auto_step, self._auto_stepped)
        self.refresh_view()

    def _auto_step(self) -> StepOutcome | None:
        # at a question only v reveals: `next_step` would play the waiting step and
        # give the answer away, so auto-play never calls it while a question is asked
        if self.session.question is not None:
            return None
        return self.session.next_step()

    def _auto_stepped(self, outcome: object) -> None:
        if outcome is None:
            # a question (or the end) stops the run; after v it stays paused, so the
            # presenter speaks before anything else moves
            self.playing = False
            if self.session.question is not None:
                self._hint_once(tr("question_n", self.lang))

    _hint: tuple[str, float] | None = None

    def _hint_once(self, text: str, timeout: float = 4.0) -> None:
        """A hint as a toast, once while it is on screen: n pressed again and again at a
        question would stack copies over the panes (and clip each other's characters)."""
        now = time.monotonic()
        if self._hint is not None and self._hint[0] == text and now - self._hint[1] < timeout:
            return
        self._hint = (text, now)
        self.notify(text, timeout=timeout)

    def action_play_pause(self) -> None:
        self._autoplay_wall = time.monotonic()
        if not self.playing and not self.session.live and self.session.question is not None:
            # at a question nothing moves until v, and nothing is armed behind a bar that
            # says paused: after v the run stays paused too
            self.notify(tr("paused_at_question", self.lang), timeout=4)
            return
        self.playing = not self.playing

    def action_pause(self) -> None:
        self.playing = False

    def action_next_step(self) -> None:
        self._message = None
        session = self.session

        def work() -> bool:
            if session.question is not None:
                return False  # interview mode: n by habit must not give the answer away
            if session.live:
                session.tick(SANDBOX_STEP_MS)
            else:
                session.next_step()
            return True

        def then(played: object) -> None:
            if not played:
                self._hint_once(tr("question_n", self.lang))  # only v reveals

        self._work(work, then)
        self.changed()

    def action_previous_step(self) -> None:
        """One meaning in every sandbox and after any fork: undo the last act (it says
        which); with none, a sandbox stays as it is and a fork goes back to where it began.
        In a playback, the previous step."""
        self._message = None
        session = self.session
        undone = session.undo_target
        asking = session.question is not None

        def stepped(changed: object) -> None:
            if undone is not None and changed and not asking:
                act = act_words(undone, self.lang)
                self.notify(tr("undone_redo", self.lang, act=act), timeout=4)
            elif undone is not None and not changed and session.undo_limit_reached:
                self.notify(tr("undo_limit", self.lang, n=MAX_UNDO), timeout=4)
            elif session.is_sandbox and not changed:
                self.notify(tr("nothing_to_undo", self.lang), timeout=3)
            self.changed()

        self._work(session.previous_step, stepped)

    def action_redo(self) -> None:
        """Bring back what the last undo took away (the Session decides what that is)."""
        self._message = None
        session = self.session
        act = session.redo_target

        def redone(changed: object) -> None:
            if changed and act is not None:
                self.notify(tr("redone", self.lang, act=act_words(act, self.lang)), timeout=4)
            else:
                self.notify(tr("nothing_to_redo", self.lang), timeout=3)
            self.changed()

        self._work(session.redo, redone)

    def action_jump(self) -> None:
        """Go to any step in one act: a list of the steps, by number or by moving to one."""
        from demo.screens.jump import JumpScreen

        session = self.session
        if not session.steps:
            self.notify(tr("jump_nothing", self.lang), timeout=3)
            return

        def chosen(position: int | None) -> None:
            if position is not None:
                self._discard_then(tr("jump", self.lang), lambda: self._jump(position))

        self.app.push_screen(JumpScreen(session.steps, session.position, self.lang), chosen)

    def _jump(self, position: int) -> None:
        self._message = None
        self.playing = False
        self._work(partial(self.session.goto, position))
        self.changed()

    def action_restart(self) -> None:
        self._discard_then(tr("restart", self.lang), self._restart)

    def _restart(self) -> None:
        self._message = None
        self._work(self.session.restart)
        self.changed()

    def action_advance(self, ms: int) -> None:
        """Let `ms` of virtual time pass (a live run; tests drive time with this)."""
        if self.session.live:
            self._work(partial(self.session.tick, ms))
        else:
            self.act(Advance(ms))
        self.changed()

    def action_slower(self) -> None:
        self.pacer.slower()
        self.changed()

    def action_faster(self) -> None:
        self.pacer.faster()
        self.changed()
