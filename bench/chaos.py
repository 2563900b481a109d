"""The fuzzer (`borrowed-keys chaos`), measured: `python -m bench chaos`.

`correct` mode over many random fault schedules must show no violation and no liveness failure,
within a time budget (15 minutes for 10,000 runs with 2 jobs, scaled to the runs made). Each
mistake mode then runs fewer schedules: the share of runs that expose it, and how far the first
reproducer of its most common violation shrinks (faults before and after). `--quick` runs a
tenth of the schedules.
"""

import os
import sys
from collections import Counter

from rich.console import Console
from rich.table import Table

from bench.results import quick, record
from core.engine.config import Mode
from core.search.fuzz.pool import run_chaos

CORRECT_RUNS = 10_000
MODE_RUNS = 2_000
JOBS = 2
BUDGET_S_PER_RUN = 15 * 60 / 10_000


def _command(runs: int, mode: Mode) -> str:
    return f"borrowed-keys chaos --runs {runs} --mode {mode.value} --jobs {JOBS}"


def correct_mode(console: Console, runs: int) -> None:
    report = run_chaos(runs, mode=Mode.CORRECT, jobs=JOBS)
    summary = report.summary()
    what = f"chaos, correct mode, {runs:,} runs of 3 workers and 5 tasks"
    again = _command(runs, Mode.CORRECT)
    violating = len(report.violation_runs)
    stuck = len(report.liveness_runs)
    record(
        "chaos",
        "correct_violations",
        f"{what}: runs with a violation",
        violating,
        "runs",
        target=0,
        aim="at most",
        command=again,
    )
    record(
        "chaos",
        "correct_liveness",
        f"{what}: liveness failures",
        stuck,
        "runs",
        target=0,
        aim="at most",
        command=again,
    )
    record(
        "chaos",
        "correct_faults",
        f"{what}: faults injected",
        summary["faults_injected"],
        "faults",
        command=again,
    )
    record(
        "chaos",
        "correct_wasted",
        f"{what}: steps done twice, per run",
        round(summary["wasted_steps"] / runs, 2),
        "steps",
        command=again,
    )
    budget = BUDGET_S_PER_RUN * runs
    record(
        "chaos",
        "correct_wall",
        f"{what}, {JOBS} jobs: wall time",
        round(report.elapsed_s, 1),
        "s",
        target=round(budget, 1),
        aim="under",
        command=again,
    )
    console.print(
        f"{what}: {violating} violation runs, {stuck} liveness failures, "
        f"{summary['faults_injected']:,} faults, {report.elapsed_s:.1f} s (budget {budget:.0f} s)"
    )


def mistake_modes(console: Console, runs: int) -> None:
    table = Table(title=f"each mistake, {runs:,} random schedules")
    for col in ("mode", "violation", "share of runs", "reproducer faults"):
        table.add_column(col)
    for mode in Mode:
        if mode is Mode.CORRECT:
            continue
        report = run_chaos(runs, mode=mode, jobs=JOBS)
        kinds: Counter[str] = Counter()
        for r in report.results:
            kinds.update(r.violations.keys())
        share = 100 * len(report.violation_runs) / runs
        main = kinds.most_common(1)[0][0] if kinds else None
        again = _command(runs, mode)
        what = f"chaos, {mode.value}: runs with a violation" + (f" (mostly {main})" if main else "")
        record("chaos", f"{mode.value}_share", what, round(share, 1), "%", command=again)
        if not kinds:
            stuck = 100 * len(report.liveness_runs) / runs
            record(
                "chaos",
                f"{mode.value}_liveness",
                f"chaos, {mode.value}: runs that miss the liveness bound",
                round(stuck, 1),
                "%",
                command=again,
            )
            # A mistake that breaks no rule shows in its waste: steps done twice.
            record(
                "chaos",
                f"{mode.value}_wasted",
                f"chaos, {mode.value}: steps done twice, per run",
                round(report.summary()["wasted_steps"] / runs, 2),
                "steps",
                command=again,
            )
        shrunk = next((rep for rep in report.reproducers if rep.failure == main), None)
        if shrunk is not None:
            record(
                "chaos",
                f"{mode.value}_shrunk",
                f"chaos, {mode.value}: the first {main} reproducer's faults after shrinking "
                f"({shrunk.faults_before} before)",
                shrunk.faults_after,
                "faults",
                command=again,
            )
        table.add_row(
            mode.value,
            main or "none",
            f"{share:.1f} %",
            f"{shrunk.faults_before} -> {shrunk.faults_after}" if shrunk else "",
        )
    console.print(table)


def chaos_bench(console: Console) -> None:
    scale = 10 if quick() else 1
    correct_mode(console, CORRECT_RUNS // scale)
    mistake_modes(console, MODE_RUNS // scale)


if __name__ == "__main__":
    if "--quick" in sys.argv:
        os.environ["BK_BENCH_QUICK"] = "1"
    chaos_bench(Console())
