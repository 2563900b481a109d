"""The explored world: what `explore` runs (W manual workers, T ledger tasks of S steps),
every choice at a state, and what a transition broke, as the checker judges it (see
core/search/explore/bfs.py for the search)."""

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from core.engine.config import LeaseConfig, Mode
from core.engine.records import TaskRow
from core.engine.vocabulary import TaskStatus
from core.search.explore import DEFAULT_DEPTH
from core.sim.simulation import Simulation
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

WORKER_NAMES = ("acheng", "linzhou", "elder")
TTL_MS = 30_000
HEARTBEAT_MS = 10_000
POLL_MS = 5_000
# Each claim is an attempt; a third claim of the same task dead-letters it, so the world
# reaches `dead` within a few choices.
MAX_ATTEMPTS = 2
# Every step of an explored task makes one call to an outside service under the step's
# idempotency key (the seed's fifth part), offered while the step is worked, before its
# page, and after it, so each mode's effects are explored.
EFFECT_NAME = "notify"


# Not a rule: the engine raised where it should have answered (a refusal is an answer).
ENGINE_ERROR = "engine_error"


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
    # answer a worker's call from an earlier refusal of the same call in a state alike in
    # all that call reads (core/search/explore/branch.py, `Branches.refused`); off, every
    # call goes to the store (the results are the same, which the tests check)
    memo: bool = True
    # partial-order reduction: a call is not made again in an order that only swaps it
    # with an independent one (sleep sets, core/search/explore/bfs.py); off, every
    # choice is tried at every state (the same rules broken, at the same shortest lengths)
    reduction: bool = True
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


def offers_faults(sim: Simulation) -> bool:
    """Whether stalls, kills and restarts are choices: only where the checker can call a
    task stuck, that is where a lease never ends (see `choices`)."""
    return not sim.checker.expiry_enabled


