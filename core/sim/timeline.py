"""Belief against truth, per worker on one time axis (pure and incremental).

The seed's first lesson is the gap this draws: "库房里最值钱的不是钥匙……是别人能不能相信这把钥匙
现在确实在你手里". Per worker it keeps two kinds of bar:

- the lease as the store holds it: from the claim to its expiry, moved on by each renewal,
  ended by the expiry, a release (done, parked, failed) or a successor's claim;
- the lease as the worker believes it holds it: from the same claim until the worker learns
  otherwise (a call the store refused, giving the lease up at its own renew deadline, a
  release, a kill) or never.

and, on the same row, its heartbeats (delivered, or lost to a freeze or a partition) and its
other calls (accepted, refused with the reason, or accepted though the lease was no longer
the current live one: the harm). `Timeline.feed` takes register lines in order; `view(now)`
gives an immutable picture for one frame, which is all a screen or the exported page reads.
"""

import bisect
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from core.engine.errors import RejectReason
from core.engine.records import EventRow
from core.engine.vocabulary import REFUSED_OPERATION, REJECTIONS, EventKind, Operation


class LeaseEnd(enum.StrEnum):
    """Why the store stopped holding a lease."""

    EXPIRED = "expired"
    COMPLETED = "completed"
    PARKED = "parked"
    FAILED = "failed"
    DEAD_LETTERED = "dead_lettered"
    RECLAIMED = "reclaimed"  # a claim of the same task replaced it
    # A claim of the same task took it while it was still live by the store's clock: two
    # live leases at once (the claim judged expiry by some other clock).
    OVERRIDDEN = "overridden"


class BeliefEnd(enum.StrEnum):
    """How a worker learned (or decided) that it no longer holds a lease."""

    REFUSED = "refused"  # the store refused one of its calls with this lease
    SELF_FENCED = "self_fenced"  # it passed its own renew deadline and let go
    RELEASED = "released"  # it completed, parked or failed the task itself
    KILLED = "killed"  # its memory went with the process
    REPLACED = "replaced"  # it claimed another lease
    FORGOT = "forgot"  # its memory no longer holds it (the simulation says so)


class TickKind(enum.StrEnum):
    """One heartbeat, as the store saw it (or did not)."""

    DELIVERED = "delivered"
    FROZEN = "frozen"  # lost: the heartbeat never left (a frozen heartbeat)
    PARTITIONED = "partitioned"  # lost: it never reached the store


class CallOutcome(enum.StrEnum):
    """What the store did with a holder's call."""

    ACCEPTED = "accepted"
    REFUSED = "refused"
    STALE = "stale"  # accepted, though the lease was not the task's current live one
    LOST = "lost"  # it never reached the store (a partition, a stalled or frozen worker)


@dataclass(frozen=True, slots=True)
class LeaseBar:
    """A lease as the store holds it."""

    task_id: str
    lease_token: int
    fence_token: int
    start: int
    expires_at: int | None  # the latest expiry, moved on by each renewal; None: no expiry
    renew_deadline: int | None  # by when the holder must renew (the latest renewal's)
    renewals: tuple[int, ...]
    end: int | None  # None while the store still holds it
    ended_by: LeaseEnd | None


@dataclass(frozen=True, slots=True)
class BeliefBar:
    """A lease as its worker believes it holds it."""

    task_id: str
    lease_token: int
    fence_token: int
    start: int
    end: int | None  # None: it still believes
    ended_by: BeliefEnd | None
    reason: RejectReason | None = None  # the refusal that told it


@dataclass(frozen=True, slots=True)
class Tick:
    at: int
    kind: TickKind


@dataclass(frozen=True, slots=True)
class Call:
    """A holder's call (not a heartbeat, not a claim), as a mark on its row."""

    at: int
    operation: Operation
    outcome: CallOutcome
    task_id: str
    lease_token: int | None
    fence_token: int | None
    reason: RejectReason | None = None
    key: str | None = None
    current_fence_token: int | None = None  # the task's newest, when it refused a write
    # The newest fence token issued for the task at this instant (what the store compares a
    # write's token against), and whether the store answered an effect from its first call.
    newest_fence_token: int | None = None
    deduplicated: bool = False


