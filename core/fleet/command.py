"""`borrowed-keys fleet`: its options checked, and the headless run (`--headless`).

The options are declared in core/fleet/options.py, light (argparse only), so that the
command line can list them without loading this; the app's fleet screen and the headless run
read the same parsed namespace through `settings_of`.
"""

import argparse
import contextlib
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

EXIT_BAD_INPUT = 2
MAX_WORKERS = 32  # worker processes one fleet starts on this machine (more: another terminal)


@dataclass(frozen=True, slots=True)
class FleetArgs:
    """The parsed options, checked: what a fleet needs to start."""

    db: str | None
    pg: bool
    workers: int
    tasks: int
    ttl_ms: int
    steps: int
    step_ms: int | None
    mode: str


class BadOption(Exception):
    """One line saying which option is wrong and why."""


def checked(args: argparse.Namespace) -> FleetArgs:
    """The options, or BadOption naming the first wrong one."""
    from core.engine.config import Mode
    from core.engine.durations import DurationError, parse_duration

    def duration(value: str, name: str) -> int:
        try:
            ms = parse_duration(value)
        except DurationError as exc:
            raise BadOption(f"--{name}: {exc}") from None
        if ms <= 0:
            raise BadOption(f"--{name} must be positive, got {value}")
        return ms

    if args.pg and args.db is not None:
        raise BadOption("--pg starts a server of its own: give --db or --pg, not both")
    if not 0 <= args.workers <= MAX_WORKERS:
        raise BadOption(f"--workers must be between 0 and {MAX_WORKERS}, got {args.workers}")
    if not 0 <= args.tasks <= 10_000:
        raise BadOption(f"--tasks must be between 0 and 10000, got {args.tasks}")
    if not 1 <= args.steps <= 1000:
        raise BadOption(f"--steps must be between 1 and 1000, got {args.steps}")
    modes = [m.value for m in Mode]
    if args.mode not in modes:
        raise BadOption(f"--mode {args.mode!r} is not one of {', '.join(modes)}")
    if args.seconds <= 0:
        raise BadOption(f"--seconds must be positive, got {args.seconds}")
    step = duration(args.step_time, "step-time") if args.step_time else None
    return FleetArgs(
        db=args.db,
        pg=args.pg,
        workers=args.workers,
        tasks=args.tasks,
        ttl_ms=duration(args.ttl, "ttl"),
        steps=args.steps,
        step_ms=step,
        mode=args.mode,
    )


def start_fleet(opts: FleetArgs, folder: Path | None = None) -> Any:
    """Open the database (a fresh SQLite file, `--db`, or an embedded PostgreSQL) and a
    fleet on it, with no worker started yet."""
    from core.engine.config import Mode
    from core.fleet.supervisor import Fleet, FleetSettings, open_database

    database = open_database(opts.db, opts.pg, folder)
    logs = (database.folder or Path(tempfile.mkdtemp(prefix="bk-fleet-logs-"))) / "logs"
    settings = FleetSettings(
        db=database.url,
        ttl_ms=opts.ttl_ms,
        steps=opts.steps,
        step_ms=opts.step_ms,
        mode=Mode(opts.mode),
    )
    try:
        return Fleet(settings, logs, database)
    except BaseException:
        if database.server is not None:
            with contextlib.suppress(Exception):
                database.server.cleanup()
        raise


def _hang_up(_sig: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # a closed terminal ends the run as Ctrl-C does: children too


def run_headless_command(args: argparse.Namespace) -> int:
    """`borrowed-keys fleet --headless ...`: exit 0 (held), 1 (broken) or 2 (bad input)."""
    from core.engine.errors import BorrowedKeysError
    from core.fleet.headless import parse_faults, run_headless, verdict_lines
    from core.fleet.verdict import Verdict
    from core.fleet.words import word

    try:
        opts = checked(args)
        faults = parse_faults(args.faults)
    except (BadOption, ValueError) as exc:
        print(f"borrowed-keys fleet: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    seed = args.seed if args.seed is not None else int.from_bytes(__import__("os").urandom(4))
    signal.signal(signal.SIGTERM, _hang_up)
    with contextlib.suppress(ValueError, AttributeError):
        signal.signal(signal.SIGHUP, _hang_up)
    try:
        fleet = start_fleet(opts)
    except BorrowedKeysError as exc:
        from core.scenarios.telling import error_sentence

        said = error_sentence(exc, args.lang or "en")
        print(f"borrowed-keys fleet: {' '.join(said.split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        lang = args.lang or "en"
        print(
            word("fleet", lang, n=opts.workers, db=fleet.settings.db, tasks=opts.tasks, seed=seed),
            flush=True,
        )
        run = run_headless(
            fleet,
            workers=opts.workers,
            tasks=opts.tasks,
            seconds=args.seconds,
            faults=faults,
            seed=seed,
            say=lambda line: print(line, flush=True),
            lang=lang,
            record=bool(args.save),
        )
        for line in verdict_lines(run, fleet, lang):
            print(line)
        assert run.check is not None
        if args.save:
            fleet.save(Path(args.save), run.frames)
            print(word("saved", lang, path=args.save))
        return int(run.check.verdict)
    except KeyboardInterrupt:
        print(word("stopped", args.lang or "en"), file=sys.stderr)
        return int(Verdict.NOT_RUN)
    finally:
        fleet.close()


def run_check_command(args: argparse.Namespace) -> int:
    """`borrowed-keys fleet --check SAVED_RUN`: the saved history judged again from its first
    line, Jepsen-style; exit 0 (held), 1 (broken) or 2 (not a saved run)."""
    from core.fleet.history import HistoryError, load_history
    from core.fleet.words import word

    lang = args.lang or "en"
    try:
        saved = load_history(Path(args.check))
    except HistoryError as exc:
        print(f"borrowed-keys fleet: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    check = saved.check()
    print(word("rechecked", lang, events=check.events))
    if saved.skipped:
        rules = ("; " if lang != "zh" else "；").join(
            word(f"rule_{rule}", lang) for rule in saved.skipped
        )
        print(word("skipped", lang, rules=rules))
    if check.findings:
        print(word("broken", lang, n=len(check.findings)))
        for finding in check.findings[:20]:
            print(f"  {finding.sentence(lang)}")
    else:
        print(word("held", lang))
    said = saved.verdict.get("verdict")
    now = check.verdict.name.lower()
    if said != now:
        # the file's own verdict is never taken: it is said beside the one checked again
        verdict_word = {"held": ("held", "守住了"), "broken": ("broken", "没有守住")}
        key = "differs" if not saved.skipped else "differs_no_rows"
        zh = int(lang == "zh")
        print(
            word(
                key,
                lang,
                said=verdict_word.get(str(said), ("?", "?"))[zh],
                now=verdict_word[now][zh],
            )
        )
    return int(check.verdict)
