"""The `borrowed-keys` console script: one argparse tree, the app's commands in front.

`tui` (the terminal app, also what no command or options alone mean) and `serve` (the app
in a web browser) are declared here, with the options they share declared once; the
headless commands come from core/tools/cli.py. This module stays light: textual, and the
web server's packages, load only in the handler of the command that needs them.
"""

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from core.engine.modes import Mode
from core.tools.cli import Register
from core.tools.cli import main as tree_main
from demo.export.cli import add_parser as add_export
from demo.i18n import LANGS

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# Each tab is an app process of about 75 MB: room for a few presenters and viewers.
DEFAULT_MAX_SESSIONS = 8
EXIT_BAD_INPUT = 2


def add_app_options(parser: argparse.ArgumentParser) -> None:
    """What the app opens and how: the same for `tui` and for every tab of `serve`."""
    parser.add_argument("file", nargs="?", metavar="FILE", help="a scenario (or bundled name)")
    parser.add_argument("--lang", choices=LANGS, default=None, help="en or zh (default: locale)")
    parser.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=None,
        help="the engine's mode to start in",
    )
    parser.add_argument("--sandbox", action="store_true", help="open the sandbox directly")
    parser.add_argument(
        "--interview",
        action="store_true",
        help="interview mode: the room answers each question by its number before it is revealed",
    )
    parser.add_argument(
        "--guess-mode",
        action="store_true",
        help="which mistake is this? play the run under one of the seed's five mistakes, its "
        "name hidden, and let the room guess it (G)",
    )
    parser.add_argument(
        "--guess-seed",
        type=int,
        default=None,
        metavar="N",
        help="with --guess-mode: the same N chooses the same mistake (default: any)",
    )
    parser.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="postgresql://... to keep every run on PostgreSQL, each in a fresh schema "
        "(default: SQLite in memory)",
    )


def add_tui(sub: Any) -> None:
    p = sub.add_parser(
        "tui",
        help="the terminal app (also what no command, or options alone, open)",
        description="The Borrowed Keys terminal app.",
    )
    add_app_options(p)
    p.set_defaults(handler=run_tui)


def add_serve(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the app to a web browser, one app per tab (for presenting over a call)",
        description="Serve the Borrowed Keys app to a web browser (one app per browser tab). "
        "It speaks one language, --lang or else the locale's (as tui picks it): its lines in "
        "this terminal, the page, and every tab's app; a tab's l switches that tab's app alone.",
    )
    add_app_options(p)
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"browser tabs served at once, one app each (default {DEFAULT_MAX_SESSIONS})",
    )
    p.set_defaults(handler=run_serve)


def add_fleet(sub: Any) -> None:
    from core.fleet.options import add_fleet_options

    p = sub.add_parser(
        "fleet",
        help="the app on real worker processes and a real database (or --headless)",
        description=(
            "Real `borrowed-keys worker` processes against one database, on the wall clock: "
            "the app's panes and fault buttons act on them (Kill is SIGKILL, Stall is "
            "SIGSTOP), and the simulations' safety checker judges the events table."
        ),
    )
    add_fleet_options(p)
    p.set_defaults(handler=run_fleet)


def run_fleet(args: argparse.Namespace) -> int:
    if args.check is not None:
        from core.fleet.command import run_check_command

        return run_check_command(args)
    if getattr(args, "work", None) in ("browser", "mixed"):
        from core.agents.browser import missing_browser

        # Said here, before a worker starts: each worker would say it and exit, and the
        # run would end with no task done under a verdict that held.
        if (why := missing_browser()) is not None:
            print(f"borrowed-keys fleet: --work {args.work}: {why}", file=sys.stderr)
            return EXIT_BAD_INPUT
    if args.headless:
        from core.fleet.command import run_headless_command

        return run_headless_command(args)
    from demo.fleet_app import run_fleet_app

    return run_fleet_app(args)


# The app's commands, listed first by `--help`. A new one is one line here.
APP_COMMANDS: tuple[Register, ...] = (add_tui, add_serve, add_fleet, add_export)


def db_problem(args: argparse.Namespace, command: str) -> bool:
    """Say (one line) why `--db` cannot hold the app's runs; False when it can."""
    if args.db is None:
        return False
    from core.tools.database_option import check_run_database

    problem = check_run_database(args.db, many_runs=True) if args.db else "--db needs a URL"
    if problem is None:
        return False
    print(f"borrowed-keys {command}: {problem}", file=sys.stderr)
    return True


def run_tui(args: argparse.Namespace) -> int:
    """The Textual app, imported only here so that headless commands never load textual.

    `--db postgresql://...` keeps every run the app plays on PostgreSQL, each in a fresh
    schema; without it, runs are in SQLite in memory.
    """
    if db_problem(args, "tui"):
        return EXIT_BAD_INPUT
    from demo.app import run_app

    return run_app(args)


def run_serve(args: argparse.Namespace) -> int:
    if db_problem(args, "serve"):
        return EXIT_BAD_INPUT
    from demo.serve import serve  # the web server's packages load for `serve` alone

    return serve(args)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0].startswith("-") and args[0] not in ("-h", "--help")):
        # `borrowed-keys --lang zh` opens the picker in Chinese: options alone mean the app.
        args = ["tui", *args]
    return tree_main(args, first=APP_COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
