"""Explore every interleaving of a small world, breadth first, on the real engine (the
`explore` command's engine, and the app's "Explore this mode…"; the command's options and
output are core/tools/explore_cli.py). It sits with the scenarios, below both the tools
and the app, since what it hands back is scenarios.

The world is W manual workers and T ledger tasks of S steps, run by the real simulation:
the real `LeaseStore` and its statements on SQLite, the real safety checker, on the virtual
clock. At each state the search tries every choice there is (see `choices`): each call a
worker can make with the lease it remembers, each fault, approve / reject of a waiting task,
and the passing of time to each instant where something can change. Each state reached is
reduced to a canonical form (the store's rows, each worker's memory and faults, the
checker's memory, every instant taken relative to now, interchangeable workers folded
together) and visited once.

Every transition is judged by the checker's rules and by the seed's own (`SeedRule`). The
first trace found to each broken rule is a shortest one (breadth first), and is written as
a scenario file that `borrowed-keys play` plays and the app opens. The search goes on past
a broken rule, so one rule broken early does not hide another that needs more choices.

A state is restored by SQLite's own copy of the database (`Simulation.save` / `restore`)
or, as the slower alternative kept for measurement, by replaying its trace from the root.
"""

import enum
import multiprocessing
import resource
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.engine.config import LeaseConfig, Mode
from core.engine.records import EventRow, TaskRow
from core.engine.vocabulary import EventKind, TaskStatus
from core.scenarios.explore_state import canonical, read
from core.scenarios.glossary import Word
from core.sim.simulation import SavedRun, Simulation
from core.sim.spec import (
    Action,
    Advance,
    Approve,
    Checkpoint,
    Claim,
    Complete,
    Effect,
    Fail,
    Heartbeat,
    Kill,
    Park,
    Reject,
    Restart,
    Resume,
    SimSettings,
    Skew,
    Stall,
    TaskSpec,
    WorkerSpec,
    Write,
)

# The explored world's workers take the story's names while there are enough of them.
WORKER_NAMES = ("acheng", "linzhou", "elder")
TTL_MS = 30_000
HEARTBEAT_MS = 10_000
POLL_MS = 5_000
# Each claim is an attempt; a third claim of the same task dead-letters it, so the world
# reaches `dead` within a few choices.
MAX_ATTEMPTS = 2
# Every step of an explored task ends with one call to an outside service under the step's
# idempotency key (the seed's fifth part), so each mode's effects are explored.
EFFECT_NAME = "notify"
DEFAULT_DEPTH = 6  # deep enough for every mode's shortest trace in the default world (5)


class SeedRule(enum.StrEnum):
    """The seed's own rules, judged on every transition beside the checker's."""

    # "系统真正关心的是：谁在这一刻还持有未过期的执行资格。" One holder of an unexpired
    # lease at a time: a claim while the previous lease is still live breaks it.
    TWO_LIVE_LEASES = "two_live_leases"
    # "谁写入总册，除了要拿出当前有效的租牌，还要在每一页角落压上自己的围栏签编号" and
    # "存储层或状态机只接受当前最大的 token。" A page only from the current, live lease
    # carrying the task's newest fence token.
    PAGE_WITHOUT_LIVE_LEASE = "page_without_live_lease"
    # "若 worker 成功完成，ack 删除任务；" and "审批信号到来后重新 claim；" A task done,
    # dead or waiting for a human is never lent out again by a claim.
    RECLAIMED_AFTER_END = "reclaimed_after_end"
    # "fence_token       只增不减的围栏令牌" and "每次 claim / re-claim 任务时生成更大的
    # token；" The fence token never goes back, and each claim issues a larger one.
    FENCE_NOT_NEWER = "fence_not_newer"


