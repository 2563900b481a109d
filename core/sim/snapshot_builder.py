"""Building a snapshot, mixed into `Simulation`: everything a screen shows at one instant,
read from the store and from what the workers believe, for one frame (and, when asked for,
the timeline of belief against truth, fed the register lines it has not seen yet).
"""

from collections import Counter
from collections.abc import Collection
from typing import Protocol

from core.engine.config import Mode
from core.engine.records import CheckpointRow, EffectRow, EventRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import Operation, TaskStatus
from core.sim.checker import SafetyChecker
from core.sim.runtime import run_inline
from core.sim.snapshot import (
    SNAPSHOT_PARTS,
    EffectCall,
    Metrics,
    Rejection,
    Snapshot,
    SnapshotPart,
    TaskView,
    WorkerView,
)
from core.sim.timeline import Timeline, TimelineView
from core.sim.worker import Worker


class _Seen(Protocol):
    """What building a snapshot uses of `Simulation` (the mixin's self type)."""

    store: LeaseStore
    checker: SafetyChecker
    mode: Mode
    generation: int
    workers: dict[str, Worker]
    timeline: Timeline
    _task_views: dict[str, TaskView]
    _rejections: list[Rejection]
    _page_forms: dict[str, tuple[str, str]]
    _dedup: Counter[str]
    _last_seq: int

    @property
    def now_ms(self) -> int: ...

    def metrics(self) -> Metrics: ...

    def events(self, since_seq: int = 0) -> list[EventRow]: ...

    def _timeline_view(self, now: int) -> TimelineView: ...


