"""The Borrowed Keys terminal app: a scenario picker, the main screen and the help page.

`run_app(args)` is what `borrowed-keys` (no command, or `tui [FILE] [--lang en|zh]`) and
`python -m demo` run. The app holds no lease logic: it drives a core.scenarios.session.Session.

A run the app starts in (`tui FILE`, `--sandbox`) opens off the loop: the first frame is
painted from the file's head alone (demo/loading.py), and the session (the file format, the
engine and its store, the first snapshot) is built on a thread, which says so with
`SessionOpened`; the main screen then replaces the loading frame. So this module loads none
of those at its top: only what that first frame needs.
"""

import argparse
import asyncio
import gc
import re
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.pilot import Pilot
from textual.reactive import reactive

from core.engine.modes import Mode
from core.scenarios.head import ScenarioHead, read_head, sandbox_head
from demo.i18n import LANGS, default_lang
from demo.loading import LoadingScreen, Opening
from demo.palette import SpokenPalette
from demo.saves import MAX_SAVES, SAVE_FOLDER, SaveLimitReached, save_files

if TYPE_CHECKING:
    from core.scenarios.format import Scenario
    from core.scenarios.session import Session
    from demo.host import Host
    from demo.screens.main import MainScreen

__all__ = ["BorrowedKeysApp", "SessionOpened", "default_lang", "run_app"]

# SQLite in memory: where a run keeps its store without `--db` (core.sim.simulation's
# IN_MEMORY, spelt here so that the first frame does not wait for the simulation to load)
IN_MEMORY = ":memory:"


class SessionOpened(Message):
    """The session of the run the app starts in was built off the loop (taken from the
    app's `Opening`), or could not be: `refused` says why in one line (a file that cannot
    be played), `error` is anything else, raised again on the loop."""

    def __init__(self, refused: str | None = None, error: BaseException | None = None) -> None:
        super().__init__()
        self.refused = refused
        self.error = error


_started = [False]


def freeze_what_started() -> None:
    """Once a process, when the first run's modules are loaded and before any of its objects
    exists: what is alive then (the modules, their classes and functions, the app) stays
    alive, so the garbage collector stops walking it. Each full collection walked all of it,
    a stutter of 60 ms and more every few seconds of a run at its fastest."""
    if not _started[0]:
        _started[0] = True
        gc.freeze()


