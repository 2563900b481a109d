"""One agent worker: it looks for tasks, holds each it can claim, and runs its workload.

It prints one JSON line per thing it does (`hello`, `claimed`, the workload's own lines,
`lost`, `finished`), so a supervisor and the tests wait on what it says, never on time.

With `--control` it takes lines on stdin, as the simulated worker does: `freeze` stops its
hold's renewals while the body goes on, `thaw` lets it renew again, `stop` (or the end of
stdin: whoever started it is gone) ends it and gives its task back. `hold_writes` keeps each
fenced downstream write on its way out until `write`: the process can then be stopped
(SIGSTOP) with a write in flight, deterministically, and the write reach the service after
another holder's, as a write delayed by a long pause does. Each is answered on stdout
(`frozen`, `thawed`, `holding_writes`, `write_held`, `writes_sent`, `write_answered`).
"""

import asyncio
import contextlib
import functools
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TextIO

import aiohttp

from core.agents.browser import Chromium, browse, missing_browser
from core.agents.work import WORKLOADS, Job, Work
from core.downstream.client import DownstreamClient, DownstreamRefused
from core.engine.config import LeaseConfig
from core.engine.errors import LeaseRejected, UnknownTask
from core.engine.hold import Hold, LeaseLost, NotClaimed
from core.engine.modes import Mode
from core.engine.store import LeaseStore
from core.engine.vocabulary import RESTING_STATUSES, TaskStatus
from core.sim.control import STOP, listen_for_control

Workload = Callable[[Hold, DownstreamClient, Job, Callable[..., None]], Awaitable[None]]
Say = Callable[..., None]


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
    # Told what to do on stdin (see the module's help); its end stops the worker.
    controlled: bool = False


class HeldWrites(DownstreamClient):
    """The downstream client, whose artifact writes can be held on their way out.

    A held write is already sent as far as its body knows: it runs in a task of its own and
    the body awaits it shielded, so the hold's self-fencing (cancelling the body) cannot
    recall it, as it cannot recall a request already on the wire. Only the service's fence
    can refuse it ("所有下游写入都必须携带这个 token；存储层或状态机只接受当前最大的 token").
    """

    def __init__(self, url: str, session: aiohttp.ClientSession, say: Say) -> None:
        super().__init__(url, session)
        self._say = say
        self.holding = False
        self._open = asyncio.Event()
        self.in_flight: set[asyncio.Task[dict[str, Any]]] = set()

    def hold(self) -> None:
        self.holding = True
        self._open.clear()

    def send(self) -> None:
        """Let every held write go, and the next ones straight through."""
        self.holding = False
        self._open.set()

    async def before_write(self, key: str, token: int | None) -> bool:
        """A browser's submit: held here, as a write of this client's own is, until
        `send`; the caller says the service's answer (`write_answered`) once it has it."""
        if not self.holding:
            return False
        self._say("write_held", key=key, token=token)
        await self._open.wait()
        return True

    async def write_artifact(
        self, key: str, value: str, *, token: int | None, writer: str
    ) -> dict[str, Any]:
        if not self.holding:
            return await super().write_artifact(key, value, token=token, writer=writer)
        sending = asyncio.ensure_future(self._when_open(key, value, token, writer))
        self.in_flight.add(sending)
        sending.add_done_callback(self._landed)
        return await asyncio.shield(sending)

    def _landed(self, sending: "asyncio.Task[dict[str, Any]]") -> None:
        self.in_flight.discard(sending)
        if not sending.cancelled():
            sending.exception()  # read here: its body may have been cancelled meanwhile

    async def _when_open(
        self, key: str, value: str, token: int | None, writer: str
    ) -> dict[str, Any]:
        self._say("write_held", key=key, token=token)
        await self._open.wait()
        try:
            body = await DownstreamClient.write_artifact(
                self, key, value, token=token, writer=writer
            )
        except DownstreamRefused as refused:
            self._say(
                "write_answered",
                key=key,
                token=token,
                status=refused.status,
                error=refused.error,
                message=str(refused),
                newest=refused.body.get("newest"),
            )
            raise
        self._say(
            "write_answered",
            key=key,
            token=token,
            status=200,
            error=None,
            newest=body.get("newest"),
        )
        return body

    async def cancel_in_flight(self) -> None:
        for sending in list(self.in_flight):
            sending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self.in_flight, return_exceptions=True)


class _Controls:
    """What the control lines change: the current hold's renewals, the held writes."""

    def __init__(self) -> None:
        self.frozen = False
        self.hold: Hold | None = None
        self.client: HeldWrites | None = None
        self.pending: set[asyncio.Future[None]] = set()  # answers still to be said

    def holding(self, lease: Hold | None) -> None:
        self.hold = lease
        if lease is not None and self.frozen:
            lease.freeze()


def _workloads(work: Work, chromium: Chromium) -> dict[Work, Workload]:
    found: dict[Work, Workload] = dict(WORKLOADS)
    found[Work.BROWSER] = functools.partial(browse, chromium=chromium)
    return found


