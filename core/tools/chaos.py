"""Deterministic fault fuzzing with shrunk, replayable reproducers (the `chaos` command's
engine; its options and output are core/tools/chaos_cli.py).

Each run is one seeded random fault schedule (`random.Random(seed + i)`) played through the
simulation on virtual time, the way FoundationDB and TigerBeetle test themselves:
- W workers (w1..wN) and T tasks of every kind (3-6 steps each);
- faults (freeze, stall, kill, restart, partition, heal, slow, skew, resume) and approvals
  or rejections of parked tasks at random virtual instants;
- then every worker is healed, resumed or restarted, and a quiet period lets the healthy
  workers finish.

Every run is checked for every safety violation the checker knows, and for liveness: each
task must end done, dead (attempts used up) or waiting for an approval that never came,
within `3 x ttl + all the work` after the last fault.

A schedule is a list of `(instant, action)` pairs plus an end instant; the simulation is
deterministic, so replaying the list gives the same history. When a run breaks a rule, its
schedule is shrunk (delta debugging over the actions, keeping their instants) to the fewest
actions that still break it, and written as a scenario file whose last step expects it.
"""

import math
import multiprocessing
import random
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.engine.config import LeaseConfig, Mode
from core.engine.durations import format_duration
from core.engine.vocabulary import RESTING_STATUSES, TaskStatus
from core.scenarios.format import Expectation, Step, Subject, parse_scenario
from core.scenarios.writer import dump_scenario, write_whole
from core.sim.simulation import Simulation
from core.sim.spec import (
    TASK_KINDS,
    WORKER_ACTIONS,
    Action,
    Advance,
    Approve,
    Reject,
    Restart,
    Resume,
    SimSettings,
    Skew,
    Slow,
    TaskSpec,
    WorkerSpec,
)
from core.sim.worker import WorkerFaults

# How often each fault is drawn (approvals are drawn only when a task is waiting).
FAULT_WEIGHTS: dict[str, float] = {
    "freeze_heartbeat": 2.0,
    "stall": 2.0,
    "kill": 2.0,
    "restart": 1.5,
    "partition": 2.0,
    "heal": 1.0,
    "slow": 1.0,
    "skew": 1.5,
    "resume": 2.0,
}
APPROVAL_WEIGHT = 2.0
SLOW_FACTORS = (0.5, 2.0, 3.0, 5.0)
STEP_TIMES_MS = (500, 750, 1000, 1250, 1500, 2000)

# Replays one shrink may spend; shrinking stops early (still valid, less small) past this.
MAX_SHRINK_REPLAYS = 400


@dataclass(frozen=True, slots=True)
class ChaosParams:
    """What every run of one chaos invocation shares."""

    mode: Mode = Mode.CORRECT
    workers: int = 3
    tasks: int = 5
    ttl_ms: int = 6_000
    heartbeat_ms: int = 2_000
    poll_ms: int = 1_000
    window_ms: int = 24_000  # faults fall in [0, window]
    max_faults: int = 10

    def config(self) -> LeaseConfig:
        return LeaseConfig(
            ttl_ms=self.ttl_ms, heartbeat_every_ms=self.heartbeat_ms, poll_every_ms=self.poll_ms
        ).validated()


Timed = tuple[int, Action]


@dataclass(frozen=True, slots=True)
class Schedule:
    """A run's settings, its actions at their virtual instants, and when it ends."""

    settings: SimSettings
    timed: tuple[Timed, ...]
    end_ms: int

    def actions(self) -> list[Action]:
        """The actions to apply in order, with `advance` spans between the instants."""
        out: list[Action] = []
        now = 0
        for at, action in self.timed:
            if at > now:
                out.append(Advance(at - now))
                now = at
            out.append(action)
        if self.end_ms > now:
            out.append(Advance(self.end_ms - now))
        return out

    @property
    def faults(self) -> int:
        return len(self.timed)