class BorrowedKeysApp(SpokenPalette):
    """The app. `live_clock=False` (tests, snapshots) turns the refresh timer off.

    `scenario` is a scenario already read, or a file's name (a path or a bundled
    scenario's), read with the rest of the run off the loop."""

    CSS_PATH = "app.tcss"
    TITLE = "Borrowed Keys"

    lang: reactive[str] = reactive("en", init=False)

    def __init__(
        self,
        scenario: "Scenario | str | None" = None,
        *,
        open_directly: bool = False,
        lang: str = "en",
        live_clock: bool = True,
        save_dir: Path | None = None,
        mode: Mode | None = None,
        interview: bool = False,
        database: str = IN_MEMORY,
        guess: bool = False,
        guess_seed: int | None = None,
    ) -> None:
        super().__init__()
        # "Which mistake is this?": the first run is played under a mistake the room is not
        # told, chosen by the round (the same for the same seed).
        self.guess = guess
        self.guess_seed = guess_seed
        # Interview mode: every run this app opens asks the room for its answers (i toggles).
        self.interview = interview
        self.set_reactive(BorrowedKeysApp.lang, lang if lang in LANGS else "en")
        self.start_scenario = scenario
        self.open_directly = open_directly or scenario is not None
        self.live_clock = live_clock
        self.save_dir = save_dir or Path.cwd() / SAVE_FOLDER
        self.start_mode = mode
        # where every run the app plays keeps its store: `--db`, or SQLite in memory
        self.database = database
        self.saves_made = 0
        # The first run, built off the loop; `opened` is set once it is on screen (or the
        # picker is, or the app ends without it), `refused` says why a file cannot be played.
        self._opening = Opening()
        self.opened = asyncio.Event()
        self.refused: str | None = None

    def on_mount(self) -> None:
        if self.open_directly:
            self.push_screen(LoadingScreen(self._start_head(), self.lang))
        else:
            from demo.screens.picker import PickerScreen

            self.push_screen(PickerScreen())
            self.opened.set()

    # -- sessions ------------------------------------------------------------------------------

    def _start_head(self) -> ScenarioHead:
        """What the loading frame says of the run the app starts in."""
        scenario, mode = self.start_scenario, self.start_mode
        if scenario is None:
            return sandbox_head(mode)
        if isinstance(scenario, str):
            # a file whose head does not read was opened before the app (run_app)
            return read_head(scenario, mode) or ScenarioHead(scenario, None, None, "correct")
        own = (mode or scenario.settings.mode).value
        return ScenarioHead(scenario.title, scenario.title_zh, len(scenario.steps), own)

    def on_loading_screen_painted(self, _message: LoadingScreen.Painted) -> None:
        self._build_first_session()

    @work(thread=True, group="opening", exit_on_error=False)
    def _build_first_session(self) -> None:
        """On a thread: the file read and checked, the engine and its store, the session, its
        first snapshot, and the main screen's modules; `SessionOpened` says it is done."""
        # every module the run needs, then frozen before any of the run's objects exists:
        # what is frozen lasts the process (a run's objects, frozen, would outlive the run)
        import core.scenarios.session  # noqa: F401
        import demo.screens.main  # noqa: F401  (its widgets load here, not on the loop)
        from core.scenarios.format import ScenarioError

        freeze_what_started()
        lang = self.lang
        try:
            try:
                session = self._new_session(self.start_scenario, self.start_mode, guess=self.guess)
            except (ScenarioError, OSError) as exc:
                told = exc.in_language(lang) if isinstance(exc, ScenarioError) else str(exc)
                self.post_message(SessionOpened(refused=told))
                return
            try:
                session.snapshot()  # the first frame's reads, compiled and warm
            except BaseException:
                session.close()
                raise
        except BaseException as exc:  # raised again on the loop, where the app ends on it
            self.post_message(SessionOpened(error=exc))
            return
        if self._opening.built(session):
            self.post_message(SessionOpened())

    async def on_session_opened(self, message: SessionOpened) -> None:
        if message.error is not None:
            self.opened.set()
            raise message.error
        if message.refused is not None:
            # said on the terminal once the app has given it back (run_app), as before a
            # start: one line, exit 2
            self.refused = message.refused
            self.opened.set()
            self.exit(return_code=2)
            return
        session = self._opening.take()
        if session is None:  # the app is ending: the thread closed it
            return
        from demo.screens.main import MainScreen

        screen = MainScreen(session, playing=session.scenario is None and self.live_clock)
        self.clear_notifications()  # "still opening" is no longer true
        await self.switch_screen(screen)
        self.opened.set()

    def on_unmount(self) -> None:
        # a session still being built when the app ends is closed by its thread
        self._opening.abandon()
        self.opened.set()

    def _new_session(
        self, scenario: "Scenario | str | None", mode: Mode | None, *, guess: bool = False
    ) -> "Session":
        from core.scenarios.guess import GuessRound, choose_mistake
        from core.scenarios.session import Session

        if isinstance(scenario, str):
            from core.scenarios.library import open_scenario

            scenario = open_scenario(scenario)
        round_ = None
        if guess:
            name = scenario.title if scenario is not None else "sandbox"
            round_ = GuessRound(choose_mistake(name, self.guess_seed))
        return Session(
            scenario,
            mode=mode,
            lang=self.lang,
            interview=self.interview,
            database=self.database,
            guess=round_,
        )

    def open_session(
        self, scenario: "Scenario | None", *, mode: Mode | None = None
    ) -> "MainScreen":
        """Another run, from the picker: opened at once (the engine is loaded by then, or
        worth the wait of a chosen scenario)."""
        from demo.screens.main import MainScreen

        session = self._new_session(scenario, mode)
        screen = MainScreen(session, playing=scenario is None and self.live_clock)
        self.push_screen(screen)
        return screen

    @asynccontextmanager
    async def run_test(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Pilot[int], None]:
        """Textual's `run_test`, handing the pilot over once the run the app starts in is
        on screen: a test drives the app as a person does, from its first real frame."""
        async with super().run_test(*args, **kwargs) as pilot:
            await self.opened.wait()
            await pilot.pause()
            yield pilot

    @property
    def main_screen(self) -> "MainScreen | None":
        from demo.screens.main import MainScreen

        screen = self.screen
        return screen if isinstance(screen, MainScreen) else None

    def watch_lang(self) -> None:
        for screen in self.screen_stack:
            hook = getattr(screen, "on_language_changed", None)
            if callable(hook):
                hook()

    # -- saving --------------------------------------------------------------------------------

    def prepare_save(self, session: "Session") -> Callable[[], list[Path]]:
        """Begin a save: transcript (JSON Lines), screenshot (SVG) and the run as a scenario
        (TOML). The screenshot is taken now (it is the screen as the presenter sees it); the
        returned job reads the run from the store and writes the files, on the session's
        runner (off the loop on PostgreSQL), and returns their paths.

        Raises SaveLimitReached once this app has saved MAX_SAVES times.
        """
        if self.saves_made >= MAX_SAVES:
            raise SaveLimitReached
        # counted now, not when written: saves queued behind a busy session count too
        self.saves_made += 1
        slug = re.sub(r"[^a-z0-9]+", "-", session.title("en").lower()).strip("-") or "run"
        shot = self.export_screenshot()
        folder = self.save_dir

        def write() -> list[Path]:
            try:
                transcript = session.transcript_jsonl()
                paths = save_files(
                    folder,
                    slug,
                    {
                        ".jsonl": lambda p: p.write_text(transcript, encoding="utf-8"),
                        ".svg": lambda p: p.write_text(shot, encoding="utf-8"),
                        ".toml": session.save_as_scenario,
                    },
                )
            except BaseException:
                self.saves_made -= 1  # nothing was written: the save is not spent
                raise
            return [p.resolve() for p in paths]

        return write


