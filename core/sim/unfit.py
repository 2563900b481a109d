"""Why an act does not fit the run: the worker's manual calls, the simulation's actions and
saving refuse with these, by name, so a run in another language says it in its own words."""

import enum

from core.engine.errors import BorrowedKeysError


class Unfit(enum.StrEnum):
    """Why an act does not fit the run, by name (an ActionError's `why`): with its `fill` a
    run in another language says it in its own words."""

    UNKNOWN_WORKER = "unknown_worker"
    WORKER_EXISTS = "worker_exists"
    NO_LEASE = "no_lease"
    WORKER_DEAD = "worker_dead"  # a fault or call on a killed worker: restart it first
    DOES_NOT_FIT = "does_not_fit"  # the store refused the act itself: `cause` says why
    TIME_BACKWARDS = "time_backwards"
    UNKNOWN_ACTION = "unknown_action"
    SAVE_NEEDS_SQLITE = "save_needs_sqlite"
    SAVE_NEEDS_MANUAL = "save_needs_manual"
    # a manual call that never reached the store
    STALLED = "stalled"
    NOTHING_TO_CLAIM = "nothing_to_claim"
    HEARTBEAT_FROZEN = "heartbeat_frozen"
    PARTITIONED = "partitioned"


# Here rather than in simulation.py, which imports the worker (and so does saving.py,
# whose save and restore raise it too).
class ActionError(BorrowedKeysError):
    """An action that cannot apply to this run (an unknown worker, a call with no lease)."""

    why = Unfit.DOES_NOT_FIT


class NoLease(ActionError):
    """A manual call that needs a lease, by a worker that remembers none."""

    why = Unfit.NO_LEASE
