"""What a run is made of: settings, workers, tasks and actions (the scenario format's nouns).

The scenario loader builds these from TOML; the TUI builds them from button presses; the
simulation consumes them. Times are integer milliseconds.
"""

import enum
from dataclasses import dataclass, field, fields
from typing import Any

from core.engine.config import LeaseConfig, Mode

TASK_KINDS = ("ledger", "browser", "tools", "approval")


class WorkerState(enum.StrEnum):
    """What a worker is doing, as the app and the transcript show it (worst fault first)."""

    IDLE = "idle"
    WORKING = "working"
    FROZEN = "frozen"  # alive and working, but its heartbeat is frozen
    STALLED = "stalled"
    DEAD = "dead"
    PARTITIONED = "partitioned"


# The scenario loader's list, until it names the enum itself.
WORKER_STATES = tuple(WorkerState)

# Every action, with the keys it requires and the keys it may have.
ACTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "advance": (frozenset({"by"}), frozenset()),
    "freeze_heartbeat": (frozenset({"worker"}), frozenset()),
    "stall": (frozenset({"worker"}), frozenset()),
    "kill": (frozenset({"worker"}), frozenset()),
    "partition": (frozenset({"worker"}), frozenset()),
    "heal": (frozenset({"worker"}), frozenset()),
    "resume": (frozenset({"worker"}), frozenset()),
    "restart": (frozenset({"worker"}), frozenset()),
    "add_worker": (frozenset({"worker"}), frozenset({"autopilot", "skew"})),
    "slow": (frozenset({"worker", "factor"}), frozenset()),
    "skew": (frozenset({"worker", "by"}), frozenset()),
    "enqueue": (
        frozenset({"task"}),
        frozenset({"kind", "steps", "step_time", "max_attempts"}),
    ),
    "approve": (frozenset({"task"}), frozenset()),
    "reject": (frozenset({"task"}), frozenset()),
    # Manual operations, for workers with autopilot = false.
    "claim": (frozenset({"worker"}), frozenset({"task"})),
    "heartbeat": (frozenset({"worker"}), frozenset()),
    "checkpoint": (frozenset({"worker", "step"}), frozenset()),
    "write": (frozenset({"worker", "key", "value"}), frozenset()),
    "effect": (frozenset({"worker", "key"}), frozenset()),
    "complete": (frozenset({"worker"}), frozenset()),
    "fail": (frozenset({"worker"}), frozenset({"retry"})),
    "park": (frozenset({"worker"}), frozenset()),
}

MANUAL_ACTIONS = frozenset(
    {"claim", "heartbeat", "checkpoint", "write", "effect", "complete", "fail", "park"}
)
FAULT_ACTIONS = frozenset(
    {"freeze_heartbeat", "stall", "kill", "partition", "heal", "resume", "restart", "slow", "skew"}
)


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """A worker present from the start."""

    id: str
    autopilot: bool = True
    skew_ms: int = 0
    self_fencing: bool = False  # this worker stops by itself at its renew deadline


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


@dataclass(frozen=True, slots=True)
class Action:
    """One thing done to a run: time passing, a fault, an operator's act or a manual call.

    Only the fields the action uses are set (see ACTIONS); `by_ms` is the duration of
    `advance` and the offset of `skew`.
    """

    name: str
    worker: str | None = None
    task: str | None = None
    by_ms: int | None = None
    factor: float | None = None
    key: str | None = None
    value: str | None = None
    step: int | None = None
    retry: bool | None = None
    autopilot: bool | None = None
    kind: str | None = None
    steps: int | None = None
    step_time_ms: int | None = None
    max_attempts: int | None = None

    def params(self) -> dict[str, Any]:
        """The fields that are set, by their dataclass names."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "name" and getattr(self, f.name) is not None
        }
