"""The statements behind `batch`, built once per (dialect, policy): their SQL is long and
changes for other reasons than the Python that runs them, so it lives apart from it.
"""

import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    String,
    Text,
    and_,
    bindparam,
    case,
    func,
    literal,
    literal_column,
    null,
    select,
    text,
    true,
    union_all,
    update,
)
from sqlalchemy.engine import Dialect

from core.engine import mistake_statements as mistake
from core.engine.errors import RegisterReason
from core.engine.models import FENCE_COUNTER
from core.engine.policies import Policy
from core.engine.sql_text import LOGGED_CLAIM_MAX as LOGGED_CLAIM_MAX
from core.engine.sql_text import BatchStatements as BatchStatements
from core.engine.sql_text import clocked_by_transaction as clocked_by_transaction
from core.engine.statements import (
    FENCE_SEQUENCE,
    LEASE_RETURNING,
    TASK_STATE_COLUMNS,
    Stmt,
    _sql,
    claim_set,
    events,
    fence_counter,
    tasks,
)
from core.engine.vocabulary import EventKind, TaskStatus

# The columns of one lease in the JSON array a batch statement reads, in this order.
_LEASE_FIELDS = ("task_id", "worker_id", "lease_token", "fence_token")
_RESULT_FIELDS = (*_LEASE_FIELDS, "result")
_PICKED = ("k", "task_id", "attempt", "max_attempts")
_EVENT_FIELDS = ("event", "task_id", "worker_id", "lease_token", "fence_token", "reason", "detail")
_TYPES: dict[str, Any] = {
    "task_id": String,
    "worker_id": String,
    "lease_token": BigInteger,
    "fence_token": BigInteger,
    "event": String,
    "reason": String,
    "detail": String,
    "result": String,
}


def _rows_of(param: str, names: Sequence[str], postgresql: bool, *, ordered: bool) -> Any:
    """A JSON array of arrays (one bound parameter) as a table with these columns (in the
    array's order if `ordered`: an UPDATE needs none, and sorting 10k rows is not free)."""
    if postgresql:
        # Text columns compare in the "C" collation, as the tables' own do.
        cols = ", ".join(
            f"(e->>{i})::bigint AS {name}"
            if _TYPES[name] is BigInteger
            else f'(e->>{i}) COLLATE "C" AS {name}'
            for i, name in enumerate(names)
        )
        src = f"SELECT {cols} FROM jsonb_array_elements(CAST(:{param} AS jsonb))" + (
            " WITH ORDINALITY AS b(e, n) ORDER BY n" if ordered else " AS b(e)"
        )
    else:
        cols = ", ".join(f"json_extract(value, '$[{i}]') AS {name}" for i, name in enumerate(names))
        src = f"SELECT {cols} FROM json_each(:{param})" + (" ORDER BY key" if ordered else "")
    return text(src).columns(**{name: _TYPES[name] for name in names})


_COMPILED: dict[tuple[str, str, Policy], BatchStatements] = {}


def batch_statements_for(dialect: Dialect, policy: Policy) -> BatchStatements:
    """Compiled once per process for each (dialect, policy), like `statements_for`."""
    key = (dialect.name, dialect.paramstyle, policy)
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED.setdefault(key, _build(dialect, policy))
    return found


# psycopg parses a statement's text for its parameters once and keeps it, only for texts of
# at most this many characters: a longer one is parsed again at every execution.
PSYCOPG_CACHED_LENGTH = 4096


def _compact(stmt: Stmt) -> Stmt:
    """The same PostgreSQL statement in fewer characters, so that psycopg keeps its parse
    (`PSYCOPG_CACHED_LENGTH`), its clock read in as well (`clocked_by_transaction`): one
    line, no `t.col AS col` (the column's own name), and no cast on a constant (a string
    constant compared with or stored in a text column is taken as text, a number as a
    number). No literal of these statements holds a line break or such a pattern."""
    sql = re.sub(r"\s*\n\s*", " ", stmt.sql)
    sql = re.sub(r"\b(\w+)\.(\w+) AS \2\b", r"\1.\2", sql)
    sql = re.sub(r"('[^']*')::VARCHAR\b", r"\1", sql)
    return Stmt(re.sub(r"\b(\d+)::(INTEGER|BIGINT)\b", r"\1", sql))


