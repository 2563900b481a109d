"""The seed's three agent uses on real processes: `borrowed-keys agent` workers under the
lease library, against the fenced downstream service running in the test.

Each test kills a worker mid-task (SIGKILL), starts another, and reads what it says: it
resumes from the checkpoint, and the service's own books hold (one charge per call, the
result written with the newest token). Under no_idempotency the same run charges twice and
the books' judge says so. The successor waits for the dead worker's lease to run out by
itself (a ttl of a second); the test waits on what the processes say.
"""

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.agents.browser import missing_browser
from core.downstream.books import ServiceRule, judge
from core.downstream.service import RunningService, serve_downstream
from core.engine.modes import Mode
from core.engine.store import LeaseStore
from core.fleet.frame import service_calls, service_pages
from tests.pgserver_kit import with_schema

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60


class Agent:
    """One `borrowed-keys agent` process and the JSON lines it has said."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[dict[str, Any]] = []

    async def until(self, line: str, **fields: Any) -> dict[str, Any]:
        """Read until it says `line` with `fields`; that line."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(WAIT_S):
            while True:
                raw = await self.proc.stdout.readline()
                assert raw, f"the worker ended without saying {line} {fields}: {self.lines}"
                said: dict[str, Any] = json.loads(raw)
                self.lines.append(said)
                if said.get("line") == line and all(said.get(k) == v for k, v in fields.items()):
                    return said

    async def finish(self) -> int:
        await self.until("idle")
        async with asyncio.timeout(WAIT_S):
            return await self.proc.wait()

    def said(self, line: str) -> list[dict[str, Any]]:
        return [s for s in self.lines if s.get("line") == line]


async def _agent(
    db: Path | str, service: RunningService, worker: str, work: str, mode: Mode, *extra: str
) -> Agent:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "core.tools.agent_cli",
        "agent",
        "--db",
        str(db),
        "--id",
        worker,
        "--work",
        work,
        "--service",
        service.url,
        "--ttl",
        "1s",
        "--poll-every",
        "100ms",
        "--step-time",
        "300ms",
        "--mode",
        mode.value,
        *extra,
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE if "--control" in extra else None,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return Agent(proc)


async def _kill(agent: Agent) -> None:
    agent.proc.kill()
    await agent.proc.wait()


