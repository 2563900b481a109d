"""What a worker remembers and how its calls reach the store: the lease it believes it
holds, its faults, its clock, each store call made through its network (a partition, or a
real cut, in the way), its own events, and the checkpoint it reads before touching the ledger.

The worker's jobs build on this: keeping the lease (core/sim/renewal.py), working the task on
autopilot (core/sim/autopilot.py), and the calls made by hand (core/sim/manual.py); the
worker itself (core/sim/worker.py) puts them together and runs its life cycle.
"""

import contextlib
import json
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from core.engine.config import LeaseConfig, Mode
from core.engine.errors import RejectReason, Unreachable
from core.engine.records import Lease, TaskRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import EventKind, Operation
from core.sim.heavy import StoreLoad
from core.sim.kinds import KINDS, LEDGER, TaskKind
from core.sim.memory import Work, WorkerFaults

T = TypeVar("T")


class Env(Protocol):
    """Where a worker's coroutines run: the virtual runtime, or asyncio on the real clock."""

    def sleep(self, ms: int) -> Awaitable[None]: ...

    def spawn(self, coro: Coroutine[Any, Any, None], *, owner: str, name: str) -> Any: ...

    def cancel(self, handle: Any) -> None: ...


class Partitioned(Exception):
    """The call never reached the store."""


class SelfFenced(Exception):
    """The worker passed its own renew deadline and gave the task up by itself."""


class StoreCalls:
    """One worker's memory: the lease it believes it holds, and its faults; and its calls."""

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

    def local_now(self) -> int:
        """The worker's own clock: the store's time plus its skew."""
        return self.store.clock.now_ms() + self.faults.skew_ms

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

    def _current(self, claimed: Lease) -> Lease:
        """The worker's latest copy of its lease (renewals move the expiry, not the tokens)."""
        lease = self.lease
        if lease is not None and same_lease(lease, claimed.task_id, claimed.lease_token):
            return lease
        return claimed

    def _still_mine(self, lease: Lease) -> bool:
        return self.lease is not None and same_lease(self.lease, lease.task_id, lease.lease_token)

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


def same_lease(lease: Lease, task_id: str | None, lease_token: int) -> bool:
    """Whether lease is (a renewal of) the lease `lease_token` of `task_id`.

    Lease tokens count per task, so the token alone does not tell two tasks' leases apart.
    """
    return lease.lease_token == lease_token and (task_id is None or lease.task_id == task_id)