RULE_WORDS: dict[str, Word] = {
    SeedRule.TWO_LIVE_LEASES: ("two live leases", "同时有两份未过期的租约"),
    SeedRule.PAGE_WITHOUT_LIVE_LEASE: (
        "a page from a lease that is not the current live one",
        "不是当前有效租约写下的一页",
    ),
    SeedRule.RECLAIMED_AFTER_END: (
        "a finished task lent out again",
        "已结束的任务又被借出",
    ),
    SeedRule.FENCE_NOT_NEWER: (
        "a claim without a newer fence token",
        "领取时没有拿到更大的围栏令牌",
    ),
}

# Not a rule: the engine raised where it should have answered (a refusal is an answer).
ENGINE_ERROR = "engine_error"

_ENDED = (TaskStatus.DONE, TaskStatus.DEAD, TaskStatus.WAITING)


class Restore(enum.StrEnum):
    """How the search goes back to a state it has seen."""

    SNAPSHOT = "snapshot"  # SQLite's serialize / deserialize, plus the run's memory
    REPLAY = "replay"  # a fresh run, replaying the trace from the root


@dataclass(frozen=True, slots=True)
class ExploreParams:
    """What one search explores, and how far."""

    mode: Mode = Mode.CORRECT
    workers: int = 2
    tasks: int = 1
    steps: int = 2
    depth: int = DEFAULT_DEPTH
    ttl_ms: int = TTL_MS
    heartbeat_ms: int = HEARTBEAT_MS
    restore: Restore = Restore.SNAPSHOT
    max_states: int | None = None  # stop (not exhausted) once this many are found
    # stop (not exhausted) at the end of the level that passes this time (benchmarks only:
    # it makes the result depend on the machine)
    max_seconds: float | None = None

    def settings(self) -> SimSettings:
        names = [*WORKER_NAMES, *(f"w{i + 1}" for i in range(len(WORKER_NAMES), self.workers))]
        config = LeaseConfig(
            ttl_ms=self.ttl_ms, heartbeat_every_ms=self.heartbeat_ms, poll_every_ms=POLL_MS
        ).validated()
        return SimSettings(
            mode=self.mode,
            seed=0,
            config=config,
            workers=tuple(WorkerSpec(id=n, autopilot=False) for n in names[: self.workers]),
            tasks=tuple(
                TaskSpec(
                    id=f"t{j + 1}",
                    kind="ledger",
                    steps=self.steps,
                    step_time_ms=HEARTBEAT_MS,
                    max_attempts=MAX_ATTEMPTS,
                )
                for j in range(self.tasks)
            ),
        )


# -- one state: its choices, its canonical form, the rules on a transition -----------------


def _known_step(sim: Simulation, worker_id: str) -> int:
    """The last step of its task the worker knows done (0: none)."""
    work = sim.workers[worker_id].work
    return max(work.states) if work is not None and work.states else 0


def _page(sim: Simulation, worker_id: str, step: int) -> str:
    """The page a worker writes as `step`: what the task's kind makes of what it knows."""
    work = sim.workers[worker_id].work
    assert work is not None
    return work.kind.run_step(work.task_id, step, work.steps, work.state_at(step - 1)).page


def time_choices(sim: Simulation, rows: Sequence[TaskRow]) -> list[int]:
    """Every later instant at which a guard, the keeper or a rule can change its verdict.

    Each guard compares now with an instant the store or the checker keeps: a claim takes
    a lease once `lease_expires_at < now` (or the worker's skewed clock), a heartbeat or a
    page needs `lease_expires_at >= now`, the checker calls a lease live while `now <=
    expires_at` and a task stuck once `now > last heartbeat + 3 x ttl`. Such a verdict
    flips only between an instant x and x + 1, so the search offers x + 1 for every x
    kept (the expiry, the skewed expiry, the stuck mark), x itself too when there are
    several tasks, and the instants the keeper and the checker's look are due; any other
    instant gives the same verdicts as one of these.
    """
    now = sim.now_ms
    several = len(rows) > 1
    skews = sorted({w.faults.skew_ms for w in sim.workers.values() if w.faults.skew_ms > 0})
    at: set[int] = set()
    for r in rows:
        if r.lease_expires_at is not None:
            e = r.lease_expires_at
            # With one task every instant the world keeps moves with its last claim or
            # renewal, so acting at the expiry is acting at any earlier instant; with
            # several, the last live instant of one lease orders it against another.
            at.update((e, e + 1) if several else (e + 1,))
            for s in skews:  # where a worker ahead of the store thinks the lease ran out
                at.update((e - s, e - s + 1) if several else (e - s + 1,))
    stuck = sim.checker.next_stuck_check()
    if stuck is not None:
        at.update((stuck - 1, stuck) if several else (stuck,))
    due = sim.next_look_ms
    if due is not None:
        at.add(due)
    return sorted(t - now for t in at if t > now)