class SnapshotBuilder:
    """`snapshot()`, the screen's one read of a run per frame."""

    # the last snapshot's views, by task id: an unchanged task keeps its view
    _task_views: dict[str, TaskView]

    def snapshot(self: "_Seen", include: Collection[SnapshotPart] = SNAPSHOT_PARTS) -> Snapshot:
        """Everything a screen shows, now.

        `include` names the lists to read; a list left out is empty in the snapshot (a
        screen that does not show the ledger, the checkpoints or the effects right now need
        not pay for reading them). Tasks, workers, rejections and violations are always in.
        """
        now = self.now_ms
        rows = run_inline(self.store.tasks())
        checkpoints: list[CheckpointRow] = []
        if "checkpoints" in include:
            checkpoints = run_inline(self.store.checkpoints())
            latest_step: dict[str, int] = {}
            for cp in checkpoints:
                latest_step.setdefault(cp.task_id, cp.step)
        else:
            latest_step = run_inline(self.store.checkpoint_steps())
        by_id = {r.task_id: r for r in rows}
        running = TaskStatus.RUNNING
        # A view whose row (the store hands back the same TaskRow for an unchanged row),
        # time left and step are as before is the one made before: the screen then sees
        # at once that the row has not changed.
        before, views = self._task_views, {}
        for r in rows:
            remaining = (
                r.lease_expires_at - now
                if r.lease_expires_at is not None and r.status == running
                else None
            )
            step = latest_step.get(r.task_id)
            view = before.get(r.task_id)
            if (
                view is None
                or view.row is not r
                or view.remaining_ms != remaining
                or view.checkpoint_step != step
            ):
                view = TaskView(row=r, remaining_ms=remaining, checkpoint_step=step)
            views[r.task_id] = view
        self._task_views = views
        tasks = tuple(views.values())
        workers = []
        fenced = self.store.policy.fence_tokens
        lent_to: dict[str, TaskView] = {}  # each owner's first running task, in one pass
        for t in tasks:
            if t.row.owner_id is not None and t.row.status == TaskStatus.RUNNING:
                lent_to.setdefault(t.row.owner_id, t)
        for w in self.workers.values():
            lease = w.lease
            store_remaining = believed = age = None
            if lease is not None:
                row = by_id.get(lease.task_id)
                expires = lease.expires_at
                if row is not None and row.lease_token == lease.lease_token:
                    expires = row.lease_expires_at if row.lease_expires_at is not None else expires
                # no_expiry: a lease without an end has nothing to count down
                store_remaining = None if expires is None else expires - now
                if lease.expires_at is not None:
                    believed = lease.expires_at - w.local_now()
            lent = None
            if lease is None:
                # the store's truth beside the worker's empty memory: a killed worker's lease
                # stays in the keeper's book until it ends ("旧 worker 即使复活，也只能成为
                # '过期知识的携带者'"): its pane says so instead of a bare "holds no lease"
                lent = lent_to.get(w.id)
                if lent is not None:
                    store_remaining = lent.remaining_ms
            if w.last_renew_at is not None and lease is not None:
                age = now - w.last_renew_at
            workers.append(
                WorkerView(
                    id=w.id,
                    state=w.state,
                    autopilot=w.autopilot,
                    task_id=lease.task_id if lease else None,
                    step=w.step if lease else None,
                    lease_token=lease.lease_token if lease else None,
                    # before the fence tag a worker holds no fence token, not a token 0
                    fence_token=lease.fence_token if lease and fenced else None,
                    believed_remaining_ms=believed,
                    store_remaining_ms=store_remaining,
                    store_task_id=lent.row.task_id if lent is not None else None,
                    heartbeat_age_ms=age,
                    skew_ms=w.faults.skew_ms,
                    slow_factor=w.faults.slow_factor,
                    heartbeat_frozen=w.faults.heartbeat_frozen,
                    partitioned=w.faults.partitioned,
                    stalled=w.faults.stalled,
                    renew_deadline=lease.renew_deadline if lease else None,
                    self_fencing=w.self_fencing,
                    heartbeat_payload_bytes=w.faults.heartbeat_payload_bytes,
                    heartbeat_lands_at=w.heartbeat_lands_at,
                )
            )
        effects = tuple(run_inline(self.store.effects())) if "effects" in include else ()
        timeline = (
            self._timeline_view(now) if "timeline" in include or "effects" in include else None
        )
        return Snapshot(
            now_ms=now,
            mode=self.mode.value,
            tasks=tasks,
            workers=tuple(workers),
            ledger=tuple(run_inline(self.store.ledger())) if "ledger" in include else (),
            checkpoints=tuple(checkpoints),
            effects=effects,
            rejections=tuple(self._rejections),
            violations=dict(self.checker.violations),
            metrics=self.metrics(),
            last_event_seq=self._last_seq,
            generation=self.generation,
            dedup=dict(self._dedup),
            timeline=timeline if "timeline" in include else None,
            page_forms=dict(self._page_forms),
            effect_calls=effect_calls(timeline, effects) if timeline is not None else (),
            stale_pages={k: str(rule) for k, rule in self.checker.stale_pages().items()},
            pages_redone=self.checker.pages_redone(),
            stale_over=self.checker.stale_covered(),
            overlaps=timeline.overlaps if timeline is not None else (),
        )

    def _timeline_view(self: "_Seen", now: int) -> TimelineView:
        if self.timeline.last_seq < self._last_seq:
            self.timeline.feed(self.events(self.timeline.last_seq))
        # What each worker's memory holds now ends a belief no register line ended.
        self.timeline.forget(
            now,
            {
                w.id: None if w.lease is None else (w.lease.task_id, w.lease.lease_token)
                for w in self.workers.values()
            },
        )
        return self.timeline.view(now)


def effect_calls(view: TimelineView, effects: tuple[EffectRow, ...]) -> tuple[EffectCall, ...]:
    """Every call of a side effect in the order made, each application its own row: the seed's
    "Idempotency 负责“重复做时别把世界打坏”" is seen where one call is applied twice."""
    by_key = {e.idempotency_key: e for e in effects}
    calls = sorted(
        (
            (c.at, row.worker_id, c)
            for row in view.rows
            for c in row.calls
            if c.operation is Operation.EFFECT and c.key is not None
        ),
        key=lambda t: t[0],
    )
    applied: Counter[str] = Counter()
    out = []
    for at, worker, call in calls:
        assert call.key is not None
        if not call.deduplicated:
            applied[call.key] += 1
        row = by_key.get(call.key)
        payload = row.result.get("payload") if row is not None else None
        amount = payload.get("amount") if isinstance(payload, dict) else None
        parts = call.key.split("/")
        out.append(
            EffectCall(
                at,
                worker,
                call.task_id,
                call.key,
                row.effect if row is not None else parts[-1],
                int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else None,
                call.fence_token,
                call.deduplicated,
                applied[call.key],
                amount if isinstance(amount, int) else None,
            )
        )
    return tuple(out)
