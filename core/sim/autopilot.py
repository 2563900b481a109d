"""A worker on autopilot: it polls, claims, resumes from the checkpoint, works the steps
(each a fenced ledger write, maybe an idempotent effect, then a checkpoint) and completes,
while its heartbeat loop (core/sim/renewal.py) renews the lease apart.
"""

import contextlib
import json

from core.engine.config import Mode
from core.engine.errors import LeaseRejected
from core.engine.records import Lease
from core.engine.vocabulary import Operation
from core.sim.calls import Partitioned, SelfFenced
from core.sim.memory import Work
from core.sim.renewal import Renewal

# An effect is a call to an outside API: its answer takes a moment to come back, and a
# worker that dies in that moment has applied the effect without checkpointing it. This
# is the window idempotency keys exist for.
EFFECT_LATENCY_MS = 1_000


class Autopilot(Renewal):
    """The work loop: poll, claim, work the task, repeat."""

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

    async def _renew_between_steps(self, claimed: Lease) -> None:
        """heartbeat_in_work: the work loop renews when it reaches this line, and only then.

        A step longer than the lease means the renewal comes too late: the store refuses it
        (expired, or superseded by a successor) and LeaseRejected ends the task here.
        """
        if self.faults.heartbeat_frozen:
            return
        with contextlib.suppress(Partitioned):
            await self.renew(self._current(claimed))

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