@dataclass(frozen=True, slots=True)
class Failure:
    """What a reproducer must show: a violation by name, or a task stuck in a status."""

    violation: str | None = None
    task: str | None = None
    status: str | None = None

    @property
    def label(self) -> str:
        if self.violation is not None:
            return self.violation
        return f"liveness:{self.task}:{self.status}"


@dataclass
class RunResult:
    """The outcome of one run (small and picklable: it crosses process boundaries)."""

    index: int
    seed: int
    faults: int
    done: int
    dead: int
    waiting: int
    rejections: dict[str, int]
    violations: dict[str, int]
    recovery_time_ms: int
    wasted_steps: int
    settle_ms: int | None  # from the last fault until every task was terminal
    stuck: dict[str, str]  # task -> status, for tasks not terminal at the bound

    @property
    def failures(self) -> list[Failure]:
        out = [Failure(violation=name) for name in sorted(self.violations)]
        out += [Failure(task=t, status=s) for t, s in sorted(self.stuck.items())]
        return out


@dataclass
class Reproducer:
    failure: str
    run: int
    seed: int
    path: str | None
    faults_before: int
    faults_after: int
    replays: int
    verified: bool


@dataclass
class ChaosReport:
    """Totals over all runs, plus the runs that failed and their reproducers."""

    params: ChaosParams
    runs: int
    seed: int
    results: list[RunResult] = field(default_factory=list)
    reproducers: list[Reproducer] = field(default_factory=list)
    elapsed_s: float = 0.0
    jobs: int = 1

    @property
    def violation_runs(self) -> list[RunResult]:
        return [r for r in self.results if r.violations]

    @property
    def liveness_runs(self) -> list[RunResult]:
        return [r for r in self.results if r.stuck]

    @property
    def ok(self) -> bool:
        return not self.violation_runs and not self.liveness_runs

    def summary(self) -> dict[str, Any]:
        """Everything that depends only on the inputs (identical for any --jobs)."""
        violations: Counter[str] = Counter()
        violation_runs: Counter[str] = Counter()
        rejections: Counter[str] = Counter()
        settles = [r.settle_ms for r in self.results if r.settle_ms is not None]
        for r in self.results:
            violations.update(r.violations)
            violation_runs.update(r.violations.keys())
            rejections.update(r.rejections)
        p = self.params
        return {
            "runs": self.runs,
            "seed": self.seed,
            "mode": p.mode.value,
            "workers": p.workers,
            "tasks_per_run": p.tasks,
            "lease_ttl_ms": p.ttl_ms,
            "faults_injected": sum(r.faults for r in self.results),
            "tasks": sum(p.tasks for _ in self.results),
            "tasks_done": sum(r.done for r in self.results),
            "tasks_dead": sum(r.dead for r in self.results),
            "tasks_waiting": sum(r.waiting for r in self.results),
            "rejections": dict(sorted(rejections.items())),
            "violations": dict(sorted(violations.items())),
            "violation_runs": dict(sorted(violation_runs.items())),
            "violation_share": {
                k: round(v / max(1, self.runs), 4) for k, v in sorted(violation_runs.items())
            },
            "liveness_failures": len(self.liveness_runs),
            "worst_recovery_time_ms": max((r.recovery_time_ms for r in self.results), default=0),
            "worst_settle_ms": max(settles, default=0),
            "wasted_steps": sum(r.wasted_steps for r in self.results),
            "failing_runs": [
                {
                    "run": r.index,
                    "seed": r.seed,
                    "failures": [f.label for f in r.failures],
                }
                for r in self.results
                if r.failures
            ],
            "reproducers": [asdict(x) for x in self.reproducers],
            "ok": self.ok,
        }


# -- generating a run -----------------------------------------------------------------------


