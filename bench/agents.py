"""The lease as a library and the agent workloads (`python -m bench agents`).

(a) The library's overhead per call: `lease.checkpoint(state)` under a hold against the bare
    `store.save_checkpoint(lease, step, state)` it wraps, on a SQLite file; the median of
    many calls each, interleaved in rounds.
(b) Tasks per second for each workload, one worker in this process under `store.hold`,
    against the fenced downstream service on a loopback port, with no time per step: tools
    (three calls and their checkpoints, the result written with the fence token), approval
    (a hold that parks, the approval, a second hold that sends), browser (a walk of six
    actions in Debian's chromium, one browser for the worker's walks, a context of its own
    for each; left out, with the reason, where it is missing).
(c) Start-up, each the best of STARTS fresh starts (a load only ever adds to a start): an
    agent worker process (`python -m core.tools.agent_cli agent`, as the fleet starts one)
    until it says hello (its store open) and until it says claimed (its first task held);
    the downstream service in this process until it answers its first page; chromium
    launched until its first page of the service is loaded.
(d) The downstream service's request rate: CLIENTS callers at once, each a run of fenced
    artifact writes and charges with idempotency keys, every request one transaction of the
    service's books; then the same again with a caller of a page that reads no books beside
    them, whose wait says how long the books hold the service's event loop.
"""

import asyncio
import contextlib
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from rich.console import Console
from rich.table import Table

from bench.results import record
from core.agents.browser import Chromium, browse, missing_browser
from core.agents.runner import Workload
from core.agents.work import WORKLOADS, Job, Work
from core.downstream.client import DownstreamClient
from core.downstream.service import serve_downstream
from core.engine.config import LeaseConfig
from core.engine.hold import Hold
from core.engine.modes import Mode
from core.engine.store import LeaseStore

CALLS = 2_000
ROUNDS = 5
TASKS = {Work.TOOLS: 200, Work.APPROVAL: 200, Work.BROWSER: 5}
CONFIG = LeaseConfig(ttl_ms=60_000)
CLIENTS = 8  # callers of the service at once
REQUESTS = 250  # each caller's requests: fenced writes and charges, in turn
PAGE_EVERY_S = 0.005  # how often the page that reads no books is asked meanwhile
STARTS = 3  # fresh starts of each thing timed; the least counts
START_TIMEOUT_S = 60.0
ROOT = Path(__file__).resolve().parent.parent


