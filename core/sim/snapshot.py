"""Immutable views of a run at one instant: what the TUI renders and expectations check."""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from core.engine.records import CheckpointRow, EffectRow, LedgerRow, TaskRow
from core.engine.vocabulary import Operation
from core.sim.spec import WorkerState
from core.sim.timeline import Overlap, TimelineView

# The lists a snapshot may leave out (`Simulation.snapshot(include=...)`): the store's lists
# are in by default; the timeline (belief against truth) only when asked for by name, since
# only a screen that draws it needs it.
SnapshotPart = Literal["ledger", "checkpoints", "effects", "timeline"]
SNAPSHOT_PARTS: frozenset[SnapshotPart] = frozenset({"ledger", "checkpoints", "effects"})
WITH_TIMELINE: frozenset[SnapshotPart] = SNAPSHOT_PARTS | {"timeline"}


@dataclass(frozen=True, slots=True)
class TaskView:
    """A task row plus what is derived from it at this instant."""

    row: TaskRow
    remaining_ms: int | None  # by the store clock; negative once expired, None if no lease
    checkpoint_step: int | None  # step of the latest checkpoint

    @property
    def task_id(self) -> str:
        return self.row.task_id

    @property
    def total_steps(self) -> int | None:
        """How many steps the task has (from its input payload), None if it does not say."""
        return _payload_steps(self.row.input_payload)


_STEPS_CACHE: dict[str, int | None] = {}


def _payload_steps(payload: str | None) -> int | None:
    if payload is None:
        return None
    if payload not in _STEPS_CACHE:  # payloads repeat across refreshes: parse each once
        try:
            steps = json.loads(payload).get("steps")
        except (ValueError, AttributeError):
            steps = None
        if len(_STEPS_CACHE) > 4096:
            _STEPS_CACHE.clear()
        _STEPS_CACHE[payload] = steps if isinstance(steps, int) else None
    return _STEPS_CACHE[payload]


@dataclass(frozen=True, slots=True)
class LateWrite:
    """A real agent worker's downstream write sent late, after a stall, with the token it
    was made with, and the service's answer: taken (`taken`; with no fence there, over a
    newer one) or refused, `error` its word for why (`stale_token`: its fence). `newest` is
    the token the service had seen for the key (None when it had seen none)."""

    key: str
    token: int | None
    newest: int | None
    taken: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class WorkerView:
    """A worker as it believes itself to be (its memory may be stale)."""

    id: str
    state: WorkerState
    autopilot: bool
    task_id: str | None  # the task it believes it holds
    step: int | None  # the step it is on (1-based), None when idle
    lease_token: int | None
    fence_token: int | None
    believed_remaining_ms: int | None  # by its own (possibly skewed) clock
    store_remaining_ms: int | None  # the same lease by the store's clock
    heartbeat_age_ms: int | None  # since its last accepted heartbeat (or claim)
    skew_ms: int = 0
    slow_factor: float = 1.0
    heartbeat_frozen: bool = False
    partitioned: bool = False
    stalled: bool = False
    # Stopped with a downstream write on its way out (a real agent worker in the fleet):
    # resumed, it sends that write late, with the token it was made with.
    write_held: bool = False
    # A stall asked for, waiting for that write to be on its way out (up to a lease).
    stopping_at_write: bool = False
    # What the downstream service answered that write once it went, late (for a while).
    late_write: LateWrite | None = None
    # When the held lease must be renewed by (store clock, as issued); a self-fencing worker
    # stops by itself once its own clock reaches it.
    renew_deadline: int | None = None
    self_fencing: bool = False
    # What each of its heartbeats carries besides the lease (0: nothing, as it should), and
    # when the one on its way now lands by the store's clock (None: none on its way).
    heartbeat_payload_bytes: int = 0
    heartbeat_lands_at: int | None = None
    # A task the store still lends in this worker's name though it believes it holds none
    # (killed or restarted: its memory is gone); `store_remaining_ms` is then that lease's.
    store_task_id: str | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """One refused operation, as the Rejected panel shows it."""

    seq: int
    at: int
    worker_id: str | None
    task_id: str | None
    operation: Operation
    reason: str
    lease_token: int | None
    fence_token: int | None
    current_lease_token: int | None
    current_fence_token: int | None
    key: str | None
    # A refused page's text: what it would have written (None for other operations).
    value: str | None = None


@dataclass(frozen=True, slots=True)
class EffectCall:
    """One application of a side effect (or one repeat answered from the first), in order:
    the Effects panel's row. `applied_times` counts this key's applications so far, this
    one included; `amount` is what one application costs, where its payload says."""

    at: int
    worker_id: str
    task_id: str
    key: str
    effect: str
    step: int | None
    fence_token: int | None
    deduplicated: bool
    applied_times: int
    amount: int | None = None


@dataclass(frozen=True, slots=True)
class Metrics:
    """Cost figures of a run."""

    wasted_steps: int = 0
    recovery_time_ms: int = 0
    # a task out of reach now, before any claim ends it: for how long so far, and until
    # when its lease holds it (None: no lease end will free it, or it waits for a claim)
    out_of_reach_now_ms: int = 0
    out_of_reach_until: int | None = None
    out_of_reach_task: str | None = None

    @property
    def out_of_reach_ms(self) -> int:
        """The longest a task was or is out of reach, so far: a stuck task counts too."""
        return max(self.recovery_time_ms, self.out_of_reach_now_ms)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a screen shows, at one virtual instant."""

    now_ms: int
    mode: str
    tasks: tuple[TaskView, ...]
    workers: tuple[WorkerView, ...]
    ledger: tuple[LedgerRow, ...]
    checkpoints: tuple[CheckpointRow, ...]
    effects: tuple[EffectRow, ...]
    rejections: tuple[Rejection, ...]
    violations: dict[str, int] = field(default_factory=dict)
    metrics: Metrics = field(default_factory=Metrics)
    last_event_seq: int = 0
    generation: int = 0  # which rebuild of the run this is (a session steps back by one)
    dedup: Mapping[str, int] = field(default_factory=dict)  # effect key -> repeats deduplicated
    # Belief against truth per worker (None when the snapshot was read without it).
    timeline: TimelineView | None = None
    # Each scripted page that gives its Chinese form, by the text written, as (en, zh): a
    # page is written in the language of its moment, and a screen that switched language
    # since says it in the new one (the Ledger, a refused page's note).
    page_forms: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Each call of a side effect, as the register has it (with the effects list only).
    effect_calls: tuple[EffectCall, ...] = ()
    # The safety checker's word on each page in the ledger written under a lease that was not
    # its task's current, live one (key -> the rule broken), and the pages whose step was
    # worked more than once: what the check of the books blames, and what it says was redone.
    stale_pages: Mapping[str, str] = field(default_factory=dict)
    pages_redone: frozenset[str] = frozenset()
    # of those stale pages, the ones written over another writer's accepted page: its
    # writer and fence token (what the fence would have kept)
    stale_over: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    # Two live leases of one task at once, so far (with the effects list, as the timeline
    # finds them): "系统真正关心的是：谁在这一刻还持有未过期的执行资格。"
    overlaps: tuple[Overlap, ...] = ()

    def task(self, task_id: str) -> TaskView | None:
        return next((t for t in self.tasks if t.task_id == task_id), None)

    def worker(self, worker_id: str) -> WorkerView | None:
        return next((w for w in self.workers if w.id == worker_id), None)