def choices(sim: Simulation, rows: Sequence[TaskRow]) -> list[Action]:
    """Every choice at this state, in a fixed order: each worker's calls and faults, the
    human's verdicts, then time.

    Every call is a free choice here, so a fault whose only effect is that calls stop (a
    frozen heartbeat, a partition) adds no history that a worker choosing silence has not
    already: those are left out, as are calls by a worker that cannot make them (dead or
    stalled), which only add a `call_dropped` line. A stall is kept, since the checker
    counts a stalled holder as down, and a kill and a restart wipe the worker's memory;
    both are offered to a worker that remembers a lease (one that holds nothing loses
    nothing by them, and choosing silence already covers its absence). A restart is
    offered to a dead worker (restarting a live one is a kill and a restart).
    """
    out: list[Action] = []
    task_ids = [r.task_id for r in rows] if len(rows) > 1 else []
    for wid in sorted(sim.workers):
        w = sim.workers[wid]
        f = w.faults
        if f.dead:
            out.append(Restart(wid))
            continue
        lease = w.lease
        if not f.stalled:
            out.append(Claim(wid))
            out.extend(Claim(wid, task=t) for t in task_ids)
            if lease is not None:
                out.append(Heartbeat(wid))
                done = _known_step(sim, wid)
                work = w.work
                steps = work.steps if work is not None else 0
                if done < steps:
                    key = f"{lease.task_id}/{done + 1}"
                    out.append(Write(wid, key=key, value=_page(sim, wid, done + 1)))
                if done >= 1:
                    out.append(Checkpoint(wid, step=done))
                    out.append(Effect(wid, key=f"{lease.task_id}/{done}/{EFFECT_NAME}"))
                out += [Complete(wid), Fail(wid, retry=True), Fail(wid, retry=False), Park(wid)]
                out.append(Stall(wid))
        else:
            out.append(Resume(wid))
        if lease is not None:
            out.append(Kill(wid))
        if sim.mode is Mode.CLIENT_CLOCK and f.skew_ms == 0:
            # Mistake five reads the worker's clock: half a lease ahead of the store's.
            out.append(Skew(wid, by_ms=sim.config.ttl_ms // 2))
    for r in rows:
        if r.status == TaskStatus.WAITING:
            out += [Approve(r.task_id), Reject(r.task_id)]
    out.extend(Advance(by) for by in time_choices(sim, rows))
    return out


def judge(
    before: Sequence[TaskRow], events: Sequence[EventRow], after: Sequence[TaskRow]
) -> list[str]:
    """The seed's rules a transition broke (its events, between two readings of the rows)."""
    broken: list[str] = []
    was = {r.task_id: r for r in before}
    for ev in events:
        row = was.get(ev.task_id or "")
        if row is None:
            continue
        live = row.status == TaskStatus.RUNNING and (
            row.lease_expires_at is None or row.lease_expires_at >= ev.at
        )
        if ev.event == EventKind.CLAIMED:
            if row.status in _ENDED:
                broken.append(SeedRule.RECLAIMED_AFTER_END)
            elif live:
                broken.append(SeedRule.TWO_LIVE_LEASES)
            if (ev.fence_token or 0) <= row.fence_token:
                broken.append(SeedRule.FENCE_NOT_NEWER)
        elif ev.event == EventKind.WRITE_ACCEPTED:
            current = (
                live and row.lease_token == ev.lease_token and row.fence_token == ev.fence_token
            )
            if not current:
                broken.append(SeedRule.PAGE_WITHOUT_LIVE_LEASE)
    now = {r.task_id: r for r in after}
    for task, row in was.items():
        later = now.get(task)
        if later is not None and later.fence_token < row.fence_token:
            broken.append(SeedRule.FENCE_NOT_NEWER)
    return list(dict.fromkeys(broken))


def broken_rules(
    sim: Simulation,
    found_before: int,
    before: Sequence[TaskRow],
    events: Sequence[EventRow],
    after: Sequence[TaskRow],
) -> list[str]:
    """Every rule a transition broke: the checker's (what it found since it had found
    `found_before`), then the seed's."""
    checker = [str(v.name) for v in sim.checker.found[found_before:]]
    return list(dict.fromkeys([*checker, *judge(before, events, after)]))


# -- moving one simulation from state to state ----------------------------------------------

# A state to go back to: a saved run with its database compressed (a small world's pages
# are mostly empty, so this keeps a frontier of many thousands in memory), or a trace.
Handle = SavedRun | tuple[Action, ...]


def _pack(saved: SavedRun) -> SavedRun:
    return replace(saved, database=zlib.compress(saved.database, 1))


class Branches:
    """One simulation of the world, moved to any state the search has seen."""

    def __init__(self, params: ExploreParams) -> None:
        self.params = params
        self.settings = params.settings()
        self.events: list[EventRow] = []
        self.sim = self._fresh()

    def _fresh(self) -> Simulation:
        sim = Simulation(self.settings)
        sim.store.add_listener(self.events.append)
        return sim

    def root(self) -> Handle:
        if self.params.restore is Restore.SNAPSHOT:
            return _pack(self.sim.save())
        return ()

    def here(self, path: tuple[Action, ...], action: Action) -> Handle:
        if self.params.restore is Restore.SNAPSHOT:
            return _pack(self.sim.save())
        return (*path, action)

    def unpack(self, handle: Handle) -> Handle:
        """The handle as `goto` takes it fastest (a saved run decompressed once)."""
        if isinstance(handle, SavedRun):
            return replace(handle, database=zlib.decompress(handle.database))
        return handle

    def goto(self, handle: Handle) -> None:
        """Move to the state `handle` names (a saved run from `unpack`, or a trace)."""
        if isinstance(handle, SavedRun):
            self.sim.restore(handle)
            return
        self.sim.close()
        self.sim = self._fresh()
        for action in handle:
            self.sim.apply(action)

    def close(self) -> None:
        self.sim.close()


@dataclass(frozen=True, slots=True)
class Child:
    """One transition out of a state: the choice, where it led, and what it broke."""

    action: Action
    key: bytes
    handle: Handle | None  # None: the state was seen before (no need to keep it)
    broken: tuple[str, ...]
    crash: str | None = None  # what the engine raised, if it did


def expand(
    branches: Branches, handle: Handle, seen: set[bytes] | frozenset[bytes] = frozenset()
) -> list[Child]:
    """Try every choice at the state `handle` names."""
    handle = branches.unpack(handle)
    branches.goto(handle)
    sim = branches.sim
    before = read(sim)
    path = handle if isinstance(handle, tuple) else ()
    out: list[Child] = []
    for i, action in enumerate(choices(sim, before.rows)):
        if i:
            branches.goto(handle)
            sim = branches.sim
        branches.events.clear()
        found = len(sim.checker.found)
        try:
            sim.apply(action)
        except Exception as crash:  # the engine failing is what to report
            # Not a verdict but a crash: the store raised instead of refusing. The state
            # after it is not one to trust, so the branch ends here.
            crashed = f"{ENGINE_ERROR}: {type(crash).__name__}: {crash}"
            out.append(Child(action, b"", None, (ENGINE_ERROR,), crashed))
            branches.goto(handle)
            sim = branches.sim
            continue
        after = read(sim, before, branches.events)
        broken = tuple(broken_rules(sim, found, before.rows, branches.events, after.rows))
        key = canonical(sim, after)
        kept = None if key in seen else branches.here(path, action)
        out.append(Child(action, key, kept, broken))
    return out


# -- the search ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Counterexample:
    """The shortest trace found to one broken rule."""

    rule: str
    actions: tuple[Action, ...]
    states_before: int  # distinct states found before it
    elapsed_s: float
    path: str | None = None
    verified: bool | None = None  # the written file played and its expectations held
    detail: str = ""

    @property
    def length(self) -> int:
        return len(self.actions)


@dataclass(frozen=True, slots=True)
class Level:
    depth: int
    states: int  # distinct states found so far
    transitions: int
    elapsed_s: float


@dataclass
class ExploreReport:
    params: ExploreParams
    states: int = 0
    transitions: int = 0
    depth: int = 0  # the deepest level with a new state
    exhausted: bool = False
    counterexamples: list[Counterexample] = field(default_factory=list)
    levels: list[Level] = field(default_factory=list)
    elapsed_s: float = 0.0
    cpu_s: float = 0.0  # processor time, this process's and its finished children's
    jobs: int = 1
    stopped: bool = False  # `stop` said so before the bound: neither exhausted nor bounded

    @property
    def ok(self) -> bool:
        return not self.counterexamples

    @property
    def states_per_cpu_s(self) -> float:
        """Distinct states per second of processor time: per core, whatever else runs."""
        return self.states / self.cpu_s if self.cpu_s > 0 else 0.0

    @property
    def states_per_s(self) -> float:
        return self.states / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def claim(self) -> str:
        """The result in one line."""
        p = self.params
        reach = (
            "every interleaving (exhausted)"
            if self.exhausted
            else f"stopped at depth {self.depth + 1}, not exhausted"
            if self.stopped
            else f"bounded at depth {p.depth}, not exhausted"
        )
        head = f"{self.states} distinct states, {self.transitions} transitions, depth {self.depth}"
        if self.ok:
            return f"{head}: no violation; {reach}"
        found = ", ".join(f"{c.rule} in {c.length}" for c in self.counterexamples)
        return f"{head}: {len(self.counterexamples)} rule(s) broken ({found} steps); {reach}"

    def summary(self) -> dict[str, Any]:
        """Everything that depends only on the inputs (identical for any --jobs)."""
        p = self.params
        return {
            "mode": p.mode.value,
            "workers": p.workers,
            "tasks": p.tasks,
            "steps": p.steps,
            "depth_bound": p.depth,
            "lease_ttl_ms": p.ttl_ms,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "exhausted": self.exhausted,
            "states_per_level": [lv.states for lv in self.levels],
            "counterexamples": [
                {
                    "rule": c.rule,
                    "length": c.length,
                    "states_before": c.states_before,
                    "path": c.path,
                    "verified": c.verified,
                    "detail": c.detail,
                    "actions": [a.name for a in c.actions],
                }
                for c in self.counterexamples
            ],
            "ok": self.ok,
        }


_LEVEL_PARAMS: ExploreParams | None = None
_LEVEL_SEEN: set[bytes] = set()
_LEVEL_BRANCHES: Branches | None = None

# A level smaller than this is expanded in this process: forking would cost more.
PARALLEL_FROM = 64


def _init_level(params: ExploreParams) -> None:
    global _LEVEL_BRANCHES
    _LEVEL_BRANCHES = Branches(params)


def _expand_job(handle: Handle) -> list[Child]:
    assert _LEVEL_BRANCHES is not None
    return expand(_LEVEL_BRANCHES, handle, _LEVEL_SEEN)


def _expand_level(
    params: ExploreParams,
    branches: Branches,
    frontier: Sequence[Handle],
    seen: set[bytes],
    jobs: int,
) -> Iterator[list[Child]]:
    """Each frontier state's children, in frontier order whatever `jobs` is."""
    if jobs <= 1 or len(frontier) < PARALLEL_FROM:
        for handle in frontier:
            yield expand(branches, handle, seen)
        return
    global _LEVEL_SEEN
    _LEVEL_SEEN = seen  # inherited by the forked processes as it is now
    ctx = multiprocessing.get_context("fork")
    chunk = max(1, min(64, len(frontier) // (jobs * 8)))
    try:
        with ctx.Pool(jobs, initializer=_init_level, initargs=(params,)) as pool:
            yield from pool.imap(_expand_job, frontier, chunksize=chunk)
    finally:
        _LEVEL_SEEN = set()


def explore(
    params: ExploreParams,
    *,
    jobs: int = 1,
    on_level: Callable[[Level], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> ExploreReport:
    """Breadth-first search of every state the world reaches within `params.depth` choices.

    `stop` is asked after each state is expanded (a thread's cancel flag, `Event.is_set`):
    once it answers yes the search returns at once with what it has found, `stopped`.
    """
    started = time.perf_counter()
    cpu_started = _cpu_s()
    report = ExploreReport(params=params, jobs=jobs)
    branches = Branches(params)
    try:
        root = branches.root()
        seen = {canonical(branches.sim, read(branches.sim))}
        parent: list[int] = [-1]
        via: list[Action | None] = [None]
        frontier: list[tuple[int, Handle]] = [(0, root)]
        found: dict[str, Counterexample] = {}
        depth = 0
        full = False

        def trace(node: int) -> tuple[Action, ...]:
            out: list[Action] = []
            while node > 0:
                action = via[node]
                assert action is not None
                out.append(action)
                node = parent[node]
            return tuple(reversed(out))

        while frontier and depth < params.depth and not full:
            nodes = [n for n, _ in frontier]
            handles = [h for _, h in frontier]
            following: list[tuple[int, Handle]] = []
            known = len(seen)
            level = _expand_level(params, branches, handles, seen, jobs)
            for node, children in zip(nodes, level, strict=True):
                if stop is not None and stop():
                    report.stopped = True
                    break
                for child in children:
                    report.transitions += 1
                    # A rule is broken by a transition, not by a state: one into a state
                    # already seen can still break one, and is the shortest if it is first.
                    for rule in child.broken:
                        if rule not in found:
                            found[rule] = Counterexample(
                                rule,
                                (*trace(node), child.action),
                                states_before=len(seen),
                                elapsed_s=time.perf_counter() - started,
                                detail=child.crash or "",
                            )
                    if child.crash is not None or child.key in seen or full:
                        continue
                    seen.add(child.key)
                    index = len(parent)
                    parent.append(node)
                    via.append(child.action)
                    assert child.handle is not None
                    following.append((index, child.handle))
                    if params.max_states is not None and len(seen) >= params.max_states:
                        full = True
            if report.stopped:
                break
            depth += 1
            if len(seen) > known:
                report.depth = depth
            if params.max_seconds is not None and following:
                full = full or time.perf_counter() - started > params.max_seconds
            frontier = following
            lv = Level(depth, len(seen), report.transitions, time.perf_counter() - started)
            report.levels.append(lv)
            if on_level is not None:
                on_level(lv)
        report.states = len(seen)
        report.exhausted = not frontier and not full
        report.counterexamples = sorted(found.values(), key=lambda c: (c.length, c.rule))
    finally:
        branches.close()
    report.elapsed_s = time.perf_counter() - started
    report.cpu_s = _cpu_s() - cpu_started
    return report


def _cpu_s() -> float:
    own, children = (resource.getrusage(who) for who in _RUSAGE)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_RUSAGE = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
