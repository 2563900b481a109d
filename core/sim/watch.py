"""The keeper's watch, mixed into `Simulation`: what the register's lines set in motion.

Each line is handed to the safety checker; a refusal becomes a row of the Rejected panel; a
claim or a renewal books a look at the instant the lease runs out (the keeper notes the
expiry then, by the store's clock), and the checker's stuck-task looks are booked the same
way. The verdicts found are written to the register between the runtime's steps.
"""

from collections import Counter
from typing import Protocol

from core.engine.config import LeaseConfig, Mode
from core.engine.records import EventRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import REFUSED_OPERATION, REJECTIONS, EventKind, Operation
from core.sim.checker import SafetyChecker, Violation
from core.sim.runtime import VirtualRuntime, run_inline
from core.sim.snapshot import Rejection
from core.sim.spec import WorkerState
from core.sim.worker import Worker

# The register lines after which the keeper watches a lease's new expiry, and those after
# which there is none to watch.
_LEASE_MOVES = frozenset({EventKind.CLAIMED, EventKind.RENEWED})
_LEASE_ENDS = frozenset(
    {EventKind.COMPLETED, EventKind.PARKED, EventKind.FAILED, EventKind.DEAD_LETTERED}
)


class _Watched(Protocol):
    """What the watch uses of `Simulation` (the mixin's self type)."""

    store: LeaseStore
    runtime: VirtualRuntime
    checker: SafetyChecker
    config: LeaseConfig
    mode: Mode
    workers: dict[str, Worker]
    _live_leases: dict[str, tuple[int, int, str | None, int]]
    _rejections: list[Rejection]
    _dedup: Counter[str]
    _pending_violations: list[Violation]
    _stuck_look_at: int | None
    _stuck_looks: int
    _last_seq: int

    @property
    def now_ms(self) -> int: ...

    def _expiry_look(self, task: str, lease_token: int, expires: int) -> None: ...

    def _idle_map(self) -> dict[str, bool]: ...

    def _stuck_look(self, number: int) -> None: ...

    def _schedule_stuck_look(self) -> None: ...


class KeeperWatch:
    """The watch's part of `Simulation`: the register's lines, expiries, stuck-task looks."""

    # what the watch keeps (set up by `Simulation.__init__`, kept by save and restore)
    _live_leases: dict[str, tuple[int, int, str | None, int]]
    _rejections: list[Rejection]
    _dedup: Counter[str]
    _pending_violations: list[Violation]
    _stuck_look_at: int | None
    _stuck_looks: int
    _last_seq: int

    def _on_event(self: "_Watched", ev: EventRow) -> None:
        self._last_seq = ev.seq
        name, detail = ev.event, ev.detail
        if name == EventKind.VIOLATION:
            return
        if name == EventKind.EFFECT_DEDUPLICATED:
            self._dedup[str(detail.get("key", ""))] += 1
        self._pending_violations.extend(self.checker.observe(ev))
        if name in REJECTIONS:
            if ev.reason is not None:
                operation = detail.get("operation")
                if operation is None:
                    operation = REFUSED_OPERATION[EventKind(name)]
                self._rejections.append(
                    Rejection(
                        seq=ev.seq,
                        at=ev.at,
                        worker_id=ev.worker_id,
                        task_id=ev.task_id,
                        operation=Operation(operation),
                        reason=ev.reason,
                        lease_token=ev.lease_token,
                        fence_token=ev.fence_token,
                        current_lease_token=detail.get("current_lease_token"),
                        current_fence_token=detail.get("current_fence_token"),
                        key=detail.get("key"),
                        value=detail.get("value"),
                    )
                )
            return  # a refusal changes no lease
        task = ev.task_id
        if task is None:
            return
        if name in _LEASE_MOVES and self.mode is not Mode.NO_EXPIRY:
            expires = int(detail["expires_at"])
            lease_token = ev.lease_token or 0
            self._live_leases[task] = (lease_token, expires, ev.worker_id, ev.fence_token or 0)
            # The expiry is written the moment the lease runs out (now > expires_at).
            self.runtime.call_at(expires + 1, lambda: self._expiry_look(task, lease_token, expires))
        elif name in _LEASE_ENDS:
            self._live_leases.pop(task, None)

    def _expiry_look(self: "_Watched", task: str, lease_token: int, expires: int) -> None:
        current = self._live_leases.get(task)
        if current is None or current[0] != lease_token or current[1] != expires:
            return
        del self._live_leases[task]
        run_inline(
            self.store.record(
                EventKind.LEASE_EXPIRED,
                task_id=task,
                worker_id=current[2],
                lease_token=lease_token,
                fence_token=current[3],
                expired_at=expires,
            )
        )

    def _idle_map(self: "_Watched") -> dict[str, bool]:
        """Alive workers, and whether each could take a stuck task over right now.

        An autopilot worker counts as idle only once it has looked for work and found none
        since it last had a task or a fault changed: a worker whose heartbeat was refused
        mid-step, or one just resumed or healed, has not had its chance to claim yet.
        """
        return {
            w.id: w.lease is None
            and w.state == WorkerState.IDLE
            and (not w.autopilot or w.last_empty_poll_at is not None)
            for w in self.workers.values()
            if not w.faults.dead and not w.faults.stalled
        }

    def _stuck_look(self: "_Watched", number: int) -> None:
        if number != self._stuck_looks:
            return  # superseded by an earlier look, which schedules its own successor
        self._stuck_look_at = None
        self._pending_violations.extend(self.checker.check_stuck(self.now_ms, self._idle_map()))
        self._schedule_stuck_look()

    def _schedule_stuck_look(self: "_Watched") -> None:
        at = self.checker.next_stuck_check()
        if at is None:
            return
        if at <= self.now_ms:
            # Overdue but unresolved: nobody was idle. A worker only becomes idle by polling,
            # so look again one poll later rather than every millisecond.
            at = self.now_ms + self.config.poll_every_ms
        pending = self._stuck_look_at
        if pending is not None and pending <= at:
            return
        # None pending, or a holder went down whose verdict falls due before the pending
        # look: waiting for that look could miss a task stuck only in between.
        self._stuck_look_at = at
        self._stuck_looks += 1
        number = self._stuck_looks
        self.runtime.call_at(at, lambda: self._stuck_look(number))

    def _flush(self: "_Watched") -> None:
        while self._pending_violations:
            batch, self._pending_violations = self._pending_violations, []
            for v in batch:
                run_inline(
                    self.store.record(
                        EventKind.VIOLATION,
                        task_id=v.task_id,
                        worker_id=v.worker_id,
                        reason=v.name,
                        message=v.detail,
                    )
                )

    @property
    def next_look_ms(self: "_Watched") -> int | None:
        """When the keeper or the checker next looks at the register of its own accord (a
        lease running out, a task held too long), or None; looks that would find nothing
        changed since they were booked are not counted."""
        soonest = self._stuck_look_at
        for lease in self._live_leases.values():
            at = lease[1] + 1  # the expiry look runs the instant after the lease's end
            if soonest is None or at < soonest:
                soonest = at
        return soonest

    def _book_expiry_look(self: "_Watched", task: str, lease_token: int, expires: int) -> None:
        self.runtime.call_at(expires + 1, lambda: self._expiry_look(task, lease_token, expires))
