"""The options of `borrowed-keys worker` and `borrowed-keys enqueue`, light: the command
line builds its parser (and `--help`) without loading the store, the clock or the task
kinds' module; core/tools/realworker.py runs them."""

import argparse
from collections.abc import Callable
from typing import Any

from core.engine.modes import Mode

Handler = Callable[[argparse.Namespace], int]


# The task kinds' names (core.sim.kinds' KINDS, which the tests hold this to): spelt out,
# as argparse lists its choices when the parser is built, and the kinds' module is not light.
KIND_NAMES = ("ledger", "browser", "tools", "approval")


def add_worker_parsers(subparsers: Any, worker: Handler, enqueue: Handler) -> None:
    """Register `worker` and `enqueue` on an argparse subparsers object, run by the
    handlers given."""
    w = subparsers.add_parser(
        "worker",
        help="run one autopilot worker on the real clock against a database",
        description=(
            "Run one worker process: it polls the database for tasks, claims them, renews "
            "its lease from a separate heartbeat, checkpoints each step and completes. "
            "SIGTERM or SIGINT stops it cleanly. The database's clock judges every lease: "
            "on PostgreSQL the server's, one for every machine; on SQLite, which has no clock "
            "of its own, the clock of each process that asks, so SQLite means one machine "
            "and one clock. A worker whose clock is off from the machine's says so when it "
            "starts, and one whose clock is behind an instant already written to the store "
            "stops with one line."
        ),
    )
    w.add_argument(
        "--db",
        required=True,
        metavar="URL",
        help="a SQLite file (or sqlite:///PATH), or postgresql://USER@HOST/DB[?schema=NAME]",
    )
    w.add_argument("--id", required=True, dest="worker_id", metavar="ID", help="worker id")
    w.add_argument("--ttl", default="60s", help='lease ttl, e.g. "2s" (default 60s)')
    w.add_argument("--heartbeat-every", default=None, help="default: a third of the ttl")
    w.add_argument("--renew-deadline", default=None, help="default: two thirds of the ttl")
    w.add_argument("--poll-every", default="1s", help="how often to look for work (1s)")
    w.add_argument("--mode", default=Mode.CORRECT.value, choices=[m.value for m in Mode])
    w.add_argument(
        "--exit-when-idle",
        action="store_true",
        help="exit once every task in the database is done, dead or waiting",
    )
    w.add_argument("--max-seconds", type=float, default=None, help="exit after this long")
    w.add_argument(
        "--self-fence",
        action="store_true",
        help="give a lease up by itself at its renew deadline when it could not renew",
    )
    w.add_argument("--quiet", action="store_true", help="do not print this worker's events")
    w.add_argument(
        "--json",
        action="store_true",
        dest="json_lines",
        help="print JSON lines: its events and what it believes (for a supervisor)",
    )
    w.add_argument(
        "--control",
        action="store_true",
        help="take freeze, thaw and stop lines on stdin; the end of stdin stops it",
    )
    w.set_defaults(handler=worker)

    e = subparsers.add_parser(
        "enqueue",
        help="add a task to a database (its tables created if missing)",
        description="Add one queued task for worker processes to pick up.",
    )
    e.add_argument(
        "--db", required=True, metavar="URL", help="a SQLite file or a postgresql:// URL"
    )
    e.add_argument("--task", required=True, metavar="ID")
    e.add_argument("--kind", default="ledger", choices=KIND_NAMES)  # the spec's TASK_KINDS
    e.add_argument("--steps", type=int, default=5)
    e.add_argument("--step-time", default="10s", help='time per step, e.g. "200ms"')
    e.add_argument("--max-attempts", type=int, default=5)
    e.set_defaults(handler=enqueue)
