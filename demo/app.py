"""The Borrowed Keys terminal app: a scenario picker, the main screen and the help page.

`run_app(args)` is what `borrowed-keys` (no command, or `tui [FILE] [--lang en|zh]`) and
`python -m demo` run. The app holds no lease logic: it drives a core.scenarios.session.Session.
"""

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.reactive import reactive

from core.engine.config import Mode
from core.scenarios.format import Scenario, ScenarioError
from core.scenarios.session import Session
from core.sim.simulation import IN_MEMORY
from demo.host import Host
from demo.i18n import LANGS, default_lang
from demo.saves import MAX_SAVES, SAVE_FOLDER, SaveLimitReached, save_files
from demo.screens.main import MainScreen
from demo.screens.picker import PickerScreen

__all__ = ["BorrowedKeysApp", "default_lang", "run_app"]


class BorrowedKeysApp(App[int]):
    """The app. `live_clock=False` (tests, snapshots) turns the refresh timer off."""

    CSS_PATH = "app.tcss"
    TITLE = "Borrowed Keys"

    lang: reactive[str] = reactive("en", init=False)

    def __init__(
        self,
        scenario: Scenario | None = None,
        *,
        open_directly: bool = False,
        lang: str = "en",
        live_clock: bool = True,
        save_dir: Path | None = None,
        mode: Mode | None = None,
        interview: bool = False,
        database: str = IN_MEMORY,
    ) -> None:
        super().__init__()
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

    def on_mount(self) -> None:
        if self.open_directly:
            self.open_session(self.start_scenario, mode=self.start_mode)
        else:
            self.push_screen(PickerScreen())

    # -- sessions ------------------------------------------------------------------------------

    def open_session(self, scenario: Scenario | None, *, mode: Mode | None = None) -> MainScreen:
        session = Session(
            scenario, mode=mode, lang=self.lang, interview=self.interview, database=self.database
        )
        screen = MainScreen(session, playing=scenario is None and self.live_clock)
        self.push_screen(screen)
        return screen

    @property
    def main_screen(self) -> MainScreen | None:
        screen = self.screen
        return screen if isinstance(screen, MainScreen) else None

    def watch_lang(self) -> None:
        for screen in self.screen_stack:
            hook = getattr(screen, "on_language_changed", None)
            if callable(hook):
                hook()

    # -- saving --------------------------------------------------------------------------------

    def prepare_save(self, session: Session) -> Callable[[], list[Path]]:
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


_IS_A_HOST: type[Host] = BorrowedKeysApp  # mypy checks the app gives the screens what they use


def run_app(args: argparse.Namespace) -> int:
    """Start the app with `tui`'s options (demo/cli.py declares them); the exit code."""
    lang = args.lang or default_lang()
    scenario = None
    if args.file:
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
        mode=Mode(args.mode) if args.mode else None,
        interview=getattr(args, "interview", False),
        database=args.db or IN_MEMORY,
    )
    result = app.run()
    return int(result) if isinstance(result, int) else 0
