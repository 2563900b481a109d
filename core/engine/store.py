"""The lease store: tasks and their leases on the database's clock, checkpoints, the fenced ledger.

Each operation is one transaction. Claim, heartbeat and complete are one conditional
`UPDATE ... RETURNING` each (plus the event row), as in the seed. Every rejection raises a
typed `LeaseRejected` and is written to `events` in the same transaction.
"""

import asyncio
import json
import os
import warnings
from collections.abc import Callable, Sequence
from functools import cached_property
from types import TracebackType
from typing import Any, Self

from core.engine.batch import BatchOperations, renew_logged
from core.engine.clock import Clock, DatabaseClock
from core.engine.clock_judge import CLOCK_TOLERANCE_MS, clock_behind
from core.engine.config import LeaseConfig, Mode, TimingWarning
from core.engine.connect import async_driver, dialect_name, inline_driver
from core.engine.drivers import Driver
from core.engine.errors import (
    DuplicateTask,
    InvalidArgument,
    RegisterReason,
    RejectReason,
    TaskStateError,
    UnknownTask,
)
from core.engine.gate import LeaseGate
from core.engine.hold import Hold
from core.engine.ids import (
    MAX_ATTEMPTS,
    MAX_STEP,
    MAX_TOKEN,
    check_id,
    check_text,
    check_whole,
)
from core.engine.policies import policy_for
from core.engine.prepared import store_batch_statements, store_statements
from core.engine.reads import StoreReads
from core.engine.records import (
    CheckpointRow,
    EffectOutcome,
    EventRow,
    Lease,
    LedgerRow,
    TaskRow,
    check_lease,
    dump_json,
    stored_json,
)
from core.engine.sql_text import BatchStatements, LeaseReturned, Stmt
from core.engine.store_arguments import (
    check_clock,
    check_config,
    check_flag,
    check_mode,
    check_path,
)
from core.engine.transaction import Rejected as _Rejected
from core.engine.transaction import Txn as _Txn
from core.engine.transaction import lease_of as _lease
from core.engine.transaction import to_json as _json
from core.engine.vocabulary import EventKind, Operation, TaskKindName, TaskStatus

EventListener = Callable[[EventRow], None]


class _Abandoned(Exception):
    """A renewal no one waits for any more, stopped before its transaction began."""


