"""`borrowed-keys agent` (one agent worker: tools, approval or browser work under
`store.hold`, against the fenced downstream service) and `borrowed-keys approve TASK`.

Light at import (argparse only): building the parser loads neither the engine nor aiohttp.
"""

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from core.engine.modes import Mode

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
WORKS = ("tools", "approval", "browser", "mixed")


def _fail(command: str, message: str) -> int:
    print(f"borrowed-keys {command}: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_BAD_INPUT


def add_parser(subparsers: Any) -> None:
    a = subparsers.add_parser(
        "agent",
        help="run one agent worker (tools, approval or browser work) under the lease library",
        description=(
            "Run one agent worker: it holds each task it can claim with `store.hold`, runs "
            "the work (calls to the downstream service's tools, a task parked for approval, "
            "a walk through local pages in a headless Chromium), checkpoints as it goes and "
            "hands its fence token to every downstream write. One JSON line per thing it does."
        ),
    )
    a.add_argument("--db", required=True, metavar="URL", help="a SQLite file or postgresql://")
    a.add_argument("--id", required=True, dest="worker_id", metavar="ID", help="worker id")
    a.add_argument("--work", required=True, choices=WORKS)
    a.add_argument("--service", required=True, metavar="URL", help="the downstream service")
    a.add_argument("--ttl", default="6s", help='lease ttl, e.g. "2s" (default 6s)')
    a.add_argument("--poll-every", default="200ms", help="how often to look for work")
    a.add_argument("--steps", type=int, default=3, help="steps per task (3)")
    a.add_argument("--step-time", default="200ms", help="time per step (200ms)")
    a.add_argument("--mode", default=Mode.CORRECT.value, choices=[m.value for m in Mode])
    a.add_argument("--exit-when-idle", action="store_true", help="exit once nothing is left")
    a.add_argument("--max-seconds", type=float, default=None, help="exit after this long")
    a.add_argument(
        "--control",
        action="store_true",
        help=(
            "take lines on stdin: freeze and thaw (its renewals), hold_writes and write"
            " (fenced writes held on their way out, then sent), stop; its end stops it too"
        ),
    )
    a.set_defaults(handler=agent_command)

    p = subparsers.add_parser(
        "approve",
        help="a human's yes (or no) to a task waiting for approval",
        description="Queue a parked task again (or, with --reject, end it as dead).",
    )
    p.add_argument("task", metavar="TASK")
    p.add_argument("--db", required=True, metavar="URL", help="a SQLite file or postgresql://")
    p.add_argument("--reject", action="store_true", help="say no: the task ends as dead")
    p.set_defaults(handler=approve_command)


def agent_command(args: argparse.Namespace) -> int:
    import asyncio

    from core.agents.runner import AgentOptions, run_agent
    from core.agents.work import Work
    from core.engine.config import LeaseConfig
    from core.engine.durations import DurationError, parse_duration
    from core.engine.errors import BorrowedKeysError, ConfigError
    from core.engine.ids import id_problem

    try:
        ttl, poll, step = (
            parse_duration(args.ttl),
            parse_duration(args.poll_every),
            parse_duration(args.step_time),
        )
        config = LeaseConfig(ttl_ms=ttl, poll_every_ms=poll).validated()
    except (DurationError, ConfigError) as exc:
        return _fail("agent", str(exc))
    if (problem := id_problem(args.worker_id)) is not None:
        return _fail("agent", f"--id {args.worker_id!a} {problem}")
    if not 1 <= args.steps <= 100:
        return _fail("agent", f"--steps must be between 1 and 100, got {args.steps}")
    if Work(args.work) is Work.BROWSER:
        from core.agents.browser import missing_browser

        if (why := missing_browser()) is not None:
            return _fail("agent", why)
    options = AgentOptions(
        db=args.db,
        worker_id=args.worker_id,
        work=Work(args.work),
        service_url=args.service,
        config=config,
        mode=Mode(args.mode),
        steps=args.steps,
        step_s=step / 1000,
        exit_when_idle=args.exit_when_idle,
        max_seconds=args.max_seconds,
        controlled=args.control,
    )
    try:
        return asyncio.run(run_agent(options))
    except BorrowedKeysError as exc:
        return _fail("agent", str(exc))
    except KeyboardInterrupt:
        return EXIT_OK


def approve_command(args: argparse.Namespace) -> int:
    import asyncio
    from pathlib import Path

    from core.engine.backends import sqlite_path
    from core.engine.errors import BorrowedKeysError
    from core.engine.store import LeaseStore

    file = sqlite_path(args.db)
    if file is not None and str(file) != ":memory:" and not Path(file).exists():
        # Opening it would make an empty store there, which holds no task to decide.
        return _fail("approve", f"{args.db}: no such database: give the --db the fleet runs on")

    async def decide() -> None:
        async with await LeaseStore.open_async(args.db) as store:
            await (store.reject if args.reject else store.approve)(args.task)

    try:
        asyncio.run(decide())
    except BorrowedKeysError as exc:
        return _fail("approve", str(exc))
    print(f"{'rejected' if args.reject else 'approved'} {args.task} in {args.db}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m core.tools.agent_cli agent ...` (the same as `borrowed-keys agent ...`)."""
    from core.tools.options import Parser

    parser = Parser(prog="borrowed-keys")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
