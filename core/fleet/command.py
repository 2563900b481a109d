"""`borrowed-keys fleet`: its options checked, and the headless run (`--headless`).

The options are declared in core/fleet/options.py, light (argparse only), so that the
command line can list them without loading this; the app's fleet screen and the headless run
read the same parsed namespace through `settings_of`.
"""

import argparse
import contextlib
import json
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from core.engine.people import WORKER_CAST

EXIT_BAD_INPUT = 2
MAX_WORKERS = 32  # worker processes one fleet starts on this machine (more: another terminal)
# The story's cast first, by name on screen; then w4, w5, ... ("worker 4", 4 号执行者)
DEFAULT_NAMES = WORKER_CAST


@dataclass(frozen=True, slots=True)
class FleetArgs:
    """The parsed options, checked: what a fleet needs to start."""

    db: str | None
    pg: bool
    workers: int
    tasks: int | None  # a fixed batch; None: a steady queue at `rate`
    ttl_ms: int
    steps: int
    step_ms: int | None
    mode: str
    work: str | None = None
    rate: float | None = None  # tasks a minute (None: `default_rate`)
    names: tuple[str, ...] = DEFAULT_NAMES
    self_fencing: bool = False

    def arrivals(self) -> Any:
        """The steady queue's arrivals, or None for a fixed batch (`--tasks`)."""
        if self.tasks is not None:
            return None
        from core.fleet.arrivals import Arrivals, default_rate

        step = self.step_ms if self.step_ms is not None else max(50, self.ttl_ms // 3)
        rate = self.rate or default_rate(self.workers, self.steps, step)
        return Arrivals(rate, most_waiting=max(2, self.workers))


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
    if args.tasks is not None and not 0 <= args.tasks <= 10_000:
        raise BadOption(f"--tasks must be between 0 and 10000, got {args.tasks}")
    rate = getattr(args, "rate", None)
    if rate is not None and not 1 <= rate <= 600:
        raise BadOption(f"--rate must be between 1 and 600 tasks a minute, got {rate:g}")
    names = DEFAULT_NAMES
    if getattr(args, "names", None) is not None:
        from core.engine.ids import id_problem

        names = tuple(n.strip() for n in args.names.split(",") if n.strip())
        for name in names:
            if (problem := id_problem(name)) is not None:
                raise BadOption(f"--names {name!a} {problem}")
        if len(set(names)) != len(names):
            raise BadOption("--names: each worker's name must be its own")
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
        work=getattr(args, "work", None),
        rate=rate,
        names=names,
        self_fencing=bool(getattr(args, "self_fence", False)),
    )


def start_fleet(opts: FleetArgs, folder: Path | None = None) -> Any:
    """Open the database (a fresh SQLite file, `--db`, or an embedded PostgreSQL) and a
    fleet on it, with no worker started yet."""
    from core.engine.config import Mode
    from core.fleet.supervisor import Fleet, FleetSettings, open_database

    # The workers' logs go in the database's fresh folder; a database of the user's
    # (`--db PATH`) gets a fresh folder for them alone. Both are removed on every way out.
    fresh = folder is None and (opts.db is None or opts.pg)
    own_logs = (
        None if fresh or folder is not None else Path(tempfile.mkdtemp(prefix="bk-fleet-logs-"))
    )
    database = open_database(opts.db, opts.pg, folder, logs=own_logs)
    logs = (database.folder or folder or own_logs or Path(".")) / "logs"
    downstream = None
    try:
        if opts.work is not None:
            from core.downstream.thread import ServiceThread

            logs.mkdir(parents=True, exist_ok=True)
            # no_fencing is the mistake on the downstream's side too: it takes every write
            fenced = Mode(opts.mode) not in (Mode.NO_FENCING, Mode.BEFORE_FENCE)
            downstream = ServiceThread(logs / "downstream.db", fencing=fenced)
        settings = FleetSettings(
            db=database.url,
            ttl_ms=opts.ttl_ms,
            steps=opts.steps,
            step_ms=opts.step_ms,
            mode=Mode(opts.mode),
            work=opts.work,
            service_url=None if downstream is None else downstream.url,
            names=opts.names,
            self_fencing=opts.self_fencing,
        )
        fleet = Fleet(settings, logs, database)
        fleet.downstream = downstream
        return fleet
    except BaseException:
        if downstream is not None:
            downstream.close()
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
        arrivals = opts.arrivals()
        work = (
            word("batch", lang, n=opts.tasks)
            if arrivals is None
            else word("steady", lang, rate=f"{arrivals.per_minute:g}")
        )
        print(word("fleet", lang, n=opts.workers, db=fleet.settings.db, tasks=work, seed=seed))
        sys.stdout.flush()
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
            arrivals=arrivals,
        )
        for line in verdict_lines(run, fleet, lang):
            print(line)
        assert run.check is not None
        verdict = int(run.check.verdict)
        if fleet.downstream is not None:
            verdict = max(verdict, service_verdict(fleet.downstream.books(), lang))
        if args.save:
            fleet.save(Path(args.save), run.frames)
            print(word("saved", lang, path=args.save))
            if fleet.downstream is not None:
                # the service's own books beside the run: its requests, tokens, verdicts
                books = Path(f"{args.save}.downstream.json")
                books.write_text(
                    json.dumps(fleet.downstream.books(), ensure_ascii=False, indent=1) + "\n",
                    encoding="utf-8",
                )
                print(word("saved", lang, path=books))
        return verdict
    except KeyboardInterrupt:
        print(word("stopped", args.lang or "en"), file=sys.stderr)
        return int(Verdict.NOT_RUN)
    finally:
        fleet.close()


def service_verdict(books: dict[str, Any], lang: str) -> int:
    """Print the downstream service's rules over its own books (its export, as it stands or
    as a saved run kept it); 1 if one is broken."""
    from core.downstream.books import ServiceRule, judge
    from core.fleet.words import word

    found = judge(books["history"], books["charges"])
    rules = ", ".join(rule.value for rule in ServiceRule)
    print(word("service_rules", lang, rules=rules, n=len(books["history"])))
    for finding in found[:20]:
        print(f"  {finding.sentence(lang)}")
    print(word("service_broken" if found else "service_held", lang, n=len(found)))
    return 1 if found else 0


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
    verdict = int(check.verdict)
    if saved.service is not None:
        # the service's books, kept in the run, judged again by the same judge
        verdict = max(verdict, service_verdict(saved.service, lang))
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
    return verdict
