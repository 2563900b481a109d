"""The lease as a library: `async with store.hold(task_id, worker_id) as lease:`.

A hold claims a task, renews its lease in a task of its own, cancels the body when the lease
cannot be renewed in time, and completes (or gives the task back) when the body ends. Its
fenced calls (checkpoint, resume, effect) go through the store, whose clock judges, and are
refused once the lease is gone. See docs/library.md.

The hold knows the store only by the public calls below (`HoldStore`), so the driver under
the store can change without it.
"""

import asyncio
import contextlib
import enum
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Protocol, TypeVar

from core.engine.clock import Clock
from core.engine.config import LeaseConfig
from core.engine.durations import format_duration
from core.engine.errors import (
    BorrowedKeysError,
    InvalidArgument,
    LeaseRejected,
    RegisterReason,
    RejectReason,
    Why,
)
from core.engine.ids import MAX_STEP, check_id, check_whole
from core.engine.modes import Mode
from core.engine.records import CheckpointRow, EventRow, Lease, TaskRow, stored_json
from core.engine.vocabulary import EventKind, TaskStatus

T = TypeVar("T")

# What a hold's checkpoint holds besides the caller's state: the results of its effects,
# so a redo is answered from them. The marker tells a hold's checkpoint from another's.
_ENVELOPE = "hold"
_ENVELOPE_VERSION = 1
# What a frozen renewer counts as its last failure: no call was made.
_FROZEN = RuntimeError("renewals frozen")


class HoldStore(Protocol):
    """The public calls of a lease store a hold uses (LeaseStore is one)."""

    @property
    def config(self) -> LeaseConfig: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def clock(self) -> Clock: ...

    async def claim(self, worker_id: str, task_id: str | None = None) -> Lease | None: ...
    async def heartbeat(self, lease: Lease) -> Lease: ...
    async def save_checkpoint(self, lease: Lease, step: int, state: Any) -> CheckpointRow: ...
    async def load_checkpoint(self, task_id: str) -> CheckpointRow | None: ...
    async def complete(self, lease: Lease, result: Any = None) -> None: ...
    async def fail(self, lease: Lease, error_code: str, retry: bool = True) -> str: ...
    async def park(self, lease: Lease, reason: str = "awaiting_approval") -> None: ...
    async def task(self, task_id: str) -> TaskRow: ...
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
    ) -> EventRow: ...


class LostBecause(enum.StrEnum):
    """Why a hold let its lease go: the store refused the renewal (its reason), or no
    renewal was answered by the renew deadline."""

    SUPERSEDED = RejectReason.SUPERSEDED.value
    EXPIRED = RejectReason.EXPIRED.value
    NOT_RUNNING = RejectReason.NOT_RUNNING.value
    FENCED = RejectReason.FENCED.value
    RENEW_DEADLINE_PASSED = RegisterReason.RENEW_DEADLINE_PASSED.value


class NotClaimedBecause(enum.StrEnum):
    """Why `hold` could not claim the task (its status and owner when it looked)."""

    HELD = "held"  # another worker holds a live lease
    WAITING = "waiting"  # parked for a human's approval
    DONE = "done"
    DEAD = "dead"  # attempts exhausted, or rejected by the human
    # the claim found nothing, and by the time the hold looked the task could be claimed
    # again (a lease that just ran out): trying again may succeed
    RACED = "raced"


def _at(ms: int | None) -> str:
    if ms is None:
        return "never"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


