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

from collections.abc import Callable, Container, Sequence
from typing import Any, Protocol

from core.engine.config import LeaseConfig
from core.engine.errors import (
    InvalidArgument,
    InvalidPayload,
    LeaseRejected,
    RegisterReason,
    RejectReason,
)
from core.engine.ids import MAX_BATCH, check_id, check_whole
from core.engine.policies import Policy
from core.engine.records import EventRow, Lease, check_lease, dump_json, stored_json
from core.engine.sql_text import (
    LOGGED_CLAIM_MAX,
    BatchStatements,
    LeaseReturned,
    TaskState,
    clocked_by_transaction,
)
from core.engine.vocabulary import EventKind, Operation, TaskStatus


class _StoreLike(Protocol):
    """What the batch operations use of `LeaseStore` (the mixin's self type)."""

    config: LeaseConfig
    policy: Policy
    sql: Any

    @property
    def batch_sql(self) -> BatchStatements: ...

    @property
    def has_listeners(self) -> bool: ...

    async def _write(self, body: Any, first: Any = ()) -> Any: ...

    def _why(self, lease: Lease, current: TaskState | None) -> RejectReason: ...


# One register line of a batch: event, task, worker, lease token, fence token, reason and
# the detail (its None values left out, as `_Txn.event` does).
_Line = tuple[EventKind, str, str | None, int, int | None, str | None, dict[str, Any]]


def _lines_of(
    kind: EventKind, leases: list[Lease], chosen: Container[str], detail: dict[str, Any]
) -> list[_Line]:
    """One line of `kind` for each lease whose task is in `chosen`, all with one detail."""
    return [
        (kind, x.task_id, x.owner_id, x.lease_token, x.fence_token, None, detail)
        for x in leases
        if x.task_id in chosen
    ]


def _insert_events(store: _StoreLike, txn: Any, lines: list[_Line]) -> None:
    """Write a batch's register lines in one statement (and keep them for the listeners)."""
    if not lines:
        return
    if not store.policy.fence_tokens:
        # The world before the fence tag: no line of the register names a fence token, as
        # `_Txn.event` writes it for the one-lease calls (nor does its detail: a refusal's
        # `current_fence_token`).
        lines = [
            (k, t, w, lt, None, r, {key: v for key, v in d.items() if "fence" not in key})
            for k, t, w, lt, _f, r, d in lines
        ]
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
                r.fence_token if store.policy.fence_tokens else None,
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
    detail: dict[str, Any],
) -> None:
    """The EventRows of the lines a renewal or a complete wrote in its statement, for the
    listeners: each lease's own line, its number as the statement returned it (the lines
    of one such statement share their kind and detail)."""
    if not store.has_listeners:
        return
    lines = []
    for x in leases:
        seq = numbers.get(x.task_id)
        if seq is None:
            continue
        lines.append(
            EventRow(
                seq,
                txn.now,
                str(kind),
                x.task_id,
                x.owner_id,
                x.lease_token,
                x.fence_token if store.policy.fence_tokens else None,
                None,
                detail,
            )
        )
    txn.events.extend(sorted(lines, key=lambda e: e.seq))


def _renewal_said(store: _StoreLike, now: int) -> tuple[EventKind, dict[str, Any]]:
    """The line one renewal writes, as `heartbeat` writes it: `renewed` with the new expiry
    (the same for every renewal at `now`), or, in no_expiry, where a heartbeat has nothing
    to extend, `heartbeat_noted` with what it did write, `last_heartbeat_at`."""
    if store.policy.expiry:
        return EventKind.RENEWED, {"expires_at": now + store.config.ttl_ms}
    return EventKind.HEARTBEAT_NOTED, {"last_heartbeat_at": now}


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


