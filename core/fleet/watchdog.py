"""`python -m core.fleet.watchdog PGDATA USER FOLDER`: stops an embedded PostgreSQL once the
fleet that started it is gone.

pgserver runs the server as a daemon of its own, so a supervisor killed by SIGKILL could not
stop it. This small process, in a session of its own, reads its standard input until the
end, which comes when the fleet closes it or dies (the kernel closes a dead process's
pipes), then stops the server at once and removes the fleet's fresh folder.
"""

import contextlib
import shutil
import sys
import warnings
from pathlib import Path


def main(argv: list[str]) -> int:
    pgdata, user, folder = Path(argv[0]), argv[1] or None, argv[2]
    with contextlib.suppress(OSError, KeyboardInterrupt):
        sys.stdin.buffer.read()  # until the fleet is gone
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    with contextlib.suppress(Exception):  # already stopped by a fleet that closed cleanly
        pgserver.pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=pgdata, user=user)  # type: ignore[attr-defined]
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