class LeaseStore(StoreReads, LeaseGate, BatchOperations):
    """Claims, heartbeats, checkpoints, fenced writes and effects over one database.

    Use it as `async with` (or call `close()`): closing waits for every call in flight and
    refuses later ones with `StoreClosed`. A cancelled call follows its driver's rule
    (`AsyncSqliteDriver`: it never commits if cancelled before its transaction began, and
    may have committed if cancelled while the transaction ran on the driver's thread);
    listeners hear the events of calls that returned or raised, not of cancelled ones.
    """

    def __init__(
        self,
        driver: Driver,
        clock: Clock,
        config: LeaseConfig | None = None,
        mode: Mode = Mode.CORRECT,
    ) -> None:
        self.driver = driver
        self.clock = check_clock(clock)
        self.config = check_config(config).validated()
        self.mode = mode = check_mode(mode)
        self.policy = policy_for(mode)
        self.sql = store_statements(dialect_name(driver), self.policy)
        # PostgreSQL renews a lease and writes its register line in one statement.
        self._renews_logged = dialect_name(driver) == "postgresql"
        # A database clock is read inside each transaction, under the write lock; a
        # virtual clock (simulations) is read in Python, so playback stays exact.
        self._db_clock = isinstance(clock, DatabaseClock)
        self._listeners: list[EventListener] = []
        # each row of the last `tasks()` by its raw values: a screen reads all tasks ten
        # times a second and most rows have not changed, so their TaskRow is reused
        self._task_rows: dict[tuple[Any, ...], TaskRow] = {}
        self._ledger_rows: dict[tuple[Any, ...], LedgerRow] = {}  # the same, for `ledger()`

    @cached_property
    def batch_sql(self) -> BatchStatements:
        """The many-leases statements, compiled on first use: a simulation or a real worker
        renews and claims one lease at a time, and should not pay for them."""
        return store_batch_statements(dialect_name(self.driver), self.policy)

    @classmethod
    def open_inline(
        cls,
        path: str | os.PathLike[str] = ":memory:",
        *,
        clock: Clock,
        config: LeaseConfig | None = None,
        mode: Mode = Mode.CORRECT,
        scratch: bool = False,
    ) -> "LeaseStore":
        """A store whose calls never suspend: for virtual-time simulations and tests.

        `path` is a SQLite file, `sqlite:///PATH` or a `postgresql://` URL. With `scratch`
        (a simulation), a store on PostgreSQL works in a new schema of its own, dropped on
        close; a SQLite file is refused if real workers use it.
        """
        config, mode = check_config(config).validated(), check_mode(mode)
        check_clock(clock)
        check_flag(scratch, "scratch")
        return cls(inline_driver(check_path(path), scratch=scratch), clock, config, mode)

    @classmethod
    async def open_async(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        config: LeaseConfig | None = None,
        mode: Mode = Mode.CORRECT,
        scratch: bool = False,
    ) -> "LeaseStore":
        """A store for real-clock workers in an asyncio program: AsyncSqliteDriver on
        SQLite, a psycopg connection on a thread of its own on PostgreSQL.

        Without `clock` the database's clock judges ("由统一的服务端时钟或数据库时钟裁决");
        a simulation passes its virtual clock."""
        config, mode = check_config(config).validated(), check_mode(mode)
        judge = DatabaseClock() if clock is None else check_clock(clock)
        check_flag(scratch, "scratch")
        return cls(await async_driver(check_path(path), scratch=scratch), judge, config, mode)

    async def close(self) -> None:
        """Wait for every call in flight, then close; later calls raise StoreClosed."""
        await self.driver.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def has_listeners(self) -> bool:
        return bool(self._listeners)

    def add_listener(self, listener: EventListener) -> None:
        """Call listener with every event after its transaction commits."""
        if not callable(listener):
            raise InvalidArgument(f"listener must be callable, got {type(listener).__name__}")
        self._listeners.append(listener)

    # -- plumbing ---------------------------------------------------------------------------

    def _now(self, conn: Any, *, writing: bool = False) -> int:
        """The time that judges this transaction: the database's, or the injected clock's.

        `writing`: the transaction may change the store, so on SQLite a clock behind an
        instant already written stops it (a reader, such as the fleet's view, only looks).
        """
        if self._db_clock:
            # The PostgreSQL driver reads the server's clock as the transaction begins, in
            # the same round trip as BEGIN (nothing has run in it yet); SQLite's is read here.
            began: int | None = getattr(conn, "db_now_ms", None)
            if began is not None:
                return began
            now, newest = self.sql.now.run(conn)[0]
            if writing and newest is not None and newest - now > CLOCK_TOLERANCE_MS:
                raise clock_behind(int(now), int(newest))
            return int(now)
        return self.clock.now_ms()

    async def _write(
        self, body: Callable[[_Txn], Any], first: Sequence[tuple[Stmt, dict[str, Any]]] = ()
    ) -> Any:
        """Run `body` as one transaction. `first`: statements that read the database's
        clock themselves, sent with BEGIN where the driver can (PostgreSQL), their rows
        left in `txn.first_rows`, one list per statement, for the body (None where they
        were not sent: the body runs them)."""
        last: _Txn | None = None  # the attempt that committed (a busy one is tried again)

        def run(conn: Any) -> Any:
            nonlocal last
            first_rows = None
            if first and self._db_clock:
                begin_with = getattr(conn, "begin_with", None)
                if begin_with is not None:
                    first_rows = begin_with([(stmt.sql, params) for stmt, params in first])
            # Read the clock once the write lock is held: a time read before waiting for
            # the lock could be older than a competing commit that already happened.
            txn = last = _Txn(
                self.sql, conn, self._now(conn, writing=True), fence_tokens=self.policy.fence_tokens
            )
            txn.first_rows = first_rows
            try:
                return body(txn)
            except _Rejected as rejected:
                # The rejection's event row commits with the transaction; the error
                # reaches the caller after it. The carrier's traceback is read by no one
                # and would hold this frame and, through it, the driver's, which holds
                # the carrier: a reference cycle per refusal.
                return rejected.with_traceback(None)

        result = await self.driver.write(run)
        if last is not None:
            for ev in last.events:
                for listener in self._listeners:
                    listener(ev)
        if isinstance(result, _Rejected):
            error = result.error
            # The error's traceback holds this frame: were the frame still to hold the
            # error, every refusal would leave a reference cycle for the garbage collector
            # (in the explorer, a quarter of its time went to collecting them).
            del result
            try:
                raise error
            finally:
                del error
        return result

    # -- operations -------------------------------------------------------------------------

    def hold(self, task_id: str, worker_id: str) -> Hold:
        """The lease as a library: `async with store.hold(task_id, worker_id) as lease:`
        claims the task (NotClaimed says why not), renews it in a task of its own, cancels
        the body with LeaseLost when it cannot, and completes it when the body ends (gives
        it back to the queue if the body raises). See docs/library.md."""
        # "续约频率快于租期的一半": a hold renews every heartbeat_every; one that renews more
        # slowly than half the ttl still runs, and is told (TimingWarning) where it is made.
        for message in self.config.timing_warnings():
            warnings.warn(message, TimingWarning, stacklevel=2)
        return Hold(self, task_id, worker_id)

    async def enqueue(
        self,
        task_id: str,
        kind: str = "ledger",
        payload: Any = None,
        max_attempts: int = 5,
    ) -> None:
        """Add a queued task."""
        check_id(task_id, "task id")
        check_id(kind, "task kind")
        if kind not in TaskKindName.__members__.values():
            raise InvalidArgument(
                f"kind {kind!a} is not a task kind; the kinds are "
                + ", ".join(k.value for k in TaskKindName)
            )
        check_whole(max_attempts, "max_attempts", 1, MAX_ATTEMPTS)
        body_json = _json(payload, "payload")

        def body(txn: _Txn) -> None:
            added = self.sql.enqueue.run(
                txn.conn,
                {
                    "task_id": task_id,
                    "kind": kind,
                    "max_attempts": max_attempts,
                    "input_payload": body_json,
                    "now": txn.now,
                },
            )
            if not added:
                raise DuplicateTask(task_id)
            txn.event(EventKind.ENQUEUED, task_id=task_id, kind=kind, max_attempts=max_attempts)

        await self._write(body)

    async def claim(
        self,
        worker_id: str,
        task_id: str | None = None,
        *,
        judge_now_ms: int | None = None,
    ) -> Lease | None:
        """Take a queued task or a running one whose lease expired; None if there is none.

        `judge_now_ms` replaces the store clock for the expiry judgement only; the
        simulation passes a worker's own clock in client_clock mode (mistake five).
        """
        check_id(worker_id, "worker id")
        if task_id is not None:
            check_id(task_id, "task id")
        if judge_now_ms is not None:
            # a worker's own clock (client_clock mode) may stand before the store's start
            check_whole(judge_now_ms, "judge_now_ms", -MAX_TOKEN, MAX_TOKEN)

        def body(txn: _Txn) -> Lease | None:
            params = {
                "worker_id": worker_id,
                "now": txn.now,
                "judge_now": txn.now if judge_now_ms is None else judge_now_ms,
                "ttl": self.config.ttl_ms,
                "deadline": self.config.deadline_ms,
            }
            if task_id is not None:
                params["task_id"] = task_id
            while True:
                sql = self.sql.claim_any if task_id is None else self.sql.claim_named
                found = txn.one(sql, params)
                if found is None:
                    if task_id is not None and txn.task_state(task_id) is None:
                        raise UnknownTask(task_id)
                    return None
                row = LeaseReturned._make(found)
                if row.status == TaskStatus.DEAD:
                    txn.event(
                        EventKind.DEAD_LETTERED,
                        task_id=row.task_id,
                        lease_token=row.lease_token,
                        fence_token=row.fence_token,
                        reason=RegisterReason.ATTEMPTS_EXHAUSTED,
                        attempts=row.attempt,
                    )
                    if task_id is not None:
                        return None
                    continue
                lease = _lease(row)
                # Only a claim that drew a token records it: one that issues none (before
                # the fence tag, or without expiry) would set the counter back to the
                # task's old token, and a later claim would issue a token twice ("fence_token
                # 只增不减的围栏令牌").
                if self.sql.fence_issued is not None and self.policy.issues_fence_tokens:
                    self.sql.fence_issued.run(txn.conn, {"fence_token": lease.fence_token})
                txn.lease_event(
                    EventKind.CLAIMED,
                    lease,
                    attempt=lease.attempt,
                    expires_at=lease.expires_at,
                    judged_by="client" if judge_now_ms is not None else None,
                )
                return lease

        result: Lease | None = await self._write(body)
        return result

    async def heartbeat(self, lease: Lease) -> Lease:
        """Renew a live lease; raise LeaseRejected (superseded, expired, not_running)."""
        check_lease(lease)
        # A renewal its caller stopped waiting for (a hold let it go at its renew deadline)
        # may still sit in the driver, reconnecting after a cut: once the road heals it
        # would renew the lease of a holder that has already stopped. Not begun by then,
        # it is not begun at all.
        abandoned = False

        def body(txn: _Txn) -> Lease:
            if abandoned:
                raise _Abandoned(lease.task_id)
            params = self._gate_params(lease, txn.now)
            if self._renews_logged and self.policy.expiry and self.policy.fence_tokens:
                # PostgreSQL: the renewal and its register line in one statement (its line
                # is `renewed` with both tokens, so not for a run that has neither).
                logged = renew_logged(self, txn, lease, params)
                if logged is None:
                    raise self._reject(txn, lease, Operation.HEARTBEAT)
                return logged
            row = txn.one(self.sql.heartbeat, params)
            if row is None:
                raise self._reject(txn, lease, Operation.HEARTBEAT)
            renewed = _lease(row)
            if self.policy.expiry:
                txn.lease_event(EventKind.RENEWED, lease, expires_at=renewed.expires_at)
            else:
                txn.lease_event(EventKind.HEARTBEAT_NOTED, lease, last_heartbeat_at=txn.now)
            return renewed

        try:
            result: Lease = await self._write(body)
        except asyncio.CancelledError:
            abandoned = True
            raise
        return result

    async def save_checkpoint(self, lease: Lease, step: int, state: Any) -> CheckpointRow:
        """Save half-done work as a checkpoint, if the lease is still current."""
        check_lease(lease)
        check_whole(step, "step", 0, MAX_STEP)
        state_json = _json(state, "checkpoint state")

        def body(txn: _Txn) -> CheckpointRow:
            seq_row = txn.one(self.sql.checkpoint_next_seq, {"task_id": lease.task_id})
            seq = int(seq_row[0]) if seq_row else 1
            params = self._gate_params(lease, txn.now)
            params["checkpoint_uri"] = f"checkpoint://{lease.task_id}/{seq}"
            row = txn.one(self.sql.checkpoint_gate, params)
            if row is None:
                raise self._reject(txn, lease, Operation.CHECKPOINT)
            self.sql.checkpoint_insert.run(
                txn.conn,
                {
                    "task_id": lease.task_id,
                    "seq": seq,
                    "step": step,
                    "state": state_json,
                    "fence_token": lease.fence_token,
                    "now": txn.now,
                },
            )
            txn.lease_event(
                EventKind.CHECKPOINT_SAVED,
                lease,
                step=step,
                seq=seq,
            )
            return CheckpointRow(
                lease.task_id, seq, step, json.loads(state_json), lease.fence_token, txn.now
            )

        result: CheckpointRow = await self._write(body)
        return result

    async def complete(self, lease: Lease, result: Any = None) -> None:
        """Finish the task under a current lease."""
        check_lease(lease)
        result_json = _json(result, "result")

        def body(txn: _Txn) -> None:
            params = self._gate_params(lease, txn.now)
            params["result"] = result_json
            if txn.one(self.sql.complete, params) is None:
                raise self._reject(txn, lease, Operation.COMPLETE)
            txn.lease_event(
                EventKind.COMPLETED,
                lease,
            )

        await self._write(body)

    async def fail(self, lease: Lease, error_code: str, retry: bool = True) -> str:
        """Give the task up: back to the queue (if retry and attempts remain) or dead."""
        check_lease(lease)
        check_id(error_code, "error code")
        check_flag(retry, "retry")

        def body(txn: _Txn) -> str:
            params = self._gate_params(lease, txn.now)
            params.update(error_code=error_code, retry=1 if retry else 0)
            row = txn.one(self.sql.fail, params)
            if row is None:
                raise self._reject(txn, lease, Operation.FAIL)
            status = str(LeaseReturned._make(row).status)
            txn.lease_event(
                EventKind.FAILED if status == TaskStatus.QUEUED else EventKind.DEAD_LETTERED,
                lease,
                reason=error_code,
                retry=retry,
                status=status,
            )
            return status

        result: str = await self._write(body)
        return result

    async def park(self, lease: Lease, reason: str = "awaiting_approval") -> None:
        """Release the lease while a human decides; nothing expires while waiting."""
        check_lease(lease)
        check_id(reason, "reason")

        def body(txn: _Txn) -> None:
            if txn.one(self.sql.park, self._gate_params(lease, txn.now)) is None:
                raise self._reject(txn, lease, Operation.PARK)
            txn.lease_event(
                EventKind.PARKED,
                lease,
                reason=reason,
            )

        await self._write(body)

    async def _decide(self, task_id: str, approved: bool) -> None:
        check_id(task_id, "task id")
        name = "approve" if approved else "reject"
        done, ignored = (
            (EventKind.APPROVED, EventKind.APPROVE_IGNORED)
            if approved
            else (EventKind.REJECTED, EventKind.REJECT_IGNORED)
        )

        def body(txn: _Txn) -> str | None:
            sql = self.sql.approve if approved else self.sql.reject
            if txn.one(sql, {"task_id": task_id, "now": txn.now}) is not None:
                txn.event(done, task_id=task_id)
                return None
            state = txn.task_state(task_id)
            if state is None:
                raise UnknownTask(task_id)
            # Not a lease rejection: nothing changed and nobody lost anything. The register
            # still says the decision came and was ignored.
            txn.event(
                ignored, task_id=task_id, reason=RegisterReason.NOT_WAITING, status=state.status
            )
            return str(state.status)

        refused_status: str | None = await self._write(body)
        if refused_status is not None:
            raise TaskStateError(
                f"cannot {name} {task_id}: it is {refused_status}, not waiting for approval",
                operation=name,
                task=task_id,
                status=refused_status,
            )

    async def approve(self, task_id: str) -> None:
        """A human said yes: the parked task goes back to the queue."""
        await self._decide(task_id, True)

    async def reject(self, task_id: str) -> None:
        """A human said no: the parked task is dead."""
        await self._decide(task_id, False)

    async def fenced_write(self, lease: Lease, key: str, value: str) -> LedgerRow:
        """Write a page of the ledger (总册), stamped with the lease's fence token.

        Accepted only from the task's current, live lease, whose fence token is the newest
        issued for the task, and only if the page has not accepted a higher token. A token
        behind either is `fenced`; otherwise the lease gate's reason (superseded, expired,
        not_running). In no_fencing mode the ledger takes any write.
        """
        check_lease(lease)
        check_id(key, "ledger key")
        check_text(value, "ledger value")

        def body(txn: _Txn) -> LedgerRow:
            params = self._gate_params(lease, txn.now)
            params.update(key=key, value=value)
            before = txn.one(self.sql.ledger_token, params)
            page = int(before[0]) if before else None
            if txn.one(self.sql.ledger_write, params) is None:
                current = txn.task_state(lease.task_id)
                reason = self._why(lease, current)  # also: a lease never issued is a bug
                assert current is not None
                newest = max(int(current.fence_token), page or 0)
                if lease.fence_token < newest:
                    reason = RejectReason.FENCED
                raise self._reject(
                    txn,
                    lease,
                    Operation.WRITE,
                    key=key,
                    current=current,
                    reason=reason,
                    current_fence=newest,
                    page_fence_token=page,
                    # what the page would have said: the room sees what the fence kept out
                    value=value,
                )
            txn.lease_event(
                EventKind.WRITE_ACCEPTED,
                lease,
                key=key,
                previous_fence_token=page,
            )
            return LedgerRow(key, value, lease.fence_token, lease.owner_id, txn.now, lease.task_id)

        result: LedgerRow = await self._write(body)
        return result

    async def apply_effect(
        self, lease: Lease, idempotency_key: str, effect: str, payload: Any = None
    ) -> EffectOutcome:
        """Apply a side effect once per idempotency key; repeats return the stored result."""
        check_lease(lease)
        check_id(idempotency_key, "idempotency key")
        check_id(effect, "effect")
        payload_json = _json(payload, "effect payload")

        def body(txn: _Txn) -> EffectOutcome:
            outcome = {
                "effect": effect,
                "payload": json.loads(payload_json),
                "receipt": f"{idempotency_key}@{lease.fence_token}",
            }
            params = {
                "key": idempotency_key,
                "task_id": lease.task_id,
                "effect": effect,
                "fence_token": lease.fence_token,
                "result": dump_json(outcome),
                "now": txn.now,
            }
            applied = txn.one(self.sql.effect_apply, params) is not None
            stored = None if applied else txn.one(self.sql.effect_result, params)
            txn.lease_event(
                EventKind.EFFECT_APPLIED if applied else EventKind.EFFECT_DEDUPLICATED,
                lease,
                # Without idempotency the call carries no key: the register names the call.
                **({"key": idempotency_key} if self.policy.idempotency else {}),
                call=None if self.policy.idempotency else idempotency_key,
                effect=effect,
            )
            return EffectOutcome(applied, json.loads(stored[0]) if stored else outcome)

        result: EffectOutcome = await self._write(body)
        return result

    async def record(
        self,
        event: EventKind,
        *,
        task_id: str | None = None,
        worker_id: str | None = None,
        lease_token: int | None = None,
        fence_token: int | None = None,
        reason: str | None = None,
        **detail: Any,
    ) -> EventRow:
        """Append an event that happened outside the store (a fault, a partitioned call).

        Every argument is checked before the transaction: the register is read back by
        screens, transcripts and `fleet --check`, so an event of no known kind, an id that
        breaks a line or a detail no JSON holds is refused, not written."""
        if not isinstance(event, str) or event not in EventKind.__members__.values():
            raise InvalidArgument(f"event {ascii(event)[:40]} is not a kind of event")
        event = EventKind(event)
        for name, value in (("task_id", task_id), ("worker_id", worker_id), ("reason", reason)):
            if value is not None:
                check_id(value, name)
        for name, token in (("lease_token", lease_token), ("fence_token", fence_token)):
            if token is not None:
                check_whole(token, name, 0, MAX_TOKEN)
        stored_json(detail, "detail")

        def body(txn: _Txn) -> EventRow:
            return txn.event(
                event,
                task_id=task_id,
                worker_id=worker_id,
                lease_token=lease_token,
                fence_token=fence_token,
                reason=reason,
                **detail,
            )

        result: EventRow = await self._write(body)
        return result