def _work_of(options: AgentOptions, kind: str, browsing: bool) -> Work | None:
    """The work for a task of `kind`: the worker's own, or the task's in a mixed run (None:
    not one this worker can do, left for another)."""
    if options.work is not Work.MIXED:
        return options.work
    try:
        work = Work(kind)
    except ValueError:
        return None
    if work is Work.MIXED or (work is Work.BROWSER and not browsing):
        return None
    return work


async def run_agent(options: AgentOptions, out: TextIO = sys.stdout) -> int:
    controls = _Controls()
    if not options.controlled:
        return await _run_agent(options, out, controls)
    loop = asyncio.get_running_loop()
    work = asyncio.ensure_future(_run_agent(options, out, controls))
    said = _Writer(out, options.worker_id)

    def on_line(line: str) -> None:
        hold = controls.hold
        if line == STOP:
            work.cancel()  # a hold cancelled so gives its task back
        elif line == "freeze":
            controls.frozen = True
            if hold is None:
                said.line("frozen", task=None)
            else:
                hold.freeze()
                # said once no renewal is on its way: a SIGSTOP after it finds none open
                quiet = asyncio.ensure_future(hold.quiet())
                controls.pending.add(quiet)
                quiet.add_done_callback(controls.pending.discard)
                quiet.add_done_callback(lambda _f: said.line("frozen", task=hold.task_id))
        elif line == "thaw":
            controls.frozen = False
            if hold is not None:
                hold.thaw()
            said.line("thawed", task=None if hold is None else hold.task_id)
        elif line == "hold_writes" and controls.client is not None:
            controls.client.hold()
            said.line("holding_writes")
        elif line == "write" and controls.client is not None:
            controls.client.send()
            said.line("writes_sent")

    listen_for_control(loop, on_line, sys.stdin)
    try:
        return await work
    except asyncio.CancelledError:
        return 0


class _Writer:
    """One JSON line per thing said, flushed at once: the reader waits on it."""

    def __init__(self, out: TextIO, worker_id: str) -> None:
        self.out = out
        self.worker_id = worker_id

    def write(self, said: dict[str, Any]) -> None:
        self.out.write(json.dumps(said) + "\n")
        self.out.flush()

    def line(self, line: str, **fields: Any) -> None:
        self.write({"line": line, "worker": self.worker_id, **fields})


async def _run_agent(options: AgentOptions, out: TextIO, controls: _Controls) -> int:
    writer = _Writer(out, options.worker_id)
    holding: dict[str, Any] = {}

    def say(line: str, **fields: Any) -> None:
        writer.line(line, **fields)
        # What it believes, in the fleet's words, so its pane and the supervisor's faults
        # see it as they see any worker's: its own memory, which the store may contradict.
        if line == "claimed":
            holding.update(task=fields["task"], lease_token=None, fence_token=fields["token"])
            holding.update(expires_at=fields.get("expires_at"), lease_token=fields.get("lease"))
        elif line in ("finished", "lost", "refused", "downstream_refused", "parked"):
            holding.clear()
        step = fields.get("step", fields.get("index"))
        writer.write(
            {
                "t": "belief",
                "worker": options.worker_id,
                "state": "working" if holding else "idle",
                "lease": dict(holding) if holding else None,
                "step": step if isinstance(step, int) else None,
                "answer": None,
            }
        )

    loop = asyncio.get_running_loop()
    until = None if options.max_seconds is None else loop.time() + options.max_seconds
    store = await LeaseStore.open_async(options.db, config=options.config, mode=options.mode)
    say("hello", pid=os.getpid(), work=options.work, mode=options.mode)
    # One browser for the worker's whole life, launched at its first walk: a walk opens a
    # context of its own in it (its own cookies and pages), not a chromium of its own.
    chromium = Chromium()
    workloads = _workloads(options.work, chromium)
    browsing = options.work is not Work.MIXED or missing_browser() is None
    async with store, aiohttp.ClientSession() as session, chromium:
        client = HeldWrites(options.service_url, session, writer.line)
        controls.client = client
        try:
            while until is None or loop.time() < until:
                rows = await store.tasks()
                if options.exit_when_idle and all(r.status in RESTING_STATUSES for r in rows):
                    say("idle")
                    return 0
                for row in rows:
                    if row.status not in (TaskStatus.QUEUED, TaskStatus.RUNNING):
                        continue
                    work = _work_of(options, row.kind, browsing)
                    if work is None:
                        continue
                    job = Job(
                        row.task_id,
                        options.worker_id,
                        options.steps,
                        options.step_s,
                        options.mode,
                        options.service_url,
                    )
                    await _hold_one(store, client, job, workloads[work], say, controls)
                await asyncio.sleep(options.config.poll_every_ms / 1000)
        finally:
            await client.cancel_in_flight()
    return 0


async def _hold_one(
    store: LeaseStore,
    client: DownstreamClient,
    job: Job,
    workload: Workload,
    say: Say,
    controls: _Controls,
) -> None:
    try:
        async with store.hold(job.task_id, job.worker_id) as lease:
            controls.holding(lease)
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
    finally:
        controls.holding(None)