async def _overhead(folder: Path) -> tuple[float, float]:
    """Median µs per call: bare save_checkpoint, and lease.checkpoint."""
    bare: list[float] = []
    held: list[float] = []
    async with await LeaseStore.open_async(folder / "keys.db", config=CONFIG) as store:
        await store.enqueue("bench")
        async with store.hold("bench", "w1") as lease:
            state = {"url": "/pages/list/2", "actions": ["open_list", "next"]}
            for _ in range(ROUNDS):
                for _ in range(CALLS // ROUNDS):
                    start = time.perf_counter()
                    await store.save_checkpoint(lease.lease, 1, state)
                    bare.append(time.perf_counter() - start)
                for _ in range(CALLS // ROUNDS):
                    start = time.perf_counter()
                    await lease.checkpoint(state, step=1)
                    held.append(time.perf_counter() - start)
    return statistics.median(bare) * 1e6, statistics.median(held) * 1e6


async def _rate(folder: Path, work: Work, tasks: int) -> float:
    """Tasks per second for one worker doing `work` under holds."""
    async with (
        serve_downstream(folder / f"books-{work}.db") as service,
        aiohttp.ClientSession() as session,
        await LeaseStore.open_async(folder / f"keys-{work}.db", config=CONFIG) as store,
        contextlib.AsyncExitStack() as stack,
    ):
        client = DownstreamClient(service.url, session)
        ids = [f"{work}-{i:04d}" for i in range(tasks)]
        for task_id in ids:
            await store.enqueue(task_id, kind=work.value)
        workload: Workload
        if work is Work.BROWSER:
            # as a worker does: one chromium for all its walks, launched at the first
            chromium = await stack.enter_async_context(Chromium())
            workload = functools.partial(browse, chromium=chromium)
        else:
            workload = WORKLOADS[work]

        def quiet(*_args: object, **_fields: object) -> None:
            pass

        async def run(task_id: str, lease: Hold) -> None:
            job = Job(task_id, "w1", 3, 0.0, Mode.CORRECT, service.url)
            await workload(lease, client, job, quiet)

        start = time.perf_counter()
        for task_id in ids:
            async with store.hold(task_id, "w1") as lease:
                await run(task_id, lease)
            if work is Work.APPROVAL:
                await store.approve(task_id)
                async with store.hold(task_id, "w1") as lease:
                    await run(task_id, lease)
        elapsed = time.perf_counter() - start
        assert all(r.status == "done" for r in await store.tasks())
    return tasks / elapsed


async def _service(folder: Path, *, pages: bool) -> tuple[float, list[float]]:
    """The service's book requests per second with CLIENTS callers at once; with `pages`,
    also the waits (s) of a page that reads no books, asked every PAGE_EVERY_S meanwhile."""
    async with (
        serve_downstream(folder / f"books-service-{pages}.db") as service,
        aiohttp.ClientSession() as session,
    ):
        url = service.url
        done = asyncio.Event()
        waits: list[float] = []

        async def caller(n: int) -> None:
            body: dict[str, object]
            for i in range(REQUESTS):
                if i % 2 == 0:
                    headers = {"Fence-Token": str(i + 1)}
                    body = {"value": f"page {i}", "writer": f"w{n}"}
                    answer = session.put(f"{url}/artifacts/c{n}/out", json=body, headers=headers)
                else:
                    headers = {"Idempotency-Key": f"c{n}-{i}"}
                    body = {"task": f"c{n}", "memo": f"call {i}", "amount": 1}
                    answer = session.post(f"{url}/charges", json=body, headers=headers)
                async with answer as reply:
                    assert reply.status == 200, await reply.text()

        async def page_reader() -> None:
            while not done.is_set():
                start = time.perf_counter()
                async with session.get(f"{url}/pages/form") as reply:
                    await reply.read()
                waits.append(time.perf_counter() - start)
                await asyncio.sleep(PAGE_EVERY_S)

        reader = asyncio.create_task(page_reader()) if pages else None
        start = time.perf_counter()
        await asyncio.gather(*(caller(n) for n in range(CLIENTS)))
        elapsed = time.perf_counter() - start
        done.set()
        if reader is not None:
            await reader
    return CLIENTS * REQUESTS / elapsed, waits


async def _worker_start(folder: Path, service_url: str, n: int) -> tuple[float, float]:
    """Seconds from the exec of an agent worker to its `hello`, and to its `claimed`."""
    db = folder / f"start-{n}.db"
    async with await LeaseStore.open_async(db, config=CONFIG) as store:
        await store.enqueue("t1", kind=Work.TOOLS.value)
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "core.tools.agent_cli",
        "agent",
        *("--db", str(db), "--id", "w1", "--work", "tools", "--service", service_url),
        *("--steps", "1", "--step-time", "0s", "--exit-when-idle"),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    seen: dict[str, float] = {}
    try:
        async with asyncio.timeout(START_TIMEOUT_S):
            while "claimed" not in seen:
                raw = await proc.stdout.readline()
                if not raw:
                    raise RuntimeError(f"the agent worker ended before it claimed: {seen}")
                line = json.loads(raw).get("line")
                if line in ("hello", "claimed"):
                    seen.setdefault(line, time.perf_counter() - start)
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return seen["hello"], seen["claimed"]


async def _service_start(folder: Path, n: int) -> float:
    """Seconds from opening the service's books to its first page answered."""
    start = time.perf_counter()
    async with (
        serve_downstream(folder / f"books-start-{n}.db") as service,
        aiohttp.ClientSession() as session,
        session.get(f"{service.url}/pages/form") as reply,
    ):
        await reply.read()
        return time.perf_counter() - start


async def _chromium_start(service_url: str) -> float:
    """Seconds from launching chromium to its first page of the service loaded."""
    start = time.perf_counter()
    async with Chromium() as chromium:
        context = await chromium.context()
        page = await context.new_page()
        await page.goto(f"{service_url}/pages/form")
        elapsed = time.perf_counter() - start
        await context.close()
    return elapsed


async def _starts(folder: Path, browser: bool) -> dict[str, float]:
    """The least of STARTS fresh starts of each: the worker to hello and to claimed, the
    service, and chromium (left out when `browser` is False)."""
    hello: list[float] = []
    claimed: list[float] = []
    services: list[float] = []
    chromiums: list[float] = []
    async with serve_downstream(folder / "books-starts.db") as service:
        for n in range(STARTS + 1):  # the first warms the bytecode caches and is not counted
            said_hello, said_claimed = await _worker_start(folder, service.url, n)
            services_at = await _service_start(folder, n)
            chromium_at = await _chromium_start(service.url) if browser else None
            if n == 0:
                continue
            hello.append(said_hello)
            claimed.append(said_claimed)
            services.append(services_at)
            if chromium_at is not None:
                chromiums.append(chromium_at)
    out = {"worker_hello": min(hello), "worker_claimed": min(claimed), "service": min(services)}
    if chromiums:
        out["chromium"] = min(chromiums)
    return out


def _starts_table(console: Console, starts: dict[str, float]) -> None:
    whats = {
        "worker_hello": "an agent worker process, from its exec to hello (its store open)",
        "worker_claimed": "the same, to claimed (its first task held)",
        "service": "the downstream service in-process, to its first page answered",
        "chromium": "chromium, from its launch to its first page of the service loaded",
    }
    table = Table(title=f"start-up, the best of {STARTS} fresh starts each")
    table.add_column("what")
    table.add_column("s", justify="right")
    for key, what in whats.items():
        if key not in starts:
            continue
        table.add_row(what, f"{starts[key]:.2f}")
        record("agents", f"start_{key}_s", what, round(starts[key], 3), "s")
    console.print(table)


def agents_bench(console: Console) -> None:
    with tempfile.TemporaryDirectory(prefix="bk-bench-") as tmp:
        bare, held = asyncio.run(_overhead(Path(tmp)))
        rates: dict[Work, float | None] = {}
        for work, tasks in TASKS.items():
            if work is Work.BROWSER and (why := missing_browser()) is not None:
                console.print(f"browser left out: {why}")
                rates[work] = None
                continue
            rates[work] = asyncio.run(_rate(Path(tmp), work, tasks))
        starts = asyncio.run(_starts(Path(tmp), browser=missing_browser() is None))
        per_s, _ = asyncio.run(_service(Path(tmp), pages=False))
        _, waits = asyncio.run(_service(Path(tmp), pages=True))
    wait_p50 = statistics.median(waits) * 1e3
    wait_p90 = statistics.quantiles(waits, n=10)[-1] * 1e3
    table = Table(title=f"the library's overhead per call, median of {CALLS:,} each, SQLite file")
    table.add_column("call")
    table.add_column("µs", justify="right")
    table.add_row("store.save_checkpoint (bare)", f"{bare:,.0f}")
    table.add_row("lease.checkpoint (under a hold)", f"{held:,.0f}")
    table.add_row("overhead", f"{held - bare:,.0f}")
    console.print(table)
    record("agents", "checkpoint_bare_us", "store.save_checkpoint, bare, median", bare, "µs")
    record("agents", "checkpoint_hold_us", "lease.checkpoint under a hold, median", held, "µs")
    record(
        "agents",
        "hold_overhead_us",
        "the library's overhead per fenced call (lease.checkpoint over the bare store call)",
        round(held - bare, 1),
        "µs",
    )
    rate_table = Table(title="tasks per second, one worker under store.hold, no time per step")
    rate_table.add_column("workload")
    rate_table.add_column("tasks", justify="right")
    rate_table.add_column("tasks/s", justify="right")
    for work, rate in rates.items():
        shown = "-" if rate is None else f"{rate:,.1f}" if rate >= 10 else f"{rate:.2f}"
        rate_table.add_row(work.value, str(TASKS[work]), shown)
        if rate is not None:
            record(
                "agents",
                f"{work.value}_tasks_per_s",
                f"{work.value} tasks per second, one worker under store.hold",
                round(rate, 1) if rate >= 10 else round(rate, 2),
                "per s",
            )
    console.print(rate_table)
    _starts_table(console, starts)
    service_table = Table(
        title=f"the downstream service, {CLIENTS} callers at once, {REQUESTS} requests each"
    )
    service_table.add_column("what")
    service_table.add_column("", justify="right")
    service_table.add_row("book requests per second", f"{per_s:,.0f}")
    service_table.add_row("a page that reads no books meanwhile: median wait", f"{wait_p50:.1f} ms")
    service_table.add_row("the same, 90th percentile", f"{wait_p90:.1f} ms")
    console.print(service_table)
    record(
        "agents",
        "service_requests_per_s",
        f"the downstream service's book requests per second, {CLIENTS} callers at once",
        round(per_s),
        "per s",
    )
    record(
        "agents",
        "service_page_wait_p50_ms",
        "a page that reads no books, asked while the books are busy: median wait",
        round(wait_p50, 2),
        "ms",
    )
    record(
        "agents",
        "service_page_wait_p90_ms",
        "a page that reads no books, asked while the books are busy: 90th-percentile wait",
        round(wait_p90, 2),
        "ms",
    )


def main() -> int:
    agents_bench(Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
