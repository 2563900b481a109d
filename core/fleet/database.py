"""The database a fleet runs on: a file or URL as given, a fresh embedded PostgreSQL, or a
SQLite file in a fresh folder, each with the watchdog that tidies up after this process."""

import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class FleetDatabase:
    url: str
    folder: Path | None  # a fresh folder this fleet made (removed on close)
    server: Any = None  # an embedded PostgreSQL this fleet started (stopped on close)
    watchdog: subprocess.Popen[bytes] | None = None  # tidies up should we die
    logs: Path | None = None  # a fresh folder for the workers' logs alone (removed on close)


def _watchdog(pgdata: str, user: str, folders: list[Path]) -> subprocess.Popen[bytes]:
    """Start the process that stops the server and removes `folders` once this one is gone
    (core/fleet/watchdog.py): a SIGKILL leaves nothing behind either."""
    return subprocess.Popen(
        [sys.executable, "-m", "core.fleet.watchdog", pgdata, user, *map(str, folders)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def open_database(
    db: str | None, pg: bool, folder: Path | None = None, logs: Path | None = None
) -> FleetDatabase:
    """The database a fleet runs on: `db` as given, a fresh embedded PostgreSQL (`pg`), or
    by default a SQLite file in a fresh folder. `logs`: a fresh folder of the caller's,
    removed with the database's own, whichever way this process ends."""
    made = None
    if folder is None and (db is None or pg):
        folder = made = Path(tempfile.mkdtemp(prefix="bk-fleet-"))
    tidy = [p for p in (made, logs) if p is not None]
    if pg:
        assert folder is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs on XDG_RUNTIME_DIR
            import pgserver

            server = pgserver.get_server(folder / "pg", cleanup_mode="delete")  # type: ignore[attr-defined]
        # pgserver runs the server as a daemon: should this process be killed outright, the
        # watchdog sees its pipe close and stops the server (core/fleet/watchdog.py).
        watchdog = _watchdog(str(server.pgdata), server.system_user or "", tidy)
        return FleetDatabase(str(server.get_uri()), made, server, watchdog, logs)
    # On SQLite too: the workers die with this process (their parent-death signal), and the
    # watchdog removes the database, its WAL and the logs after them.
    sqlite_watchdog = _watchdog("", "", tidy) if tidy else None
    if db is None:
        assert folder is not None
        return FleetDatabase(str(folder / "fleet.db"), made, None, sqlite_watchdog, logs)
    return FleetDatabase(db, made, None, sqlite_watchdog, logs)