class LeaseLost(BorrowedKeysError):
    """The lease is gone: the body was cancelled (self-fencing) or a fenced call refused.

    `reason` says why (the store's refusal, or `renew_deadline_passed`), `at_ms` when the
    hold found out (its store's clock: the machine's on a real store, virtual time in a
    simulation), `last_renewed_ms` the store's time of the last renewal it answered, and
    `cause` the store's own error, if it gave one.
    """

    why = Why.LEASE_LOST

    def __init__(
        self,
        lease: Lease,
        reason: LostBecause,
        *,
        at_ms: int,
        last_renewed_ms: int | None,
        detail: str,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(
            f"{lease.owner_id} lost its lease on {lease.task_id} (lease {lease.lease_token}, "
            f"fence {lease.fence_token}) at {_at(at_ms)}: {reason} ({detail})",
            task=lease.task_id,
            worker=lease.owner_id,
            reason=str(reason),
        )
        self.lease = lease
        self.task_id = lease.task_id
        self.worker_id = lease.owner_id
        self.reason = reason
        self.at_ms = at_ms
        self.last_renewed_ms = last_renewed_ms
        self.cause = cause


class NotClaimed(BorrowedKeysError):
    """`hold` found the task but could not claim it; `reason` says why, with its owner and
    lease expiry (store time) when another worker holds it."""

    why = Why.NOT_CLAIMED

    def __init__(self, row: TaskRow, reason: NotClaimedBecause) -> None:
        if reason is NotClaimedBecause.HELD:
            said = f"held by {row.owner_id} until {_at(row.lease_expires_at)}"
        elif reason is NotClaimedBecause.RACED:
            said = "nothing to claim when asked; it is free now, try again"
        else:
            said = f"it is {row.status}"
        super().__init__(
            f"cannot claim {row.task_id}: {said}", task=row.task_id, reason=str(reason)
        )
        self.task_id = row.task_id
        self.reason = reason
        self.status = row.status
        self.owner_id = row.owner_id
        self.lease_expires_at = row.lease_expires_at


def _not_claimed_because(row: TaskRow) -> NotClaimedBecause:
    status = TaskStatus(row.status)
    if status is TaskStatus.RUNNING:
        return NotClaimedBecause.HELD
    if status is TaskStatus.WAITING:
        return NotClaimedBecause.WAITING
    if status is TaskStatus.DONE:
        return NotClaimedBecause.DONE
    if status is TaskStatus.DEAD:
        return NotClaimedBecause.DEAD
    return NotClaimedBecause.RACED


def _let_go(call: "asyncio.Future[Any]") -> None:
    call.cancel()
    # its end (a result, the store's error) is read by no one: mark it read
    call.add_done_callback(lambda f: f.cancelled() or f.exception())


async def _unless_late(call: Awaitable[T], timeout: float | None) -> T:
    """Await a store call, but stop waiting at `timeout` or when this task is cancelled.

    A store call cancelled while its transaction waits for a lock may only give the
    cancellation back once the transaction ends (see the drivers), which can be long after
    the renew deadline: the hold stops waiting for it at once, and the store's `close()`
    still waits for it to end.
    """
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except BaseException:
        _let_go(task)
        raise
    if not done:
        _let_go(task)
        raise TimeoutError
    return task.result()


class Hold:
    """One claimed lease and the task renewing it; made by `LeaseStore.hold`.

    Enter it with `async with`; inside, `token` is the fence token to hand downstream,
    `resume()` the state of the task's last checkpoint, `checkpoint(state)` saves new state,
    `effect(key, fn)` runs `fn` once per key. A hold is entered once.
    """

    def __init__(self, store: HoldStore, task_id: str, worker_id: str) -> None:
        self._store = store
        self.task_id = check_id(task_id, "task id")
        self.worker_id = check_id(worker_id, "worker id")
        self._config = store.config
        self._idempotent = store.mode is not Mode.NO_IDEMPOTENCY
        self._lease: Lease | None = None
        self._state: Any = None
        self._effects: dict[str, Any] = {}
        self._step = 0
        self._body: asyncio.Task[Any] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._lost: LeaseLost | None = None
        self._cancelled_body = False
        self._finished = False  # completed, parked or given back: nothing more to renew
        self._entered = False
        self._exiting = False
        self.renewals = 0
        self._last_renewed_ms: int | None = None
        self._frozen = False
        self._renewing: asyncio.Future[Lease] | None = None  # the renewal on its way, if one

    # -- what the body reads ----------------------------------------------------------------

    @property
    def lease(self) -> Lease:
        """The lease as the store last answered it (tokens, expiry, renew deadline)."""
        if self._lease is None:
            raise InvalidArgument("the hold is not entered: use `async with store.hold(...)`")
        return self._lease

    @property
    def token(self) -> int:
        """The fence token: hand it to every downstream write ("所有下游写入都必须携带这个
        token"); a downstream that keeps the newest it has seen refuses an older one."""
        return self.lease.fence_token

    @property
    def lost(self) -> LeaseLost | None:
        """Why the lease is gone, once it is; None while it is held."""
        return self._lost

    def idempotency_key(self, key: str) -> str:
        """The key `effect(key, fn)` hands to `fn`: the same for every attempt of the task,
        so a downstream that honours idempotency keys answers a redo from the first call."""
        check_id(key, "effect key")
        return f"{self.task_id}:{key}"

    # -- a fault, on purpose ------------------------------------------------------------------

    @property
    def frozen(self) -> bool:
        """True while `freeze()` keeps the renewals from being sent."""
        return self._frozen

    def freeze(self) -> None:
        """Stop sending renewals while the body goes on: the frozen heartbeat of the
        simulation's faults, for demos and tests. Nothing else changes: the renew deadline
        still counts, so the hold lets the lease go (the body is cancelled with LeaseLost)
        when it passes, as it would if the store had stopped answering."""
        self._frozen = True

    async def quiet(self) -> None:
        """Wait until no renewal is on its way to the store (after `freeze`, none starts):
        a process stopped after this holds no transaction of its renewer's open."""
        renewing = self._renewing
        if renewing is not None and not renewing.done():
            await asyncio.wait({renewing})

    def thaw(self) -> None:
        """Send renewals again (the next one at the next beat), if the deadline has not
        passed meanwhile."""
        self._frozen = False

    # -- entering and leaving ---------------------------------------------------------------

    async def __aenter__(self) -> "Hold":
        if self._entered:
            raise InvalidArgument(f"the hold on {self.task_id} was already entered once")
        self._entered = True
        body = asyncio.current_task()
        if body is None:
            raise InvalidArgument("a hold must be entered from an asyncio task")
        self._body = body
        loop = asyncio.get_running_loop()
        asked = loop.time()
        lease = await self._store.claim(self.worker_id, self.task_id)
        if lease is None:
            row = await self._store.task(self.task_id)
            raise NotClaimed(row, _not_claimed_because(row))
        self._lease = lease
        self._last_renewed_ms = self._renewed_at(lease)
        try:
            saved = await self._store.load_checkpoint(self.task_id)
        except BaseException:
            await self._give_back("load_checkpoint_failed")
            raise
        if saved is not None:
            self._read_saved(saved)
        if lease.expires_at is not None:  # no_expiry mode: nothing ever runs out
            self._renewer = asyncio.create_task(
                self._renew(asked), name=f"renew {self.task_id} for {self.worker_id}"
            )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        _tb: TracebackType | None,
    ) -> bool:
        self._exiting = True
        await self._stop_renewing()
        if self._lost is not None:
            if self._cancelled_body and self._body is not None:
                self._body.uncancel()
                if self._body.cancelling() > 0:
                    return False  # someone else cancelled it too: that cancellation wins
            await self._say_self_fenced()
            if exc_type is None or isinstance(exc, asyncio.CancelledError):
                raise self._lost from exc
            return False  # the body's own error (a fenced call's refusal) goes on
        if self._finished:
            return False
        if exc is None:
            await self._fenced(self._store.complete(self.lease, None))
            self._finished = True
            return False
        # The body failed: the task goes back to the queue for the next worker ("若续约消失，
        # 任务重新可见"), at once rather than when its lease runs out.
        await self._give_back(type(exc).__name__)
        return False

    async def _give_back(self, error_code: str) -> None:
        if self._finished or self._lease is None:
            return
        self._finished = True
        # A refusal: it was no longer ours to give back (the store's register says so).
        with contextlib.suppress(LeaseRejected):
            await self._store.fail(self._lease, check_id(error_code, "error code"), True)

    async def _stop_renewing(self) -> None:
        renewer, self._renewer = self._renewer, None
        if renewer is None:
            return
        renewer.cancel()
        try:
            await renewer
        except asyncio.CancelledError:
            if not renewer.cancelled():
                raise  # our own task was cancelled while waiting

    async def _say_self_fenced(self) -> None:
        """Write `self_fenced` to the register if the store answers within a beat: the
        hold has already stopped; this is only the record of it."""
        lost = self._lost
        if lost is None or lost.reason is not LostBecause.RENEW_DEADLINE_PASSED:
            return
        # the deadline it passed, on the store's clock, as a simulated worker's record
        # says it ("no renewal by the renew deadline 0:00:11"): the last renewal the store
        # answered, plus the renew deadline
        detail: dict[str, int] = {}
        if lost.last_renewed_ms is not None:
            detail["renew_deadline"] = lost.last_renewed_ms + self._config.deadline_ms
        with contextlib.suppress(TimeoutError, BorrowedKeysError, OSError):
            await _unless_late(
                self._store.record(
                    EventKind.SELF_FENCED,
                    task_id=lost.lease.task_id,
                    worker_id=lost.lease.owner_id,
                    lease_token=lost.lease.lease_token,
                    fence_token=lost.lease.fence_token,
                    reason=RegisterReason.RENEW_DEADLINE_PASSED,
                    **detail,
                ),
                self._config.heartbeat_ms / 1000,
            )

    # -- renewing ---------------------------------------------------------------------------

    def _renewed_at(self, lease: Lease) -> int | None:
        return None if lease.expires_at is None else lease.expires_at - self._config.ttl_ms

    async def _renew(self, last_sent: float) -> None:
        # "续约和业务执行解耦……更稳妥的方式是单独的 heartbeat 协程或线程": this task renews
        # whatever the body is doing. "续约频率快于租期的一半": it renews every heartbeat_ms
        # (a third of the ttl unless configured), which the store's config holds below the
        # renew deadline, itself below the ttl.
        #
        # The deadline is counted on this process's monotonic clock from the moment the last
        # answered renewal was sent: the store set that lease's expiry from its own clock
        # no earlier, so stopping by then stops before the store would hand the task on.
        # The store still judges; this clock only makes the holder let go first.
        loop = asyncio.get_running_loop()
        beat = self._config.heartbeat_ms / 1000
        deadline_s = self._config.deadline_ms / 1000
        retry = beat / 4
        while True:
            await asyncio.sleep(max(0.0, last_sent + beat - loop.time()))
            deadline = last_sent + deadline_s
            failure: BaseException | None = None
            while True:
                sent = loop.time()
                remaining = deadline - sent
                if remaining <= 0:
                    self._lose(
                        LostBecause.RENEW_DEADLINE_PASSED,
                        f"no renewal answered within {format_duration(self._config.deadline_ms)}"
                        " (renew_deadline) of the last one"
                        + (
                            "; its renewals were frozen"
                            if failure is _FROZEN
                            else f"; the store's last error: {failure}"
                            if failure
                            else ""
                        ),
                        None if failure is _FROZEN else failure,
                    )
                    return
                if self._frozen:
                    # nothing is sent; the deadline is looked at a few times a beat
                    failure = failure or _FROZEN
                    await asyncio.sleep(min(retry, remaining))
                    continue
                self._renewing = asyncio.ensure_future(self._store.heartbeat(self.lease))
                try:
                    renewed = await _unless_late(self._renewing, remaining)
                except TimeoutError:
                    continue  # the deadline has passed: said above
                except LeaseRejected as refused:
                    self._lose(LostBecause(refused.reason.value), str(refused), refused)
                    return
                except (BorrowedKeysError, OSError) as error:
                    # The store could not answer (a lost connection, a full disk): try again
                    # until the deadline, a few times a beat.
                    failure = error
                    await asyncio.sleep(min(retry, max(0.0, deadline - loop.time())))
                    continue
                self._lease = renewed
                self._last_renewed_ms = self._renewed_at(renewed)
                self.renewals += 1
                last_sent = sent
                break

    def _lose(self, reason: LostBecause, detail: str, cause: BaseException | None) -> None:
        """Self-fencing: the body stops as soon as the lease cannot be trusted."""
        if self._lost is not None or self._finished:
            return
        # Once the body has left the block, leaving says the loss itself: a cancellation
        # now would land in the middle of the exit.
        exiting = self._exiting
        lease = self.lease
        self._lost = LeaseLost(
            lease,
            reason,
            at_ms=self._now_ms(),
            last_renewed_ms=self._last_renewed_ms,
            detail=detail,
            cause=cause,
        )
        if self._body is not None and not self._body.done() and not exiting:
            self._cancelled_body = True
            self._body.cancel(str(self._lost))

    def _now_ms(self) -> int:
        # the store's clock: this machine's on a real store (what the store's own 'now'
        # reads on SQLite), virtual time in a simulation
        return self._store.clock.now_ms()

    # -- fenced calls -----------------------------------------------------------------------

    def _check_live(self) -> Lease:
        if self._lost is not None:
            raise self._lost
        lease = self.lease
        if self._finished:
            raise InvalidArgument(
                f"the hold on {self.task_id} is over (completed, parked or given back)"
            )
        return lease

    async def _fenced(self, call: Awaitable[T]) -> T:
        """A store call under the lease: a refusal means the lease is gone, for good."""
        try:
            return await _unless_late(call, None)
        except LeaseRejected as refused:
            if self._lost is None:
                self._lost = LeaseLost(
                    self.lease,
                    LostBecause(refused.reason.value),
                    at_ms=self._now_ms(),
                    last_renewed_ms=self._last_renewed_ms,
                    detail=str(refused),
                    cause=refused,
                )
            await self._stop_renewing_from_body()
            raise

    async def _stop_renewing_from_body(self) -> None:
        # cancelled now, awaited when the block ends (`_stop_renewing`)
        renewer = self._renewer
        if renewer is not None and renewer is not asyncio.current_task():
            renewer.cancel()

    def _read_saved(self, saved: CheckpointRow) -> None:
        self._step = saved.step
        state = saved.state
        if isinstance(state, dict) and state.get(_ENVELOPE) == _ENVELOPE_VERSION:
            self._state = state.get("state")
            effects = state.get("effects")
            self._effects = dict(effects) if isinstance(effects, dict) else {}
        else:
            self._state = state

    def resume(self) -> Any:
        """The state of the task's last checkpoint when this hold claimed it, as changed by
        this hold's own checkpoints since; None if there is none. Refused once the lease
        is gone ("Checkpoint 决定接手之后从哪里继续")."""
        self._check_live()
        return self._state

    @property
    def step(self) -> int:
        """The step number of the last checkpoint (0 before any)."""
        return self._step

    async def checkpoint(self, state: Any, *, step: int | None = None) -> CheckpointRow:
        """Save `state` (JSON) as the task's checkpoint, fenced by the lease: a holder whose
        lease is gone is refused with the store's reason (LeaseRejected), or LeaseLost if
        the hold already knows. `step` defaults to one past the last."""
        lease = self._check_live()
        if step is None:
            step = self._step + 1
        check_whole(step, "step", 0, MAX_STEP)
        stored_json(state, "checkpoint state")
        saved = await self._save(lease, step, state, self._effects)
        self._state = state
        return saved

    async def _save(
        self, lease: Lease, step: int, state: Any, effects: dict[str, Any]
    ) -> CheckpointRow:
        envelope = {_ENVELOPE: _ENVELOPE_VERSION, "state": state, "effects": effects}
        saved = await self._fenced(self._store.save_checkpoint(lease, step, envelope))
        self._step = step
        return saved

    async def effect(self, key: str, fn: Callable[[str], Awaitable[T]]) -> T:
        """Run `fn(idempotency_key)` once for `key` in this task and return its result; a
        redo (this worker or a successor) gets the recorded result without calling it.

        The result (JSON) is recorded in the task's checkpoint, fenced by the lease. If the
        worker dies after `fn` returned and before the record lands, the redo calls `fn`
        again with the same idempotency key: hand it to the downstream (an
        `Idempotency-Key` header) so that the second call is answered from the first
        ("Idempotency Key 让重放调用不炸副作用"). In no_idempotency mode (the seed's fifth
        part missing) nothing is looked up and the redo runs `fn` again.
        """
        self._check_live()
        check_id(key, "effect key")
        if not callable(fn):
            raise InvalidArgument(f"fn must be an async function, got {type(fn).__name__}")
        if self._idempotent and key in self._effects:
            found: T = self._effects[key]
            return found
        called = fn(self.idempotency_key(key))
        if not isinstance(called, Awaitable):
            raise InvalidArgument(
                f"fn must return an awaitable (an async function), got {type(called).__name__}"
            )
        result = await called
        stored_json(result, f"the result of effect {key}")
        effects = {**self._effects, key: result}
        await self._save(self._check_live(), self._step + 1, self._state, effects)
        self._effects = effects
        return result

    # -- ending early -----------------------------------------------------------------------

    async def complete(self, result: Any = None) -> None:
        """Finish the task now with `result` (leaving the block would, with None)."""
        lease = self._check_live()
        await self._fenced(self._store.complete(lease, result))
        self._finished = True
        await self._stop_renewing_from_body()

    async def park(self, reason: str = "awaiting_approval") -> None:
        """Let the lease go while a human decides ("租约自然释放"); after an approval the
        task is queued again and a new hold resumes it with a new fence token. Save the
        checkpoint first: nothing after `park` is fenced."""
        lease = self._check_live()
        check_id(reason, "reason")
        await self._fenced(self._store.park(lease, reason))
        self._finished = True
        await self._stop_renewing_from_body()
