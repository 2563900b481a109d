"""`borrowed-keys chaos` on the command line: its options, its progress bar and its tables.

The fuzzer itself (schedules, runs, shrinking, reproducers) is core/search/fuzz/; this
module only reads the options, reports as it runs and prints the summary.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.engine.durations import format_duration
from core.engine.modes import Mode
from core.tools.options import out_dir_problem, out_of_range, run_one_command

if TYPE_CHECKING:
    from core.search.fuzz.generate import RunResult
    from core.search.fuzz.report import ChaosReport, Reproducer

# Failing runs whose seeds are printed while running (--json lists them all).
MAX_SEEDS_SHOWN = 20


def add_parser(subparsers: Any) -> None:
    """Register `chaos` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "chaos",
        help="fuzz the engine with seeded random faults; shrink and save any counterexample",
        description=(
            "Run N seeded random fault schedules through the simulation and check every "
            "safety rule and liveness. Exit 0 if all hold, 1 otherwise."
        ),
    )
    p.add_argument("--runs", type=int, default=200, help="number of runs (default 200)")
    p.add_argument("--seed", type=int, default=0, help="run i uses seed + i (default 0)")
    p.add_argument(
        "--mode",
        default=Mode.CORRECT.value,
        choices=[m.value for m in Mode],
        help="the engine's mode (default correct)",
    )
    p.add_argument("--workers", type=int, default=3, help="workers per run (default 3)")
    p.add_argument("--tasks", type=int, default=5, help="tasks per run (default 5)")
    p.add_argument(
        "--out",
        default="chaos-out",
        help="folder for reproducer scenario files (default ./chaos-out)",
    )
    p.add_argument("--jobs", type=int, default=1, help="processes to use (default 1)")
    p.add_argument(
        "--repros",
        type=int,
        default=1,
        help="reproducers to shrink and write per distinct failure (default 1)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="postgresql://... to run every run on PostgreSQL, each in a fresh schema "
        "(default: SQLite in memory)",
    )
    p.set_defaults(handler=command)


def run_chaos(*args: Any, **kwargs: Any) -> ChaosReport:
    """The fuzzer (core/search/fuzz/pool.py), loaded when a run starts."""
    from core.search.fuzz.pool import run_chaos as run

    return run(*args, **kwargs)


def _check_args(args: Any) -> str | None:
    return out_of_range(
        (
            ("runs", args.runs, 1, 10_000_000),
            ("workers", args.workers, 1, 50),
            ("tasks", args.tasks, 1, 200),
            ("jobs", args.jobs, 1, 256),
            ("repros", args.repros, 0, 1000),
        )
    )


def command(args: Any) -> int:
    """`borrowed-keys chaos`: exit 0 if no run failed, 1 if any did, 2 for bad options."""
    from rich.console import Console

    err = Console(stderr=True)
    problem = _check_args(args)
    if problem is None and args.repros:
        problem = out_dir_problem(args.out)
    if problem is None and args.db is not None:
        from core.tools.database_option import check_run_database

        problem = check_run_database(args.db, many_runs=True)
    if problem is not None:
        print(f"borrowed-keys chaos: {problem}", file=sys.stderr)
        return 2
    mode = Mode(args.mode)
    written: list[str] = []
    try:
        report = _run_with_progress(args, mode, err, written)
    except KeyboardInterrupt:
        # Each reproducer is written whole or not at all (the pool ends with the with-block).
        kept = f"{len(written)} whole reproducer(s) in {args.out}" if written else "nothing written"
        print(f"borrowed-keys chaos: interrupted: {kept}", file=sys.stderr)
        return 130
    except OSError as exc:  # the folder changed under the run (removed, made read-only)
        print(f"borrowed-keys chaos: --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    summary = report.summary()
    if args.json:
        doc = dict(summary, elapsed_s=round(report.elapsed_s, 2), jobs=report.jobs)
        import json  # here: the parser is built for every command

        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        Console().print(_table(summary, report))
    return 0 if report.ok else 1


def _run_with_progress(args: Any, mode: Mode, err: Any, written: list[str]) -> ChaosReport:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    failed = 0

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        bar = progress.add_task(f"chaos {mode.value}", total=args.runs)

        def tick(result: RunResult) -> None:
            nonlocal failed
            if result.failures:
                failed += 1
                if failed <= MAX_SEEDS_SHOWN:
                    labels = ", ".join(f.label for f in result.failures)
                    progress.console.print(
                        f"[red]run {result.index} seed {result.seed}: {labels}[/red]"
                    )
                elif failed == MAX_SEEDS_SHOWN + 1:
                    progress.console.print("[red]more failing runs: see --json[/red]")
            progress.update(bar, advance=1, description=f"chaos {mode.value} ({failed} failed)")

        def repro(rep: Reproducer) -> None:
            if rep.path is not None:
                written.append(rep.path)
            state = "verified" if rep.verified else "NOT REPRODUCED"
            progress.console.print(
                f"reproducer for {rep.failure} (seed {rep.seed}): {rep.path} "
                f"({rep.faults_before} -> {rep.faults_after} actions, {state})"
            )

        return run_chaos(
            args.runs,
            args.seed,
            mode,
            args.workers,
            args.tasks,
            out_dir=args.out if args.repros else None,
            jobs=args.jobs,
            repros_per_failure=args.repros,
            database=args.db,  # every run's store, here and in the --jobs processes
            on_progress=tick,
            on_reproducer=repro,
        )


def _table(summary: dict[str, Any], report: ChaosReport) -> Any:
    from rich.table import Table

    def counts(d: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"

    table = Table(title=f"borrowed-keys chaos: {summary['mode']} mode", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    rows = [
        ("runs", f"{summary['runs']} (seeds {report.seed}..{report.seed + report.runs - 1})"),
        ("workers x tasks", f"{summary['workers']} x {summary['tasks_per_run']}"),
        ("faults injected", str(summary["faults_injected"])),
        (
            "tasks finished",
            f"{summary['tasks_done']} done, {summary['tasks_dead']} dead, "
            f"{summary['tasks_waiting']} waiting of {summary['tasks']}",
        ),
        ("rejections", counts(summary["rejections"])),
        ("violations", counts(summary["violations"])),
        (
            "runs with a violation",
            ", ".join(
                f"{k} {v} ({summary['violation_share'][k]:.1%})"
                for k, v in summary["violation_runs"].items()
            )
            or "none",
        ),
        ("liveness failures", str(summary["liveness_failures"])),
        ("worst recovery_time", format_duration(summary["worst_recovery_time_ms"])),
        ("worst time to settle", format_duration(summary["worst_settle_ms"])),
        ("wasted_steps", str(summary["wasted_steps"])),
        ("time", f"{report.elapsed_s:.1f} s with {report.jobs} job(s)"),
    ]
    for rep in report.reproducers:
        rows.append(
            (
                f"reproducer {rep.failure}",
                f"{rep.path or '(not written)'}: seed {rep.seed}, "
                f"{rep.faults_before} -> {rep.faults_after} actions"
                + ("" if rep.verified else " [red]NOT REPRODUCED[/red]"),
            )
        )
    for name, value in rows:
        table.add_row(name, value)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    return run_one_command(add_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