def _build(dialect: Dialect, policy: Policy) -> BatchStatements:
    t = tasks
    postgresql = dialect.name == "postgresql"
    now = bindparam("now", type_=BigInteger)
    ttl = bindparam("ttl", type_=BigInteger)
    deadline = bindparam("deadline", type_=BigInteger)

    # --- renew_many: `heartbeat`'s guard, each lease against its own row -------------------
    b = _rows_of("leases", _LEASE_FIELDS, postgresql, ordered=False).subquery("b")
    guard = _lease_guard(policy, now, *(b.c[name] for name in _LEASE_FIELDS))
    renewal: dict[str, Any] = {"last_heartbeat_at": now, "updated_at": now}
    renewal.update(lease_expires_at=now + ttl, renew_deadline=now + deadline)
    renewal = mistake.renewal(policy, renewal)
    returning = [t.c[name] for name in LEASE_RETURNING]
    renew_many = update(t).where(guard).values(renewal).returning(*returning)

    # --- complete_many: `complete`'s guard (the same as the renewal's), each its result ---
    c = _rows_of("leases", _RESULT_FIELDS, postgresql, ordered=False).subquery("c")
    c_guard = _lease_guard(policy, now, *(c.c[name] for name in _LEASE_FIELDS))
    finish: dict[str, Any] = {"status": TaskStatus.DONE, "result": c.c.result, "updated_at": now}
    # As `complete`: a finished task holds no lease, nothing is left to expire.
    finish.update(lease_expires_at=null(), renew_deadline=null())
    finish = mistake.finish(policy, finish)
    complete_many = update(t).where(c_guard).values(finish).returning(*returning)

    # --- claim_many: up to :n tasks, each with its own lease and fence token ---------------
    # The seed: "若 worker 失联，超时后任务重新出现，下一位可以接手。" Expired leases are
    # rescued first, by the store clock (`claim`'s client_clock mistake is not offered here).
    n = bindparam("n", type_=BigInteger)
    expired_where = mistake.expired_named(
        policy, and_(t.c.status == TaskStatus.RUNNING, t.c.lease_expires_at < now), now
    )
    expired = (
        select(t.c.task_id, t.c.lease_expires_at.label("k"), t.c.attempt, t.c.max_attempts)
        .where(expired_where)
        .order_by(t.c.lease_expires_at, t.c.task_id)
        .limit(n)
    )
    if postgresql:
        expired = expired.with_for_update(skip_locked=True)
    expired_cte = expired.cte("expired")
    # First in, first out after the rescues, as `claim`: the queue's first by its place.
    # PostgreSQL locks only the rows it may take (rows a competing claim locked are passed
    # over, as in `claim`); SQLite has one writer and no row locks.
    queued_limit: Any = n
    if postgresql:
        queued_limit = n - select(func.count()).select_from(expired_cte).scalar_subquery()
    queued = (
        select(t.c.task_id, t.c.queue_seq.label("k"), t.c.attempt, t.c.max_attempts)
        .where(t.c.status == TaskStatus.QUEUED)
        .order_by(t.c.queue_seq, t.c.task_id)
        .limit(queued_limit)
    )
    if postgresql:
        queued = queued.with_for_update(skip_locked=True)
    queued_cte = queued.cte("queued")
    halves = [
        select(literal(1).label("grp"), *(queued_cte.c[c] for c in _PICKED)),
    ]
    if policy.expiry:
        halves.insert(0, select(literal(0).label("grp"), *(expired_cte.c[c] for c in _PICKED)))
    u = union_all(*halves).subquery("u")
    order = (u.c.grp, u.c.k, u.c.task_id)
    # The seed: "每次 claim / re-claim 任务时生成更大的 token；" one token per task taken,
    # from the one global sequence (counter) every claim draws from.
    # A task with no attempt left is taken to be dead-lettered and draws no token, as in
    # `claim`, so n tasks taken here carry the tokens n claims in a row would.
    takes = u.c.attempt < u.c.max_attempts
    if postgresql:
        # One draw per task taken, in the order taken (the projection runs over the sorted,
        # limited rows; CASE draws only for a task that gets a lease), so sorting the leases
        # by fence token gives the claim order back.
        first = select(u).order_by(*order).limit(n).subquery("first")
        # A claim that issues no token (before the fence tag, without expiry) draws none,
        # as `claim` draws none: the sequence is "只增不减", not spent on nothing.
        draw = (
            literal_column(f"nextval('{FENCE_SEQUENCE}')", BigInteger)
            if policy.issues_fence_tokens
            else null()
        )
        picked = select(
            first.c.task_id,
            case((first.c.attempt < first.c.max_attempts, draw), else_=null()).label("fence"),
        ).cte("picked")
    else:
        # The global counter plus the task's rank among those taken: distinct tokens above
        # every one issued, recorded back into the counter in the same transaction (one
        # writer at a time).
        fc = fence_counter
        counter = select(fc.c.value).where(fc.c.name == FENCE_COUNTER).scalar_subquery()
        rank = func.sum(case((takes, 1), else_=0)).over(order_by=order, rows=(None, 0))
        picked = (
            select(u.c.task_id, (counter + rank).label("fence"))
            .order_by(*order)
            .limit(n)
            .cte("picked")
        )
    claim_values = claim_set(t, policy, now, ttl, deadline, picked.c.fence)
    claim_many = (
        update(t).where(t.c.task_id == picked.c.task_id).values(claim_values).returning(*returning)
    )

    # --- event_insert_many -----------------------------------------------------------------
    ev = events
    rows = _rows_of("rows", _EVENT_FIELDS, postgresql, ordered=True).subquery("r")
    event_insert_many_quiet = ev.insert().from_select(
        ["at", *_EVENT_FIELDS],
        select(bindparam("at", type_=BigInteger), *(rows.c[name] for name in _EVENT_FIELDS)),
    )
    event_insert_many = event_insert_many_quiet.returning(ev.c.seq, ev.c.task_id)
    renew_logged = (
        _sql(_renew_logged(guard_one(policy, now), renewal), dialect) if postgresql else None
    )
    claim_logged = complete_logged = renew_many_logged = None
    if postgresql and policy.guards:
        claim_logged = _compact(_sql(_claim_logged(claim_many, policy), dialect))
        complete_logged = _compact(_sql(_complete_logged(complete_many, policy), dialect))
        renew_many_logged = _compact(_sql(_renew_many_logged(renew_many, policy), dialect))
    ids = _rows_of("ids", ("task_id",), postgresql, ordered=False).subquery("ids")
    task_state_many = select(t.c.task_id, *(t.c[n] for n in TASK_STATE_COLUMNS)).where(
        t.c.task_id.in_(select(ids.c.task_id))
    )
    return BatchStatements(
        renew_many_logged=renew_many_logged,
        task_state_many=_sql(task_state_many, dialect),
        claim_logged=claim_logged,
        complete_logged=complete_logged,
        renew_logged=renew_logged,
        renew_many=_sql(renew_many, dialect),
        complete_many=_sql(complete_many, dialect),
        claim_many=_sql(claim_many, dialect),
        event_insert_many=_sql(event_insert_many, dialect),
        event_insert_many_quiet=_sql(event_insert_many_quiet, dialect),
    )


