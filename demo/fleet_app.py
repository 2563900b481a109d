"""`borrowed-keys fleet`: the app on real worker processes (demo/screens/fleet.py).

The fleet is started before the app and closed after it, whatever ends the app (`q`, an
error, Ctrl-C): every child process is asked to stop and then killed, the embedded
PostgreSQL stopped. Should this process itself be killed, its children die with it (their
parent-death signal and the end of their control channel).
"""

import argparse
import signal
import sys
from pathlib import Path
from types import FrameType

from core.engine.errors import BorrowedKeysError
from core.fleet.arrivals import Arrivals
from core.fleet.command import BadOption, checked, service_verdict, start_fleet
from core.fleet.supervisor import Fleet
from core.scenarios.telling import error_sentence
from demo.app import default_lang
from demo.i18n import tr
from demo.palette import SpokenPalette
from demo.saves import SAVE_FOLDER
from demo.screens.fleet import FleetScreen

EXIT_BAD_INPUT = 2


class FleetApp(SpokenPalette):
    """The fleet screen alone, in the app's styles."""

    CSS_PATH = "app.tcss"
    TITLE = "Borrowed Keys"

    def __init__(
        self,
        fleet: Fleet,
        lang: str,
        save_dir: Path,
        live: bool = True,
        arrivals: Arrivals | None = None,
    ) -> None:
        super().__init__()
        self.fleet = fleet
        self.lang = lang
        self.save_dir = save_dir
        self.live = live
        self.arrivals = arrivals

    def on_mount(self) -> None:
        screen = FleetScreen(
            self.fleet, self.lang, self.save_dir, self.live, arrivals=self.arrivals
        )
        self.push_screen(screen)


def quit_verdict(fleet: Fleet, lang: str) -> int:
    """On quit the workers are stopped, the whole history is checked again from its first
    row, and the verdict printed: the exit status says it too (0 held, 1 broken), as the
    headless run's. Agent work (`--work`) is judged by the service's own rules over its
    books as well, as the headless run and the save judge it: the store's rules alone never
    say "held" over a charge the service made twice."""
    fleet.stop_workers()
    check = fleet.final_check()
    key = "fleet_verdict_held" if not check.findings else "fleet_verdict_broken"
    print(tr(key, lang, n=len(check.findings)) + ("。" if lang == "zh" else "."))
    for finding in check.findings[:20]:
        print(f"  {finding.detail}.")
    verdict = int(check.verdict)
    if fleet.downstream is not None:
        verdict = max(verdict, service_verdict(fleet.downstream.books(), lang))
    return verdict


def _hang_up(_sig: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # a closed terminal ends the app as Ctrl-C does: children too


def run_fleet_app(args: argparse.Namespace) -> int:
    try:
        opts = checked(args)
    except BadOption as exc:
        print(f"borrowed-keys fleet: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    lang = args.lang or default_lang()
    try:
        fleet = start_fleet(opts)
    except BorrowedKeysError as exc:
        print(
            f"borrowed-keys fleet: {' '.join(error_sentence(exc, lang).split())}", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    signal.signal(signal.SIGHUP, _hang_up)
    signal.signal(signal.SIGTERM, _hang_up)  # `kill PID` tidies up as q does
    try:
        for _ in range(opts.workers):
            fleet.add_worker()
        arrivals = opts.arrivals()
        if opts.tasks is not None:
            fleet.enqueue(opts.tasks)
        FleetApp(fleet, lang, Path.cwd() / SAVE_FOLDER, arrivals=arrivals).run()
    except KeyboardInterrupt:
        pass
    try:
        return quit_verdict(fleet, lang)
    except BorrowedKeysError as exc:
        print(
            f"borrowed-keys fleet: {' '.join(error_sentence(exc, lang).split())}", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    finally:
        fleet.close()
