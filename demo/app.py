"""The Borrowed Keys terminal app: a scenario picker, the main screen and the help page.

`run_app(args)` is what `borrowed-keys` (no command, or `tui [FILE] [--lang en|zh]`) and
`python -m demo` run. The app holds no lease logic: it drives a core.scenarios.session.Session.
"""

import argparse
import locale
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from textual.app import App, SystemCommand
from textual.reactive import reactive
from textual.screen import Screen

from core.engine.config import Mode
from core.engine.vocabulary import TaskStatus
from core.scenarios.format import Scenario, ScenarioError
from core.scenarios.session import Session
from core.sim.spec import TASK_KINDS, WORKER_ACTIONS, WorkerState
from demo.controls import CONTROLS
from demo.host import Host
from demo.i18n import LANGS, WORDS, mode_description, reason_word, tr, worker_name
from demo.saves import MAX_SAVES, SAVE_FOLDER, SaveLimitReached, save_files
from demo.screens.main import TABS, MainScreen
from demo.screens.picker import PickerScreen

__all__ = ["BorrowedKeysApp", "default_lang", "run_app"]


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
        self.saves_made = 0

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
        """Transcript (JSON Lines), screenshot (SVG) and the run as a scenario (TOML).

        Raises SaveLimitReached once this app has saved MAX_SAVES times.
        """
        if self.saves_made >= MAX_SAVES:
            raise SaveLimitReached
        slug = re.sub(r"[^a-z0-9]+", "-", session.title("en").lower()).strip("-") or "run"
        transcript = session.transcript_jsonl()
        shot = self.export_screenshot()
        paths = save_files(
            self.save_dir,
            slug,
            {
                ".jsonl": lambda p: p.write_text(transcript, encoding="utf-8"),
                ".svg": lambda p: p.write_text(shot, encoding="utf-8"),
                ".toml": session.save_as_scenario,
            },
        )
        self.saves_made += 1
        return [p.resolve() for p in paths]

    # -- the command palette ------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            yield from main_screen_commands(screen, self.lang)


FAULTS = ("freeze_heartbeat", "stall", "kill", "resume", "restart", "partition", "heal")
FAULT_WORDS = {"restart": "restart_worker"}


def main_screen_commands(screen: MainScreen, lang: str) -> Iterator[SystemCommand]:
    """Every control, every act on every worker and waiting task, every mode, by name.

    A palette entry runs exactly what its key or button runs; an act goes through
    `MainScreen.act`, so it forks a playback and is recorded like a click.
    """
    for _bid, keys, action, word, tip, _show in CONTROLS:
        if action == "pause" or keys in ("pagedown", "pageup") or action.startswith("show_tab"):
            continue
        key = keys.split(",")[0].replace("question_mark", "?").replace("minus", "-")
        key = key.replace("plus", "+")
        yield SystemCommand(
            f"{tr(word, lang)}  [{key}]",
            tr(tip, lang),
            lambda a=action: screen.call_later(screen.run_action, a),
        )
    for pane_id, word in TABS:
        yield SystemCommand(
            tr("palette_panel", lang, panel=tr(word, lang)),
            tr("tip_tab", lang),
            lambda p=pane_id: screen.action_show_tab(p),
        )
    snap = screen.session.snapshot(())
    for w in snap.workers:
        name = worker_name(w.id, lang)
        for fault in FAULTS:
            if fault == "heal" and not w.partitioned:
                continue
            if fault == "partition" and w.partitioned:
                continue
            if (fault == "restart") != (w.state == WorkerState.DEAD):
                continue
            yield SystemCommand(
                f"{tr(FAULT_WORDS.get(fault, fault), lang)}: {name}",
                tr("palette_act_help", lang),
                lambda f=fault, wid=w.id: screen.act(WORKER_ACTIONS[f](wid)),
            )
    for mode in Mode:
        yield SystemCommand(
            tr("palette_mode", lang, mode=mode.value),
            mode_description(mode.value, lang),
            lambda m=mode: screen.set_mode(m),
        )
    for kind in TASK_KINDS:
        yield SystemCommand(
            tr("palette_enqueue", lang, kind=kind),
            tr(f"kind_{kind}", lang) if f"kind_{kind}" in WORDS else kind,
            lambda k=kind: screen.action_enqueue(k),
        )
    for t in snap.tasks:
        if t.row.status != TaskStatus.WAITING:
            continue
        waits = tr("palette_waiting", lang, task=t.task_id)
        yield SystemCommand(
            tr("palette_approve", lang, task=t.task_id),
            waits,
            lambda tid=t.task_id: screen.action_approve(tid),
        )
        yield SystemCommand(
            tr("palette_reject", lang, task=t.task_id),
            waits,
            lambda tid=t.task_id: screen.action_reject(tid),
        )
    yield SystemCommand(
        tr("add_worker", lang), tr("tip_add_worker", lang), screen.action_add_worker
    )
    reasons = sorted({r.reason for r in snap.rejections})
    for reason in reasons:
        yield SystemCommand(
            tr("palette_filter", lang, reason=reason_word(reason, lang)),
            tr("palette_filter_help", lang),
            lambda r=reason: screen.set_rejected_filter(r),
        )
    if reasons:
        yield SystemCommand(
            tr("palette_filter_all", lang),
            tr("palette_filter_help", lang),
            lambda: screen.set_rejected_filter(None),
        )


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
