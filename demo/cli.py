"""The `borrowed-keys` console script: the TUI by default, `serve` for a browser, the headless
commands otherwise."""

import sys
from collections.abc import Sequence

TUI_COMMANDS = ("tui",)


def _take_db(argv: list[str]) -> tuple[str | None, list[str]]:
    """Take `--db URL` (or `--db=URL`) out of the app's arguments."""
    rest: list[str] = []
    db: str | None = None
    items = iter(argv)
    for arg in items:
        if arg == "--db":
            db = next(items, "")
        elif arg.startswith("--db="):
            db = arg.removeprefix("--db=")
        else:
            rest.append(arg)
    return db, rest


def run_tui(argv: Sequence[str]) -> int:
    """Start the Textual app (imported only here, so headless commands never load textual).

    `--db postgresql://...` keeps every run the app plays on PostgreSQL, each in a fresh
    schema; without it, runs are in SQLite in memory.
    """
    db, args = _take_db(list(argv))
    if db is not None:
        from core.sim.simulation import use_database
        from core.tools.cli import check_run_database

        problem = check_run_database(db, many_runs=True) if db else "--db needs a URL"
        if problem is not None:
            print(f"borrowed-keys tui: {problem}", file=sys.stderr)
            return 2
        use_database(db)
    from demo.app import run_app

    return run_app(args)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in TUI_COMMANDS:
        return run_tui(args[1:])
    if args[0] == "serve":
        # Imported only here: the web server's packages load for `serve` alone.
        from demo.serve import main as serve_main

        return serve_main(args[1:])
    if args[0] == "export":
        # The exporter drives the app headless: textual loads for `export` alone too.
        from demo.export.cli import main as export_main

        return export_main(args[1:])
    if args[0].startswith("--") and args[0] not in ("--help", "--version"):
        # `borrowed-keys --lang zh` opens the picker in Chinese: options alone mean the app.
        return run_tui(args)
    from core.tools.cli import main as headless_main

    return headless_main(args)


if __name__ == "__main__":
    sys.exit(main())
