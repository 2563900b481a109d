"""The three workloads, each one task's work under a hold (see docs/library.md).

Each is an async function of the hold, the downstream client and what the task asks
(`Job`). They say what they do through `say` (a JSON line each, for a supervisor and the
tests) and keep what a successor needs in the checkpoint.
"""

import asyncio
import enum
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.downstream.client import DownstreamClient
from core.engine.hold import Hold
from core.engine.modes import Mode

Say = Callable[..., None]


class Work(enum.StrEnum):
    """What an agent worker does with each task it holds."""

    TOOLS = "tools"  # 用法二：Multi-step Tool Calling
    APPROVAL = "approval"  # 用法三：Human-in-the-loop Approval
    BROWSER = "browser"  # 用法一：Browser Agent
    # the three together: each task's own kind says which it is
    MIXED = "mixed"


@dataclass(frozen=True, slots=True)
class Job:
    """One task's work: its id, how many steps, how long each takes, and the run's mode."""

    task_id: str
    worker_id: str
    steps: int
    step_s: float
    mode: Mode
    service_url: str

    @property
    def sends_keys(self) -> bool:
        # the no_idempotency run is the seed's formula without its fifth part ("幂等副作用")
        return self.mode is not Mode.NO_IDEMPOTENCY


async def tools(lease: Hold, client: DownstreamClient, job: Job, say: Say) -> None:
    """Several calls to the service's payments tool, each under its idempotency key
    ("Idempotency Key 让重放调用不炸副作用"), a checkpoint after each ("Checkpoint 让中间结果落
    盘"), then the result written to the artifact store with the fence token ("Artifact
    Store 让工具输出别只存在于上下文里")."""
    state = lease.resume() or {"done": 0, "receipts": []}
    say("resumed", task=job.task_id, done=state["done"], token=lease.token)
    receipts: list[str] = list(state["receipts"])
    for step in range(int(state["done"]) + 1, job.steps + 1):
        memo = f"call-{step}"

        async def call(key: str, step: int = step, memo: str = memo) -> dict[str, Any]:
            sent = key if job.sends_keys else None
            charged = await client.charge(
                job.task_id, memo, 10 * step, idempotency_key=sent, caller=job.worker_id
            )
            say(
                "called",
                task=job.task_id,
                step=step,
                charge=charged.body["id"],
                replayed=charged.replayed,
            )
            await asyncio.sleep(job.step_s)  # the tool's answer is read, the record comes next
            return charged.body

        receipt = await lease.effect(memo, call)
        receipts.append(str(receipt["id"]))
        # saved as the task's step, so the task table's checkpoint step and the pane's
        # "step 3/5" count the same steps (the effect's record took the step before it)
        await lease.checkpoint({"done": step, "receipts": receipts}, step=step)
        say("checkpoint", task=job.task_id, step=step)
    await client.write_artifact(
        f"{job.task_id}/result", json.dumps(receipts), token=lease.token, writer=job.worker_id
    )
    say("wrote", task=job.task_id, token=lease.token)


async def approval(lease: Hold, client: DownstreamClient, job: Job, say: Say) -> None:
    """ "Agent 执行到审批节点时保存 checkpoint；租约自然释放；审批信号到来后重新 claim；带着新的
    lease_token 从 checkpoint 继续。" The first hold drafts and parks; the hold after the
    approval sends the draft with its new fence token."""
    state = lease.resume()
    if state is None or state.get("stage") != "awaiting_approval":
        draft = f"refund for {job.task_id}"
        await asyncio.sleep(job.step_s)
        await lease.checkpoint({"stage": "awaiting_approval", "draft": draft})
        await lease.park()
        say("parked", task=job.task_id, token=lease.token)
        return
    say("resumed", task=job.task_id, stage=state["stage"], token=lease.token)
    await client.write_artifact(
        f"{job.task_id}/sent", str(state["draft"]), token=lease.token, writer=job.worker_id
    )
    await lease.checkpoint({"stage": "sent", "draft": state["draft"]})
    say("wrote", task=job.task_id, token=lease.token)


WORKLOADS: dict[Work, Callable[[Hold, DownstreamClient, Job, Say], Awaitable[None]]] = {
    Work.TOOLS: tools,
    Work.APPROVAL: approval,
}