def _batch(values: object, what: str) -> list[Any]:
    """A list or tuple of at most MAX_BATCH values (a string, a generator or None is not
    a batch: one would be taken a character at a time, one would be used up by a look)."""
    if not isinstance(values, (list, tuple)):
        raise InvalidArgument(f"{what} must be a list of leases, got {type(values).__name__}")
    if len(values) > MAX_BATCH:
        raise InvalidArgument(
            f"{what} holds {len(values)}, more than a batch (at most {MAX_BATCH})"
        )
    return list(values)


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
        for i, lease in enumerate(_batch(leases, "leases")):
            check_lease(lease, f"leases[{i}]")
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
            kind, detail = _renewal_said(self, txn.now)
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
                _heard_lines(self, txn, numbers, leases, kind, detail)
            else:
                for row in self.batch_sql.renew_many.run(txn.conn, params):
                    lease = _lease_of(row)
                    renewed[lease.task_id] = lease
                # Every renewal of one call has the same new expiry: one detail for all.
                lines = _lines_of(kind, leases, renewed, detail)
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
        completing = _Completing.of(self, leases, results)
        if completing is None:
            return []

        def body(txn: Any) -> list[LeaseRejected | None]:
            return completing.run(self, txn, None if txn.first_rows is None else txn.first_rows[0])

        done: list[LeaseRejected | None] = await self._write(body, completing.first())
        return done

    async def claim_many(self: _StoreLike, worker_id: str, n: int) -> list[Lease]:
        """Take up to `n` tasks in one statement: expired leases rescued first, then the
        queue's first, each with its own lease and its own fence token, in that order.

        Fewer (or none) when fewer are claimable. A task with no attempt left is
        dead-lettered on the way, as by `claim`, and the claim takes the next one.
        """
        claiming = _Claiming.of(self, worker_id, n)

        def body(txn: Any) -> list[Lease]:
            return claiming.run(self, txn, None if txn.first_rows is None else txn.first_rows[0])

        result: list[Lease] = await self._write(body, claiming.first())
        return result

    async def complete_many_and_claim(
        self: _StoreLike,
        leases: Sequence[Lease],
        worker_id: str,
        n: int,
        results: Sequence[Any] | None = None,
    ) -> tuple[list[LeaseRejected | None], list[Lease]]:
        """`complete_many(leases, results)` then `claim_many(worker_id, n)`, in one
        transaction: a worker that finishes its batch and takes the next commits once.

        Each part is what its own call does: every lease judged by the same guard, each
        refusal its own event, the claim's tasks each with its own lease and fence token;
        the claim sees the tasks just finished as finished. Bad arguments to either part
        are raised before anything is written. On PostgreSQL both statements travel with
        BEGIN, so the whole is two round trips (the first and COMMIT), not four.
        """
        completing = _Completing.of(self, leases, results)
        claiming = _Claiming.of(self, worker_id, n)
        sent_completing = [] if completing is None else completing.first()

        def body(txn: Any) -> tuple[list[LeaseRejected | None], list[Lease]]:
            # What was sent with BEGIN, in the order of `first` (nothing on SQLite).
            sent = list(txn.first_rows or [])
            done_rows = sent.pop(0) if sent_completing and sent else None
            claim_rows = sent.pop(0) if sent else None
            if (
                completing is not None
                and claim_rows is not None
                and done_rows is not None
                and len({row[0] for row in done_rows}) < len(completing.leases)
            ):
                # A lease was refused, and the claim sent with it has run already: it may
                # have rescued that very task, and the refusal would then be judged on the
                # claim's row (superseded, not expired) and written after its lines.
                raise _RefusedBeforeTheClaim
            done: list[LeaseRejected | None] = []
            if completing is not None:
                done = completing.run(self, txn, done_rows)
            return done, claiming.run(self, txn, claim_rows)

        both: tuple[list[LeaseRejected | None], list[Lease]]
        try:
            both = await self._write(body, sent_completing + claiming.first())
        except _RefusedBeforeTheClaim:
            # Rolled back, nothing written: again with the claim run after the refusals
            # are judged, as the two calls would (the rare path; one round trip more).
            both = await self._write(body, sent_completing)
        return both


class _RefusedBeforeTheClaim(Exception):
    """A batch's complete refused a lease while its claim had already run in the same
    round trip: the transaction is rolled back and run again in order."""


