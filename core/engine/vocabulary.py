"""The engine's words, one enum each: a task's status and the names in the loan register.

Every other layer spells these through the enums (a StrEnum is its own string, so the
database, the transcript and the scenario files keep the plain words); the glossary
(core/scenarios/glossary.py) gives each one its English and Chinese on-screen word.
"""

import enum


class TaskStatus(enum.StrEnum):
    """Where a task is in its life: the seed's `status` column."""

    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"  # parked for a human's approval: no lease, nothing can expire
    DONE = "done"
    DEAD = "dead"  # attempts exhausted, or rejected by the human: the dead letter


# Nothing for a worker to do until a human acts: a run whose tasks are all resting is
# over (the fuzzer's end, a real worker's exit).
RESTING_STATUSES = frozenset({TaskStatus.DONE, TaskStatus.DEAD, TaskStatus.WAITING})


class EventKind(enum.StrEnum):
    """A line of the loan register (`events.event`): the store's own, then the simulation's
    faults and verdicts, which the register records beside them so one log tells it all."""

    ENQUEUED = "enqueued"
    CLAIMED = "claimed"
    CLAIM_REJECTED = "claim_rejected"
    RENEWED = "renewed"
    # Without expiry (mistake one: "running 只说明任务一度在运行。它没有过期时间，也没有版本")
    # a heartbeat has nothing to extend: it only writes `last_heartbeat_at`, and the register
    # says exactly that.
    HEARTBEAT_NOTED = "heartbeat_noted"
    RENEW_REJECTED = "renew_rejected"
    LEASE_EXPIRED = "lease_expired"
    CHECKPOINT_SAVED = "checkpoint_saved"
    CHECKPOINT_REJECTED = "checkpoint_rejected"
    CHECKPOINT_IGNORED = "checkpoint_ignored"
    WRITE_ACCEPTED = "write_accepted"
    WRITE_REJECTED = "write_rejected"
    EFFECT_APPLIED = "effect_applied"
    EFFECT_DEDUPLICATED = "effect_deduplicated"
    EFFECT_REJECTED = "effect_rejected"
    COMPLETED = "completed"
    COMPLETE_REJECTED = "complete_rejected"
    FAILED = "failed"
    FAIL_REJECTED = "fail_rejected"
    PARKED = "parked"
    PARK_REJECTED = "park_rejected"
    APPROVED = "approved"
    REJECTED = "rejected"
    APPROVE_IGNORED = "approve_ignored"
    REJECT_IGNORED = "reject_ignored"
    DEAD_LETTERED = "dead_lettered"
    # the simulation's: faults, a worker's own decisions, the checker's verdicts
    VIOLATION = "violation"
    HEARTBEAT_FROZEN = "heartbeat_frozen"
    STALLED = "stalled"
    KILLED = "killed"
    PARTITIONED = "partitioned"
    HEALED = "healed"
    RESUMED = "resumed"
    RESTARTED = "restarted"
    SLOWED = "slowed"
    SKEWED = "skewed"
    WORKER_ADDED = "worker_added"
    AUTOPILOT = "autopilot"  # a manual worker goes on by itself from where it stands
    CALL_DROPPED = "call_dropped"
    SELF_FENCED = "self_fenced"
    # A heartbeat that carries a payload leaves its worker (the mistake: "续约写入要足够轻");
    # the store's `renewed` or `renew_rejected` follows when it lands.
    HEARTBEAT_SENT = "heartbeat_sent"
    HEARTBEAT_PAYLOAD = "heartbeat_payload"  # what a worker's heartbeats carry from now on
    STORE_LOADED = "store_loaded"  # how busy the store is from now on


class TaskKindName(enum.StrEnum):
    """The kinds a task may be (the seed's three agent uses, and the ledger of its story);
    what each one's work is lives in the simulation (`core.sim.kinds`)."""

    LEDGER = "ledger"
    BROWSER = "browser"
    TOOLS = "tools"
    APPROVAL = "approval"


class Operation(enum.StrEnum):
    """A lease holder's call to the register; a refusal of it is written as its own line."""

    CLAIM = "claim"
    HEARTBEAT = "heartbeat"
    CHECKPOINT = "checkpoint"
    WRITE = "write"
    EFFECT = "effect"
    COMPLETE = "complete"
    FAIL = "fail"
    PARK = "park"

    @property
    def rejected(self) -> EventKind:
        """The register's line for a refusal of this call."""
        return _REJECTED_AS[self]


_REJECTED_AS: dict[Operation, EventKind] = {
    Operation.CLAIM: EventKind.CLAIM_REJECTED,
    Operation.HEARTBEAT: EventKind.RENEW_REJECTED,
    Operation.CHECKPOINT: EventKind.CHECKPOINT_REJECTED,
    Operation.WRITE: EventKind.WRITE_REJECTED,
    Operation.EFFECT: EventKind.EFFECT_REJECTED,
    Operation.COMPLETE: EventKind.COMPLETE_REJECTED,
    Operation.FAIL: EventKind.FAIL_REJECTED,
    Operation.PARK: EventKind.PARK_REJECTED,
}
# The operation each refusal line is about.
REFUSED_OPERATION: dict[EventKind, Operation] = {e: op for op, e in _REJECTED_AS.items()}

# The register's refusals of a holder's call: each carries a reason.
REJECTIONS = frozenset(REFUSED_OPERATION)
