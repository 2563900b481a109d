"""`python -m core.fleet.watchdog PGDATA USER FOLDER...`: once the fleet that started it is
gone, stops its embedded PostgreSQL (PGDATA, "" on SQLite) and removes its fresh folders.

pgserver runs the server as a daemon of its own, and a SQLite fleet's folder holds the
database and its WAL, so a supervisor killed by SIGKILL would leave them. This small
process, in a session of its own, reads its standard input until the end, which comes when
the fleet closes it or dies (the kernel closes a dead process's pipes), then stops the server
at once and removes the folders. The workers die with their parent (the parent-death
signal); one still closing its files as the folder goes is why the removal is tried again.
"""

import contextlib
import shutil
import sys
import time
import warnings
from pathlib import Path

RETRIES = 50  # removals tried, a tenth of a second apart


def main(argv: list[str]) -> int:
    pgdata, user, folders = argv[0], argv[1] or None, [Path(f) for f in argv[2:] if f]
    with contextlib.suppress(OSError, KeyboardInterrupt):
        sys.stdin.buffer.read()  # until the fleet is gone
    if pgdata:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

        with contextlib.suppress(Exception):  # already stopped by a fleet that closed cleanly
            pgserver.pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=Path(pgdata), user=user)  # type: ignore[attr-defined]
    for _ in range(RETRIES):
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        if not any(folder.exists() for folder in folders):
            break
        time.sleep(0.1)  # a dying worker's last file, closed a moment later
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
