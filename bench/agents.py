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
(c) The downstream service's request rate: CLIENTS callers at once, each a run of fenced
    artifact writes and charges with idempotency keys, every request one transaction of the
    service's books; then the same again with a caller of a page that reads no books beside
    them, whose wait says how long the books hold the service's event loop.
"""

import asyncio
import contextlib
import functools
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
