"""The main screen: header, worker panes, task table, tabbed panels, narration, controls.

All state comes from the Session's snapshots; the screen only turns key presses and button
clicks into Session calls and redraws in place. Every refresh reads one snapshot and every
widget on screen shows that one (one truth per frame): the panes and the task table never
disagree about the same instant.

What changed is said by message: an act, a step or a key posts `MainScreen.Changed` (many in
a row collapse into one) and the handler redraws; `playing` is a reactive. The fixed-interval
timer only lets live time pass and redraws. How a frame is drawn (every widget brought up
to it, the words relabelled with the language) is demo/screens/drawing.py's.

The screen is put together from parts by job, each a module of its own: the playback
(demo/screens/playback.py), interview mode (interview.py), the acts on workers and tasks
(acts.py), the views (views.py: the widgets, the layout, the panels), and the run as a whole
(runs.py: open, mode, language, save, quit). This module keeps what they share: the state,
when to draw, and where the session's work runs.
"""

from collections.abc import Callable
from typing import ClassVar

from textual.binding import BindingType
from textual.command import Provider
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen

from core.scenarios.sentences import timing_warnings
from core.scenarios.session import Session
from core.sim.live import LivePacer
from core.sim.simulation import ActionResult
from core.sim.snapshot import Snapshot, SnapshotPart
from core.sim.spec import Action
from demo.commands import MainCommands, PaletteScreen
from demo.controls import bindings
from demo.host import Host, host
from demo.i18n import tr
from demo.screens.acts import Acts
from demo.screens.confirm import ask_then
from demo.screens.drawing import Drawing
from demo.screens.interview import Interview
from demo.screens.playback import AUTOPLAY_S as AUTOPLAY_S
from demo.screens.playback import Playback
from demo.screens.runs import Runs
from demo.screens.session_runner import (
    Reading,
    SessionIdle,
    SessionRunner,
    SessionWorked,
    Then,
)
from demo.screens.views import Views
from demo.widgets.narration import ignored_text, refusal_text
from demo.widgets.task_table import TaskTable


def _nothing() -> None:
    """A job that only reads the frame after it."""


REFRESH_S = 0.1  # the fixed refresh interval (10 Hz)
LOG_EVERY_S = 0.3  # while playing live, a log takes its new lines at most this often
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


class MainScreen(Playback, Interview, Acts, Views, Runs, Drawing, Screen[None]):
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
        # its store is closed, and on PostgreSQL its run schema dropped, after any job still
        # under way (the worker thread's jobs are in order) and before the app is gone.
        self.runner.finish(self.session.close)

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

    def _discard_then(self, what: str, then: "Callable[[], None]") -> None:
        """Run `then`, after asking when it would lose acts recorded and not yet saved."""
        s = self.session
        ask_then(self.app, s.has_unsaved_acts, s.acts_count, what, self.lang, then)

    def shown_snapshot(self) -> Snapshot:
        """The snapshot on screen (read off the loop on PostgreSQL, like every frame)."""
        return self._snap if self._snap is not None else self.session.snapshot(())


# The palette knows this screen only by its protocol; this holds the screen to it.
_PALETTE_SCREEN: type[PaletteScreen] = MainScreen
