"""An agent worker: on autopilot it polls, claims, resumes from the checkpoint, works the
steps (each a fenced ledger write, maybe an idempotent effect, then a checkpoint) and
completes, while a separate heartbeat loop renews the lease.

The heartbeat runs in its own task, never from inside the work loop: the seed's rule that
renewal is decoupled from business logic, so a slow step does not starve the lease. The
heartbeat_in_work mode breaks that rule on purpose: the work loop renews between steps.

With self-fencing on, the heartbeat task also watches the renew deadline: a holder that has
not renewed by then stops by itself, before its lease can expire and be handed on.
"""

import contextlib
import json
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from core.engine.config import LeaseConfig, Mode
from core.engine.errors import (
    LeaseRejected,
    RegisterReason,
    RejectReason,
    Unreachable,
)
from core.engine.records import Lease, TaskRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import EventKind, Operation
from core.sim.heavy import StoreLoad, format_size, heartbeat_cost_ms
from core.sim.kinds import KINDS, LEDGER, TaskKind
from core.sim.memory import Work, WorkerFaults
from core.sim.spec import (
    Checkpoint,
    Claim,
    Complete,
    Effect,
    Fail,
    Heartbeat,
    ManualAction,
    Park,
    WorkerState,
    Write,
)
from core.sim.unfit import ActionError, NoLease, Unfit

T = TypeVar("T")

# An effect is a call to an outside API: its answer takes a moment to come back, and a
# worker that dies in that moment has applied the effect without checkpointing it. This
# is the window idempotency keys exist for.
EFFECT_LATENCY_MS = 1_000


class Env(Protocol):
    """Where a worker's coroutines run: the virtual runtime, or asyncio on the real clock."""

    def sleep(self, ms: int) -> Awaitable[None]: ...

    def spawn(self, coro: Coroutine[Any, Any, None], *, owner: str, name: str) -> Any: ...

    def cancel(self, handle: Any) -> None: ...


class Partitioned(Exception):
    """The call never reached the store."""


class SelfFenced(Exception):
    """The worker passed its own renew deadline and gave the task up by itself."""


