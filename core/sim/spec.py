"""What a run is made of: settings, workers, tasks and actions (the scenario format's nouns).

The scenario loader builds these from TOML; the TUI builds them from button presses; the
simulation consumes them. Times are integer milliseconds.
"""

import enum
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, ClassVar, get_args

from core.engine.config import LeaseConfig, Mode
from core.engine.vocabulary import Operation
from core.sim.kinds import KINDS

# The kinds a task may be, by name (their work is in core.sim.kinds).
TASK_KINDS = tuple(KINDS)


class WorkerState(enum.StrEnum):
    """What a worker is doing, as the app and the transcript show it (worst fault first)."""

    IDLE = "idle"
    WORKING = "working"
    FROZEN = "frozen"  # alive and working, but its heartbeat is frozen
    STALLED = "stalled"
    DEAD = "dead"
    PARTITIONED = "partitioned"


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """A worker present from the start."""

    id: str
    autopilot: bool = True
    skew_ms: int = 0
    self_fencing: bool = False  # this worker stops by itself at its renew deadline
    heartbeat_payload_bytes: int = 0  # what each heartbeat carries besides the lease


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """A task enqueued at the start (or by an `enqueue` action)."""

    id: str
    kind: str = "ledger"
    steps: int = 5
    step_time_ms: int = 10_000
    max_attempts: int = 5


@dataclass(frozen=True, slots=True)
class SimSettings:
    """Everything that decides a run, apart from the actions applied to it."""

    mode: Mode = Mode.CORRECT
    seed: int = 0
    config: LeaseConfig = field(default_factory=LeaseConfig)
    self_fencing: bool = False  # every worker self-fences (a worker may also say so alone)
    workers: tuple[WorkerSpec, ...] = ()
    tasks: tuple[TaskSpec, ...] = ()


# -- actions: one small frozen dataclass each --------------------------------------------
#
# A field ending in `_ms` is a duration; the scenario format spells it without the suffix
# (`by_ms` is `by = "10s"`, `step_time_ms` is `step_time`), and one ending in `_bytes` is a
# size, spelled the same way (`size_bytes` is `size = "2MB"`). Fields with a default may be left
# out of a file; the scenario writer leaves out a field that still has its default.


@dataclass(frozen=True, slots=True)
class Advance:
    """Virtual time passes."""

    name: ClassVar[str] = "advance"
    by_ms: int


@dataclass(frozen=True, slots=True)
class FreezeHeartbeat:
    """The worker keeps working but its heartbeats stop."""

    name: ClassVar[str] = "freeze_heartbeat"
    worker: str


@dataclass(frozen=True, slots=True)
class Stall:
    """The whole worker pauses, work and heartbeat alike (a long GC pause)."""

    name: ClassVar[str] = "stall"
    worker: str


@dataclass(frozen=True, slots=True)
class Kill:
    """The worker's process dies; its lease stays in the store until it expires."""

    name: ClassVar[str] = "kill"
    worker: str


@dataclass(frozen=True, slots=True)
class Partition:
    """The worker cannot reach the store (the bridge is down) but keeps running."""

    name: ClassVar[str] = "partition"
    worker: str


@dataclass(frozen=True, slots=True)
class Heal:
    """The partition ends."""

    name: ClassVar[str] = "heal"
    worker: str


@dataclass(frozen=True, slots=True)
class Resume:
    """Every fault but death ends: freeze, stall, partition and slowness."""

    name: ClassVar[str] = "resume"
    worker: str


@dataclass(frozen=True, slots=True)
class Restart:
    """A fresh process under the same id, with an empty memory."""

    name: ClassVar[str] = "restart"
    worker: str


@dataclass(frozen=True, slots=True)
class Autopilot:
    """The worker goes on by itself from where it stands: the lease and the work it
    remembers, stale or not, are kept (what a playback's manual workers do once it forks)."""

    name: ClassVar[str] = "autopilot"
    worker: str


@dataclass(frozen=True, slots=True)
class AddWorker:
    """A new worker joins the run."""

    name: ClassVar[str] = "add_worker"
    worker: str
    skew_ms: int = 0
    autopilot: bool = True


@dataclass(frozen=True, slots=True)
class Slow:
    """The worker's steps take `factor` times as long."""

    name: ClassVar[str] = "slow"
    worker: str
    factor: float


@dataclass(frozen=True, slots=True)
class Skew:
    """The worker's own clock is set `by_ms` off the store's (negative: behind)."""

    name: ClassVar[str] = "skew"
    worker: str
    by_ms: int


@dataclass(frozen=True, slots=True)
class HeartbeatPayload:
    """From now on the worker's heartbeats carry `size_bytes` besides the lease (its whole
    transcript, a status blob): the mistake. 0 is the cheap heartbeat again, the fix."""

    name: ClassVar[str] = "heartbeat_payload"
    worker: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Load:
    """The store gets busier (or quieter): a big write takes `factor` times as long as on a
    quiet store (1). It is what a heavy heartbeat pays; a cheap one hardly notices."""

    name: ClassVar[str] = "load"
    factor: float


