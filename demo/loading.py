"""The frame the app paints while a run opens, and the hand-over of the run built off the loop.

Opening a run loads the file format, the engine and its store, and reads the first snapshot:
most of a second. The app paints this screen first, from what is cheap (the scenario file's
head, read as TOML alone: its title, its number of steps, its mode), while the session is
built on a thread; the run's own frame then replaces it (demo/app.py). It says which run is
opening and nothing of the run's state (no clock, no worker, no task: there is none yet),
and a key pressed meanwhile is refused with a word (q quits): nothing here acts on a run.

This module loads no part of the engine, the simulation or the file format: it is what the
first frame waits for.
"""

import threading
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from core.scenarios.glossary import mode_name
from core.scenarios.head import ScenarioHead
from demo.i18n import tr

if TYPE_CHECKING:
    from core.scenarios.session import Session

STILL_OPENING_TOAST_S = 3.0


def head_text(head: ScenarioHead, lang: str) -> Text:
    """The header line: the run's title and its mode, as the run's own header says them."""
    mode_style = "bold green" if head.mode == "correct" else "bold magenta"
    return Text.assemble(
        " ",
        (head.title_in(lang), "bold"),
        (" │ ", "dim"),
        f"{tr('mode', lang)} ",
        (mode_name(head.mode, lang), mode_style),
    )


def opening_text(head: ScenarioHead, lang: str) -> Text:
    """Where the narration will be: step 0 of the script as the run will say it, and that
    the run is opening."""
    text = Text()
    if head.steps is not None:
        text.append(tr("step_k_of_n", lang, k=0, n=head.steps), style="bold")
        text.append("\n")
        text.append(tr("before_start", lang), style="italic")
        text.append("\n")
    text.append(tr("opening_run", lang), style="dim")
    return text


class LoadingScreen(Screen[None]):
    """The first frame of a run that is opening."""

    DEFAULT_CSS = """
    LoadingScreen { layout: vertical; }
    LoadingScreen #loading-head { height: 1; background: $boost; }
    LoadingScreen #loading-narration {
        height: auto;
        border-left: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "app.quit", show=False)]
    # the palette's commands act on a run: none is open yet
    COMMANDS: ClassVar[set[object]] = set()  # type: ignore[assignment]

    class Painted(Message):
        """The loading frame is on screen: the heavy work may start (started earlier, it
        would hold the interpreter while this frame is being painted)."""

    def __init__(self, head: ScenarioHead, lang: str) -> None:
        super().__init__()
        self.head = head
        self.lang = lang

    def compose(self) -> ComposeResult:
        yield Static(head_text(self.head, self.lang), id="loading-head")
        yield Static(opening_text(self.head, self.lang), id="loading-narration")

    def on_mount(self) -> None:
        self.call_after_refresh(self.post_message, self.Painted())

    def on_key(self, event: events.Key) -> None:
        if event.key == "q":
            return  # the binding quits
        event.stop()
        event.prevent_default()
        self.app.clear_notifications()  # a held key says it once, not in a stack of toasts
        self.notify(tr("still_opening", self.lang), timeout=STILL_OPENING_TOAST_S)


class Opening:
    """A session built on a thread, handed over exactly once: taken by the screen that
    shows it, or closed by the thread when the app stopped waiting for it (on PostgreSQL
    a run's schema is dropped when its session closes: none may be left behind)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._abandoned = False

    def built(self, session: "Session") -> bool:
        """On the thread: keep the session for the loop; False (and closed) when abandoned."""
        with self._lock:
            if not self._abandoned:
                self._session = session
                return True
        session.close()
        return False

    def take(self) -> "Session | None":
        """On the loop: the session built, once; None when abandoned or not built."""
        with self._lock:
            session, self._session = self._session, None
            return session

    def abandon(self) -> None:
        """On the loop: nobody will show the session; close it if it is already built."""
        with self._lock:
            self._abandoned = True
            session, self._session = self._session, None
        if session is not None:
            session.close()