def _lease_guard(
    policy: Policy, now: Any, task_id: Any, worker_id: Any, lease_token: Any, fence_token: Any
) -> Any:
    """`heartbeat`'s and `complete`'s guard (statements.py's gate) for the lease given by
    these four expressions: parameters for one lease, a batch's columns for many."""
    t = tasks
    owned = and_(
        t.c.task_id == task_id,
        t.c.owner_id == worker_id,
        t.c.lease_token == lease_token,
    )
    # The whole lease as issued, on a running task, still live by the store clock.
    whole = and_(
        owned,
        t.c.fence_token == fence_token,
        t.c.status == TaskStatus.RUNNING,
        mistake.live(policy, t.c.lease_expires_at >= now),
    )
    return mistake.whole_lease(policy, whole, owned)


def guard_one(policy: Policy, now: Any) -> Any:
    """The guard for the one lease named by the parameters."""
    return _lease_guard(
        policy,
        now,
        bindparam("task_id"),
        bindparam("worker_id"),
        bindparam("lease_token"),
        bindparam("fence_token", type_=BigInteger),
    )


def _renew_logged(guard: Any, renewal: dict[str, Any]) -> Any:
    """One heartbeat and its register line in one statement: a round trip less per beat.

    The line is the one `heartbeat` writes: the caller's lease, the renewed expiry as its
    detail (the same bytes as `dump_json`), returned with the lease and its number.
    """
    t, ev = tasks, events
    renewed = (
        update(t).where(guard).values(renewal).returning(*(t.c[n] for n in LEASE_RETURNING))
    ).cte("renewed")
    expires = renewed.c.lease_expires_at
    detail = case(
        (expires.is_(None), literal("{}")),
        else_=literal('{"expires_at":') + func.cast(expires, Text) + literal("}"),
    )
    logged = (
        ev.insert()
        .from_select(
            ["at", "event", "task_id", "worker_id", "lease_token", "fence_token", "detail"],
            select(
                bindparam("now", type_=BigInteger),
                literal(str(EventKind.RENEWED)),
                renewed.c.task_id,
                bindparam("worker_id"),
                bindparam("lease_token", type_=BigInteger),
                bindparam("fence_token", type_=BigInteger),
                detail,
            ),
        )
        .returning(ev.c.seq)
        .cte("logged")
    )
    return select(*renewed.c, logged.c.seq).select_from(renewed.join(logged, true()))


