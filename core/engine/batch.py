"""Many leases in one statement: a process renews all its leases together, and claims up to
N tasks at once.

The seed: "续约写入要足够轻。心跳本身如果需要重数据库事务、跨区域 RPC 或大对象序列化，
它会先把自己变成新的瓶颈。"
One asyncio process running many agents holds many leases; renewing them one transaction
each costs a round trip, a statement and an event insert per lease, and the client's Python
gives out long before the database does. Renewed together, each lease is still judged on
its own row by the same guard as `heartbeat` (owner, lease token, fence token, status, live
expiry by the store clock), and each refusal is still its own `renew_rejected` event with
its own reason, in the same transaction.

The leases travel as one JSON array parameter: both databases read it as a table
(`json_each` on SQLite, `jsonb_array_elements` on PostgreSQL), so one statement carries any
number of them and its text never changes with the count.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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

from core.engine.config import LeaseConfig
from core.engine.errors import InvalidPayload, LeaseRejected, RegisterReason, RejectReason
from core.engine.ids import check_id
from core.engine.models import FENCE_COUNTER
from core.engine.policies import Policy
from core.engine.records import EventRow, Lease, dump_json, stored_json
from core.engine.statements import (
    FENCE_SEQUENCE,
    LEASE_RETURNING,
    TASK_STATE_COLUMNS,
    LeaseReturned,
    Stmt,
    TaskState,
    _sql,
    events,
    fence_counter,
    tasks,
)
from core.engine.vocabulary import EventKind, Operation, TaskStatus

# The columns of one lease in the JSON array a batch statement reads, in this order.
# Above this many tasks a claim_many on PostgreSQL writes its lines in a second statement.
LOGGED_CLAIM_MAX = 100
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


_COMPILED: dict[tuple[str, str, Policy], BatchStatements] = {}


def batch_statements_for(dialect: Dialect, policy: Policy) -> BatchStatements:
    """Compiled once per process for each (dialect, policy), like `statements_for`."""
    key = (dialect.name, dialect.paramstyle, policy)
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED.setdefault(key, _build(dialect, policy))
    return found


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
    if policy.expiry:
        renewal.update(lease_expires_at=now + ttl, renew_deadline=now + deadline)
    returning = [t.c[name] for name in LEASE_RETURNING]
    renew_many = update(t).where(guard).values(renewal).returning(*returning)

    # --- complete_many: `complete`'s guard (the same as the renewal's), each its result ---
    c = _rows_of("leases", _RESULT_FIELDS, postgresql, ordered=False).subquery("c")
    c_guard = _lease_guard(policy, now, *(c.c[name] for name in _LEASE_FIELDS))
    finish: dict[str, Any] = {"status": TaskStatus.DONE, "result": c.c.result, "updated_at": now}
    if policy.guards:
        # As `complete`: a finished task holds no lease, nothing is left to expire.
        finish.update(lease_expires_at=null(), renew_deadline=null())
    complete_many = update(t).where(c_guard).values(finish).returning(*returning)

    # --- claim_many: up to :n tasks, each with its own lease and fence token ---------------
    # The seed: "若 worker 失联，超时后任务重新出现，下一位可以接手。" Expired leases are
    # rescued first, by the store clock (`claim`'s client_clock mistake is not offered here).
    n = bindparam("n", type_=BigInteger)
    expired_where = (
        and_(t.c.status == TaskStatus.RUNNING, t.c.lease_expires_at < now)
        if policy.guards
        else t.c.lease_expires_at < now
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
        draw = literal_column(f"nextval('{FENCE_SEQUENCE}')", BigInteger)
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
    has_attempts = t.c.attempt < t.c.max_attempts
    claim_values: dict[str, Any] = {
        "status": case((has_attempts, TaskStatus.RUNNING.value), else_=TaskStatus.DEAD.value),
        "owner_id": case((has_attempts, bindparam("worker_id")), else_=null()),
        "attempt": case((has_attempts, t.c.attempt + 1), else_=t.c.attempt),
        "last_heartbeat_at": case((has_attempts, now), else_=t.c.last_heartbeat_at),
        "error_code": case(
            (has_attempts, t.c.error_code), else_=RegisterReason.ATTEMPTS_EXHAUSTED.value
        ),
        "updated_at": now,
    }
    if policy.expiry:
        claim_values.update(
            lease_token=case((has_attempts, t.c.lease_token + 1), else_=t.c.lease_token),
            fence_token=case((has_attempts, picked.c.fence), else_=t.c.fence_token),
            lease_expires_at=case((has_attempts, now + ttl), else_=null()),
            renew_deadline=case((has_attempts, now + deadline), else_=null()),
        )
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
        claim_logged = _sql(_claim_logged(claim_many), dialect)
        complete_logged = _sql(_complete_logged(complete_many), dialect)
        renew_many_logged = _sql(_renew_many_logged(renew_many), dialect)
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
    if not policy.guards:
        # seed_sql: the seed's Heartbeat and Complete as printed (owner and lease token).
        return owned
    # The whole lease as issued, on a running task, still live by the store clock.
    return and_(
        owned,
        t.c.fence_token == fence_token,
        t.c.status == TaskStatus.RUNNING,
        t.c.lease_expires_at >= now if policy.expiry else true(),
    )


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


def _claim_logged(claim_many: Any) -> Any:
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
        claimed.c.fence_token,
        case((dead, literal(str(RegisterReason.ATTEMPTS_EXHAUSTED))), else_=null()),
        case(
            (dead, literal('{"attempts":') + attempt + literal("}")),
            else_=claimed_detail,
        ),
    ]
    return _logged(claimed, line, [case((dead, 0), else_=1), claimed.c.fence_token], with_rows=True)


def _renew_many_logged(renew_many: Any) -> Any:
    """renew_many and its `renewed` lines, the detail `heartbeat` writes (the guard made
    each row's owner and tokens the caller's lease's)."""
    renewed = renew_many.cte("renewed")
    expires = renewed.c.lease_expires_at
    line = [
        literal(str(EventKind.RENEWED)),
        renewed.c.task_id,
        renewed.c.owner_id,
        renewed.c.lease_token,
        renewed.c.fence_token,
        null(),
        case(
            (expires.is_(None), literal("{}")),
            else_=literal('{"expires_at":') + _text(expires) + literal("}"),
        ),
    ]
    return _logged(renewed, line, [renewed.c.task_id], with_rows=False)


def _complete_logged(complete_many: Any) -> Any:
    """complete_many and its `completed` lines (the guard made each row's owner and
    tokens the caller's lease's)."""
    done = complete_many.cte("done")
    line = [
        literal(str(EventKind.COMPLETED)),
        done.c.task_id,
        done.c.owner_id,
        done.c.lease_token,
        done.c.fence_token,
        null(),
        literal("{}"),
    ]
    return _logged(done, line, [done.c.task_id], with_rows=False)


class _StoreLike(Protocol):
    """What the batch operations use of `LeaseStore` (the mixin's self type)."""

    config: LeaseConfig
    policy: Policy
    sql: Any
    batch_sql: BatchStatements

    @property
    def has_listeners(self) -> bool: ...

    async def _write(self, body: Any) -> Any: ...

    def _why(self, lease: Lease, current: TaskState | None) -> RejectReason: ...


# One register line of a batch: event, task, worker, lease token, fence token, reason and
# the detail (its None values left out, as `_Txn.event` does).
_Line = tuple[EventKind, str, str | None, int, int, str | None, dict[str, Any]]


def _insert_events(store: _StoreLike, txn: Any, lines: list[_Line]) -> None:
    """Write a batch's register lines in one statement (and keep them for the listeners)."""
    if not lines:
        return
    # The lines of one batch mostly share their detail (every renewal its same new expiry):
    # each distinct detail is encoded once.
    texts: dict[tuple[Any, ...], str] = {}
    rows = []
    for kind, task_id, worker, lease_token, fence_token, reason, detail in lines:
        key = tuple(detail.items())
        text = texts.get(key)
        if text is None:
            text = texts[key] = dump_json(detail)
        rows.append([str(kind), task_id, worker, lease_token, fence_token, reason, text])
    params = {"at": txn.now, "rows": dump_json(rows)}
    if not store.has_listeners:
        # Nobody to hand EventRows to: neither their numbers nor the rows are needed.
        store.batch_sql.event_insert_many_quiet.run(txn.conn, params)
        return
    returned = store.batch_sql.event_insert_many.run(txn.conn, params)
    seq_of = {task_id: seq for seq, task_id in returned}
    for kind, task_id, worker, lease_token, fence_token, reason, detail in lines:
        txn.events.append(
            EventRow(
                seq_of[task_id],
                txn.now,
                str(kind),
                task_id,
                worker,
                lease_token,
                fence_token,
                reason,
                detail,
            )
        )


# What a register line says besides its task and tokens: event, worker, reason, detail.
_Said = tuple[EventKind, str | None, str | None, dict[str, Any]]


def _claim_said(r: LeaseReturned) -> _Said:
    if r.status == TaskStatus.DEAD:
        reason = str(RegisterReason.ATTEMPTS_EXHAUSTED)
        return EventKind.DEAD_LETTERED, None, reason, {"attempts": r.attempt}
    return (
        EventKind.CLAIMED,
        r.owner_id,
        None,
        _clean(attempt=r.attempt, expires_at=r.lease_expires_at),
    )


def _heard(
    store: _StoreLike, txn: Any, rows: list[Any], said: Callable[[LeaseReturned], _Said]
) -> None:
    """The EventRows of the lines a `*_logged` statement wrote, for the listeners: the
    values it wrote, rebuilt from each returned row (LEASE_RETURNING, then the seq)."""
    if not store.has_listeners:
        return
    for row in rows:
        r = LeaseReturned._make(row[:-1])
        kind, worker, reason, detail = said(r)
        txn.events.append(
            EventRow(
                row[-1],
                txn.now,
                str(kind),
                r.task_id,
                worker,
                r.lease_token,
                r.fence_token,
                reason,
                detail,
            )
        )


def _heard_lines(
    store: _StoreLike,
    txn: Any,
    numbers: dict[str, int],
    leases: list[Lease],
    kind: EventKind,
    renewed: Callable[[Lease], Lease] | None,
) -> None:
    """The EventRows of the lines a renewal or a complete wrote in its statement, for the
    listeners: each lease's own line, its number as the statement returned it."""
    if not store.has_listeners:
        return
    lines = []
    for x in leases:
        seq = numbers.get(x.task_id)
        if seq is None:
            continue
        detail = {} if renewed is None else _clean(expires_at=renewed(x).expires_at)
        lines.append(
            EventRow(
                seq,
                txn.now,
                str(kind),
                x.task_id,
                x.owner_id,
                x.lease_token,
                x.fence_token,
                None,
                detail,
            )
        )
    txn.events.extend(sorted(lines, key=lambda e: e.seq))


def _reject_many(
    store: _StoreLike, txn: Any, leases: list[Lease], operation: Operation
) -> dict[str, LeaseRejected]:
    """Each refused lease's verdict, as `LeaseStore._reject` gives it, and its own line:
    one read of the tasks' states and one insert for all of them (a process paused past
    its ttl comes back with every lease expired at once)."""
    if not leases:
        return {}
    ids = dump_json([[x.task_id] for x in leases])
    states = {
        row[0]: TaskState._make(row[1:])
        for row in store.batch_sql.task_state_many.run(txn.conn, {"ids": ids})
    }
    errors: dict[str, LeaseRejected] = {}
    lines: list[_Line] = []
    for lease in leases:
        current = states.get(lease.task_id)
        reason = store._why(lease, current)  # raises for a lease never issued, as alone
        assert current is not None
        detail = _clean(
            operation=operation,
            current_lease_token=current.lease_token,
            current_fence_token=current.fence_token,
            status=current.status,
        )
        lines.append(
            (
                operation.rejected,
                lease.task_id,
                lease.owner_id,
                lease.lease_token,
                lease.fence_token,
                str(reason),
                detail,
            )
        )
        errors[lease.task_id] = LeaseRejected(
            reason,
            operation=operation,
            task_id=lease.task_id,
            worker_id=lease.owner_id,
            lease_token=lease.lease_token,
            fence_token=lease.fence_token,
            current_lease_token=current.lease_token,
            current_fence_token=current.fence_token,
        )
    _insert_events(store, txn, lines)
    return errors


def _lease_of(r: LeaseReturned | tuple[Any, ...]) -> Lease:
    """The lease in a row a lease statement returned (LEASE_RETURNING's order), built
    straight from the row: a batch builds tens of thousands."""
    task_id, _status, owner_id, attempt, lease_token, fence_token, expires, deadline, kind = r[:9]
    assert owner_id is not None  # a lease statement returns a row only to its holder
    return Lease(task_id, owner_id, lease_token, fence_token, attempt, expires, deadline, kind)


def renew_logged(
    store: "_StoreLike", txn: Any, lease: Lease, params: dict[str, Any]
) -> Lease | None:
    """`heartbeat` on PostgreSQL: renew and write its line in one statement (None: refused)."""
    assert store.batch_sql.renew_logged is not None
    rows = store.batch_sql.renew_logged.run(txn.conn, params)
    if not rows:
        return None
    *lease_row, seq = rows[0]
    renewed = _lease_of(LeaseReturned._make(lease_row))
    if store.has_listeners:
        txn.events.append(
            EventRow(
                seq,
                txn.now,
                str(EventKind.RENEWED),
                lease.task_id,
                lease.owner_id,
                lease.lease_token,
                lease.fence_token,
                None,
                _clean(expires_at=renewed.expires_at),
            )
        )
    return renewed


def _checked(leases: Sequence[Lease], operation: str) -> list[Lease]:
    """The batch's leases, refused whole if one is not a lease or a task comes twice."""
    out = list(leases)
    seen: set[str] = set()
    for lease in out:
        if not isinstance(lease, Lease):
            raise InvalidPayload(f"{operation} takes leases, got {type(lease).__name__}")
        if lease.task_id in seen:
            # One row, one verdict: two leases of one task in a batch is a caller's bug.
            raise InvalidPayload(f"task {lease.task_id!r} is twice in one {operation}")
        seen.add(lease.task_id)
    return out


def _json_or_refuse(value: Any) -> str:
    return stored_json(value, "result")


def _clean(**detail: Any) -> dict[str, Any]:
    return {k: v for k, v in detail.items() if v is not None}


class BatchOperations:
    """`heartbeat_many` and `claim_many`, mixed into `LeaseStore`."""

    async def heartbeat_many(
        self: _StoreLike, leases: Sequence[Lease]
    ) -> list[Lease | LeaseRejected]:
        """Renew many leases in one transaction and one guarded statement.

        Returns, in the order given, each lease renewed or the `LeaseRejected` that says
        why not (superseded, expired, not_running), each refusal written as its own
        `renew_rejected` event beside the `renewed` ones. A lease never issued for its task
        (`LeaseMismatch`, `UnknownTask`) is a caller's bug, as for `heartbeat`: it is
        raised and nothing of the batch is written.
        """
        leases = _checked(leases, "heartbeat_many")
        if not leases:
            return []
        payload = dump_json([[x.task_id, x.owner_id, x.lease_token, x.fence_token] for x in leases])

        def body(txn: Any) -> list[Lease | LeaseRejected]:
            params = {
                "leases": payload,
                "now": txn.now,
                "ttl": self.config.ttl_ms,
                "deadline": self.config.deadline_ms,
            }
            renewed: dict[str, Lease] = {}
            logged = self.batch_sql.renew_many_logged
            if logged is not None:
                # PostgreSQL: the renewals and their register lines in one statement.
                # It returns each line's (task id, number): the renewed lease is the
                # caller's with the new expiry (the guard matched it whole).
                numbers = dict(logged.run(txn.conn, params))
                expiry = self.policy.expiry
                for x in leases:
                    if x.task_id in numbers:
                        renewed[x.task_id] = Lease(
                            x.task_id,
                            x.owner_id,
                            x.lease_token,
                            x.fence_token,
                            x.attempt,
                            txn.now + self.config.ttl_ms if expiry else x.expires_at,
                            txn.now + self.config.deadline_ms if expiry else x.renew_deadline,
                            x.kind,
                        )
                _heard_lines(
                    self, txn, numbers, leases, EventKind.RENEWED, lambda x: renewed[x.task_id]
                )
            else:
                for row in self.batch_sql.renew_many.run(txn.conn, params):
                    lease = _lease_of(row)
                    renewed[lease.task_id] = lease
                # Every renewal of one call has the same new expiry: one detail for all.
                expires = next(iter(renewed.values())).expires_at if renewed else None
                detail = _clean(expires_at=expires)
                lines: list[_Line] = [
                    (
                        EventKind.RENEWED,
                        x.task_id,
                        x.owner_id,
                        x.lease_token,
                        x.fence_token,
                        None,
                        detail,
                    )
                    for x in leases
                    if x.task_id in renewed
                ]
                _insert_events(self, txn, lines)
            # The rare path: the same verdicts and lines as refused heartbeats.
            refused = _reject_many(
                self,
                txn,
                [x for x in leases if x.task_id not in renewed],
                Operation.HEARTBEAT,
            )
            return [renewed.get(x.task_id) or refused[x.task_id] for x in leases]

        result: list[Lease | LeaseRejected] = await self._write(body)
        return result

    async def complete_many(
        self: _StoreLike, leases: Sequence[Lease], results: Sequence[Any] | None = None
    ) -> list[LeaseRejected | None]:
        """Finish many tasks in one transaction and one guarded statement, each under its
        own lease, as `complete` would (`results[i]` is the result of `leases[i]`).

        Returns, in the order given, None for a task finished or the `LeaseRejected` that
        says why not, each refusal its own `complete_rejected` event. A lease never issued
        is raised, as by `heartbeat_many`, and nothing of the batch is written.
        """
        leases = _checked(leases, "complete_many")
        if results is None:
            results = [None] * len(leases)
        if len(results) != len(leases):
            raise InvalidPayload(f"{len(leases)} leases but {len(results)} results")
        texts = [_json_or_refuse(r) for r in results]
        if not leases:
            return []
        payload = dump_json(
            [
                [x.task_id, x.owner_id, x.lease_token, x.fence_token, text]
                for x, text in zip(leases, texts, strict=True)
            ]
        )

        def body(txn: Any) -> list[LeaseRejected | None]:
            params = {"leases": payload, "now": txn.now}
            logged = self.batch_sql.complete_logged
            if logged is not None:
                # PostgreSQL: the tasks finished and their register lines in one statement.
                numbers = dict(logged.run(txn.conn, params))
                finished = set(numbers)
                _heard_lines(self, txn, numbers, leases, EventKind.COMPLETED, None)
            else:
                finished = {row[0] for row in self.batch_sql.complete_many.run(txn.conn, params)}
                lines: list[_Line] = [
                    (
                        EventKind.COMPLETED,
                        x.task_id,
                        x.owner_id,
                        x.lease_token,
                        x.fence_token,
                        None,
                        {},
                    )
                    for x in leases
                    if x.task_id in finished
                ]
                _insert_events(self, txn, lines)
            refused = _reject_many(
                self,
                txn,
                [x for x in leases if x.task_id not in finished],
                Operation.COMPLETE,
            )
            return [refused.get(x.task_id) for x in leases]

        done: list[LeaseRejected | None] = await self._write(body)
        return done

    async def claim_many(self: _StoreLike, worker_id: str, n: int) -> list[Lease]:
        """Take up to `n` tasks in one statement: expired leases rescued first, then the
        queue's first, each with its own lease and its own fence token, in that order.

        Fewer (or none) when fewer are claimable. A task with no attempt left is
        dead-lettered on the way, as by `claim`, and the claim takes the next one.
        """
        check_id(worker_id, "worker id")  # as `claim`: one line of printable text
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidPayload(f"claim_many takes at least 1 task, got {n!r}")

        def body(txn: Any) -> list[Lease]:
            params = {
                "worker_id": worker_id,
                "now": txn.now,
                "ttl": self.config.ttl_ms,
                "deadline": self.config.deadline_ms,
            }
            leases: list[Lease] = []
            # Each round takes what is still wanted; a round that dead-letters tasks makes
            # the next one look further. A round that finds nothing ends it.
            while len(leases) < n:
                params["n"] = n - len(leases)
                # The one-statement claim joins its two WITH parts (see `_logged`): kept
                # for the few tasks a process has slots for.
                logged = self.batch_sql.claim_logged if n <= LOGGED_CLAIM_MAX else None
                if logged is not None:
                    # PostgreSQL: the claim and its register lines in one statement.
                    rows = logged.run(txn.conn, params)
                    _heard(self, txn, rows, _claim_said)
                    found = [LeaseReturned._make(r[:-1]) for r in rows]
                    taken = [_lease_of(r) for r in found if r.status != TaskStatus.DEAD]
                    taken.sort(key=lambda lease: lease.fence_token)
                    leases.extend(taken)
                    if not found or len(taken) == len(found):
                        break
                    continue
                found = [
                    LeaseReturned._make(r) for r in self.batch_sql.claim_many.run(txn.conn, params)
                ]
                if not found:
                    break
                dead = [r for r in found if r.status == TaskStatus.DEAD]
                taken = [_lease_of(r) for r in found if r.status != TaskStatus.DEAD]
                if self.policy.expiry:
                    # Fence tokens are drawn in the order the tasks were taken.
                    taken.sort(key=lambda lease: lease.fence_token)
                    if taken and self.sql.fence_issued is not None:
                        self.sql.fence_issued.run(txn.conn, {"fence_token": taken[-1].fence_token})
                lines: list[_Line] = [
                    (
                        EventKind.DEAD_LETTERED,
                        r.task_id,
                        None,
                        r.lease_token,
                        r.fence_token,
                        str(RegisterReason.ATTEMPTS_EXHAUSTED),
                        _clean(attempts=r.attempt),
                    )
                    for r in dead
                ]
                lines.extend(
                    (
                        EventKind.CLAIMED,
                        lease.task_id,
                        worker_id,
                        lease.lease_token,
                        lease.fence_token,
                        None,
                        _clean(attempt=lease.attempt, expires_at=lease.expires_at),
                    )
                    for lease in taken
                )
                _insert_events(self, txn, lines)
                leases.extend(taken)
                if not dead:
                    break
            return leases

        result: list[Lease] = await self._write(body)
        return result