@dataclass(frozen=True, slots=True)
class WorkerRow:
    worker_id: str
    leases: tuple[LeaseBar, ...]
    beliefs: tuple[BeliefBar, ...]
    ticks: tuple[Tick, ...]
    calls: tuple[Call, ...]

    def believes_at(self, at: int) -> BeliefBar | None:
        """The lease it believes it holds at `at` (ends exclusive)."""
        for bar in self.beliefs:
            if bar.start <= at and (bar.end is None or at < bar.end):
                return bar
        return None

    def holds_at(self, at: int) -> LeaseBar | None:
        """The lease the store holds for it at `at` (ends exclusive)."""
        for bar in self.leases:
            if bar.start <= at and (bar.end is None or at < bar.end):
                return bar
        return None


@dataclass(frozen=True, slots=True)
class Overlap:
    """Two live leases of one task at once: `newer` was claimed while `older`, by the store's
    own clock, was still live. It lasts until the older lease's expiry or until its holder
    let go of it, whichever came first (`end` None: it lasts still)."""

    task_id: str
    older_worker: str
    older_lease_token: int
    older_live_until: int | None  # the older lease's expiry by the store's clock
    newer_worker: str
    newer_lease_token: int
    start: int
    end: int | None


@dataclass(frozen=True, slots=True)
class FenceLine:
    """The newest fence token issued for a task over time: (from when, token), in order."""

    task_id: str
    steps: tuple[tuple[int, int], ...]

    def newest_at(self, at: int) -> int | None:
        newest = None
        for start, token in self.steps:
            if start > at:
                break
            newest = token
        return newest


@dataclass(frozen=True, slots=True)
class TimelineView:
    """One frame's picture: every worker's row, in order of first appearance, at `now_ms`."""

    now_ms: int
    rows: tuple[WorkerRow, ...]
    heartbeat_ms: int
    ttl_ms: int
    overlaps: tuple[Overlap, ...] = ()
    fences: tuple[FenceLine, ...] = ()
    # Where the axis starts: 0 (the run's first instant), or in a long live run the first
    # instant its timeline still keeps (`Timeline.forget_before`).
    first_ms: int = 0

    def row(self, worker_id: str) -> WorkerRow | None:
        return next((r for r in self.rows if r.worker_id == worker_id), None)


# -- building -------------------------------------------------------------------------------

_RELEASES: dict[str, LeaseEnd] = {
    EventKind.COMPLETED: LeaseEnd.COMPLETED,
    EventKind.PARKED: LeaseEnd.PARKED,
    EventKind.FAILED: LeaseEnd.FAILED,
    EventKind.DEAD_LETTERED: LeaseEnd.DEAD_LETTERED,
}
# Accepted calls, and the operation each one is.
_ACCEPTED: dict[str, Operation] = {
    EventKind.WRITE_ACCEPTED: Operation.WRITE,
    EventKind.CHECKPOINT_SAVED: Operation.CHECKPOINT,
    EventKind.EFFECT_APPLIED: Operation.EFFECT,
    EventKind.EFFECT_DEDUPLICATED: Operation.EFFECT,
    EventKind.COMPLETED: Operation.COMPLETE,
    EventKind.PARKED: Operation.PARK,
    EventKind.FAILED: Operation.FAIL,
}
_RENEWALS = frozenset({EventKind.RENEWED, EventKind.HEARTBEAT_NOTED})