class _Completing:
    """One `complete_many`: its arguments checked, and its part of a transaction."""

    def __init__(self, store: _StoreLike, leases: list[Lease], payload: str) -> None:
        self.leases = leases
        self.payload = payload
        self.logged = store.batch_sql.complete_logged

    @classmethod
    def of(
        cls, store: _StoreLike, leases: Sequence[Lease], results: Sequence[Any] | None
    ) -> "_Completing | None":
        """The checked batch (None when empty); a bad argument is raised here."""
        for i, lease in enumerate(_batch(leases, "leases")):
            check_lease(lease, f"leases[{i}]")
        leases = _checked(leases, "complete_many")
        if results is None:
            results = [None] * len(leases)
        results = _batch(results, "results")
        if len(results) != len(leases):
            raise InvalidPayload(f"{len(leases)} leases but {len(results)} results")
        texts = [_json_or_refuse(r) for r in results]
        if not leases:
            return None
        payload = dump_json(
            [
                [x.task_id, x.owner_id, x.lease_token, x.fence_token, text]
                for x, text in zip(leases, texts, strict=True)
            ]
        )
        return cls(store, leases, payload)

    def first(self) -> list[tuple[Any, dict[str, Any]]]:
        """PostgreSQL: the statement sent with BEGIN, reading its transaction's clock (one
        round trip less; on SQLite the body runs it)."""
        if self.logged is None:
            return []
        return [(clocked_by_transaction(self.logged), {"leases": self.payload})]

    def run(
        self, store: _StoreLike, txn: Any, rows: list[Any] | None
    ) -> list[LeaseRejected | None]:
        """The batch finished in `txn` (`rows`: what the statement sent with BEGIN said)."""
        leases = self.leases
        params = {"leases": self.payload, "now": txn.now}
        if self.logged is not None:
            # PostgreSQL: the tasks finished and their register lines in one statement.
            numbers = dict(self.logged.run(txn.conn, params) if rows is None else rows)
            finished = set(numbers)
            _heard_lines(store, txn, numbers, leases, EventKind.COMPLETED, {})
        else:
            finished = {row[0] for row in store.batch_sql.complete_many.run(txn.conn, params)}
            lines = _lines_of(EventKind.COMPLETED, leases, finished, {})
            _insert_events(store, txn, lines)
        refused = _reject_many(
            store,
            txn,
            [x for x in leases if x.task_id not in finished],
            Operation.COMPLETE,
        )
        return [refused.get(x.task_id) for x in leases]


class _Claiming:
    """One `claim_many`: its arguments checked, and its part of a transaction."""

    def __init__(self, store: _StoreLike, worker_id: str, n: int) -> None:
        self.worker_id = worker_id
        self.n = n
        self.logged = store.batch_sql.claim_logged_for(n) if n <= LOGGED_CLAIM_MAX else None
        self.given = {
            "worker_id": worker_id,
            "ttl": store.config.ttl_ms,
            "deadline": store.config.deadline_ms,
        }

    @classmethod
    def of(cls, store: _StoreLike, worker_id: str, n: int) -> "_Claiming":
        check_id(worker_id, "worker id")  # as `claim`: one line of printable text
        check_whole(n, "n", 1, MAX_BATCH)
        return cls(store, worker_id, n)

    def first(self) -> list[tuple[Any, dict[str, Any]]]:
        """PostgreSQL: the first round sent with BEGIN, reading its transaction's clock."""
        if self.logged is None:
            return []
        return [(clocked_by_transaction(self.logged), dict(self.given))]

    def run(self, store: _StoreLike, txn: Any, sent: list[Any] | None) -> list[Lease]:
        """The tasks taken in `txn` (`sent`: what the first round sent with BEGIN said)."""
        n = self.n
        worker_id = self.worker_id
        params = {**self.given, "now": txn.now}
        leases: list[Lease] = []
        # Each round takes what is still wanted; a round that dead-letters tasks makes
        # the next one look further. A round that finds nothing ends it.
        while len(leases) < n:
            params["n"] = n - len(leases)
            # The one-statement claim joins its two WITH parts (see `_logged`): kept
            # for the few tasks a process has slots for.
            logged = (
                store.batch_sql.claim_logged_for(params["n"]) if n <= LOGGED_CLAIM_MAX else None
            )
            if logged is not None:
                # PostgreSQL: the claim and its register lines in one statement.
                rows = logged.run(txn.conn, params) if sent is None else sent
                sent = None
                _heard(store, txn, rows, _claim_said)
                found = [LeaseReturned._make(r[:-1]) for r in rows]
                taken = [_lease_of(r) for r in found if r.status != TaskStatus.DEAD]
                taken.sort(key=lambda lease: lease.fence_token)
                leases.extend(taken)
                if not found or len(taken) == len(found):
                    break
                continue
            found = [
                LeaseReturned._make(r) for r in store.batch_sql.claim_many.run(txn.conn, params)
            ]
            if not found:
                break
            dead = [r for r in found if r.status == TaskStatus.DEAD]
            taken = [_lease_of(r) for r in found if r.status != TaskStatus.DEAD]
            if store.policy.expiry:
                # Fence tokens are drawn in the order the tasks were taken.
                taken.sort(key=lambda lease: lease.fence_token)
                # Recorded only if drawn, as by `claim` (none before the fence tag).
                if (
                    taken
                    and store.sql.fence_issued is not None
                    and store.policy.issues_fence_tokens
                ):
                    store.sql.fence_issued.run(txn.conn, {"fence_token": taken[-1].fence_token})
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
            _insert_events(store, txn, lines)
            leases.extend(taken)
            if not dead:
                break
        return leases
