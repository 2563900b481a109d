"""The main screen: header, worker panes, task table, tabbed panels, narration, controls.

All state comes from the Session's snapshots; the screen only turns key presses and button
clicks into Session calls and redraws in place. Every refresh reads one snapshot and every
widget on screen shows that one (one truth per frame): the panes and the task table never
disagree about the same instant.

What changed is said by message: an act, a step or a key posts `MainScreen.Changed` (many in
a row collapse into one) and the handler redraws; `playing` is a reactive. The fixed-interval
timer only lets live time pass and redraws. How a frame is drawn (every widget brought up
to it, the words relabelled with the language) is demo/screens/drawing.py's.
"""

import os
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.command import Provider
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, TabbedContent, TabPane

from core.engine.config import Mode
from core.scenarios import glossary
from core.scenarios.sentences import timing_warnings
from core.scenarios.session import MAX_UNDO, Session, StepOutcome
from core.sim.live import LivePacer
from core.sim.simulation import ActionResult
from core.sim.snapshot import Snapshot, SnapshotPart
from core.sim.spec import (
    WORKER_ACTIONS,
    Action,
    AddWorker,
    Advance,
    Approve,
    Enqueue,
    Reject,
    WorkerState,
)
from demo.commands import MainCommands, PaletteScreen
from demo.controls import bindings, fault_now
from demo.host import Host, host
from demo.i18n import act_words, tr, worker_name
from demo.saves import MAX_SAVES, SaveLimitReached
from demo.screens.confirm import ask_then
from demo.screens.drawing import Drawing
from demo.screens.layout import fit
from demo.screens.session_runner import (
    Reading,
    SessionIdle,
    SessionRunner,
    SessionWorked,
    Then,
    TranscriptSaved,
)
from demo.widgets.body import Body
from demo.widgets.control_bar import ControlBar
from demo.widgets.keybar import KeyBar
from demo.widgets.narration import NarrationPanel, ignored_text, refusal_text
from demo.widgets.panels import (
    BooksNote,
    BoxDetail,
    CheckpointTable,
    EffectsTable,
    EventLog,
    LedgerTable,
    RefusedNote,
    RejectedTable,
)
from demo.widgets.status_header import StatusHeader
from demo.widgets.task_table import TaskTable
from demo.widgets.timeline_view import OwnershipTimeline
from demo.widgets.worker_pane import WorkerGrid, WorkerPane

if TYPE_CHECKING:
    from demo.screens.picker import Picked


def _nothing() -> None:
    """A job that only reads the frame after it."""


REFRESH_S = 0.1  # the fixed refresh interval (10 Hz)
LOG_EVERY_S = 0.3  # while playing live, a log takes its new lines at most this often
SANDBOX_STEP_MS = 5_000  # "next" in a live run lets this much virtual time pass
AUTOPLAY_S = 3.0  # seconds between steps of an auto-playing script at x1
WARNING_TOAST_S = 20.0  # a scenario's timing warning stays long enough to be read aloud

# The snapshot lists each panel needs; the others are not read while it is shown.
PANEL_PARTS: dict[str, frozenset[SnapshotPart]] = {
    "tab-ledger": frozenset({"ledger"}),
    "tab-checkpoints": frozenset({"checkpoints"}),
    "tab-effects": frozenset({"effects"}),
    # a refused page is read against the page the ledger holds at its key
    "tab-rejected": frozenset({"ledger"}),
    "tab-timeline": frozenset({"timeline"}),
}


