"""`borrowed-keys worker` and `borrowed-keys enqueue`: real processes on a real database.

`worker` runs one autopilot `Worker` (the same class the simulation runs) on the wall clock,
under asyncio, against a database named by `--db`: a SQLite file (`AsyncSqliteDriver`) or a
`postgresql://` URL (psycopg, `PgThreadDriver`). The database's clock judges every lease,
read inside each transaction: on PostgreSQL the server's, so a worker's own clock never
takes part and one skewed by minutes changes nothing. SQLite has no clock of its own: its
`'now'` is the C library's clock of the process that asks, so there a process with a clock
of its own (libfaketime, a file shared between machines) judges leases by it. It is told:
a worker warns at start when its clock is off from the machine's (`machine_clock_gap_ms`),
and stops when its clock is behind an instant already written (`ClockBehind`).
Several worker processes may share one SQLite file: SQLite's locks
serialise their transactions, and SQLITE_BUSY is retried inside the engine
(`core.engine.backends.sqlite`), with a bound. On PostgreSQL workers may run on many
machines; collisions and lost connections are retried there
(`core.engine.backends.postgresql`). The process ends on SIGTERM or SIGINT (exit 0), when
`--exit-when-idle` finds every task done, dead or waiting, or after `--max-seconds`. A
SIGKILL needs no help: its lease simply expires and another worker takes over.

With `--json` every line on stdout is a JSON object, for a supervisor (`borrowed-keys
fleet`) to read: `hello` (its pid), each `event` its store wrote, and a `belief` whenever what
it believes changes (the lease it holds with its tokens, its step, the store's last answer
to it). With `--control` it takes lines on stdin: `freeze` stops its heartbeat while its
work goes on, `thaw` lets it beat again, `stop` ends it; the end of stdin (the supervisor is
gone) ends it too.

`enqueue` adds a task to a database (creating it if needed), for demos and tests. The store
and the worker load when a command runs, not when the parser is built.

Errors (a path that cannot be written, a file that is not a database, a database from a
newer version, bad options) are one line on stderr and exit status 2; the file is left as
it was. So is a database that cannot be used any more while the worker runs (a damaged
file, a full disk, the file deleted or replaced under it): the worker stops.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from core.engine.clock import DatabaseClock, machine_clock_gap_ms
from core.engine.config import LeaseConfig, Mode
from core.engine.durations import DurationError, format_duration, parse_duration
from core.engine.errors import BorrowedKeysError, ConfigError, StoreError
from core.engine.ids import id_problem
from core.engine.vocabulary import RESTING_STATUSES
from core.sim.control import listen_for_control
from core.tools.options import Parser
from core.tools.worker_options import add_worker_parsers

if TYPE_CHECKING:
    from core.engine.records import EventRow
    from core.sim.worker import Worker

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    db: str
    worker_id: str
    config: LeaseConfig
    mode: Mode = Mode.CORRECT
    exit_when_idle: bool = False
    max_seconds: float | None = None
    quiet: bool = False
    json_lines: bool = False
    control: bool = False
    self_fencing: bool = False


def _line(ev: EventRow) -> str:
    stamp = datetime.fromtimestamp(ev.at / 1000, tz=UTC).strftime("%H:%M:%S.%f")[:-3]
    parts = [stamp, ev.event]
    if ev.task_id is not None:
        parts.append(ev.task_id)
    if ev.lease_token is not None:
        parts.append(f"lease={ev.lease_token}")
    if ev.fence_token is not None:
        parts.append(f"fence={ev.fence_token}")
    if ev.reason is not None:
        parts.append(f"reason={ev.reason}")
    key = ev.detail.get("key")
    if key is not None:
        parts.append(f"key={key}")
    return " ".join(parts)


def _warn_of_own_clock(worker_id: str) -> None:
    """On SQLite each process's clock judges its leases: say so when this one's is off."""
    from core.engine.clock_judge import CLOCK_TOLERANCE_MS

    gap = machine_clock_gap_ms()
    if abs(gap) <= CLOCK_TOLERANCE_MS:
        return
    side = "ahead of" if gap > 0 else "behind"
    print(
        f"borrowed-keys worker {worker_id}: warning: this process's clock is "
        f"{format_duration(round(abs(gap), -3))} {side} the machine's; on SQLite each "
        f"process's own clock judges leases, so it may take a lease the others still hold "
        f"(one machine, one clock: use PostgreSQL, whose server clock judges, for clocks of "
        f"their own)",
        file=sys.stderr,
        flush=True,
    )


def _event_json(ev: EventRow) -> dict[str, Any]:
    return {
        "t": "event",
        "seq": ev.seq,
        "at": ev.at,
        "event": ev.event,
        "task": ev.task_id,
        "worker": ev.worker_id,
        "lease_token": ev.lease_token,
        "fence_token": ev.fence_token,
        "reason": ev.reason,
        "key": ev.detail.get("key"),
    }


def _belief(worker: Worker, answer: dict[str, Any] | None) -> dict[str, Any]:
    """What the worker believes: its memory, which the store's rows may contradict."""
    lease = worker.lease
    held = None
    if lease is not None:
        held = {
            "task": lease.task_id,
            "lease_token": lease.lease_token,
            "fence_token": lease.fence_token,
            "expires_at": lease.expires_at,
        }
    return {
        "t": "belief",
        "worker": worker.id,
        "state": worker.state.value,
        "lease": held,
        "step": worker.step,
        "answer": answer,
        # its last call found no road to the server: it goes on believing, and tries again
        "unreachable": worker.unreachable,
    }


