"""The safety checker: watches the event history as it grows and names every violation.

It is a pure observer over events (plus, for stuck tasks, which workers are alive and
idle), so the same checker can judge a simulated run, a replay, or the events table of
real worker processes.
"""

import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from core.engine.errors import RejectReason
from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.sim.rules import (
    HeldLease,
    ViolationKind,
    claim_verdicts,
    completion_verdict,
    effect_verdict,
    live,
    page_verdict,
    stuck_mark,
)
from core.sim.rules import page_is_judged_by_lease as judged_by_lease
from core.sim.spec import WorkerState

__all__ = ["CheckerMemory", "LeaseMemory", "SafetyChecker", "Violation", "ViolationKind"]


# Events that end a lease normally: the holder let go, nobody lost it.
_RELEASES = frozenset({EventKind.COMPLETED, EventKind.PARKED, EventKind.FAILED})
# Events after which a task is done, given up or waiting for a human (no claim may take
# it), and those after which it is in the queue again.
_ENDS = frozenset(
    {EventKind.COMPLETED, EventKind.DEAD_LETTERED, EventKind.PARKED, EventKind.REJECTED}
)
_REOPENS = frozenset({EventKind.ENQUEUED, EventKind.FAILED, EventKind.APPROVED})


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken safety rule, with where and when."""

    name: ViolationKind
    at: int
    task_id: str | None
    worker_id: str | None
    detail: str


class LeaseMemory(NamedTuple):
    """An unreleased lease as the checker remembers it, instants relative to now."""

    task_id: str
    worker_id: str
    lease_token: int
    fence_token: int
    expires_in: int
    renewed_ago: int  # negative: since the last renewal
    orphaned: bool


class CheckerMemory(NamedTuple):
    """What the checker's later verdicts depend on (see `SafetyChecker.memory`)."""

    newest_fence: tuple[tuple[str, int], ...]
    leases: tuple[LeaseMemory, ...]
    effects: tuple[tuple[str, int], ...]  # key, times applied (2 for more)
    completions: tuple[tuple[str, int], ...]  # task, leases that completed it (2 for more)
    down: tuple[tuple[str, str], ...]  # worker, why
    stuck: tuple[tuple[str, int], ...]  # task, lease token already reported
    pairs: tuple[tuple[str, int, int], ...]  # task, lease tokens already reported
    newest_lease: tuple[tuple[str, int], ...] = ()  # before the fence tag, what is stale


@dataclass
class _LeaseRecord:
    worker_id: str
    lease_token: int
    fence_token: int
    claimed_at: int
    expires_at: int
    last_renew_at: int
    released: bool = False
    orphaned: bool = False  # its holder crashed: no incarnation of it will renew this lease

    def copy(self) -> "_LeaseRecord":
        return _LeaseRecord(
            self.worker_id,
            self.lease_token,
            self.fence_token,
            self.claimed_at,
            self.expires_at,
            self.last_renew_at,
            self.released,
            self.orphaned,
        )

    def held(self) -> HeldLease:
        return HeldLease(self.worker_id, self.lease_token, self.expires_at, self.released)


