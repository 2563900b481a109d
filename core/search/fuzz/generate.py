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

import random
from collections import Counter
from dataclasses import dataclass

from core.engine.config import LeaseConfig, Mode
from core.engine.vocabulary import RESTING_STATUSES, TaskStatus
from core.sim.memory import WorkerFaults
from core.sim.simulation import IN_MEMORY, Simulation
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
    # where every run keeps its store: SQLite in memory, or a PostgreSQL URL (`--db`), each
    # run in a schema of its own
    database: str = IN_MEMORY

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
    sim = Simulation(settings, db_path=params.database)
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