async def run_worker(options: WorkerOptions, out: TextIO = sys.stdout) -> int:
    """Run one worker until it is told to stop; the exit status."""
    import asyncio

    from core.engine.records import dump_json
    from core.engine.store import LeaseStore
    from core.sim.real import AsyncioEnv
    from core.sim.worker import Worker

    store = await LeaseStore.open_async(
        options.db, clock=DatabaseClock(), config=options.config, mode=options.mode
    )
    if options.json_lines:
        hello = {"t": "hello", "worker": options.worker_id, "pid": os.getpid()}
        hello["mode"] = options.mode.value
        print(dump_json(hello), file=out, flush=True)
    elif not options.quiet:
        cfg = options.config
        print(
            f"[{options.worker_id}] worker on {options.db}: ttl {format_duration(cfg.ttl_ms)}, "
            f"heartbeat every {format_duration(cfg.heartbeat_ms)}, "
            f"poll every {format_duration(cfg.poll_every_ms)}, mode {options.mode.value}",
            file=out,
            flush=True,
        )
    if not options.db.startswith("postgresql"):
        _warn_of_own_clock(options.worker_id)
    env = AsyncioEnv()
    worker = Worker(
        options.worker_id,
        store=store,
        env=env,
        config=options.config,
        mode=options.mode,
        self_fencing=options.self_fencing,
    )
    answer: list[dict[str, Any] | None] = [None]
    if options.json_lines:

        def echo_json(ev: EventRow) -> None:
            line = _event_json(ev)
            if ev.worker_id == options.worker_id:
                answer[0] = {"event": ev.event, "reason": ev.reason, "task": ev.task_id}
            print(dump_json(line), file=out, flush=True)

        store.add_listener(echo_json)
    elif not options.quiet:
        prefix = f"[{options.worker_id}] "

        def echo(ev: EventRow) -> None:
            print(prefix + _line(ev), file=out, flush=True)

        store.add_listener(echo)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    if options.control:

        def on_control(line: str) -> None:
            if line == "freeze":
                worker.faults.heartbeat_frozen = True
            elif line == "thaw":
                worker.faults.heartbeat_frozen = False
            elif line == "stop":
                stop.set()

        listen_for_control(loop, on_control, sys.stdin)
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    deadline = loop.time() + options.max_seconds if options.max_seconds is not None else None
    look_every = min(options.config.poll_every_ms, 500) / 1000
    if options.json_lines:
        # A belief is looked at often, and printed only when it changed.
        look_every = min(look_every, 0.05)
    said: list[str] = [""]

    def say_belief() -> None:
        if options.json_lines:
            belief = _belief(worker, answer[0])
            line = dump_json(belief)
            if line != said[0]:
                said[0] = line
                # when it changed, by this process's wall clock (ms): a reader learns of it
                # a pipe and a look later, and a belief ends when the worker let it go
                belief["at"] = time.time_ns() // 1_000_000
                print(dump_json(belief), file=out, flush=True)

    status = EXIT_OK
    worker.start()
    try:
        while not stop.is_set():
            say_belief()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), look_every)
            if env.errors:
                error = env.errors[0]
                # The store's own errors say what is wrong in words; a database that cannot
                # be used any more is the same answer as one that could not be opened.
                status = EXIT_BAD_INPUT if isinstance(error, StoreError) else EXIT_FAILED
                why = str(error)
                if not isinstance(error, BorrowedKeysError):
                    why = f"{type(error).__name__}: {why}"
                print(
                    f"borrowed-keys worker {options.worker_id}: stopped: {' '.join(why.split())}",
                    file=sys.stderr,
                )
                break
            if deadline is not None and loop.time() >= deadline:
                break
            if options.exit_when_idle and worker.lease is None:
                rows = await store.tasks()
                if all(row.status in RESTING_STATUSES for row in rows):
                    break
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
        worker.stop()
        await env.drain()
        await store.close()
    return status