@dataclass(frozen=True, slots=True)
class Enqueue:
    """A new task joins the queue."""

    name: ClassVar[str] = "enqueue"
    task: str
    kind: str = "ledger"
    steps: int = 5
    step_time_ms: int = 10_000
    max_attempts: int = 5

    def spec(self) -> "TaskSpec":
        return TaskSpec(
            id=self.task,
            kind=self.kind,
            steps=self.steps,
            step_time_ms=self.step_time_ms,
            max_attempts=self.max_attempts,
        )


@dataclass(frozen=True, slots=True)
class Approve:
    """A human approves a task that waits for approval."""

    name: ClassVar[str] = "approve"
    task: str


@dataclass(frozen=True, slots=True)
class Reject:
    """A human rejects a task that waits for approval."""

    name: ClassVar[str] = "reject"
    task: str


# Manual operations, for workers with autopilot = false: each is one call to the store with
# the lease the worker remembers, which may be stale.


@dataclass(frozen=True, slots=True)
class Claim:
    """Claim the oldest queued task, or `task` if given."""

    name: ClassVar[str] = "claim"
    operation: ClassVar[Operation] = Operation.CLAIM
    worker: str
    task: str | None = None


@dataclass(frozen=True, slots=True)
class Heartbeat:
    name: ClassVar[str] = "heartbeat"
    operation: ClassVar[Operation] = Operation.HEARTBEAT
    worker: str


@dataclass(frozen=True, slots=True)
class Checkpoint:
    name: ClassVar[str] = "checkpoint"
    operation: ClassVar[Operation] = Operation.CHECKPOINT
    worker: str
    step: int


@dataclass(frozen=True, slots=True)
class Write:
    """A fenced write of `value` to the ledger page `key`. A scripted page may give the
    same page in Chinese as `value_zh`: a Chinese run (`lang`, set by `in_language`)
    writes that into the ledger, while what the page means to the worker (its `N dan`) is
    read from `value`, so a run's work and boxes do not depend on its language.

    With no `value` the worker writes what its own memory makes of the step at that
    instant (`Simulation.own_page`), as its autopilot would: a late holder's page is then
    what it read under its own lease, never a page written to look late."""

    name: ClassVar[str] = "write"
    operation: ClassVar[Operation] = Operation.WRITE
    worker: str
    key: str
    value: str | None = None
    value_zh: str | None = None
    lang: str = "en"

    @property
    def page(self) -> str | None:
        """The text the ledger gets (None: the worker's own page, made when it writes)."""
        return self.value_zh if self.lang == "zh" and self.value_zh is not None else self.value


@dataclass(frozen=True, slots=True)
class Effect:
    """An external side effect under the idempotency key `key`."""

    name: ClassVar[str] = "effect"
    operation: ClassVar[Operation] = Operation.EFFECT
    worker: str
    key: str


@dataclass(frozen=True, slots=True)
class Complete:
    name: ClassVar[str] = "complete"
    operation: ClassVar[Operation] = Operation.COMPLETE
    worker: str


@dataclass(frozen=True, slots=True)
class Fail:
    """Report a failure; with retry the task is queued again, without it it is dead."""

    name: ClassVar[str] = "fail"
    operation: ClassVar[Operation] = Operation.FAIL
    worker: str
    retry: bool = True


@dataclass(frozen=True, slots=True)
class Park:
    """Put the task aside until a human approves or rejects it."""

    name: ClassVar[str] = "park"
    operation: ClassVar[Operation] = Operation.PARK
    worker: str


# Every class appears once in one of the unions below; the tables are read off them.
ManualAction = Claim | Heartbeat | Checkpoint | Write | Effect | Complete | Fail | Park
Action = (
    Advance
    | FreezeHeartbeat
    | Stall
    | Kill
    | Partition
    | Heal
    | Resume
    | Restart
    | Autopilot
    | AddWorker
    | Slow
    | Skew
    | HeartbeatPayload
    | Load
    | Enqueue
    | Approve
    | Reject
    | ManualAction
)
MANUAL_ACTIONS: tuple[type[ManualAction], ...] = get_args(ManualAction)


def in_language(action: Action, lang: str) -> Action:
    """The action as a run in `lang` applies it: in a Chinese run a write that gives its
    page in Chinese writes the Chinese page into the ledger itself, so the register, the
    ledger and a saved transcript all hold what the scribe wrote in that run's language."""
    if isinstance(action, Write) and action.value_zh is not None:
        return replace(action, lang=lang)
    return action


# The acts whose only field is the worker they are done to: a button or a fuzzer's pick
# names one of these and a worker, and nothing else.
OnWorker = (
    FreezeHeartbeat
    | Stall
    | Kill
    | Partition
    | Heal
    | Resume
    | Restart
    | Heartbeat
    | Complete
    | Park
)
WORKER_ACTIONS: dict[str, type[OnWorker]] = {cls.name: cls for cls in get_args(OnWorker)}


def action_fields(action: Action) -> dict[str, Any]:
    """The action's fields that differ from their defaults, in declaration order."""
    out: dict[str, Any] = {}
    for f in fields(action):
        value = getattr(action, f.name)
        if f.default is not MISSING and value == f.default and type(value) is type(f.default):
            continue
        out[f.name] = value
    return out


ACTION_TYPES: dict[str, type[Action]] = {cls.name: cls for cls in get_args(Action)}
