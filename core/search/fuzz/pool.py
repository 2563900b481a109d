"""Running many: every seed's run, then the chosen failures' reproducers, in this process
or in a pool of forked ones (`--jobs`), with results in run order whatever the count."""

import multiprocessing
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from core.engine.config import Mode
from core.scenarios.writer import write_whole
from core.search.fuzz.generate import ChaosParams, Failure, RunResult, generate
from core.search.fuzz.report import ChaosReport, Reproducer
from core.search.fuzz.shrink import shrink
from core.search.fuzz.write import file_name, scenario_text, verify_text
from core.sim.simulation import IN_MEMORY

_PARAMS: ChaosParams | None = None


def _init(params: ChaosParams) -> None:
    global _PARAMS
    _PARAMS = params


def _init_job(params: ChaosParams) -> None:
    """A pool process's start: Ctrl-C is the parent's to handle (it ends the pool), not a
    traceback from every process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init(params)


def _run_one(job: tuple[int, int]) -> RunResult:
    index, seed = job
    assert _PARAMS is not None
    _, result = generate(_PARAMS, seed)
    result.index = index
    return result


def _reproduce(job: tuple[int, int, Failure, str | None]) -> tuple[Reproducer, str]:
    index, seed, failure, out_dir = job
    assert _PARAMS is not None
    schedule, _ = generate(_PARAMS, seed)
    small, replays = shrink(schedule, failure, _PARAMS.database)
    text = scenario_text(small, failure, run=index, seed=seed, faults=schedule.faults)
    ok = verify_text(text, failure, _PARAMS.database)
    path = None
    if out_dir is not None:
        target = Path(out_dir) / file_name(_PARAMS.mode, failure, seed)
        write_whole(target, text)  # a job ended by Ctrl-C leaves no half of a file
        path = str(target)
    rep = Reproducer(
        failure=failure.label,
        run=index,
        seed=seed,
        path=path,
        faults_before=schedule.faults,
        faults_after=small.faults,
        replays=replays,
        verified=ok,
    )
    return rep, text


def _imap(
    fn: Callable[[Any], Any], jobs_in: Sequence[Any], params: ChaosParams, jobs: int
) -> Iterator[Any]:
    if jobs <= 1 or len(jobs_in) <= 1:
        _init(params)
        yield from map(fn, jobs_in)
        return
    ctx = multiprocessing.get_context("fork")
    chunk = max(1, min(50, len(jobs_in) // (jobs * 8)))
    with ctx.Pool(jobs, initializer=_init_job, initargs=(params,)) as pool:
        yield from pool.imap(fn, jobs_in, chunksize=chunk)


def run_chaos(
    runs: int,
    seed: int = 0,
    mode: Mode = Mode.CORRECT,
    workers: int = 3,
    tasks: int = 5,
    *,
    out_dir: str | Path | None = None,
    jobs: int = 1,
    repros_per_failure: int = 1,
    database: str | None = None,
    params: ChaosParams | None = None,
    on_progress: Callable[[RunResult], None] | None = None,
    on_reproducer: Callable[[Reproducer], None] | None = None,
) -> ChaosReport:
    """Run `runs` seeded schedules; shrink and write reproducers for the first failures.

    Run i uses seed + i. Results are in run order whatever `jobs` is, so the report is the
    same for any number of processes. Reproducers are written for the first
    `repros_per_failure` runs (by index) of each distinct failure.
    """
    if params is None:
        params = ChaosParams(
            mode=mode, workers=workers, tasks=tasks, database=database or IN_MEMORY
        )
    started = time.perf_counter()
    report = ChaosReport(params=params, runs=runs, seed=seed, jobs=jobs)
    for result in _imap(_run_one, [(i, seed + i) for i in range(runs)], params, jobs):
        report.results.append(result)
        if on_progress is not None:
            on_progress(result)
    chosen: list[tuple[int, int, Failure, str | None]] = []
    seen: Counter[str] = Counter()
    out = str(out_dir) if out_dir is not None else None
    for r in report.results:
        for failure in r.failures:
            key = failure.violation or "liveness"
            if seen[key] < repros_per_failure:
                seen[key] += 1
                chosen.append((r.index, r.seed, failure, out))
    if out is not None and chosen:  # no folder when there is nothing to put in it
        Path(out).mkdir(parents=True, exist_ok=True)
    for rep, _text in _imap(_reproduce, chosen, params, jobs):
        report.reproducers.append(rep)
        if on_reproducer is not None:
            on_reproducer(rep)
    report.elapsed_s = time.perf_counter() - started
    return report