class MainScreen(Drawing, Screen[None]):
    """One run: a scenario in playback (maybe forked) or the sandbox."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("en"))
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {MainCommands}

    class Changed(Message):
        """The run or the screen's state changed: redraw from one new snapshot.

        Posted by every act, step and key; a burst (a held key) collapses into one.
        """

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, MainScreen.Changed)

    playing: reactive[bool] = reactive(False, init=False)

    def __init__(self, session: Session, *, playing: bool | None = None) -> None:
        super().__init__()
        self.session = session
        self.pacer = LivePacer(speed=1.0)
        self.set_reactive(MainScreen.playing, session.is_sandbox if playing is None else playing)
        self._start_drawing()  # what the drawing keeps between frames (demo/screens/drawing.py)
        self._frame_key: tuple[object, ...] | None = None
        self._autoplay_wall = 0.0
        self._message: str | None = None
        self._toml = False  # expectations in the file's form instead of as sentences
        self.runner = SessionRunner(self, off_loop=session.on_network)
        self._owed_ms = 0  # live time not yet handed to a busy off-loop session
        self.chosen_worker: str | None = None  # the worker the fault keys act on (w)
        self._narration_open = False  # d: the step's narration whole on a small screen
        self._answered = False  # interview mode: an answer was just given

    @property
    def bk_app(self) -> Host:
        return host(self.app)

    @property
    def lang(self) -> str:
        return self.bk_app.lang

    # -- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="status")
        with VerticalScroll(id="narration-box"):
            yield NarrationPanel(id="narration")
        with Body(id="body"):
            with Vertical(id="left"):
                yield WorkerGrid(id="workers")
                yield TaskTable(id="tasks")
            with Horizontal(id="lower"):
                with TabbedContent(id="panels"):
                    with TabPane(tr("ledger", "en"), id="tab-ledger"), Vertical():
                        yield BooksNote(id="books-note")
                        yield LedgerTable(id="ledger")
                    with TabPane(tr("checkpoints", "en"), id="tab-checkpoints"), Vertical():
                        yield BoxDetail(id="box-detail")
                        yield CheckpointTable(id="checkpoints")
                    with TabPane(tr("rejected", "en"), id="tab-rejected"), Vertical():
                        yield RefusedNote(id="refused-note")
                        yield RejectedTable(id="rejected")
                    with TabPane(tr("effects", "en"), id="tab-effects"):
                        yield EffectsTable(id="effects")
                    with TabPane(tr("event_log", "en"), id="tab-events"):
                        yield EventLog(id="events", wrap=True)  # a sentence folds, never cut
                    with TabPane(tr("timeline", "en"), id="tab-timeline"), VerticalScroll():
                        yield OwnershipTimeline(id="timeline")
                # on a roomy screen the event log stays in sight beside any other panel,
                # and on a tall one a second panel under it: the refused writes beside
                # the ledger, or the ledger beside them
                with Vertical(id="side"):
                    yield EventLog(id="side-events", wrap=True)
                    with Vertical(id="side-second"):
                        yield RejectedTable(id="side-rejected")
                        yield LedgerTable(id="side-ledger")
        yield ControlBar(id="controls")
        yield KeyBar(id="keybar")

    def on_mount(self) -> None:
        self.relabel()
        self.refresh_view()
        if self.session.scenario is not None:
            for warning in timing_warnings(self.session.scenario, self.lang):
                self.notify(warning, severity="warning", timeout=WARNING_TOAST_S)
        if self.session.guess is not None:
            self.notify(tr("guess_on", self.lang), timeout=8)
        if self.bk_app.live_clock:
            self.log_every_s = LOG_EVERY_S
            self.set_interval(REFRESH_S, self.on_tick)
        self.query_one("#tasks", TaskTable).focus(scroll_visible=False)

    def on_unmount(self) -> None:
        # The run ends with its screen, however the app ends (`q`, an error, the picker):
        # its store is closed, and on PostgreSQL its run schema dropped (after any job
        # still under way: the worker thread's jobs are in order).
        if self.runner.busy:
            self.runner.do(self.session.close, None, None)
        else:
            self.session.close()

    def on_resize(self) -> None:
        width, height = self.size
        shape = fit(width, height)
        self.set_class(shape.narrow, "-narrow")
        self.set_class(shape.short, "-short")
        self.set_class(shape.roomy, "-roomy")
        self.set_class(shape.tall, "-tall")
        self.query_one("#narration-box").styles.max_height = shape.narration_rows
        if not shape.narrow:
            self.query_one("#lower").styles.height = "1fr"
        self.query_one("#tasks").styles.max_height = shape.task_rows
        self._fit_controls(width)
        self.post_message(self.Changed())

    # -- the clock ---------------------------------------------------------------------------

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
                self.notify(tr("question_n", self.lang), timeout=4)

    def _work(self, work: Callable[[], object], then: Then | None = None) -> None:
        """The session's work: inline on SQLite, on a thread of its own when the store is
        across a network (`SessionRunner`); `then` gets the result, on the loop."""
        if not self.runner.off_loop:
            result = work()
            if then is not None:
                then(result)
            return
        self.runner.do(work, then, self._reading())

    def _reading(self) -> Reading:
        active = self._active_tab()
        parts = PANEL_PARTS.get(active, frozenset())
        if self.has_class("-tall") and self._second_is_ledger(active):
            parts = parts | PANEL_PARTS["tab-ledger"]  # the ledger under the log beside
        return Reading(parts, self.lang, self._toml)

    def on_session_worked(self, message: SessionWorked) -> None:
        if message.error is not None:
            raise message.error
        if message.then is not None:
            message.then(message.result)
        if message.frame is not None:
            self.draw(message.frame)

    def on_session_idle(self, _message: SessionIdle) -> None:
        self.runner.idle()

    # -- when to draw (the drawing itself: demo/screens/drawing.py) --------------------------

    def changed(self) -> None:
        """Something the screen shows changed: redraw once the current message is handled."""
        self.post_message(self.Changed())

    def on_main_screen_changed(self, _message: "MainScreen.Changed") -> None:
        self.refresh_view(force=True)

    def watch_playing(self) -> None:
        self.pacer.paused = not self.playing
        self.changed()

    def refresh_view(self, *, force: bool = False) -> None:
        """One refresh: read one snapshot and bring every widget on screen up to it."""
        session = self.session
        frame = (
            session.generation,
            session.now_ms,
            session.last_event_seq,
            self.lang,
            session.acts_count,
            self.playing,
            self.pacer.speed,
            self._message,
            self._active_tab(),
            self._toml,
            self._narration_open,
        )
        if not force and frame == self._frame_key:
            return
        self._frame_key = frame
        if not self.runner.off_loop:
            self.draw(self.runner.read(self._reading()))
        elif not self.runner.busy:
            self.runner.do(_nothing, None, self._reading())  # a read, off the loop
        else:
            self._frame_key = None  # the job under way brings a frame; look again next time

    def action_toggle_narration(self) -> None:
        """d: the whole step's narration, or folded to its first lines again."""
        self._narration_open = not self._narration_open
        self.changed()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """A row chosen in the Checkpoints table: its whole box under the table."""
        if event.data_table.id == "checkpoints" and self._snap is not None:
            self.query_one("#box-detail", BoxDetail).show(
                self._snap, self.lang, event.row_key.value
            )

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.changed()  # the snapshot held may lack this panel's list

    # -- acting --------------------------------------------------------------------------------

    def act(self, action: Action | Callable[[], Action]) -> None:
        """An act of the person: forks a playback (if it happened), is recorded, shows at once.

        `action` may be made when the act runs (a new task's id reads the store)."""
        session = self.session

        def work() -> ActionResult:
            return session.act(action() if callable(action) else action)

        self._work(work, self._acted)

    def _acted(self, result: object) -> None:
        assert isinstance(result, ActionResult)
        self._message = None if result.ok else refusal_text(result, self.lang)
        if not result.ok:
            self.notify(self._message or result.message, severity="warning", timeout=4)
        elif result.ignored:
            self.notify(ignored_text(result, self.lang), timeout=4)
        self.changed()

    def on_worker_pane_fault_requested(self, message: WorkerPane.FaultRequested) -> None:
        self.act(WORKER_ACTIONS[message.action](message.worker_id))

    def action_play_pause(self) -> None:
        self._autoplay_wall = time.monotonic()
        if not self.playing and not self.session.live and self.session.question is not None:
            # at a question nothing moves until v, and nothing is armed behind a bar that
            # says paused: after v the run stays paused too
            self.notify(tr("paused_at_question", self.lang), timeout=4)
            return
        self.playing = not self.playing

    def action_show_tab(self, pane_id: str) -> None:
        """Open a panel and bring it into view (on a small screen the body scrolls to it)."""
        panels = self.query_one("#panels", TabbedContent)
        panels.active = pane_id
        body = self.query_one("#body", VerticalScroll)
        body.scroll_to_widget(panels, animate=False, top=True, immediate=True)
        self.changed()
        if pane_id == "tab-events" and self.has_class("-narrow"):
            self._keep_newest_lines(laid_out=False)  # more of the log is in sight now

    def action_show_workers(self) -> None:
        self.query_one("#body", VerticalScroll).scroll_home(animate=False, immediate=True)
        if self.has_class("-narrow") and self._active_tab() == "tab-events":
            self._keep_newest_lines(laid_out=False)  # less of the log is in sight now

    def action_filter_rejected(self) -> None:
        """Show one reason in the Rejected panel, then the next, then all again."""
        self.query_one("#rejected", RejectedTable).next_filter()
        self.action_show_tab("tab-rejected")

    def set_rejected_filter(self, reason: str | None) -> None:
        self.query_one("#rejected", RejectedTable).reason_filter = reason
        self.action_show_tab("tab-rejected")

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
                self.notify(tr("question_n", self.lang), timeout=4)  # only v reveals

        self._work(work, then)
        self.changed()

    def action_reveal(self) -> None:
        """Interview mode: the step waits on its question until the presenter reveals it."""
        self._message = None
        self._work(self.session.reveal, self._revealed)

    def _revealed(self, outcome: object) -> None:
        if outcome is None:
            self.notify(tr("nothing_to_reveal", self.lang), timeout=3)
        else:
            self.app.clear_notifications()  # "press v" no longer stands beside the answer
            self.playing = False  # the presenter speaks to the answer before the run goes on
        self.changed()

    # -- interview mode: the room answers by number before v ------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "guess":
            return self.session.guess is not None
        if action == "answer":
            # a number answers only while a question waits for one; otherwise the key's
            # next binding (its panel) has it
            return self._answer_waits()
        return True

    def _answer_waits(self) -> bool:
        return self.session.awaited is not None

    def action_answer(self, chosen: int) -> None:
        waiting = self.session.awaited

        def then(verdict: object) -> None:
            if verdict is None and waiting is not None:
                last = len(waiting.choices)
                self.notify(tr("no_such_choice", self.lang, n=chosen, last=last), timeout=3)
            self._answered = True  # the next frame shows what it said: scroll to it
            self.changed()

        self._work(partial(self.session.answer, chosen), then)

    def action_guess(self) -> None:
        """Which mistake is this? The five by number; once guessed, the header names it."""
        from demo.screens.guess import GuessScreen

        round_ = self.session.guess
        if round_ is not None:
            self.app.push_screen(GuessScreen(round_, self.lang), lambda _none: self.changed())

    def _guessing(self) -> bool:
        """A guess round the room has not answered: the mode list would say the answer."""
        round_ = self.session.guess
        if round_ is not None and not round_.revealed:
            self.notify(tr("guess_first", self.lang), timeout=4)
            return True
        return False

    def action_toggle_interview(self) -> None:
        on = not self.session.interview.on
        self.bk_app.interview = on  # the next run opened asks the same way
        self.session.interview.on = on
        if on:
            self.notify(tr("interview_on", self.lang), timeout=4)
        else:
            self.notify(tr("interview_off", self.lang), timeout=3)
        self.changed()

    def action_toggle_toml(self) -> None:
        """The expectations as the scenario file spells them, or as sentences again."""
        self._toml = not self._toml
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

    def action_choose_worker(self) -> None:
        """The next worker becomes the one the fault keys act on."""
        ids = [w.id for w in self.shown_snapshot().workers]
        if not ids:
            self.notify(tr("no_worker", self.lang), severity="warning", timeout=3)
            return
        at = ids.index(self.chosen_worker) if self.chosen_worker in ids else -1
        self.chosen_worker = ids[(at + 1) % len(ids)]
        name = worker_name(self.chosen_worker, self.lang)
        self.notify(tr("chosen_worker", self.lang, name=name), timeout=4)
        self.changed()

    def action_fault(self, fault: str) -> None:
        """A fault's key on the chosen worker: what its word in the pane does. `u` restarts
        a dead worker and resumes a living one; `c` heals a cut network, or cuts it."""
        snap = self.shown_snapshot()
        worker = next((w for w in snap.workers if w.id == self.chosen_worker), None)
        if worker is None:
            self.notify(tr("no_worker", self.lang), severity="warning", timeout=3)
            return
        now = fault_now(
            fault, dead=worker.state == WorkerState.DEAD, partitioned=worker.partitioned
        )
        self.act(WORKER_ACTIONS[now.action](worker.id))

    def action_open_scenario(self) -> None:
        """Another scenario, from the picker, without leaving the app; Esc comes back."""
        from demo.screens.picker import Picked, PickerScreen

        def picked(choice: Picked | None) -> None:
            if choice is not None:
                self._discard_then(tr("open_other", self.lang), partial(self._open, choice))

        self.app.push_screen(PickerScreen(back=True), picked)

    def _open(self, choice: "Picked") -> None:
        app = self.bk_app
        self.app.pop_screen()  # this run ends with its screen (on_unmount closes it)
        app.open_session(choice.scenario)

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

    def _discard_then(self, what: str, then: "Callable[[], None]") -> None:
        """Run `then`, after asking when it would lose acts recorded and not yet saved."""
        s = self.session
        ask_then(self.app, s.has_unsaved_acts, s.acts_count, what, self.lang, then)

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

    def action_language(self) -> None:
        self.bk_app.lang = "en" if self.lang == "zh" else "zh"

    def on_language_changed(self) -> None:
        """Called by the app after a language switch."""
        self.session.lang = self.lang  # the script's next pages are written in it
        self.relabel()
        seen = self._rejections_seen
        self._generation = 0  # rewrite the event log in the new language
        self.runner.forget_events()
        self.refresh_view(force=True)
        # the same run: rejections already looked at stay seen
        self._rejections_seen = max(seen, self._rejections_seen)

    def action_choose_mode(self) -> None:
        """The modes in a list, the one `m` used to switch to highlighted."""
        from demo.screens.modes import ModeScreen

        if self._guessing():
            return
        session = self.session
        own = session.scenario.settings.mode if session.scenario is not None else None
        screen = ModeScreen(session.mode, session.next_mode(), own, self.lang)

        def chosen(mode: Mode | None) -> None:
            if mode is not None:
                self.set_mode(mode)

        self.app.push_screen(screen, chosen)

    def set_mode(self, mode: Mode) -> None:
        """The run in another mode, replayed to the step it stood at (the Session decides
        how far the new mode lets it go, and the toast says so)."""
        if self._guessing():
            return
        session = self.session
        was = session.position

        def switched(reached: object) -> None:
            assert isinstance(reached, int)
            lang = self.lang
            meaning = glossary.mode_word(mode.value, lang).replace("`", "")
            if was == 0:
                said = tr("mode_from_start", lang, meaning=meaning)
            elif reached == was:
                said = tr("mode_kept", lang, meaning=meaning, k=was)
            else:
                said = tr("mode_cut", lang, meaning=meaning, k=reached, was=was, next=reached + 1)
            self.notify(said, timeout=6)
            self.changed()

        def switch() -> None:
            self._message = None
            self.playing = False
            self._work(partial(session.set_mode, mode, keep_step=True), switched)
            self.changed()

        self._discard_then(tr("mode", self.lang), switch)

    def explore(self, lang: str) -> None:
        """Explore this mode: every interleaving of a small world, on a screen of its own."""
        from demo.screens.explore import open_explore  # the search loads when it is asked for

        if self._guessing():
            return
        open_explore(self, self.session.mode, lang)

    def shown_snapshot(self) -> Snapshot:
        """The snapshot on screen (read off the loop on PostgreSQL, like every frame)."""
        return self._snap if self._snap is not None else self.session.snapshot(())

    def _waiting_task(self, what: str) -> str | None:
        tasks = self.shown_snapshot().tasks
        task = self.query_one("#tasks", TaskTable).waiting_selected(tasks)
        if task is None:
            self.notify(tr("no_waiting", self.lang, what=tr(what, self.lang)), severity="warning")
        return task

    def action_approve(self, task: str | None = None) -> None:
        task = task or self._waiting_task("approve")
        if task is not None:
            self.act(Approve(task))

    def action_reject(self, task: str | None = None) -> None:
        task = task or self._waiting_task("reject")
        if task is not None:
            self.act(Reject(task))

    def action_enqueue(self, kind: str = "ledger") -> None:
        session = self.session
        self.act(lambda: Enqueue(session.new_task_id(), kind=kind))

    def action_add_worker(self) -> None:
        session = self.session
        self.act(lambda: AddWorker(session.new_worker_id()))

    def action_help(self) -> None:
        from demo.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))

    def action_save(self) -> None:
        """Save the run: the screenshot now, the transcript read and the files written by
        the session's runner (on its thread on PostgreSQL: the whole transcript comes over
        the network); the toast once they are written (`TranscriptSaved`)."""
        try:
            write = self.bk_app.prepare_save(self.session)
        except SaveLimitReached:
            self.notify(tr("save_limit", self.lang, n=MAX_SAVES), severity="warning")
            return
        self.runner.save(write)

    def on_transcript_saved(self, message: TranscriptSaved) -> None:
        paths, error = message.paths, message.error
        if isinstance(error, OSError):  # a folder one cannot write, a full disk: one line
            self.notify(tr("save_failed", self.lang, why=error), severity="warning", timeout=8)
            return
        if error is not None:
            raise error
        folder = f"{paths[0].parent}{os.sep}"
        roles = ("saved_transcript", "saved_screenshot", "saved_scenario")
        names = "\n".join(
            f"  {p.name}  ({tr(role, self.lang)})" for p, role in zip(paths, roles, strict=True)
        )
        self.notify(tr("saved", self.lang, folder=folder, names=names), timeout=8)
        self.changed()

    def action_quit(self) -> None:
        self._discard_then(tr("quit", self.lang), self.app.exit)


# The palette knows this screen only by its protocol; this holds the screen to it.
_PALETTE_SCREEN: type[PaletteScreen] = MainScreen