class Worker:
    """One worker's memory: the lease it believes it holds, and its faults."""

    def __init__(
        self,
        worker_id: str,
        *,
        store: LeaseStore,
        env: Env,
        config: LeaseConfig,
        mode: Mode = Mode.CORRECT,
        autopilot: bool = True,
        self_fencing: bool = False,
        skew_ms: int = 0,
        heartbeat_payload_bytes: int = 0,
        store_load: StoreLoad | None = None,
    ) -> None:
        self.id = worker_id
        self.store = store
        self.env = env
        self.config = config
        self.mode = mode
        self.autopilot = autopilot
        self.self_fencing = self_fencing
        self.faults = WorkerFaults(skew_ms=skew_ms, heartbeat_payload_bytes=heartbeat_payload_bytes)
        # How busy the store is, shared by the run's workers: what a heavy heartbeat pays.
        self.store_load = store_load if store_load is not None else StoreLoad()
        self.lease: Lease | None = None
        self.work: Work | None = None
        self.step: int | None = None
        self.last_renew_at: int | None = None
        self.unreachable = False  # its last call found no road to the server (real runs)
        self.work_process: Any = None
        self.heartbeat_process: Any = None
        # Set when self-fencing gave the held lease up: a call still retrying through a
        # partition with that lease must not reach the store once the partition heals.
        self.fenced_out = False
        # When the work loop last asked the store for work and got none (None while it
        # holds a task, or has not looked since): what makes a worker truly idle.
        self.last_empty_poll_at: int | None = None
        # When the heavy heartbeat on its way lands, by the store's clock (None: none is).
        self.heartbeat_lands_at: int | None = None

    # -- what the worker can see ----------------------------------------------------------

    def local_now(self) -> int:
        """The worker's own clock: the store's time plus its skew."""
        return self.store.clock.now_ms() + self.faults.skew_ms

    @property
    def state(self) -> WorkerState:
        f = self.faults
        if f.dead:
            return WorkerState.DEAD
        if f.stalled:
            return WorkerState.STALLED
        if f.partitioned:
            return WorkerState.PARTITIONED
        if f.heartbeat_frozen:
            return WorkerState.FROZEN
        return WorkerState.WORKING if self.lease is not None else WorkerState.IDLE

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self.autopilot:
            self.work_process = self.env.spawn(self.work_loop(), owner=self.id, name="work")

    def go_on_alone(self) -> None:
        """Manual until now, the worker goes on by itself from where it stands: the lease
        it remembers (live or stale) is worked on with the work it remembers, then it polls
        as any autopilot worker. A dead worker comes back on autopilot when restarted."""
        if self.autopilot:
            return
        self.autopilot = True
        if self.faults.dead:
            return
        self.work_process = self.env.spawn(
            self.work_loop(resume=self.lease), owner=self.id, name="work"
        )

    def stop(self) -> None:
        """Kill: every coroutine ends and the memory is lost; the lease is left to expire."""
        for handle in (self.heartbeat_process, self.work_process):
            if handle is not None:
                self.env.cancel(handle)
        self.heartbeat_process = self.work_process = None
        self.lease = None
        self.work = None
        self.step = None
        self.last_renew_at = None
        self.last_empty_poll_at = None
        self.heartbeat_lands_at = None
        self.faults.dead = True

    # -- store calls, through the worker's network ----------------------------------------

    async def _note_partitioned(self, operation: Operation, claiming: str | None) -> None:
        # A claim is about the task it asked for (or none), never the lease the worker holds.
        lease = self.lease if operation is not Operation.CLAIM else None
        await self.record(
            operation.rejected,
            lease,
            task_id=claiming,
            reason=RejectReason.PARTITIONED,
            operation=operation,
        )

    async def call(
        self,
        operation: Operation,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        retry: bool,
        claiming: str | None = None,
        **kwargs: Any,
    ) -> T:
        """Run a store call; while partitioned, record the failure and retry or give up.

        `claiming`: the task a claim asks for (None: any task).
        """
        while True:
            while self.faults.partitioned:
                await self._note_partitioned(operation, claiming)
                if not retry:
                    raise Partitioned(operation)
                await self.env.sleep(self.config.poll_every_ms)
                if self.fenced_out:
                    raise SelfFenced(operation)
            try:
                result = await fn(*args, **kwargs)
            except Unreachable:
                # A real cut (a worker process whose road to the server is down): the call
                # never got there, so nothing was written, not even why. The worker goes on
                # believing what it believed and tries again, as through the simulations'
                # partition, until the road is back or its own renew deadline says stop:
                # "这类系统在平稳时看起来没问题，一遇到网络分区或 GC pause 就会暴露。
                # 旧 worker 迟到返回时，系统缺少最后一道闸门。"
                self.unreachable = True
                if not retry:
                    raise Partitioned(operation) from None
                await self.env.sleep(self.config.poll_every_ms)
                if self.fenced_out:
                    raise SelfFenced(operation) from None
                continue
            self.unreachable = False
            return result

    # -- autopilot ------------------------------------------------------------------------

    async def work_loop(self, resume: Lease | None = None) -> None:
        """Poll for work, claim, run the task, repeat; first the lease `resume`, if given
        (a manual worker that goes on alone), with the work it remembers."""
        if resume is not None:
            if self.mode is not Mode.HEARTBEAT_IN_WORK:
                self.heartbeat_process = self.env.spawn(
                    self.heartbeat_loop(resume.lease_token, resume.task_id),
                    owner=self.id,
                    name="heartbeat",
                )
            try:
                await self.run_task(resume, remembered=self.work)
            finally:
                self.drop()
        while True:
            looked = True
            try:
                judge = self.local_now() if self.mode is Mode.CLIENT_CLOCK else None
                lease = await self.call(
                    Operation.CLAIM, self.store.claim, self.id, judge_now_ms=judge, retry=False
                )
            except Partitioned:
                lease, looked = None, False
            if lease is None:
                if looked:
                    self.last_empty_poll_at = self.store.clock.now_ms()
                await self.env.sleep(self.config.poll_every_ms)
                continue
            self.hold(lease)
            if self.mode is not Mode.HEARTBEAT_IN_WORK:
                self.heartbeat_process = self.env.spawn(
                    self.heartbeat_loop(lease.lease_token, lease.task_id),
                    owner=self.id,
                    name="heartbeat",
                )
            try:
                await self.run_task(lease)
            finally:
                self.drop()

    def hold(self, lease: Lease) -> None:
        self.lease = lease
        self.work = None
        self.fenced_out = False
        self.last_empty_poll_at = None
        self.last_renew_at = self.store.clock.now_ms()
        self.step = None

    def drop(self) -> None:
        """Forget the task (done, parked, or lost)."""
        if self.heartbeat_process is not None:
            self.env.cancel(self.heartbeat_process)
            self.heartbeat_process = None
        self.heartbeat_lands_at = None  # a heartbeat on its way went with its loop
        self.lease = None
        self.work = None
        self.step = None

    def _deadline_due_at(self, lease: Lease) -> int | None:
        """When, by the store clock, this worker's own clock reaches its renew deadline."""
        if not self.self_fencing or lease.renew_deadline is None:
            return None
        return lease.renew_deadline - self.faults.skew_ms

    async def heartbeat_loop(self, lease_token: int, task_id: str | None = None) -> None:
        """Renew the lease every heartbeat_every, on its own, until it is lost or dropped.

        With self-fencing, also wake at the renew deadline: not renewed by then, the worker
        gives the task up by itself (Kubernetes' leader election does the same).
        """
        beat_at = self.store.clock.now_ms() + self.config.heartbeat_ms
        while True:
            lease = self.lease
            if lease is None or not _same_lease(lease, task_id, lease_token):
                return
            now = self.store.clock.now_ms()
            deadline_at = self._deadline_due_at(lease)
            wake = beat_at if deadline_at is None else min(beat_at, deadline_at)
            if wake > now:
                await self.env.sleep(wake - now)
                continue  # look again: a renewal may have moved the deadline meanwhile
            if deadline_at is not None and now >= deadline_at:
                await self._fence_self(lease)
                return
            beat_at = now + self.config.heartbeat_ms
            if self.faults.heartbeat_frozen:
                continue  # frozen: the heartbeat never reaches the store
            try:
                await self.renew(lease)
            except Partitioned:
                continue
            except LeaseRejected:
                # Lost. The work loop finds out when its current step ends and drops the task.
                return

    async def renew(
        self, lease: Lease, *, forget_if_refused: bool = True, by_hand: bool = False
    ) -> Lease:
        """One heartbeat with `lease`. The renewed lease becomes the worker's memory, if that
        is still the lease it holds; a refusal means the lease is lost, and the worker
        forgets it unless told not to (a manual holder keeps its stale copy and may try it
        again). Partitioned and LeaseRejected go on to the caller.

        `by_hand`: a manual call, played at one instant like every manual call, so it
        carries no payload and makes no trip."""
        send = self.store.heartbeat if by_hand else self._send_heartbeat
        try:
            renewed = await self.call(Operation.HEARTBEAT, send, lease, retry=False)
        except LeaseRejected:
            if forget_if_refused:
                self.lease = None
            raise
        if self._still_mine(lease):
            self.lease = renewed
            self.last_renew_at = self.store.clock.now_ms()
        return renewed

    async def _send_heartbeat(self, lease: Lease) -> Lease:
        """The heartbeat's trip to the store. The store's statement is the cheap one either
        way; a payload makes the trip take time first, and the statement runs when it lands,
        judged by the store's clock then ("续约写入要足够轻。 心跳本身如果需要重数据库事务、跨区域
        RPC 或大对象序列化，它会先把自己变成新的瓶颈")."""
        payload = self.faults.heartbeat_payload_bytes
        cost = heartbeat_cost_ms(payload, self.store_load.factor)
        if payload:
            self.heartbeat_lands_at = self.store.clock.now_ms() + cost
            await self.record(
                EventKind.HEARTBEAT_SENT,
                lease,
                payload=format_size(payload),
                lands_at=self.heartbeat_lands_at,
            )
        deadline_at = self._deadline_due_at(lease)
        if deadline_at is not None and self.store.clock.now_ms() + cost > deadline_at:
            # Still on its way at the renew deadline: a self-fencing holder does not wait
            # for it ("renew_deadline   下一次续约必须发生在什么时候").
            self.env.spawn(self._fence_at_deadline(lease), owner=self.id, name="deadline")
        if cost:
            await self.env.sleep(cost)
        self.heartbeat_lands_at = None
        if cost and self.faults.partitioned:  # the bridge went down while it was on its way
            await self._note_partitioned(Operation.HEARTBEAT, None)
            raise Partitioned(Operation.HEARTBEAT)
        return await self.store.heartbeat(lease)

    async def _fence_at_deadline(self, lease: Lease) -> None:
        """Stop at the renew deadline unless a renewal has moved it meanwhile. The heartbeat
        may still land after and renew the row; the holder has let go by then, and the lease
        expires unrenewed."""
        deadline_at = self._deadline_due_at(lease)
        if deadline_at is None:
            return
        await self.env.sleep(max(0, deadline_at - self.store.clock.now_ms()))
        held = self.lease
        if held is None or held != lease or self.faults.stalled or self.faults.dead:
            return  # renewed, dropped, or not running any code of its own right now
        await self._fence_self(held)

    async def _fence_self(self, lease: Lease) -> None:
        """Give the lease up by itself: past the renew deadline, before the lease expires.

        The work loop finds out when its step ends; a call retrying through a partition
        gives up at its next try.
        """
        self.lease = None
        self.fenced_out = True
        await self.record(
            EventKind.SELF_FENCED,
            lease,
            reason=RegisterReason.RENEW_DEADLINE_PASSED,
            renew_deadline=lease.renew_deadline,
            expires_at=lease.expires_at,
        )

    def _still_mine(self, lease: Lease) -> bool:
        return self.lease is not None and _same_lease(self.lease, lease.task_id, lease.lease_token)

    async def _self_fenced(self) -> bool:
        """Defence in depth: past its own renew deadline, a worker stops by itself."""
        lease = self.lease
        if not self.self_fencing or lease is None or lease.renew_deadline is None:
            return False
        if self.local_now() < lease.renew_deadline:
            return False
        await self._fence_self(lease)
        return True

    async def _renew_between_steps(self, claimed: Lease) -> None:
        """heartbeat_in_work: the work loop renews when it reaches this line, and only then.

        A step longer than the lease means the renewal comes too late: the store refuses it
        (expired, or superseded by a successor) and LeaseRejected ends the task here.
        """
        if self.faults.heartbeat_frozen:
            return
        with contextlib.suppress(Partitioned):
            await self.renew(self._current(claimed))

    async def recall(
        self, lease: Lease, task: TaskRow | None = None, *, taking_over: bool = False
    ) -> Work:
        """Read the latest checkpoint before touching the ledger.

        In no_checkpoint mode (mistake four) no box was ever sealed, so there is nothing to
        read. In unread_checkpoint mode the box is there and a worker taking over walks past
        it; that is said in the register, so the screen shows the saved work ignored.
        """
        if task is None:
            task = await self.store.task(lease.task_id)
        payload = json.loads(task.input_payload or "null") or {}
        steps = int(payload.get("steps", 5))
        kind: TaskKind = KINDS.get(task.kind, LEDGER)
        checkpoint = await self.store.load_checkpoint(lease.task_id)
        if checkpoint is not None and self.mode is Mode.UNREAD_CHECKPOINT:
            if taking_over:
                await self.record(
                    EventKind.CHECKPOINT_IGNORED,
                    lease,
                    step=checkpoint.step,
                    saved_by_fence_token=checkpoint.fence_token,
                )
            checkpoint = None
        if checkpoint is not None:
            step, state = checkpoint.step, kind.resume(dict(checkpoint.state))
        else:
            step, state = 0, kind.initial_state(lease.task_id, steps)
        # From here on it reads for itself, under its own lease.
        states = {step: kind.take(state, lease.lease_token)}
        work = Work(lease.task_id, kind, steps, states)
        if self._still_mine(lease):
            self.work = work
        return work

    async def run_task(self, claimed: Lease, remembered: Work | None = None) -> None:
        """Resume from the latest checkpoint (or from the work `remembered`, a manual
        worker's own memory of this task) and work the remaining steps."""
        task = await self.store.task(claimed.task_id)
        payload = json.loads(task.input_payload or "null") or {}
        steps = int(payload.get("steps", 5))
        step_time = int(payload.get("step_time_ms", 10_000))
        if remembered is not None and remembered.task_id == claimed.task_id:
            work = remembered
        else:
            work = await self.recall(claimed, task, taking_over=True)
        kind = work.kind
        last = max(work.states)
        first, state = last + 1, work.states[last]
        park_after = kind.park_after(steps)
        try:
            for step in range(first, steps + 1):
                if park_after is not None and step == park_after + 1 and task.approved_at is None:
                    lease = self._current(claimed)
                    await self.call(Operation.PARK, self.store.park, lease, retry=True)
                    return
                self.step = step
                await self.env.sleep(round(step_time * self.faults.slow_factor))
                if not self._still_mine(claimed) or await self._self_fenced():
                    return
                if self.mode is Mode.HEARTBEAT_IN_WORK:
                    await self._renew_between_steps(claimed)
                out = kind.run_step(claimed.task_id, step, steps, state)
                lease = self._current(claimed)
                key = f"{claimed.task_id}/{step}"
                await self.call(
                    Operation.WRITE,
                    self.store.fenced_write,
                    lease,
                    key,
                    out.page,
                    retry=True,
                )
                if out.effect is not None:
                    effect = out.effect
                    await self.call(
                        Operation.EFFECT,
                        self.store.apply_effect,
                        lease,
                        f"{key}/{effect}",
                        effect,
                        out.effect_payload,
                        retry=True,
                    )
                    await self.env.sleep(EFFECT_LATENCY_MS)
                    if not self._still_mine(claimed):
                        return
                if self.mode is not Mode.NO_CHECKPOINT:
                    # Mistake four: "只回收资格，不保存中间结果": the work is never sealed.
                    await self.call(
                        Operation.CHECKPOINT,
                        self.store.save_checkpoint,
                        lease,
                        step,
                        out.state,
                        retry=True,
                    )
                state = out.state
                work.did(step, state)
            lease = self._current(claimed)
            result = kind.result(claimed.task_id, state)
            await self.call(Operation.COMPLETE, self.store.complete, lease, result, retry=True)
        except LeaseRejected:
            return  # the store said no and wrote why; this worker lost the task
        except SelfFenced:
            return  # it gave the task up by itself at its renew deadline

    # -- by hand ----------------------------------------------------------------------------

    async def by_hand(self, action: ManualAction) -> ActionError | None:
        """One manual call with the lease the worker remembers (which may be stale).

        Returns None when the store took it, or why it never got there (stalled, frozen,
        partitioned, nothing to claim), not raised; a call that reaches no store is written down as
        dropped. LeaseRejected: the store refused it (and wrote why). NoLease: the call needs
        a lease and the worker remembers none.
        """
        if self.faults.stalled:
            await self._drop_call(action.operation, WorkerState.STALLED)
            return ActionError(
                f"{self.id} is stalled; resume it first", why=Unfit.STALLED, worker=self.id
            )
        store = self.store
        try:
            if isinstance(action, Claim):
                judge = self.local_now() if self.mode is Mode.CLIENT_CLOCK else None
                claimed = await self.call(
                    Operation.CLAIM,
                    store.claim,
                    self.id,
                    action.task,
                    judge_now_ms=judge,
                    retry=False,
                    claiming=action.task,
                )
                if claimed is None:
                    return ActionError("nothing to claim", why=Unfit.NOTHING_TO_CLAIM)
                self.hold(claimed)
                await self.recall(claimed, taking_over=True)
                return None
            if self.lease is None:
                raise NoLease(
                    f"{action.name}: {self.id} holds no lease in its memory",
                    action=action.name,
                    worker=self.id,
                )
            held: Lease = self.lease
            match action:
                case Heartbeat():
                    if self.faults.heartbeat_frozen:
                        await self._drop_call(Operation.HEARTBEAT, WorkerState.FROZEN)
                        return ActionError(
                            f"{self.id}'s heartbeat is frozen",
                            why=Unfit.HEARTBEAT_FROZEN,
                            worker=self.id,
                        )
                    await self.renew(held, forget_if_refused=False, by_hand=True)
                case Checkpoint() if self.mode is Mode.NO_CHECKPOINT:
                    # Mistake four, by hand as on autopilot: "只回收资格，不保存中间结果". No
                    # box is sealed, so whoever takes over faces "空白现场".
                    return None
                case Checkpoint(step=step):
                    # The box holds what the worker knows after `step`: everything a
                    # successor needs to go on (the running total, ...), as the
                    # autopilot's would.
                    state = (await self._work_for(held)).state_at(step)
                    await self.call(
                        Operation.CHECKPOINT, store.save_checkpoint, held, step, state, retry=False
                    )
                case Write(key=key, value=value):
                    page_step = _step_of(key, held.task_id)
                    if value is None:
                        value = await self.own_page(held, key)
                    if page_step is not None:
                        # The worker did this step by hand: it knows what its page says,
                        # whether or not the ledger takes it.
                        (await self._work_for(held)).wrote(page_step, value)
                    page = action.page if action.page is not None else value
                    await self.call(
                        Operation.WRITE, store.fenced_write, held, key, page, retry=False
                    )
                case Effect(key=key):
                    effect = key.rsplit("/", 1)[-1]
                    await self.call(
                        Operation.EFFECT,
                        store.apply_effect,
                        held,
                        key,
                        effect,
                        {"by": self.id},
                        retry=False,
                    )
                case Complete():
                    await self.call(
                        Operation.COMPLETE, store.complete, held, {"by": self.id}, retry=False
                    )
                case Fail(retry=retry):
                    await self.call(
                        Operation.FAIL, store.fail, held, "manual_failure", retry, retry=False
                    )
                case Park():
                    await self.call(Operation.PARK, store.park, held, retry=False)
        except Partitioned:
            return ActionError(
                f"{self.id} is partitioned from the store", why=Unfit.PARTITIONED, worker=self.id
            )
        return None

    async def _drop_call(self, operation: Operation, why: WorkerState) -> None:
        """A call the worker cannot make (it is down or its heartbeat is frozen)."""
        await self.record(EventKind.CALL_DROPPED, self.lease, reason=why, operation=operation)

    async def record(
        self, event: EventKind, lease: Lease | None, *, task_id: str | None = None, **detail: Any
    ) -> None:
        """Write one of this worker's events about `lease` (its tokens and task), or about no
        lease (then `task_id` names the task it concerns, if any). Cut off from the server,
        the event cannot be written: it is not (the worker's own lines still say it)."""
        with contextlib.suppress(Unreachable):
            await self.store.record(
                event,
                worker_id=self.id,
                task_id=lease.task_id if lease else task_id,
                lease_token=lease.lease_token if lease else None,
                fence_token=lease.fence_token if lease else None,
                **detail,
            )

    async def own_page(self, held: Lease, key: str) -> str:
        """The page this worker's memory makes for the step `key` names, now: what the
        task's kind makes of what it knows after the step before (its autopilot's page).
        ActionError for a key that names no step of the task it holds."""
        step = _step_of(key, held.task_id)
        if step is None:
            raise ActionError(
                f"write: {key} is no step of {held.task_id}; give the page's value",
                why=Unfit.DOES_NOT_FIT,
                action="write",
                cause=f"{key} is no step of {held.task_id}",
            )
        work = await self._work_for(held)
        return work.kind.run_step(work.task_id, step, work.steps, work.state_at(step - 1)).page

    async def _work_for(self, held: Lease) -> Work:
        """The worker's memory of the task it holds, read from the checkpoint if it has none."""
        work = self.work
        if work is None or work.task_id != held.task_id:
            work = await self.recall(held)
        return work

    def _current(self, claimed: Lease) -> Lease:
        """The worker's latest copy of its lease (renewals move the expiry, not the tokens)."""
        lease = self.lease
        if lease is not None and _same_lease(lease, claimed.task_id, claimed.lease_token):
            return lease
        return claimed


def _same_lease(lease: Lease, task_id: str | None, lease_token: int) -> bool:
    """Whether lease is (a renewal of) the lease `lease_token` of `task_id`.

    Lease tokens count per task, so the token alone does not tell two tasks' leases apart.
    """
    return lease.lease_token == lease_token and (task_id is None or lease.task_id == task_id)


def _step_of(key: str, task_id: str) -> int | None:
    """The step a page key names for `task_id` (`<task>/<step>`), or None: free-form keys
    are pages too, but not steps of the task's work."""
    prefix, _, step = key.rpartition("/")
    return int(step) if prefix == task_id and step.isdigit() and int(step) > 0 else None