@dataclass(slots=True)
class _Lease:
    task_id: str
    lease_token: int
    fence_token: int
    start: int
    expires_at: int | None
    renew_deadline: int | None
    renewals: list[int] = field(default_factory=list)
    end: int | None = None
    ended_by: LeaseEnd | None = None
    worker_id: str = ""

    def frozen(self) -> LeaseBar:
        return LeaseBar(
            self.task_id,
            self.lease_token,
            self.fence_token,
            self.start,
            self.expires_at,
            self.renew_deadline,
            tuple(self.renewals),
            self.end,
            self.ended_by,
        )

    def live_at(self, at: int) -> bool:
        return self.end is None and (self.expires_at is None or at <= self.expires_at)


@dataclass(slots=True)
class _Belief:
    task_id: str
    lease_token: int
    fence_token: int
    start: int
    end: int | None = None
    ended_by: BeliefEnd | None = None
    reason: RejectReason | None = None

    def frozen(self) -> BeliefBar:
        return BeliefBar(
            self.task_id,
            self.lease_token,
            self.fence_token,
            self.start,
            self.end,
            self.ended_by,
            self.reason,
        )

    def is_lease(self, task_id: str | None, lease_token: int | None) -> bool:
        return self.task_id == task_id and self.lease_token == lease_token


@dataclass(slots=True)
class _Row:
    worker_id: str
    leases: list[_Lease] = field(default_factory=list)
    beliefs: list[_Belief] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    # Heartbeats lost to a freeze are never sent, so the register has no line for them:
    # they are the beats that fall due while the freeze lasts, one heartbeat_every after the
    # last delivered one (or the claim). [start, end) of each freeze; end None while it lasts.
    freezes: list[list[int | None]] = field(default_factory=list)

    def open_belief(self) -> _Belief | None:
        if self.beliefs and self.beliefs[-1].end is None:
            return self.beliefs[-1]
        return None

    def end_belief(self, at: int, why: BeliefEnd, reason: RejectReason | None = None) -> None:
        belief = self.open_belief()
        if belief is not None:
            belief.end = max(at, belief.start)
            belief.ended_by = why
            belief.reason = reason

    def freeze_ends(self, at: int) -> None:
        if self.freezes and self.freezes[-1][1] is None:
            self.freezes[-1][1] = at