if TYPE_CHECKING:
    _IS_A_HOST: type[Host] = BorrowedKeysApp  # mypy checks the app gives the screens what they use


def run_app(args: argparse.Namespace) -> int:
    """Start the app with `tui`'s options (demo/cli.py declares them); the exit code."""
    lang = args.lang or default_lang()
    mode = Mode(args.mode) if args.mode else None
    scenario: Scenario | str | None = None
    if args.file:
        scenario = args.file
        if read_head(args.file) is None:
            # Not even its head reads (no such file, not TOML): opened now, the slow way,
            # which says what is wrong before the app takes the terminal.
            from core.scenarios.format import ScenarioError
            from core.scenarios.library import open_scenario

            try:
                scenario = open_scenario(args.file)
            except (ScenarioError, OSError) as exc:
                told = exc.in_language(lang) if isinstance(exc, ScenarioError) else str(exc)
                print(f"borrowed-keys: {told}", file=sys.stderr)
                return 2
    app = BorrowedKeysApp(
        scenario,
        open_directly=bool(args.file) or args.sandbox,
        lang=lang,
        mode=mode,
        interview=getattr(args, "interview", False),
        database=args.db or IN_MEMORY,
        guess=getattr(args, "guess_mode", False),
        guess_seed=getattr(args, "guess_seed", None),
    )
    result = app.run()
    if app.refused is not None:
        print(f"borrowed-keys: {app.refused}", file=sys.stderr)
        return 2
    return int(result) if isinstance(result, int) else 0