def _text(value: Any) -> Any:
    return func.cast(value, Text)


def _logged(changed: Any, line: list[Any], order: list[Any], *, with_rows: bool) -> Any:
    """`changed` (an UPDATE ... RETURNING) with one register line per row it returns, in
    one statement: a data-modifying WITH, the lines numbered in `order`. Returns each
    line's (task id, number), or with `with_rows` each changed row and its line's number.

    `with_rows` joins the two WITH parts, of which the planner knows no row counts: it may
    choose a nested loop, fine for a claim's few rows and ruinous for 25,000 renewals
    (measured: a batch of 25k took longer than its interval). A renewal and a complete
    need no row back: their caller knows each lease, and the line's number is enough.
    """
    ev = events
    logged = (
        ev.insert()
        .from_select(
            ["at", *_EVENT_FIELDS],
            select(bindparam("now", type_=BigInteger), *line).order_by(*order),
        )
        .returning(ev.c.seq, ev.c.task_id)
        .cte("logged")
    )
    if not with_rows:
        return select(logged.c.task_id, logged.c.seq)
    return (
        select(*(changed.c[n] for n in LEASE_RETURNING), logged.c.seq)
        .select_from(changed.join(logged, changed.c.task_id == logged.c.task_id))
        .order_by(logged.c.seq)
    )


def _line_fence(policy: Policy, fence_token: Any) -> Any:
    """A line's fence token: none in the world before the fence tag, as `_Txn.event` has it."""
    return fence_token if policy.fence_tokens else null()


def _claim_logged(claim_many: Any, policy: Policy) -> Any:
    """claim_many and its lines: `dead_lettered` (attempts exhausted) or `claimed`, with
    the details `claim` writes, the dead first, then by fence token (the claim order)."""
    claimed = claim_many.cte("claimed")
    dead = claimed.c.status == TaskStatus.DEAD.value
    expires = claimed.c.lease_expires_at
    attempt = _text(claimed.c.attempt)
    claimed_detail = case(
        (expires.is_(None), literal('{"attempt":') + attempt + literal("}")),
        else_=literal('{"attempt":')
        + attempt
        + literal(',"expires_at":')
        + _text(expires)
        + literal("}"),
    )
    line = [
        case((dead, literal(str(EventKind.DEAD_LETTERED))), else_=literal(str(EventKind.CLAIMED))),
        claimed.c.task_id,
        case((dead, null()), else_=bindparam("worker_id")),
        claimed.c.lease_token,
        _line_fence(policy, claimed.c.fence_token),
        case((dead, literal(str(RegisterReason.ATTEMPTS_EXHAUSTED))), else_=null()),
        case(
            (dead, literal('{"attempts":') + attempt + literal("}")),
            else_=claimed_detail,
        ),
    ]
    return _logged(claimed, line, [case((dead, 0), else_=1), claimed.c.fence_token], with_rows=True)


def _renew_many_logged(renew_many: Any, policy: Policy) -> Any:
    """renew_many and its lines, the ones `heartbeat` writes (the guard made each row's
    owner and tokens the caller's lease's): `renewed` with the new expiry, or, in
    no_expiry, where a heartbeat has nothing to extend, `heartbeat_noted` with what it
    did write, `last_heartbeat_at`."""
    renewed = renew_many.cte("renewed")
    if policy.expiry:
        kind = EventKind.RENEWED
        detail = literal('{"expires_at":') + _text(renewed.c.lease_expires_at) + literal("}")
    else:
        kind = EventKind.HEARTBEAT_NOTED
        now = bindparam("now", type_=BigInteger)
        detail = literal('{"last_heartbeat_at":') + _text(now) + literal("}")
    line = [
        literal(str(kind)),
        renewed.c.task_id,
        renewed.c.owner_id,
        renewed.c.lease_token,
        _line_fence(policy, renewed.c.fence_token),
        null(),
        detail,
    ]
    return _logged(renewed, line, [renewed.c.task_id], with_rows=False)


def _complete_logged(complete_many: Any, policy: Policy) -> Any:
    """complete_many and its `completed` lines (the guard made each row's owner and
    tokens the caller's lease's)."""
    done = complete_many.cte("done")
    line = [
        literal(str(EventKind.COMPLETED)),
        done.c.task_id,
        done.c.owner_id,
        done.c.lease_token,
        _line_fence(policy, done.c.fence_token),
        null(),
        literal("{}"),
    ]
    return _logged(done, line, [done.c.task_id], with_rows=False)