def choices(sim: Simulation, rows: Sequence[TaskRow]) -> list[Action]:
    """Every choice at this state, in a fixed order: each worker's calls and faults, the
    human's verdicts, then time.

    Every call is a free choice here, so a fault whose only effect is that calls stop (a
    frozen heartbeat, a partition) adds no history that a worker choosing silence has not
    already: those are left out, as are calls by a worker that cannot make them (dead or
    stalled), which only add a `call_dropped` line.

    A stall, a kill and a restart are the same kind of fault wherever a lease has an end
    (every mode but no_expiry), and are left out there too. A stalled worker is a silent
    one to the store. A killed worker forgets its lease, but a claim is the same call
    whatever the worker remembers (a claim takes a fresh memory of the task, read from its
    checkpoint, as a restarted worker's does), so a worker that keeps its old lease and
    never uses it again has the killed one's history. What a stall or a kill adds beyond
    silence is what the checker counts as down, which only its stuck-task rule reads; that
    rule needs a task out of reach over 3 x ttl after its holder's last renewal, and a
    lease that ends is out of reach for one ttl. In no_expiry a stall and a kill are
    offered to a worker that remembers a lease (one that holds nothing loses nothing by
    them), and a restart to a dead worker (restarting a live one is a kill and a restart).
    """
    out: list[Action] = []
    task_ids = [r.task_id for r in rows] if len(rows) > 1 else []
    faults = offers_faults(sim)
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
                    # the step being worked calls out before its page is written
                    key = f"{lease.task_id}/{done + 1}"
                    out.append(Effect(wid, key=f"{key}/{EFFECT_NAME}"))
                    out.append(Write(wid, key=key, value=_page(sim, wid, done + 1)))
                if done >= 1:
                    out.append(Checkpoint(wid, step=done))
                    out.append(Effect(wid, key=f"{lease.task_id}/{done}/{EFFECT_NAME}"))
                out += [Complete(wid), Fail(wid, retry=True), Fail(wid, retry=False), Park(wid)]
                if faults:
                    out.append(Stall(wid))
        else:
            out.append(Resume(wid))
        if lease is not None and faults:
            out.append(Kill(wid))
        if sim.mode is Mode.CLIENT_CLOCK and f.skew_ms == 0:
            # Mistake five reads the worker's clock: one ahead of the store's by more than
            # a lease. Only a claim reads it, and judges a lease over once its own clock
            # passes the end: a worker this far ahead does so at once, and at any later
            # instant a smaller skew would, so no shorter trace needs a smaller one.
            out.append(Skew(wid, by_ms=sim.config.ttl_ms * 3 // 2))
    for r in rows:
        if r.status == TaskStatus.WAITING:
            out += [Approve(r.task_id), Reject(r.task_id)]
    out.extend(Advance(by) for by in time_choices(sim, rows))
    return out


# -- independence: which two choices commute ----------------------------------------------

# A call's footprint: its caller, the task it touches, and whether it puts that task back
# in the queue. None: the choice may read or change anything.
Footprint = tuple[str, str, bool] | None

_LEASE_CALLS = (Heartbeat, Checkpoint, Write, Effect, Complete, Fail, Park)


def footprint(sim: Simulation, action: Action) -> Footprint:
    """What `action` reads and changes, taken at this state, as far as independence goes.

    A worker's call reads and changes its caller's memory and one task: the rows, pages,
    checkpoints and effects of the task its lease names (a page's and an effect's key are
    that task's), or of the task a claim names, and the checker's records of that task
    alone (its rules judge a task's events against that task's past). The one counter
    every claim draws its fence token from orders two tasks' tokens, but the canonical
    form ranks each task's tokens apart (core/search/explore/canonical.py), since nothing
    compares two tasks' tokens; the keeper's next look is the earliest of the leases'
    ends, whatever order they were taken in. What is global:

    - time: an advance runs the keeper's sweep over every lease and the checker's looks;
    - a claim of any task: it picks among them all;
    - a fail that queues its task again: the queue's order is part of the state, and two
      tasks queued in two orders are two states;
    - a human's verdict, and every fault (a skew, a stall, a kill, a restart);
    - every choice where the checker can call a task stuck (a lease never ends): its
      look after any choice reads every task and who is idle to take one over.
    """
    if offers_faults(sim):
        return None
    if isinstance(action, Claim):
        return None if action.task is None else (action.worker, action.task, False)
    if isinstance(action, _LEASE_CALLS):
        lease = sim.workers[action.worker].lease
        if lease is None:
            return None
        return (action.worker, lease.task_id, isinstance(action, Fail) and action.retry)
    return None


# A choice in a sleep set, with its footprint where it was put there: nothing it touches
# changes while it sleeps (only choices independent of it are made), so it still holds.
Sleeper = tuple[Action, Footprint]


def claimed(sim: Simulation, action: Claim, before: object) -> Footprint:
    """The footprint of a claim of any task, known once it is made: the task it took.

    A claim of any task takes the first expired lease, else the first queued task. Made
    after a call of another worker on another task, it takes the same one: such a call
    can end that task's lease or take it out of the queue, never put it ahead of the one
    taken (a lease it renews ends later than now; one queued again is a footprint of its
    own, dependent on this one). Not so with a skewed clock, by which a lease just renewed
    can look over: then, and for a claim that took nothing, it stays global."""
    lease = sim.workers[action.worker].lease
    if lease is None or lease == before or offers_faults(sim):
        return None
    if sim.workers[action.worker].faults.skew_ms:
        return None
    return (action.worker, lease.task_id, True)


def independent(a: Footprint, b: Footprint) -> bool:
    """Two choices commute: made in either order from one state, each is offered after the
    other, answers and breaks the same, and they reach one state. True only for calls of
    two workers on two tasks, not both queueing their task again."""
    if a is None or b is None:
        return False
    return a[0] != b[0] and a[1] != b[1] and not (a[2] and b[2])


def broken_rules(sim: Simulation, found_before: int) -> list[str]:
    """Every rule a transition broke: what the checker found since it had found
    `found_before`. The explorer has no rule of its own: the checker behind the safety
    light judges the one set (core/sim/rules.py), so a counterexample found here turns
    the light red when it is played."""
    return list(dict.fromkeys(str(v.name) for v in sim.checker.found[found_before:]))