async def enqueue_task(
    db: str, task_id: str, kind: str, steps: int, step_time_ms: int, max_attempts: int
) -> None:
    from core.engine.store import LeaseStore

    store = await LeaseStore.open_async(db, clock=DatabaseClock())
    try:
        await store.enqueue(
            task_id, kind, {"steps": steps, "step_time_ms": step_time_ms}, max_attempts
        )
    finally:
        await store.close()


# -- the commands ------------------------------------------------------------------------------


class _BadOption(Exception):
    pass


def _duration(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    try:
        ms = parse_duration(value)
    except DurationError as exc:
        raise _BadOption(f"--{name}: {exc}") from None
    if ms <= 0:
        raise _BadOption(f"--{name} must be positive, got {value}")
    return ms


def add_parser(subparsers: Any) -> None:
    """Register `worker` and `enqueue` on an argparse subparsers object."""
    add_worker_parsers(subparsers, worker=worker_command, enqueue=enqueue_command)


def _fail(command: str, message: str) -> int:
    print(f"borrowed-keys {command}: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_BAD_INPUT


def worker_command(args: argparse.Namespace) -> int:
    import asyncio

    try:
        ttl = _duration(args.ttl, "ttl")
        assert ttl is not None
        poll = _duration(args.poll_every, "poll-every")
        assert poll is not None
        config = LeaseConfig(
            ttl_ms=ttl,
            heartbeat_every_ms=_duration(args.heartbeat_every, "heartbeat-every"),
            renew_deadline_ms=_duration(args.renew_deadline, "renew-deadline"),
            poll_every_ms=poll,
        ).validated()
        if args.max_seconds is not None and not 0 < args.max_seconds < 10**7:
            raise _BadOption(f"--max-seconds must be positive, got {args.max_seconds}")
        if (problem := id_problem(args.worker_id)) is not None:
            raise _BadOption(f"--id {args.worker_id!a} {problem}")
    except (_BadOption, ConfigError) as exc:
        return _fail("worker", str(exc))
    options = WorkerOptions(
        db=args.db,
        worker_id=args.worker_id,
        config=config,
        mode=Mode(args.mode),
        exit_when_idle=args.exit_when_idle,
        max_seconds=args.max_seconds,
        quiet=args.quiet,
        json_lines=args.json_lines,
        control=args.control,
        self_fencing=getattr(args, "self_fence", False),
    )
    # `ps` shows each worker by its name, as `borrowed-keys worker NAME`, whatever started it
    # (`python -m core.tools.realworker`, the console script, a fleet).
    import setproctitle

    setproctitle.setproctitle(f"borrowed-keys worker {options.worker_id}")
    try:
        return asyncio.run(run_worker(options))
    except BorrowedKeysError as exc:
        return _fail("worker", str(exc))
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down
        return EXIT_OK


def enqueue_command(args: argparse.Namespace) -> int:
    import asyncio

    try:
        step_time = _duration(args.step_time, "step-time")
        assert step_time is not None
        if not 1 <= args.steps <= 1000:
            raise _BadOption(f"--steps must be between 1 and 1000, got {args.steps}")
        if not 1 <= args.max_attempts <= 100:
            raise _BadOption(f"--max-attempts must be between 1 and 100, got {args.max_attempts}")
        if (problem := id_problem(args.task)) is not None:
            raise _BadOption(f"--task {args.task!a} {problem}")
    except _BadOption as exc:
        return _fail("enqueue", str(exc))
    try:
        asyncio.run(
            enqueue_task(args.db, args.task, args.kind, args.steps, step_time, args.max_attempts)
        )
    except BorrowedKeysError as exc:
        return _fail("enqueue", str(exc))
    print(
        f"enqueued {args.task} ({args.kind}, {args.steps} steps of {args.step_time}) in {args.db}"
    )
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m core.tools.realworker worker ...` (the same as `borrowed-keys worker ...`)."""
    parser = Parser(prog="borrowed-keys")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