@dataclass(slots=True)
class Timeline:
    """Feed it register lines in order (`feed`); read one frame with `view(now)`."""

    heartbeat_ms: int = 20_000
    ttl_ms: int = 60_000
    deadline_ms: int = 40_000
    rows: dict[str, _Row] = field(default_factory=dict)
    last_seq: int = 0
    # The lease the store holds for each task now (the open bar on its holder's row).
    _current: dict[str, _Lease] = field(default_factory=dict)
    # Each claim taken over a lease still live: (older, newer, at).
    _overrides: list[tuple[_Lease, _Lease, int]] = field(default_factory=list)
    # The newest fence token issued for each task, as it grew: the store lane's step line.
    _fences: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _view: TimelineView | None = None
    kept_from: int = 0  # what ended before this instant is forgotten (`forget_before`)

    def _row(self, worker_id: str) -> _Row:
        row = self.rows.get(worker_id)
        if row is None:
            row = self.rows[worker_id] = _Row(worker_id)
        return row

    def _end_lease(self, task_id: str, at: int, why: LeaseEnd) -> None:
        lease = self._current.pop(task_id, None)
        if lease is not None:
            lease.end = max(at, lease.start)
            lease.ended_by = why

    def feed(self, events: Iterable[EventRow]) -> bool:
        """Take the register lines after `last_seq`; return whether any changed a row."""
        changed = False
        for ev in events:
            if ev.seq <= self.last_seq:
                continue
            self.last_seq = ev.seq
            changed = self._take(ev) or changed
        if changed:
            self._view = None
        return changed

    def _take(self, ev: EventRow) -> bool:
        name, worker, task = ev.event, ev.worker_id, ev.task_id
        if name == EventKind.WORKER_ADDED and worker is not None:
            self._row(worker)
            return True
        if name == EventKind.CLAIMED and worker is not None and task is not None:
            self._claimed(ev, worker, task)
            return True
        if name == EventKind.LEASE_EXPIRED and task is not None:
            current = self._current.get(task)
            if current is not None and current.lease_token == ev.lease_token:
                expired_at = int(ev.detail.get("expired_at", ev.at))
                self._end_lease(task, expired_at, LeaseEnd.EXPIRED)
                return True
            return False
        if worker is None:
            return False
        row = self._row(worker)
        if name in _RENEWALS and task is not None:
            return self._renewed(ev, row, task)
        if name in _ACCEPTED and task is not None:
            self._accepted(ev, row, task, _ACCEPTED[name])
            return True
        if name in REJECTIONS:
            return self._refused(ev, row)
        if name == EventKind.CALL_DROPPED and task is not None:
            operation = Operation(str(ev.detail.get("operation", Operation.WRITE)))
            if operation is Operation.HEARTBEAT:
                row.ticks.append(Tick(ev.at, TickKind.FROZEN))
            elif operation in _ACCEPTED.values() or operation is Operation.CHECKPOINT:
                row.calls.append(
                    Call(ev.at, operation, CallOutcome.LOST, task, ev.lease_token, ev.fence_token)
                )
            return True
        if name == EventKind.HEARTBEAT_FROZEN:
            row.freezes.append([ev.at, None])
            return True
        if name in (EventKind.RESUMED, EventKind.HEALED):
            if name == EventKind.RESUMED:
                row.freeze_ends(ev.at)
            return True
        if name == EventKind.SELF_FENCED:
            row.end_belief(ev.at, BeliefEnd.SELF_FENCED)
            return True
        if name in (EventKind.KILLED, EventKind.RESTARTED):
            row.end_belief(ev.at, BeliefEnd.KILLED)
            row.freeze_ends(ev.at)
            return True
        return False

    def _claimed(self, ev: EventRow, worker: str, task: str) -> None:
        older = self._current.get(task)
        # The store's own clock is the judge ("由统一的服务端时钟或数据库时钟裁决"): a
        # lease it still counts live, claimed over anyway, is two live leases at once.
        overridden = older is not None and older.live_at(ev.at)
        self._end_lease(task, ev.at, LeaseEnd.OVERRIDDEN if overridden else LeaseEnd.RECLAIMED)
        expires = ev.detail.get("expires_at")
        lease = _Lease(
            task,
            ev.lease_token or 0,
            ev.fence_token or 0,
            ev.at,
            None if expires is None else int(expires),
            None if expires is None else ev.at + self.deadline_ms,
            worker_id=worker,
        )
        if older is not None and overridden:
            self._overrides.append((older, lease, ev.at))
        fences = self._fences.setdefault(task, [])
        if lease.fence_token and (not fences or lease.fence_token > fences[-1][1]):
            fences.append((ev.at, lease.fence_token))
        self._current[task] = lease
        row = self._row(worker)
        row.leases.append(lease)
        row.end_belief(ev.at, BeliefEnd.REPLACED)
        row.beliefs.append(_Belief(task, lease.lease_token, lease.fence_token, ev.at))

    def _renewed(self, ev: EventRow, row: _Row, task: str) -> bool:
        row.ticks.append(Tick(ev.at, TickKind.DELIVERED))
        current = self._current.get(task)
        if current is not None and current.lease_token == ev.lease_token:
            expires = ev.detail.get("expires_at")
            if expires is not None:
                current.expires_at = int(expires)
                current.renew_deadline = ev.at + self.deadline_ms
            current.renewals.append(ev.at)
        return True

    def _accepted(self, ev: EventRow, row: _Row, task: str, operation: Operation) -> None:
        current = self._current.get(task)
        # Accepted with a lease that is not the task's current live one: the two worlds.
        stale = (
            current is None or current.lease_token != ev.lease_token or not current.live_at(ev.at)
        )
        row.calls.append(
            Call(
                ev.at,
                operation,
                CallOutcome.STALE if stale else CallOutcome.ACCEPTED,
                task,
                ev.lease_token,
                ev.fence_token,
                key=_call_key(ev.detail),
                newest_fence_token=self._newest_fence(task),
                deduplicated=ev.event == EventKind.EFFECT_DEDUPLICATED,
            )
        )
        release = _RELEASES.get(ev.event)
        if release is not None:
            if current is not None and current.lease_token == ev.lease_token:
                self._end_lease(task, ev.at, release)
            belief = row.open_belief()
            if belief is not None and belief.is_lease(task, ev.lease_token):
                row.end_belief(ev.at, BeliefEnd.RELEASED)

    def _refused(self, ev: EventRow, row: _Row) -> bool:
        operation = Operation(
            str(ev.detail.get("operation", REFUSED_OPERATION[EventKind(ev.event)]))
        )
        reason = RejectReason(ev.reason) if ev.reason in _REASONS else None
        lost = reason is RejectReason.PARTITIONED
        if operation is Operation.CLAIM:
            return False  # asking for work is not a holder's call
        if operation is Operation.HEARTBEAT and lost:
            row.ticks.append(Tick(ev.at, TickKind.PARTITIONED))
            return True
        task = ev.task_id or ""
        current = ev.detail.get("current_fence_token")
        row.calls.append(
            Call(
                ev.at,
                operation,
                CallOutcome.LOST if lost else CallOutcome.REFUSED,
                task,
                ev.lease_token,
                ev.fence_token,
                reason=reason,
                key=_call_key(ev.detail),
                current_fence_token=None if current is None else int(current),
                newest_fence_token=self._newest_fence(task),
            )
        )
        belief = row.open_belief()
        # A refusal is how a worker learns: the call reached the store and came back no.
        if not lost and belief is not None and belief.is_lease(ev.task_id, ev.lease_token):
            row.end_belief(ev.at, BeliefEnd.REFUSED, reason)
        return True

    def _newest_fence(self, task: str) -> int | None:
        fences = self._fences.get(task)
        return fences[-1][1] if fences else None

    def note(self, ev: EventRow) -> None:
        """A line from outside the register (a supervisor's signal to a real process: a
        kill, a stall, a frozen heartbeat), taken as it comes: it has no place in the
        register's order, so `last_seq` is left alone."""
        if self._take(ev):
            self._view = None

    def let_go(self, at: int, worker_id: str, task_id: str, lease_token: int) -> None:
        """The worker itself says it no longer holds this lease (a real process's own
        memory, read from what it prints): its belief in it, if still open, ends here."""
        row = self.rows.get(worker_id)
        belief = None if row is None else row.open_belief()
        if row is not None and belief is not None and belief.is_lease(task_id, lease_token):
            row.end_belief(at, BeliefEnd.FORGOT)
            self._view = None

    def forget(self, at: int, memory: Mapping[str, tuple[str, int] | None]) -> None:
        """What the simulation knows of each worker's memory now (task and lease token, or
        None): a belief the register never ended but the memory no longer holds ends here."""
        for worker_id, held in memory.items():
            row = self.rows.get(worker_id)
            belief = None if row is None else row.open_belief()
            if row is None or belief is None:
                continue
            if held is None or not belief.is_lease(*held):
                row.end_belief(at, BeliefEnd.FORGOT)
                self._view = None

    def forget_before(self, at: int) -> None:
        """Forget what ended before `at`: a long live run (the fleet's) keeps the last
        stretch of its timeline, not its whole history, and the axis starts there. A lease
        or a belief still open, and the lease the store holds for each task, stay."""
        if at <= self.kept_from:
            return
        self.kept_from = at
        for row in self.rows.values():
            row.leases = [x for x in row.leases if x.end is None or x.end >= at]
            row.beliefs = [b for b in row.beliefs if b.end is None or b.end >= at]
            row.ticks = [t for t in row.ticks if t.at >= at]
            row.calls = [c for c in row.calls if c.at >= at]
            row.freezes = [f for f in row.freezes if f[1] is None or f[1] >= at]
        for task in list(self._fences):
            steps = [(t, token) for t, token in self._fences[task] if t >= at]
            before = [step for step in self._fences[task] if step[0] < at][-1:]
            if task in self._current or steps:
                self._fences[task] = before + steps
            else:
                del self._fences[task]
        self._overrides = [
            o for o in self._overrides if o[1].end is None or o[1].end >= at or o[2] >= at
        ]
        self._view = None

    # -- one frame ------------------------------------------------------------------------

    def view(self, now_ms: int) -> TimelineView:
        """Every row as it stands at `now_ms` (made once per instant and history)."""
        cached = self._view
        if cached is not None and cached.now_ms == now_ms:
            return cached
        rows = tuple(self._frozen(row, now_ms) for row in self.rows.values())
        fences = tuple(FenceLine(task, tuple(steps)) for task, steps in self._fences.items())
        self._view = TimelineView(
            now_ms,
            rows,
            self.heartbeat_ms,
            self.ttl_ms,
            self._overlaps(now_ms),
            fences,
            first_ms=self.kept_from,
        )
        return self._view

    def _overlaps(self, now: int) -> tuple[Overlap, ...]:
        out = []
        for older, newer, at in self._overrides:
            # it lasts while the older lease is live by the store's clock and its holder
            # still acts on it (a holder who let go is no second owner any more)
            ends = [] if older.expires_at is None else [older.expires_at]
            row = self.rows.get(older.worker_id)
            belief = next(
                (
                    b
                    for b in (row.beliefs if row is not None else [])
                    if b.is_lease(older.task_id, older.lease_token)
                ),
                None,
            )
            if belief is not None and belief.end is not None:
                ends.append(belief.end)
            if newer.end is not None:
                ends.append(newer.end)
            end = min(ends) if ends else None
            out.append(
                Overlap(
                    older.task_id,
                    older.worker_id,
                    older.lease_token,
                    older.expires_at,
                    newer.worker_id,
                    newer.lease_token,
                    at,
                    None if end is None or end > now else max(end, at),
                )
            )
        return tuple(out)

    def _frozen(self, row: _Row, now: int) -> WorkerRow:
        ticks = row.ticks + self._frozen_ticks(row, now)
        ticks.sort(key=lambda t: t.at)
        return WorkerRow(
            row.worker_id,
            tuple(lease.frozen() for lease in row.leases),
            tuple(belief.frozen() for belief in row.beliefs),
            tuple(ticks),
            tuple(row.calls),
        )

    def _frozen_ticks(self, row: _Row, now: int) -> list[Tick]:
        """The beats that fell due while a freeze lasted and the worker believed it held a
        lease: each one heartbeat_every after the one before, from the last sent."""
        out: list[Tick] = []
        every = self.heartbeat_ms
        if every <= 0:
            return out
        for start, end in row.freezes:
            assert start is not None
            stop = now if end is None else min(end, now)
            for belief in row.beliefs:
                b_end = now if belief.end is None else min(belief.end, now)
                low, high = max(start, belief.start), min(stop, b_end)
                if low >= high:
                    continue
                # the last beat delivered before the freeze (ticks come in time order)
                n = bisect.bisect_right(row.ticks, low, key=lambda t: t.at)
                last = row.ticks[n - 1].at if n else None
                base = last if last is not None and last >= belief.start else belief.start
                at = base + every
                while at <= low:
                    at += every
                while at <= high:
                    out.append(Tick(at, TickKind.FROZEN))
                    at += every
        return out


_REASONS = frozenset(r.value for r in RejectReason)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _call_key(detail: Mapping[str, object]) -> str | None:
    """The effect's idempotency key, or where none is sent the call it names."""
    return _text(detail.get("key", detail.get("call")))