@pytest.fixture
async def service(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[RunningService]:
    mode = getattr(request, "param", Mode.CORRECT)
    async with serve_downstream(tmp_path / "books.db", fencing=mode is not Mode.NO_FENCING) as s:
        yield s


async def _enqueue(db: Path | str, mode: Mode, *tasks: tuple[str, str]) -> None:
    async with await LeaseStore.open_async(db, mode=mode) as store:
        for task_id, kind in tasks:
            await store.enqueue(task_id, kind=kind)


async def _findings(service: RunningService) -> list[ServiceRule]:
    return [f.rule for f in judge(await service.books.history(), await service.books.charges())]


@pytest.fixture
def where(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The workers' store: a SQLite file, or a fresh schema on the test PostgreSQL."""
    if backend == "sqlite":
        return str(tmp_path / "keys.db")
    return with_schema(str(request.getfixturevalue("postgres_url")))


@pytest.mark.parametrize("mode", [Mode.CORRECT, Mode.NO_IDEMPOTENCY])
async def test_tools_killed_between_a_call_and_its_checkpoint(
    where: str, service: RunningService, mode: Mode
) -> None:
    db = where
    await _enqueue(db, mode, ("t1", "tools"))
    first = await _agent(db, service, "w1", "tools", mode)
    await first.until("called", step=2)
    await _kill(first)
    second = await _agent(db, service, "w2", "tools", mode, "--exit-when-idle")
    assert await second.finish() == 0
    claimed = second.said("claimed")[0]
    assert claimed["resumed"]["done"] == 1  # from the checkpoint, not from the first call
    assert [c["step"] for c in second.said("called")] == [2, 3]
    async with await LeaseStore.open_async(db, mode=mode) as store:
        # the checkpoints count the task's steps, as its pane does ("step 3/3"), the
        # effects' records among them: never a step 6 of a three-step task
        steps = sorted({c.step for c in await store.checkpoints() if c.task_id == "t1"})
    assert steps == [1, 2, 3]
    charges = await service.books.charges()
    artifact = await service.books.artifact("t1/result")
    assert artifact is not None and artifact["token"] == claimed["token"]
    # the fleet's Effects panel of the service: who asked, for which step, and whether it
    # was charged (again) or answered from its key
    calls = [
        (c.worker_id, c.step, c.deduplicated, c.applied_times)
        for c in service_calls(await service.books.export())
    ]
    if mode is Mode.CORRECT:
        assert calls == [
            ("w1", 1, False, 1),
            ("w1", 2, False, 1),
            ("w2", 2, True, 1),
            ("w2", 3, False, 1),
        ]
    else:
        assert calls == [
            ("w1", 1, False, 1),
            ("w1", 2, False, 1),
            ("w2", 2, False, 2),
            ("w2", 3, False, 1),
        ]
    if mode is Mode.CORRECT:
        assert [c["memo"] for c in charges] == ["call-1", "call-2", "call-3"]
        assert second.said("called")[0]["replayed"] is True  # answered from the key
        assert await _findings(service) == []
    else:
        assert [c["memo"] for c in charges] == ["call-1", "call-2", "call-2", "call-3"]
        assert await _findings(service) == [ServiceRule.NO_CHARGE_TWICE]


async def test_a_controlled_agent_stops_when_its_stdin_ends_and_gives_its_task_back(
    tmp_path: Path, service: RunningService
) -> None:
    """The fleet ends an agent by closing its stdin: it must not wait for SIGKILL, and the
    task it held goes back to the queue for the next worker."""
    db = tmp_path / "keys.db"
    await _enqueue(db, Mode.CORRECT, ("t1", "tools"))
    agent = await _agent(db, service, "w1", "tools", Mode.CORRECT, "--steps", "50", "--control")
    await agent.until("claimed", task="t1")
    assert agent.proc.stdin is not None
    agent.proc.stdin.close()
    async with asyncio.timeout(WAIT_S):
        assert await agent.proc.wait() == 0
    async with await LeaseStore.open_async(db) as store:
        row = await store.task("t1")
    assert row is not None and str(row.status) == "queued"


async def _approve(db: Path, task: str) -> None:
    """A person approves the waiting task with the command a user types."""
    approve = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "demo.cli",
        "approve",
        task,
        "--db",
        str(db),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out, _ = await approve.communicate()
    assert approve.returncode == 0 and out.decode() == f"approved {task} in {db}\n"


async def test_approval_parks_and_a_fresh_token_goes_on_after_the_approve_command(
    tmp_path: Path, service: RunningService
) -> None:
    db = tmp_path / "keys.db"
    await _enqueue(db, Mode.CORRECT, ("a1", "approval"))
    first = await _agent(db, service, "w1", "approval", Mode.CORRECT, "--exit-when-idle")
    parked = await first.until("parked", task="a1")
    assert await first.finish() == 0  # a waiting task is resting: nothing left for it
    await _approve(db, "a1")
    second = await _agent(db, service, "w2", "approval", Mode.CORRECT, "--exit-when-idle")
    assert await second.finish() == 0
    claimed = second.said("claimed")[0]
    assert claimed["token"] > parked["token"]
    assert claimed["resumed"] == {"stage": "awaiting_approval", "draft": "refund for a1"}
    sent = await service.books.artifact("a1/sent")
    assert sent is not None and sent["token"] == claimed["token"] and sent["writer"] == "w2"
    async with await LeaseStore.open_async(db) as store:
        assert (await store.task("a1")).status == "done"


async def test_approval_killed_before_it_parks_and_while_it_waits_goes_on_with_a_fresh_token(
    tmp_path: Path, service: RunningService
) -> None:
    """SIGKILL the approval agent while it drafts (before its checkpoint and park), then the
    next one while the parked task waits for a person: the task is drafted again, parks
    once, and after the approve command a third holder sends the draft with a fence token
    newer than every earlier one; the service keeps one send, by it, and its books hold."""
    db = tmp_path / "keys.db"
    await _enqueue(db, Mode.CORRECT, ("a1", "approval"))
    first = await _agent(db, service, "w1", "approval", Mode.CORRECT)
    killed = await first.until("claimed", task="a1")
    await _kill(first)  # within the 300 ms draft: nothing saved yet
    second = await _agent(db, service, "w2", "approval", Mode.CORRECT)
    redrafted = await second.until("claimed", task="a1")
    assert redrafted["token"] > killed["token"]
    assert redrafted["resumed"] is None  # the killed draft left no checkpoint
    parked = await second.until("parked", task="a1")
    assert parked["token"] == redrafted["token"]
    async with await LeaseStore.open_async(db) as store:
        assert (await store.task("a1")).status == "waiting"
    await _kill(second)  # while the task waits: a parked task belongs to no one
    await _approve(db, "a1")
    third = await _agent(db, service, "w3", "approval", Mode.CORRECT, "--exit-when-idle")
    assert await third.finish() == 0
    claimed = third.said("claimed")[0]
    assert claimed["token"] > parked["token"]
    assert claimed["resumed"] == {"stage": "awaiting_approval", "draft": "refund for a1"}
    sent = await service.books.artifact("a1/sent")
    assert sent is not None and sent["token"] == claimed["token"] and sent["writer"] == "w3"
    assert await _findings(service) == []
    async with await LeaseStore.open_async(db) as store:
        assert (await store.task("a1")).status == "done"


async def test_approve_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    db = tmp_path / "keys.db"
    await _enqueue(db, Mode.CORRECT, ("t1", "tools"))
    approve = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "demo.cli",
        "approve",
        "t1",
        "--db",
        str(db),
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    _, err = await approve.communicate()
    assert approve.returncode == 2
    assert err.decode() == (
        "borrowed-keys approve: cannot approve t1: it is queued, not waiting for approval\n"
    )


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
async def test_browser_killed_mid_walk_resumes_from_the_url_it_had_reached(
    tmp_path: Path, service: RunningService
) -> None:
    db = tmp_path / "keys.db"
    await _enqueue(db, Mode.CORRECT, ("b1", "browser"))
    first = await _agent(db, service, "w1", "browser", Mode.CORRECT)
    reached = await first.until("step", index=2)
    await _kill(first)
    assert reached["url"].endswith("/pages/list/3")
    second = await _agent(db, service, "w2", "browser", Mode.CORRECT, "--exit-when-idle")
    assert await second.finish() == 0
    resumed = second.said("resumed")[0]
    assert resumed["url"] == reached["url"] and resumed["actions"] == 3
    assert [s["index"] for s in second.said("step")] == [3, 4, 5]
    claimed = second.said("claimed")[0]
    assert claimed["resumed"]["next"] == "next" and claimed["resumed"]["dom"].startswith("List")
    form = await service.books.artifact("b1/form")
    assert form is not None and form["token"] == claimed["token"] and form["writer"] == "w2"
    assert await _findings(service) == []


async def _tell(agent: Agent, line: str) -> None:
    assert agent.proc.stdin is not None
    agent.proc.stdin.write(f"{line}\n".encode())
    await agent.proc.stdin.drain()


async def _stop(agent: Agent) -> int:
    assert agent.proc.stdin is not None
    agent.proc.stdin.close()
    async with asyncio.timeout(WAIT_S):
        return await agent.proc.wait()


@pytest.mark.parametrize("service", [Mode.CORRECT, Mode.NO_FENCING], indirect=True)
async def test_a_stopped_holders_late_write_is_refused_by_the_service_fence(
    tmp_path: Path, service: RunningService
) -> None:
    """ "所有下游写入都必须携带这个 token；存储层或状态机只接受当前最大的 token": a holder
    stopped (SIGSTOP, a long pause) with its write on its way out loses its lease; another
    takes the task over and writes; the first, continued (SIGCONT), sends its write with
    the older token. The service refuses it (409) and keeps the newer; under no_fencing it
    takes it, and the judge of its books names the harm. The write is held on the control
    channel until the test lets it go, so the late write always comes after the
    successor's."""
    mode = Mode.NO_FENCING if not service.books.fencing else Mode.CORRECT
    db = tmp_path / "keys.db"
    await _enqueue(db, mode, ("t1", "tools"))
    first = await _agent(
        db, service, "w1", "tools", mode, "--steps", "1", "--ttl", "3s", "--control"
    )
    await first.until("hello")
    await _tell(first, "hold_writes")
    await first.until("holding_writes")
    held = await first.until("write_held", key="t1/result")
    # Its renewals stopped first, and said stopped once none is on its way: the SIGSTOP
    # then lands on a process with no transaction open (on SQLite a stopped process
    # holding the write lock would stop its successor too), a second before its own
    # renew deadline would have it say anything to the store again.
    await _tell(first, "freeze")
    await first.until("frozen", task="t1")
    os.kill(first.proc.pid, signal.SIGSTOP)
    try:
        second = await _agent(db, service, "w2", "tools", mode, "--steps", "1", "--exit-when-idle")
        assert await second.finish() == 0
    finally:
        os.kill(first.proc.pid, signal.SIGCONT)
    newer = second.said("claimed")[0]["token"]
    assert newer > held["token"]
    await _tell(first, "write")
    answered = await first.until("write_answered", key="t1/result")
    assert await _stop(first) == 0
    artifact = await service.books.artifact("t1/result")
    assert artifact is not None
    # the fleet's ledger of the service: its one page, marked only where a stale write stands
    pages, stale = service_pages(await service.books.export())
    assert [(p.key, p.fence_token, p.writer, p.task_id) for p in pages] == [
        ("t1/result", artifact["token"], artifact["writer"], "t1")
    ]
    assert stale == ({} if mode is Mode.CORRECT else {"t1/result": "stale_write_accepted"})
    if mode is Mode.CORRECT:
        assert answered["status"] == 409 and answered["error"] == "stale_token"
        assert f"fence token {held['token']} is older than {newer}" in answered["message"]
        assert (artifact["token"], artifact["writer"]) == (newer, "w2")
        assert await _findings(service) == []
    else:
        assert answered["status"] == 200
        assert (artifact["token"], artifact["writer"]) == (held["token"], "w1")
        found = judge(await service.books.history(), await service.books.charges())
        assert [f.rule for f in found] == [ServiceRule.NO_STALE_WRITE]
        assert f"fence token {held['token']} after it had seen {newer}" in found[0].message


async def test_a_frozen_agent_stops_renewing_while_its_body_goes_on(
    tmp_path: Path, service: RunningService
) -> None:
    """The fleet's freeze: the hold sends no renewal, the body goes on calling its tools,
    and at the renew deadline the hold lets the lease go (LeaseLost)."""
    db = tmp_path / "keys.db"
    await _enqueue(db, Mode.CORRECT, ("t1", "tools"))
    agent = await _agent(
        db, service, "w1", "tools", Mode.CORRECT,
        *("--steps", "100", "--ttl", "3s", "--step-time", "100ms", "--control"),
    )  # fmt: skip
    await agent.until("claimed", task="t1")
    await _tell(agent, "freeze")
    await agent.until("frozen", task="t1")
    async with await LeaseStore.open_async(db) as store:
        frozen_seq = (await store.events())[-1].seq
    lost = await agent.until("lost", task="t1")
    assert lost["reason"] == "renew_deadline_passed"
    assert "its renewals were frozen" in lost["message"]
    frozen_at = next(i for i, s in enumerate(agent.lines) if s.get("line") == "frozen")
    # the body went on between the freeze and the loss: it called its tools
    called = [s for s in agent.lines[frozen_at:] if s.get("line") == "called"]
    assert called, agent.lines[frozen_at:]
    assert await _stop(agent) == 0
    async with await LeaseStore.open_async(db) as store:
        events = await store.events()
    renewed = [e for e in events if e.event == "renewed" and e.seq > frozen_seq]
    assert len(renewed) <= 1  # one may have been on its way when the freeze came


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
async def test_a_mixed_worker_does_each_task_by_its_kind_in_one_browser(
    tmp_path: Path, service: RunningService
) -> None:
    """`--work mixed`: the seed's three uses side by side in one worker, each task by its
    own kind; the browser walks share the worker's one chromium."""
    db = tmp_path / "keys.db"
    tasks = [("m1", "tools"), ("m2", "browser"), ("m3", "approval"), ("m4", "browser")]
    await _enqueue(db, Mode.CORRECT, *tasks)
    agent = await _agent(
        db, service, "w1", "mixed", Mode.CORRECT, "--steps", "2", "--step-time", "10ms",
        "--exit-when-idle",
    )  # fmt: skip
    assert await agent.finish() == 0
    assert [c["memo"] for c in await service.books.charges()] == ["call-1", "call-2"]
    assert await service.books.artifact("m1/result") is not None
    assert [p["task"] for p in agent.said("parked")] == ["m3"]
    walks = [w for w in agent.said("wrote") if w["task"] in ("m2", "m4")]
    assert [w["launches"] for w in walks] == [1, 1]  # the second walk reused the browser
    for task in ("m2", "m4"):
        form = await service.books.artifact(f"{task}/form")
        assert form is not None and form["writer"] == "w1"
    async with await LeaseStore.open_async(db) as store:
        status = {row.task_id: str(row.status) for row in await store.tasks()}
    assert status == {"m1": "done", "m2": "done", "m3": "waiting", "m4": "done"}
    assert await _findings(service) == []
