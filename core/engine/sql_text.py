"""The store's statements as text: the records of them a process runs, with no SQL library.

`Statements` and `BatchStatements` hold one dialect's SQL for one policy; they are filled from
the text compiled ahead of time (core/engine/precompiled.py) or, when that is missing, by
compiling the SQLAlchemy expressions (core/engine/prepared.py). Nothing here imports
SQLAlchemy or SQLModel, so a run opens without loading them.
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.engine import precompiled
from core.engine.backends import POSTGRESQL_TXN_CLOCK_MS
from core.engine.ids import check_whole
from core.engine.policies import Policy
from core.engine.records import CheckpointRow, EffectRow, EventRow, LedgerRow, TaskRow


class Stmt(NamedTuple):
    """Compiled SQL text: its constants are literals in it, its parameters are named."""

    sql: str

    def run(self, conn: Any, params: dict[str, Any] | None = None) -> list[Any]:
        """Execute and fetch every row (before any commit: SQLite insists for RETURNING)."""
        cursor = conn.execute(self.sql, params or {})
        # psycopg refuses to fetch from a statement that returns no rows; sqlite3 gives [].
        if cursor.description is None:
            return []
        rows: list[Any] = cursor.fetchall()
        return rows


def columns(record: type[Any]) -> tuple[str, ...]:
    """The columns a read selects for a record: its fields, in their order, so the row
    builds the record field by field (tests/engine/test_store.py checks each is a column)."""
    return tuple(f.name for f in dataclasses.fields(record))


TASK_COLUMNS = columns(TaskRow)
CHECKPOINT_COLUMNS = columns(CheckpointRow)
LEDGER_COLUMNS = columns(LedgerRow)
EFFECT_COLUMNS = columns(EffectRow)
EVENT_COLUMNS = columns(EventRow)


class LeaseReturned(NamedTuple):
    """What every lease statement returns (`RETURNING`): the task's lease, and its status
    (a claim that found no attempt left returns the dead-lettered task)."""

    task_id: str
    status: str
    owner_id: str | None
    attempt: int
    lease_token: int
    fence_token: int
    lease_expires_at: int | None
    renew_deadline: int | None
    kind: str


class TaskState(NamedTuple):
    """What the gate's verdict reads of a task: its status, holder and both tokens."""

    status: str
    owner_id: str | None
    lease_token: int
    fence_token: int


LEASE_RETURNING = LeaseReturned._fields
TASK_STATE_COLUMNS = TaskState._fields

# Above this many tasks a claim_many on PostgreSQL writes its lines in a second statement.
LOGGED_CLAIM_MAX = 100


@dataclass(frozen=True)
class Statements:
    """Every statement the store runs, as SQL text for one dialect and one policy.

    Get them with `statements_for`, which compiles each (dialect, policy) once; each table's
    statements are built by one function below.
    """

    # the database's own clock, for stores on real time (core/engine/clock.py), and the
    # newest instant any process wrote into the store (one clock on SQLite: see LeaseStore)
    now: Stmt
    # agent_tasks: the lease's life
    claim_any: Stmt
    claim_named: Stmt
    heartbeat: Stmt
    complete: Stmt
    fail: Stmt
    park: Stmt
    checkpoint_gate: Stmt
    approve: Stmt
    reject: Stmt
    enqueue: Stmt
    # agent_tasks: reads
    task_state: Stmt
    task_one: Stmt
    task_all: Stmt
    task_unfinished: Stmt
    task_finished_newest: Stmt
    queue_order: Stmt
    next_expiry: Stmt
    # fence_counter: records a claim's draw (None on PostgreSQL, which draws from a SEQUENCE)
    fence_issued: Stmt | None
    # checkpoints
    checkpoint_next_seq: Stmt
    checkpoint_insert: Stmt
    checkpoint_latest: Stmt
    checkpoint_all: Stmt
    checkpoint_steps: Stmt
    checkpoint_steps_shown: Stmt
    # ledger
    ledger_write: Stmt
    ledger_token: Stmt
    ledger_all: Stmt
    ledger_newest: Stmt
    # effects
    effect_apply: Stmt
    effect_result: Stmt
    effect_all: Stmt
    effect_newest: Stmt
    # events
    event_insert: Stmt
    event_since: Stmt


