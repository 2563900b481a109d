"""The Borrowed Keys terminal app: a scenario picker, the main screen and the help page.

`run_app(argv)` is what `borrowed-keys` (no arguments or `tui [FILE] [--lang en|zh]`) and
`python -m demo` call. The app holds no lease logic: it drives a core.scenarios.session.Session.
"""

import argparse
import locale
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from textual.app import App
from textual.reactive import reactive

from core.engine.config import Mode
from core.scenarios.format import Scenario, ScenarioError
from core.scenarios.session import Session
from demo.host import Host
from demo.i18n import LANGS
from demo.screens.main import MainScreen
from demo.screens.picker import PickerScreen

__all__ = ["BorrowedKeysApp", "default_lang", "run_app"]


SAVE_FOLDER = "borrowed-keys-out"  # `s` saves here, under the current directory


def default_lang() -> str:
    """zh if the locale says Chinese, else en."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


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
    ) -> None:
        super().__init__()
        self.set_reactive(BorrowedKeysApp.lang, lang if lang in LANGS else "en")
        self.start_scenario = scenario
        self.open_directly = open_directly or scenario is not None
        self.live_clock = live_clock
        self.save_dir = save_dir or Path.cwd() / SAVE_FOLDER
        self.start_mode = mode

    def on_mount(self) -> None:
        if self.open_directly:
            self.open_session(self.start_scenario, mode=self.start_mode)
        else:
            self.push_screen(PickerScreen())

    # -- sessions ------------------------------------------------------------------------------

    def open_session(self, scenario: Scenario | None, *, mode: Mode | None = None) -> MainScreen:
        session = Session(scenario, mode=mode)
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

    def save_all(self, session: Session) -> list[Path]:
        """Transcript (JSON Lines), screenshot (SVG) and the run as a scenario (TOML)."""
        slug = re.sub(r"[^a-z0-9]+", "-", session.title("en").lower()).strip("-") or "run"
        folder = self.save_dir
        folder.mkdir(parents=True, exist_ok=True)
        n = 1
        while any((folder / f"bk-{slug}-{n}{ext}").exists() for ext in (".jsonl", ".svg", ".toml")):
            n += 1
        stem = f"bk-{slug}-{n}"
        transcript = folder / f"{stem}.jsonl"
        transcript.write_text(session.transcript_jsonl(), encoding="utf-8")
        shot = Path(self.save_screenshot(f"{stem}.svg", str(folder)))
        scenario = session.save_as_scenario(folder / f"{stem}.toml")
        return [p.resolve() for p in (transcript, shot, scenario)]


_IS_A_HOST: type[Host] = BorrowedKeysApp  # mypy checks the app gives the screens what they use


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="borrowed-keys tui", description="The Borrowed Keys terminal app."
    )
    parser.add_argument("file", nargs="?", help="a scenario file (or a bundled name) to open")
    parser.add_argument("--lang", choices=LANGS, default=None, help="en or zh (default: locale)")
    parser.add_argument("--mode", choices=[m.value for m in Mode], default=None)
    parser.add_argument("--sandbox", action="store_true", help="open the sandbox directly")
    return parser.parse_args(list(argv))


def run_app(argv: Sequence[str] = ()) -> int:
    """Start the app; returns the exit code."""
    args = parse_args(argv)
    lang = args.lang or default_lang()
    scenario = None
    if args.file:
        from core.scenarios.library import open_scenario

        try:
            scenario = open_scenario(args.file)
        except (ScenarioError, OSError) as exc:
            print(f"borrowed-keys: {exc}", file=sys.stderr)
            return 2
    app = BorrowedKeysApp(
        scenario,
        open_directly=bool(args.file) or args.sandbox,
        lang=lang,
        mode=Mode(args.mode) if args.mode else None,
    )
    result = app.run()
    return int(result) if isinstance(result, int) else 0
