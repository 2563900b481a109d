"""Every way the core says no. Rejections carry a reason and are also rows in `events`."""

import enum

from core.engine.vocabulary import Operation


class Why(enum.StrEnum):
    """What went wrong, by name, for every error the core raises on purpose: with the
    error's `fill` (the values its sentence shows) a run in another language says the same
    thing in its own words, without reading the English. Each error class has its own; a
    raise site that knows more names a finer one."""

    GENERAL = "general"  # an error of no finer kind: its own message says it
    CONFIG = "config"  # lease timing that breaks a rule (ConfigError.rule says which)
    STORE = "store"  # the database cannot be opened or used
    CLOCK_BEHIND = "clock_behind"
    SCHEMA_VERSION = "schema_version"
    STORE_CLOSED = "store_closed"
    DISK_FULL = "disk_full"
    FOREIGN_LOG = "foreign_log"
    CONNECTION_LOST = "connection_lost"
    UNKNOWN_TASK = "unknown_task"
    DUPLICATE_TASK = "duplicate_task"
    INVALID_PAYLOAD = "invalid_payload"
    INVALID_ARGUMENT = "invalid_argument"
    INVALID_ID = "invalid_id"
    LEASE_MISMATCH = "lease_mismatch"
    NOT_WAITING = "not_waiting"  # approve or reject a task that is not parked
    LEASE_REJECTED = "lease_rejected"  # the lease gate or the fence said no (its reason says why)
    LEASE_LOST = "lease_lost"  # a hold let its lease go: refused, or no renewal by the deadline
    NOT_CLAIMED = "not_claimed"  # a hold could not claim its task (held, waiting, done, dead)
    DOWNSTREAM_REFUSED = "downstream_refused"  # the fenced downstream service said no


class BorrowedKeysError(Exception):
    """Base of every error the core raises on purpose.

    `why` names what went wrong and `fill` holds the values its sentence shows, so the
    layer that speaks to people can say it in any language from a table."""

    # a Why, or a finer layer's own enum of the same kind (the simulation's acts)
    why: enum.StrEnum = Why.GENERAL

    def __init__(self, *args: object, why: enum.StrEnum | None = None, **fill: object) -> None:
        super().__init__(*args)
        if why is not None:
            self.why = why
        self.fill: dict[str, object] = dict(fill)


class ConfigError(BorrowedKeysError):
    """Lease timing or settings that break the rules (ttl > renew deadline > heartbeat).

    `keys` names the settings the broken rule is about, the one to change first, so a
    scenario file can point at the line that holds it."""

    def __init__(
        self, message: str, *keys: str, rule: str = "", fill: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, why=Why.CONFIG)
        self.keys = keys
        # the broken rule by name, and the values it names: a run in another language says
        # the same mistake in its own words
        self.rule = rule
        self.fill = dict(fill or {})


class StoreError(BorrowedKeysError):
    """The database cannot be opened or used: unwritable, not a database, too new."""

    why = Why.STORE


class Unreachable(StoreError):
    """The server could not be reached within the store's bound for reconnecting (a network
    cut, a server that went away): the call never got there, and may be tried again."""

    why = Why.CONNECTION_LOST


class ClockBehind(StoreError):
    """On SQLite, this process's clock is behind an instant another process already wrote.

    SQLite has no clock of its own: each process's machine clock judges its leases, so one
    that disagrees with the others cannot be judged safely, and it stops.
    """


class SchemaVersionError(StoreError):
    """The database was written by a newer version of borrowed-keys."""

    why = Why.SCHEMA_VERSION


class StoreClosed(StoreError):
    """A call reached a store after `close()` began: it is refused, never half-run."""

    why = Why.STORE_CLOSED


class UnknownTask(BorrowedKeysError):
    """No task with that id."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"unknown task {task_id!r}", why=Why.UNKNOWN_TASK, task=task_id)
        self.task_id = task_id


class DuplicateTask(BorrowedKeysError):
    """A task with that id already exists."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id!r} already exists", why=Why.DUPLICATE_TASK, task=task_id)
        self.task_id = task_id


class InvalidPayload(BorrowedKeysError):
    """A payload or state that cannot be stored as JSON."""

    why = Why.INVALID_PAYLOAD


class InvalidArgument(InvalidPayload, ValueError):
    """A call to the store given an argument of the wrong type or outside its range; the
    message names the argument. Nothing was written."""

    why = Why.INVALID_ARGUMENT


class InvalidId(InvalidPayload):
    """An id that is not one line of printable text (see core.engine.ids)."""

    why = Why.INVALID_ID


class LeaseMismatch(BorrowedKeysError):
    """A lease object that was never issued for this task (a caller bug, not a race)."""

    why = Why.LEASE_MISMATCH


class TaskStateError(BorrowedKeysError):
    """An operator action that does not fit the task's state (approve a task not waiting)."""

    why = Why.NOT_WAITING


class RejectReason(enum.StrEnum):
    """Why a lease holder's call was refused: what a `LeaseRejected` carries, the reason of
    every `*_rejected` line, and what a scenario's `rejected` expectation names."""

    SUPERSEDED = "superseded"  # a newer lease_token exists: someone re-claimed the task
    EXPIRED = "expired"  # time is up by the store clock, nobody has re-claimed yet
    NOT_RUNNING = "not_running"  # the task is done, dead, waiting or queued again
    FENCED = "fenced"  # a write whose fence token is behind the task's newest or the page's
    PARTITIONED = "partitioned"  # the call never reached the store


class RegisterReason(enum.StrEnum):
    """The reason of a register line that is not a holder's rejection (RejectReason is the
    rest: the two together are every reason the register writes, besides a failure's own
    error code, a park's note and a violation's name)."""

    NOT_WAITING = "not_waiting"  # an approval or rejection for a task that is not parked
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"  # a claim found no attempt left: dead letter
    RENEW_DEADLINE_PASSED = "renew_deadline_passed"  # a holder let its lease go in time


class LeaseRejected(BorrowedKeysError):
    """An operation refused by the lease gate or the ledger's fence."""

    def __init__(
        self,
        reason: RejectReason,
        *,
        operation: Operation,
        task_id: str,
        worker_id: str,
        lease_token: int,
        fence_token: int,
        current_lease_token: int | None = None,
        current_fence_token: int | None = None,
        key: str | None = None,
    ) -> None:
        if reason is RejectReason.FENCED:
            why = f"its fence token {fence_token} is behind {current_fence_token}" + (
                f" for {key}" if key else ""
            )
        elif current_lease_token is None:
            why = f"its lease {lease_token}, fence {fence_token}"
        else:
            why = (
                f"its lease {lease_token}, fence {fence_token}; the task's lease is now "
                f"{current_lease_token}, fence {current_fence_token}"
            )
        super().__init__(
            f"{worker_id}'s {operation} on {task_id} refused: {reason} ({why})",
            why=Why.LEASE_REJECTED,
        )
        self.reason = reason
        self.operation = operation
        self.task_id = task_id
        self.worker_id = worker_id
        self.lease_token = lease_token
        self.fence_token = fence_token
        self.current_lease_token = current_lease_token
        self.current_fence_token = current_fence_token
        self.key = key


class FencedWrite(LeaseRejected):
    """The ledger refused a page: its fence token is behind the newest one issued for its
    task, or behind one the page has already accepted."""
