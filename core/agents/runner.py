"""One agent worker: it looks for tasks, holds each it can claim, and runs its workload.

It prints one JSON line per thing it does (`hello`, `claimed`, the workload's own lines,
`lost`, `finished`), so a supervisor and the tests wait on what it says, never on time.
"""

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TextIO

import aiohttp

from core.agents.work import WORKLOADS, Job, Work
from core.downstream.client import DownstreamClient, DownstreamRefused
from core.engine.config import LeaseConfig
from core.engine.errors import LeaseRejected, UnknownTask
from core.engine.hold import Hold, LeaseLost, NotClaimed
from core.engine.modes import Mode
from core.engine.store import LeaseStore
from core.engine.vocabulary import RESTING_STATUSES, TaskStatus

Workload = Callable[[Hold, DownstreamClient, Job, Callable[..., None]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class AgentOptions:
    db: str
    worker_id: str
    work: Work
    service_url: str
    config: LeaseConfig
    mode: Mode = Mode.CORRECT
    steps: int = 3
    step_s: float = 0.2
    exit_when_idle: bool = False
    max_seconds: float | None = None
    # Told to stop on stdin (a `stop` line or its end): whoever started it is gone.
    controlled: bool = False


def _workload(work: Work) -> Workload:
    if work is Work.BROWSER:
        from core.agents.browser import browse

        return browse
    return WORKLOADS[work]


def _stop_on_stdin(loop: asyncio.AbstractEventLoop, task: "asyncio.Task[int]") -> None:
    """Cancel `task` at a `stop` line or the end of stdin, read on a thread of its own
    (stdin has no portable asyncio reader). A hold cancelled so gives its task back."""

    def read() -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in sys.stdin:
                if line.strip() == "stop":
                    break
        with contextlib.suppress(RuntimeError):  # the loop may have closed already
            loop.call_soon_threadsafe(task.cancel)

    threading.Thread(target=read, name="control", daemon=True).start()


async def run_agent(options: AgentOptions, out: TextIO = sys.stdout) -> int:
    if options.controlled:
        loop = asyncio.get_running_loop()
        work = asyncio.ensure_future(_run_agent(options, out))
        _stop_on_stdin(loop, work)
        try:
            return await work
        except asyncio.CancelledError:
            return 0
    return await _run_agent(options, out)


async def _run_agent(options: AgentOptions, out: TextIO) -> int:
    def write(said: dict[str, Any]) -> None:
        out.write(json.dumps(said) + "\n")
        out.flush()

    holding: dict[str, Any] = {}

    def say(line: str, **fields: Any) -> None:
        write({"line": line, "worker": options.worker_id, **fields})
        # What it believes, in the fleet's words, so its pane and the supervisor's faults
        # see it as they see any worker's: its own memory, which the store may contradict.
        if line == "claimed":
            holding.update(task=fields["task"], lease_token=None, fence_token=fields["token"])
            holding.update(expires_at=fields.get("expires_at"), lease_token=fields.get("lease"))
        elif line in ("finished", "lost", "refused", "downstream_refused", "parked"):
            holding.clear()
        step = fields.get("step", fields.get("index"))
        write(
            {
                "t": "belief",
                "worker": options.worker_id,
                "state": "working" if holding else "idle",
                "lease": dict(holding) if holding else None,
                "step": step if isinstance(step, int) else None,
                "answer": None,
            }
        )

    workload = _workload(options.work)
    loop = asyncio.get_running_loop()
    until = None if options.max_seconds is None else loop.time() + options.max_seconds
    store = await LeaseStore.open_async(options.db, config=options.config, mode=options.mode)
    say("hello", pid=os.getpid(), work=options.work, mode=options.mode)
    async with store, aiohttp.ClientSession() as session:
        client = DownstreamClient(options.service_url, session)
        while until is None or loop.time() < until:
            rows = await store.tasks()
            if options.exit_when_idle and all(r.status in RESTING_STATUSES for r in rows):
                say("idle")
                return 0
            for row in rows:
                if row.status not in (TaskStatus.QUEUED, TaskStatus.RUNNING):
                    continue
                job = Job(
                    row.task_id,
                    options.worker_id,
                    options.steps,
                    options.step_s,
                    options.mode,
                    options.service_url,
                )
                await _hold_one(store, client, job, workload, say)
            await asyncio.sleep(options.config.poll_every_ms / 1000)
    return 0


async def _hold_one(
    store: LeaseStore,
    client: DownstreamClient,
    job: Job,
    workload: Workload,
    say: Callable[..., None],
) -> None:
    try:
        async with store.hold(job.task_id, job.worker_id) as lease:
            say(
                "claimed",
                task=job.task_id,
                token=lease.token,
                lease=lease.lease.lease_token,
                expires_at=lease.lease.expires_at,
                attempt=lease.lease.attempt,
                resumed=lease.resume(),
            )
            await workload(lease, client, job, say)
        say("finished", task=job.task_id, token=lease.token)
    except (NotClaimed, UnknownTask):
        return
    except LeaseLost as lost:
        say("lost", task=job.task_id, reason=lost.reason, message=str(lost))
    except LeaseRejected as refused:
        say("refused", task=job.task_id, reason=refused.reason, message=str(refused))
    except DownstreamRefused as refused:
        # the service's fence said no: this holder is stale, whatever it believed
        say("downstream_refused", task=job.task_id, status=refused.status, message=str(refused))