@dataclass(frozen=True)
class BatchStatements:
    """The batch statements for one dialect and one policy (see `batch_statements_for`)."""

    renew_many: Stmt  # every lease of the array its guard accepts, renewed
    complete_many: Stmt  # every lease of the array its guard accepts, its task done
    claim_many: Stmt  # up to :n tasks, rescued expired ones first, then the queue's first
    event_insert_many: Stmt  # one register line per element, in the array's order
    event_insert_many_quiet: Stmt  # the same, returning nothing
    # PostgreSQL: `heartbeat`'s UPDATE and its `renewed` line in one statement (None on
    # SQLite, which allows no UPDATE inside a WITH and has no round trip to save).
    renew_logged: Stmt | None
    # PostgreSQL, with the guards on: claim_many and complete_many with their register
    # lines in the same statement, each row returned with its line's number (None else).
    claim_logged: Stmt | None
    complete_logged: Stmt | None
    renew_many_logged: Stmt | None
    task_state_many: Stmt  # TaskState (with the task id first) of each task of the array

    def claim_logged_for(self, n: int) -> Stmt | None:
        """`claim_logged` with its count written in as a literal (one text per count).

        With the count a parameter, PostgreSQL's generic plan of the prepared statement
        takes a LIMIT of unknown size for a tenth of the table and joins the UPDATE to it
        by a scan of the whole table (measured: 4 ms a claim at 3,000 tasks, against
        0.5 ms); the custom plan it may use instead is planned again at every execution
        (0.5 ms of the server's time a claim). Which of the two a connection settles on
        after its fifth execution depends on the first five: the claim's cost changed
        from one run to the next. With the count a literal the generic plan is the
        custom one, planned once per connection.
        """
        if self.claim_logged is None:
            return None
        found = _CLAIM_BY_COUNT.get((self.claim_logged.sql, n))
        if found is None:
            check_whole(n, "n", 1, LOGGED_CLAIM_MAX)
            found = Stmt(self.claim_logged.sql.replace("%(n)s", str(n)))
            _CLAIM_BY_COUNT[self.claim_logged.sql, n] = found
        return found


_CLAIM_BY_COUNT: dict[tuple[str, int], Stmt] = {}
_CLOCKED: dict[str, Stmt] = {}


def clocked_by_transaction(stmt: Stmt) -> Stmt:
    """The PostgreSQL statement with the transaction's clock read in it where it is given
    `now`: the form `LeaseStore._write` sends in the round trip of BEGIN."""
    found = _CLOCKED.get(stmt.sql)
    if found is None:
        found = _CLOCKED[stmt.sql] = Stmt(
            stmt.sql.replace("%(now)s", f"({POSTGRESQL_TXN_CLOCK_MS})")
        )
    return found


def _switches(policy: Policy) -> tuple[bool, ...]:
    return tuple(getattr(policy, name) for name in precompiled.POLICY_SWITCHES)


def _filled(record: type[Any], found: dict[str, str | None] | None) -> Any:
    if found is None or set(found) != {f.name for f in dataclasses.fields(record)}:
        return None
    return record(**{k: None if v is None else Stmt(v) for k, v in found.items()})


def precompiled_statements(dialect: str, policy: Policy) -> "Statements | None":
    """The statements of a dialect and a policy from the text compiled ahead of time, or
    None when it is not there (a file missing or damaged, or from another set of fields)."""
    key = precompiled.policy_key(_switches(policy))
    filled: Statements | None = _filled(Statements, precompiled.texts(dialect, "statements", key))
    return filled


def precompiled_batch(dialect: str, policy: Policy) -> "BatchStatements | None":
    """The batch statements, as `precompiled_statements`."""
    key = precompiled.policy_key(_switches(policy))
    found = precompiled.texts(dialect, "batch", key)
    filled: BatchStatements | None = _filled(BatchStatements, found)
    return filled