@dataclass
class SafetyChecker:
    """Incremental checker; feed it every event in order with `observe`."""

    ttl_ms: int
    expiry_enabled: bool = True
    # whether claims issue fence tokens (not before the fence tag, nor without expiry)
    fence_tokens: bool = True
    violations: Counter[str] = field(default_factory=Counter)
    found: list[Violation] = field(default_factory=list)
    wasted_steps: int = 0
    recovery_time_ms: int = 0
    _newest_fence: dict[str, int] = field(default_factory=dict)  # task -> newest issued
    _newest_lease: dict[str, int] = field(default_factory=dict)  # task -> newest issued
    _leases: dict[str, list[_LeaseRecord]] = field(default_factory=dict)
    _effects: Counter[str] = field(default_factory=Counter)
    # each task's completing lease tokens, in the order they came (one for nearly every task:
    # a tuple of one is a fifth of a set's size, and a fleet's checker keeps one a task)
    _completions: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _step_runs: Counter[str] = field(default_factory=Counter)
    # Each page key's last accepted write: the rule it broke, None if its writer held the
    # task's current, live lease with the newest token ("存储层或状态机只接受当前最大的
    # token"). What the books blame, and only that.
    _pages: dict[str, ViolationKind | None] = field(default_factory=dict)
    # Each page key's last accepted writer and fence token, and for a stale page the page
    # it was written over ("若某页已经见过更大的编号，较小编号的写入一律作废": the page the
    # fence would have kept)
    _page_writers: dict[str, tuple[str, int]] = field(default_factory=dict)
    _covered: dict[str, tuple[str, int]] = field(default_factory=dict)
    _down: dict[str, WorkerState] = field(default_factory=dict)  # worker -> DEAD | STALLED
    _stuck_reported: set[tuple[str, int]] = field(default_factory=set)
    _pairs_reported: set[tuple[str, int, int]] = field(default_factory=set)
    _ended: set[str] = field(default_factory=set)  # done, dead or waiting

    def copy(self) -> "SafetyChecker":
        """An independent checker that remembers what this one does (to branch a run)."""
        return SafetyChecker(
            ttl_ms=self.ttl_ms,
            expiry_enabled=self.expiry_enabled,
            fence_tokens=self.fence_tokens,
            violations=Counter(self.violations),
            found=list(self.found),
            wasted_steps=self.wasted_steps,
            recovery_time_ms=self.recovery_time_ms,
            _newest_fence=dict(self._newest_fence),
            _newest_lease=dict(self._newest_lease),
            _leases={task: [r.copy() for r in rs] for task, rs in self._leases.items()},
            _effects=Counter(self._effects),
            _completions=dict(self._completions),
            _step_runs=Counter(self._step_runs),
            _pages=dict(self._pages),
            _page_writers=dict(self._page_writers),
            _covered=dict(self._covered),
            _down=dict(self._down),
            _stuck_reported=set(self._stuck_reported),
            _pairs_reported=set(self._pairs_reported),
            _ended=set(self._ended),
        )

    def memory(self, now_ms: int, horizon_ms: int) -> CheckerMemory:
        """What the checker's later verdicts depend on, with instants relative to `now_ms`
        and any further back than `horizon_ms` taken as equally long ago (no rule looks
        further back than that). Worker ids are left as they are; the caller renames them.

        Released leases are left out: no rule looks at them again. The counts of violations
        and wasted steps are not verdicts to come, and are left out too; so is how often an
        effect was applied or a task completed past the second time, which no rule tells
        from the second. Which tasks have ended is left out too: it is each task's status,
        which the store's rows say (every change of it writes the event the checker reads).
        """

        def rel(at: int) -> int:
            return max(at - now_ms, -horizon_ms)

        leases = tuple(
            LeaseMemory(
                task,
                r.worker_id,
                r.lease_token,
                r.fence_token,
                rel(r.expires_at),
                rel(r.last_renew_at),
                r.orphaned,
            )
            for task, rs in sorted(self._leases.items())
            for r in rs
            if not r.released
        )
        return CheckerMemory(
            newest_fence=tuple(sorted(self._newest_fence.items())),
            leases=leases,
            effects=tuple(sorted((k, min(n, 2)) for k, n in self._effects.items() if n)),
            completions=tuple(
                sorted((t, min(len(tokens), 2)) for t, tokens in self._completions.items())
            ),
            down=tuple(sorted((w, str(why)) for w, why in self._down.items())),
            stuck=tuple(sorted(self._stuck_reported)),
            pairs=tuple(sorted(self._pairs_reported)),
            newest_lease=tuple(sorted(self._newest_lease.items())),
        )

    def _violate(self, name: ViolationKind, ev: EventRow, detail: str) -> Violation:
        v = Violation(name, ev.at, ev.task_id, ev.worker_id, detail)
        self.violations[name] += 1
        self.found.append(v)
        return v

    def _current(self, task: str) -> HeldLease | None:
        history = self._leases.get(task)
        return history[-1].held() if history else None

    def observe(self, ev: EventRow) -> list[Violation]:
        """Take one event; return the violations it reveals."""
        out: list[Violation] = []
        name = ev.event
        task = ev.task_id or ""
        if name == EventKind.WRITE_ACCEPTED:
            key = str(ev.detail.get("key"))
            if judged_by_lease(ev.fence_token, ev.lease_token):
                # The world before the fence tag issues none: a newer lease token is the
                # same sign that someone has claimed the task since.
                token, newest, which = ev.lease_token or 0, self._newest_lease.get(task, 0), "lease"
            else:
                token, newest = ev.fence_token or 0, self._newest_fence.get(task, 0)
                which = "fence"
            verdict = page_verdict(
                token,
                newest,
                ev.lease_token or 0,
                self._current(task),
                ev.at,
                self.expiry_enabled,
            )
            if verdict is ViolationKind.STALE_WRITE_ACCEPTED:
                detail = f"{key} accepted {which} {token} while {task}'s newest is {newest}"
                out.append(self._violate(verdict, ev, detail))
            elif verdict is not None:
                detail = f"{key} accepted under lease {ev.lease_token}, not {task}'s live one"
                out.append(self._violate(verdict, ev, detail))
            self._pages[key] = verdict
            before = self._page_writers.get(key)
            # a few workers write every page: one string for each, not one a page
            mine = (sys.intern(ev.worker_id) if ev.worker_id else "", ev.fence_token or 0)
            if verdict is not None and before is not None and before != mine:
                self._covered[key] = before
            else:
                self._covered.pop(key, None)
            self._page_writers[key] = mine
            self._count_step_run(key)
        elif name == EventKind.WRITE_REJECTED and ev.reason != RejectReason.PARTITIONED:
            # The step was worked and its page refused: whoever does it next does it again.
            self._count_step_run(str(ev.detail.get("key")))
        elif name == EventKind.CLAIMED:
            out.extend(self._on_claim(ev))
        elif name in (EventKind.RENEWED, EventKind.HEARTBEAT_NOTED):
            for lease in self._leases.get(task, []):
                if lease.lease_token == ev.lease_token:
                    lease.expires_at = int(ev.detail.get("expires_at", lease.expires_at))
                    lease.last_renew_at = ev.at
        elif name in _RELEASES:
            for lease in self._leases.get(task, []):
                if lease.lease_token == ev.lease_token:
                    lease.released = True
            if name == EventKind.COMPLETED:
                tokens = self._completions.get(task, ())
                if (ev.lease_token or 0) not in tokens:
                    tokens = self._completions[task] = (*tokens, ev.lease_token or 0)
                verdict = completion_verdict(len(tokens))
                if verdict is not None:
                    detail = f"{task} completed by leases {sorted(tokens)}"
                    out.append(self._violate(verdict, ev, detail))
        elif name == EventKind.DEAD_LETTERED:
            for lease in self._leases.get(task, []):
                lease.released = True
        elif name == EventKind.EFFECT_APPLIED:
            key = str(ev.detail.get("key", ev.detail.get("call")))
            self._effects[key] += 1
            verdict = effect_verdict(self._effects[key])
            if verdict is not None:
                detail = f"{key} applied {self._effects[key]} times"
                out.append(self._violate(verdict, ev, detail))
        if name in _ENDS:
            self._ended.add(task)
        elif name in _REOPENS:
            self._ended.discard(task)
        if name in (EventKind.KILLED, EventKind.RESTARTED) and ev.worker_id:
            # A crash loses the worker's memory: even after a restart under the same id,
            # nobody will renew the leases it held, so they stay orphaned. A restart of a
            # worker that was not killed first is a crash too. Either way the worker is no
            # longer stalled: a fresh incarnation under that id starts out alive.
            for history in self._leases.values():
                if history and history[-1].worker_id == ev.worker_id:
                    history[-1].orphaned = True
            self._down.pop(ev.worker_id, None)
        elif name == EventKind.STALLED and ev.worker_id:
            self._down[ev.worker_id] = WorkerState.STALLED
        elif name == EventKind.RESUMED and ev.worker_id:
            self._down.pop(ev.worker_id, None)
        return out

    def stale_covered(self) -> dict[str, tuple[str, int]]:
        """For each stale page that was written over an accepted page of another writer or
        token, that page's writer and fence token."""
        return {key: self._covered[key] for key in self.stale_pages() if key in self._covered}

    def stale_pages(self) -> dict[str, ViolationKind]:
        """The page keys whose last accepted write came from a lease that was not the task's
        current, live one with the newest token, by the rule that write broke."""
        return {key: rule for key, rule in self._pages.items() if rule is not None}

    def pages_redone(self) -> frozenset[str]:
        """The page keys whose step was worked more than once (a page refused counts: the
        next holder does the step again)."""
        return frozenset(key for key, runs in self._step_runs.items() if runs > 1)

    def _count_step_run(self, key: str) -> None:
        self._step_runs[key] += 1
        if self._step_runs[key] > 1:
            self.wasted_steps += 1

    def _on_claim(self, ev: EventRow) -> list[Violation]:
        out: list[Violation] = []
        task = ev.task_id or ""
        worker = sys.intern(ev.worker_id) if ev.worker_id else ""  # one string a worker
        newest_fence = self._newest_fence.get(task, 0)
        self._newest_fence[task] = max(newest_fence, ev.fence_token or 0)
        self._newest_lease[task] = max(self._newest_lease.get(task, 0), ev.lease_token or 0)
        history = self._leases.setdefault(task, [])
        previous = history[-1] if history else None
        fence = ev.fence_token or 0
        verdicts = claim_verdicts(
            previous.held() if previous is not None else None,
            task in self._ended,
            fence,
            newest_fence,
            ev.at,
            expiry=self.expiry_enabled,
            fence_tokens=self.fence_tokens,
        )
        self._ended.discard(task)
        for verdict in verdicts:
            if verdict is ViolationKind.DOUBLE_OWNER and previous is not None:
                pair = (task, previous.lease_token, ev.lease_token or 0)
                if pair in self._pairs_reported:
                    continue
                self._pairs_reported.add(pair)
                detail = (
                    f"{worker} claimed {task} while {previous.worker_id}'s lease "
                    f"{previous.lease_token} was live until {previous.expires_at}"
                )
            elif verdict is ViolationKind.RECLAIMED_AFTER_END:
                detail = f"{worker} claimed {task} after it had ended"
            else:
                detail = f"{worker} claimed {task} with fence {fence}, not above {newest_fence}"
            out.append(self._violate(verdict, ev, detail))
        if history:
            previous = history[-1]
            if not previous.released:
                # The previous holder lost the task: recovery runs from its last sign of life.
                # A claim over a lease still live ended no wait (the task was never out of
                # reach: a second owner was let in, the harm judged above).
                if not live(previous.held(), ev.at, self.expiry_enabled):
                    self.recovery_time_ms = max(
                        self.recovery_time_ms, ev.at - previous.last_renew_at
                    )
                previous.released = True
        history.append(
            _LeaseRecord(
                worker_id=worker,
                lease_token=ev.lease_token or 0,
                fence_token=ev.fence_token or 0,
                claimed_at=ev.at,
                expires_at=int(ev.detail.get("expires_at", ev.at + self.ttl_ms)),
                last_renew_at=ev.at,
            )
        )
        return out

    def out_of_reach_now(self, now: int) -> tuple[int, int | None, str | None]:
        """How long a task has been out of reach so far, while it still is (the longest
        of any task), the instant its lease lets it go (None: nothing will, or it is
        claimable now and waits for a claim), and which task it is. "租期太长会把恢复时间
        也一起拉长。一个已经死掉的 worker 会霸占任务很久": `recovery_time_ms` counts once
        the next claim comes; this counts before it, from the holder's last sign of life,
        while the holder is down (dead or stalled) or its lease has run out with nobody
        after it."""
        best: tuple[int, int | None, str | None] = (0, None, None)
        for task, history in self._leases.items():
            if not history:
                continue
            lease = history[-1]
            if lease.released:
                continue
            expired = self.expiry_enabled and now > lease.expires_at
            if not expired and self._holder_down(lease) is None:
                continue
            until = None if expired or not self.expiry_enabled else lease.expires_at
            so_far = now - lease.last_renew_at
            if so_far > best[0]:
                best = (so_far, until, task)
        return best

    def _out_of_reach(self, lease: _LeaseRecord, at: int) -> bool:
        """Whether nobody else may claim the task at `at`: its lease cannot expire or has
        not expired yet. Past its expiry a task is claimable, so not stuck, whoever looks."""
        return not self.expiry_enabled or at <= lease.expires_at

    def check_stuck(self, now: int, idle_workers: Mapping[str, bool]) -> list[Violation]:
        """Tasks held out of reach by a dead or stalled worker for over 3 x ttl since its
        last heartbeat, while another worker sat idle looking for work.

        `idle_workers` maps each alive worker to whether it is idle right now.
        """
        out: list[Violation] = []
        for task, history in self._leases.items():
            if not history:
                continue
            lease = history[-1]
            down = self._holder_down(lease)
            if lease.released or down is None:
                continue
            if now <= stuck_mark(lease.last_renew_at, self.ttl_ms):
                continue
            if not self._out_of_reach(lease, now):
                continue
            takers = (w for w, idle in idle_workers.items() if idle)
            if not any(w != lease.worker_id or lease.orphaned for w in takers):
                continue
            key = (task, lease.lease_token)
            if key in self._stuck_reported:
                continue
            self._stuck_reported.add(key)
            ev = EventRow(seq=0, at=now, event="stuck", task_id=task, worker_id=lease.worker_id)
            out.append(
                self._violate(
                    ViolationKind.STUCK_TASK,
                    ev,
                    f"{task} held by {down} {lease.worker_id} since "
                    f"its last heartbeat at {lease.last_renew_at} ms",
                )
            )
        return out

    def holder_down(self) -> bool:
        """Whether some task's current lease is held by a dead or stalled worker: otherwise
        no task is stuck (`check_stuck` finds none) and no look is due (`next_stuck_check`
        is None)."""
        for history in self._leases.values():
            if history:
                lease = history[-1]
                if not lease.released and self._holder_down(lease) is not None:
                    return True
        return False

    def next_stuck_check(self) -> int | None:
        """The next instant a stuck-task verdict could change (3 x ttl after a down holder's
        last heartbeat, if its task is still out of reach then)."""
        times = []
        for task, history in self._leases.items():
            if not history:
                continue
            lease = history[-1]
            at = stuck_mark(lease.last_renew_at, self.ttl_ms) + 1
            if (
                not lease.released
                and self._holder_down(lease) is not None
                and (task, lease.lease_token) not in self._stuck_reported
                and self._out_of_reach(lease, at)
            ):
                times.append(at)
        return min(times) if times else None

    def _holder_down(self, lease: _LeaseRecord) -> WorkerState | None:
        """DEAD if the holder crashed since claiming, STALLED if it is paused, else None."""
        return WorkerState.DEAD if lease.orphaned else self._down.get(lease.worker_id)
