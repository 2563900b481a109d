"""`--db URL` for the commands that play virtual-time runs, and the check of what it names.

Shared by the command line (`play`), `chaos` and the app (`tui`, `serve`): the bottom of the
tools, importing none of them.
"""

import argparse


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """`--db URL` for commands that play virtual-time runs (each in a store of its own)."""
    parser.add_argument(
        "--db",
        default=":memory:",
        metavar="URL",
        help=(
            "where each run keeps its store: a SQLite file, sqlite:///PATH, or "
            "postgresql://... (each run in a fresh schema, dropped after it); "
            "default: SQLite in memory"
        ),
    )


def check_run_database(target: str, *, many_runs: bool) -> str | None:
    """Why `target` cannot hold this command's runs, or None if it can (opened once to see).

    Commands that start many runs (`chaos`, the app's resets) need a store per run: SQLite
    in memory, or PostgreSQL, where each run gets a schema of its own.
    """
    from core.engine.backends import sqlite_path
    from core.engine.clock import VirtualClock
    from core.engine.errors import BorrowedKeysError
    from core.engine.store import LeaseStore

    file = sqlite_path(target)
    if many_runs and file is not None and str(file) != ":memory:":
        return (
            f"--db {target}: each run needs a store of its own; give a postgresql:// URL "
            f"(a fresh schema per run) or leave --db out (SQLite in memory)"
        )
    if file is None:
        try:
            store = LeaseStore.open_inline(target, clock=VirtualClock(), scratch=True)
        except BorrowedKeysError as exc:
            return f"--db: {exc}"
        from core.sim.simulation import run_inline

        run_inline(store.close())
    return None