def make_settings(params: ChaosParams, rng: random.Random, seed: int) -> SimSettings:
    """W workers and T tasks of every kind, 3-6 steps each."""
    kinds = list(TASK_KINDS)
    rng.shuffle(kinds)
    tasks = tuple(
        TaskSpec(
            id=f"t{j + 1}",
            kind=kinds[j % len(kinds)],
            steps=rng.randint(3, 6),
            step_time_ms=rng.choice(STEP_TIMES_MS),
            max_attempts=rng.randint(3, 6),
        )
        for j in range(params.tasks)
    )
    workers = tuple(WorkerSpec(id=f"w{k + 1}") for k in range(params.workers))
    return SimSettings(
        mode=params.mode, seed=seed, config=params.config(), workers=workers, tasks=tasks
    )


def liveness_bound_ms(settings: SimSettings) -> int:
    """How long after the last fault every task must be terminal: 3 ttl plus all the work."""
    cfg = settings.config
    work = sum(t.steps * t.step_time_ms for t in settings.tasks)
    return 3 * cfg.ttl_ms + work + 2 * cfg.poll_every_ms


def _faulty(f: WorkerFaults) -> bool:
    """Whether a resume would end something for this worker."""
    return f.heartbeat_frozen or f.stalled or f.partitioned or f.slow_factor != 1.0


