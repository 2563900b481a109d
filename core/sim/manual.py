"""A worker's calls made by hand: one store call with the lease the worker remembers,
which may be stale, played at one instant.
"""

from core.engine.config import Mode
from core.engine.records import Lease
from core.engine.vocabulary import EventKind, Operation
from core.sim.calls import Partitioned
from core.sim.memory import Work
from core.sim.renewal import Renewal
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


class Manual(Renewal):
    """The calls a person makes for the worker."""

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


def _step_of(key: str, task_id: str) -> int | None:
    """The step a page key names for `task_id` (`<task>/<step>`), or None: free-form keys
    are pages too, but not steps of the task's work."""
    prefix, _, step = key.rpartition("/")
    return int(step) if prefix == task_id and step.isdigit() and int(step) > 0 else None