def _pick_fault(rng: random.Random, sim: Simulation, ttl: int) -> Action | None:
    workers = sim.worker_faults()
    names = list(FAULT_WEIGHTS)
    name = rng.choices(names, weights=[FAULT_WEIGHTS[n] for n in names])[0]
    alive = [wid for wid, f in workers.items() if not f.dead]
    if name == "restart":
        pool = list(workers)
    elif name == "heal":
        pool = [wid for wid in alive if workers[wid].partitioned]
    elif name == "resume":
        pool = [wid for wid in alive if _faulty(workers[wid])]
    else:
        pool = alive
    if not pool:
        dead = [wid for wid, f in workers.items() if f.dead]
        if not dead:
            return None
        name, pool = "restart", dead
    worker = rng.choice(sorted(pool))
    if name == "slow":
        return Slow(worker, factor=rng.choice(SLOW_FACTORS))
    if name == "skew":
        step = 500
        size = rng.randint(1, 2 * ttl // step) * step
        return Skew(worker, by_ms=size * rng.choice((-1, 1)))
    return WORKER_ACTIONS[name](worker)


def generate(params: ChaosParams, seed: int) -> tuple[Schedule, RunResult]:
    """Play one random run, choosing each fault from the state it meets; return both."""
    rng = random.Random(seed)
    settings = make_settings(params, rng, seed)
    sim = Simulation(settings)
    ttl = settings.config.ttl_ms
    timed: list[Timed] = []

    def act(action: Action) -> None:
        result = sim.apply(action)
        if result.ok:
            timed.append((sim.now_ms, action))

    count = rng.randint(1, params.max_faults)
    instants = sorted(rng.randint(0, params.window_ms) for _ in range(count))
    for at in instants:
        if at > sim.now_ms:
            sim.apply(Advance(at - sim.now_ms))
        waiting = [t for t, s in sorted(sim.task_statuses().items()) if s == TaskStatus.WAITING]
        total = sum(FAULT_WEIGHTS.values())
        if waiting and rng.random() < APPROVAL_WEIGHT / (APPROVAL_WEIGHT + total):
            verdict = Approve if rng.random() < 0.75 else Reject
            act(verdict(rng.choice(waiting)))
            continue
        fault = _pick_fault(rng, sim, ttl)
        if fault is not None:
            act(fault)

    # The faults stop: every worker comes back, clocks are set right, some approvals come.
    for wid in sorted(sim.worker_ids()):
        f = sim.worker_faults()[wid]
        if f.dead:
            act(Restart(wid))
            f = sim.worker_faults()[wid]
        elif _faulty(f):
            act(Resume(wid))
        if f.skew_ms:
            act(Skew(wid, by_ms=0))
    for task, status in sorted(sim.task_statuses().items()):
        if status == TaskStatus.WAITING and rng.random() < 0.5:
            act(Approve(task))

    # The quiet period, in ttl-long spans, until every task is terminal or the bound passes.
    last_fault = sim.now_ms
    deadline = last_fault + liveness_bound_ms(settings)
    settle: int | None = None
    statuses = sim.task_statuses()
    while True:
        if all(s in RESTING_STATUSES for s in statuses.values()):
            settle = sim.now_ms - last_fault
            break
        if sim.now_ms >= deadline:
            break
        sim.apply(Advance(min(ttl, deadline - sim.now_ms)))
        statuses = sim.task_statuses()
    schedule = Schedule(settings, tuple(timed), sim.now_ms)
    counts = Counter(statuses.values())
    metrics = sim.metrics()
    result = RunResult(
        index=0,
        seed=seed,
        faults=len(timed),
        done=counts[TaskStatus.DONE],
        dead=counts[TaskStatus.DEAD],
        waiting=counts[TaskStatus.WAITING],
        rejections=dict(Counter(r.reason for r in sim.rejections)),
        violations=sim.violations(),
        recovery_time_ms=metrics.recovery_time_ms,
        wasted_steps=metrics.wasted_steps,
        settle_ms=settle,
        stuck={t: s for t, s in statuses.items() if s not in RESTING_STATUSES},
    )
    sim.close()
    return schedule, result


# -- replaying and shrinking ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replay:
    shows: bool
    at_ms: int | None  # when the failure first showed (violations only)
    kept: tuple[Timed, ...]  # the actions that applied (refused ones do nothing; dropped)


def replay(schedule: Schedule, failure: Failure) -> Replay:
    """Play a schedule exactly as its scenario file would; does it show the failure?"""
    sim = Simulation(schedule.settings)
    kept: list[Timed] = []
    try:
        now = 0
        for at, action in schedule.timed:
            if at > now:
                sim.apply(Advance(at - now))
                now = at
            if failure.violation is not None and sim.violations().get(failure.violation):
                break
            if sim.apply(action).ok:
                kept.append((at, action))
        if schedule.end_ms > now:
            sim.apply(Advance(schedule.end_ms - now))
        if failure.violation is not None:
            found = [v.at for v in sim.violations_found() if v.name == failure.violation]
            return Replay(bool(found), min(found) if found else None, tuple(kept))
        status = sim.task_statuses().get(failure.task or "")
        return Replay(status == failure.status, None, tuple(kept))
    finally:
        sim.close()


class _Shrinker:
    def __init__(self, schedule: Schedule, failure: Failure) -> None:
        self.settings = schedule.settings
        self.failure = failure
        self.end_ms = schedule.end_ms
        self.replays = 0

    def test(self, items: Sequence[Timed]) -> tuple[Timed, ...] | None:
        """The smaller schedule (refused actions dropped, cut at the failure), or None."""
        if self.replays >= MAX_SHRINK_REPLAYS:
            return None
        self.replays += 1
        got = replay(Schedule(self.settings, tuple(items), self.end_ms), self.failure)
        if not got.shows:
            return None
        if got.at_ms is not None and got.at_ms < self.end_ms:
            self.end_ms = got.at_ms
        return tuple(x for x in got.kept if x[0] <= self.end_ms)

    def ddmin(self, items: tuple[Timed, ...]) -> tuple[Timed, ...]:
        """Zeller's delta debugging over the actions, then one-at-a-time removal."""
        empty = self.test(())
        if empty is not None:
            return empty
        n = 2
        while len(items) >= 2:
            size = math.ceil(len(items) / n)
            chunks = [items[i : i + size] for i in range(0, len(items), size)]
            reduced = False
            for i in range(len(chunks)):
                for candidate in (
                    chunks[i],
                    tuple(x for j, c in enumerate(chunks) if j != i for x in c),
                ):
                    smaller = self.test(candidate)
                    if smaller is not None and len(smaller) < len(items):
                        items, reduced = smaller, True
                        n = max(2, n - 1) if candidate is not chunks[i] else 2
                        break
                if reduced:
                    break
            if not reduced:
                if n >= len(items):
                    break
                n = min(len(items), 2 * n)
        i = 0
        while i < len(items):
            smaller = self.test(items[:i] + items[i + 1 :])
            if smaller is not None and len(smaller) < len(items):
                items = smaller
            else:
                i += 1
        return items


def shrink(schedule: Schedule, failure: Failure) -> tuple[Schedule, int]:
    """The fewest actions (at their original instants) that still show the failure."""
    shrinker = _Shrinker(schedule, failure)
    first = shrinker.test(schedule.timed)
    if first is None:  # pragma: no cover - the simulation is deterministic
        return schedule, shrinker.replays
    items = shrinker.ddmin(first)
    # Trim the end once more, now that the failure may show earlier.
    final = shrinker.test(items) or items
    return Schedule(schedule.settings, final, shrinker.end_ms), shrinker.replays


# -- reproducer files ------------------------------------------------------------------------


def scenario_text(schedule: Schedule, failure: Failure, *, run: int, seed: int, faults: int) -> str:
    """The schedule as a scenario file whose last step expects the failure."""
    if failure.violation is not None:
        expect = Expectation(subject=Subject.VIOLATION, value=failure.violation)
        what = f"the {failure.violation} violation"
    else:
        expect = Expectation(
            subject=Subject.TASK,
            value=failure.task or "",
            params=(("status", failure.status or ""),),
        )
        what = (
            f"task {failure.task} still {failure.status} "
            f"{format_duration(liveness_bound_ms(schedule.settings))} after the last fault"
        )
    actions = schedule.actions()
    steps = [Step(action=a) for a in actions]
    if steps:
        last = steps[-1]
        steps[-1] = Step(action=last.action, expects=(expect,))
    else:
        steps = [Step(say="", expects=(expect,))]
    mode = schedule.settings.mode.value
    return dump_scenario(
        f"Chaos reproducer: {failure.label} in {mode} mode (seed {seed})",
        schedule.settings,
        steps,
        summary=(
            f"Found by borrowed-keys chaos (run {run}, seed {seed}) and shrunk from {faults} "
            f"to {schedule.faults} actions; the last step shows {what}."
        ),
        comments=(
            f"borrowed-keys chaos reproducer: run {run}, seed {seed}, mode {mode}",
            f"failure: {failure.label}; actions {faults} -> {schedule.faults} after shrinking",
            "replay: borrowed-keys play THIS_FILE",
        ),
    )


def verify_text(text: str, failure: Failure) -> bool:
    """Load a reproducer's text with the scenario loader and play it: does it fail so?"""
    scenario = parse_scenario(text, "<reproducer>")
    sim = Simulation(scenario.settings)
    try:
        for step in scenario.steps:
            if step.action is not None:
                sim.apply(step.action)
        if failure.violation is not None:
            return sim.violations().get(failure.violation, 0) > 0
        return sim.task_statuses().get(failure.task or "") == failure.status
    finally:
        sim.close()


def _file_name(mode: Mode, failure: Failure, seed: int) -> str:
    label = failure.label.replace(":", "-")
    return f"chaos-{mode.value}-{label}-seed{seed}.toml"


# -- running many ----------------------------------------------------------------------------

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
    small, replays = shrink(schedule, failure)
    text = scenario_text(small, failure, run=index, seed=seed, faults=schedule.faults)
    ok = verify_text(text, failure)
    path = None
    if out_dir is not None:
        target = Path(out_dir) / _file_name(_PARAMS.mode, failure, seed)
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
        params = ChaosParams(mode=mode, workers=workers, tasks=tasks)
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
