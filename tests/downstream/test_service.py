"""The fenced downstream service on a loopback port: its fence, its idempotency keys, its
books and the judge's rules over them; and a worker under `hold` writing to it."""

import asyncio
import os
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from core.downstream.books import Books, ServiceRule, Verdict, judge
from core.downstream.client import DownstreamClient, DownstreamRefused
from core.downstream.service import RunningService, serve_downstream
from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode
from core.engine.errors import LeaseRejected
from core.engine.hold import LeaseLost, LostBecause
from core.engine.store import LeaseStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[RunningService]:
    async with serve_downstream(tmp_path / "books.db") as running:
        yield running


@pytest.fixture
async def client(service: RunningService) -> AsyncIterator[DownstreamClient]:
    async with aiohttp.ClientSession() as session:
        yield DownstreamClient(service.url, session)


async def _rules(service: RunningService) -> list[ServiceRule]:
    found = judge(await service.books.history(), await service.books.charges())
    return [f.rule for f in found]


async def test_the_service_listens_on_a_loopback_port_of_its_own(service: RunningService) -> None:
    assert service.url.startswith("http://127.0.0.1:")
    assert not service.url.endswith(":0")


async def test_a_write_needs_a_token_not_older_than_the_newest_seen(
    service: RunningService, client: DownstreamClient
) -> None:
    await client.write_artifact("report", "v3", token=3, writer="w1")
    await client.write_artifact("report", "v5", token=5, writer="w2")
    with pytest.raises(DownstreamRefused) as refused:
        await client.write_artifact("report", "late", token=4, writer="w1")
    assert refused.value.status == 409
    assert refused.value.error == Verdict.STALE_TOKEN
    assert "fence token 4 is older than 5" in str(refused.value)
    # the same token again is not older: the holder of 5 writes on
    await client.write_artifact("report", "v5b", token=5, writer="w2")
    # another key has its own newest
    await client.write_artifact("other", "v1", token=1, writer="w3")
    with pytest.raises(DownstreamRefused) as missing:
        await client.write_artifact("report", "no token", token=None, writer="w1")
    assert missing.value.status == 400 and "Fence-Token" in str(missing.value)
    assert await service.books.artifact("report") == {
        "key": "report",
        "value": "v5b",
        "token": 5,
        "writer": "w2",
    }
    verdicts = [h["verdict"] for h in await service.books.history()]
    assert verdicts == [
        "accepted",
        "accepted",
        "stale_token",
        "accepted",
        "accepted",
        "bad_request",
    ]
    assert await _rules(service) == []


async def test_an_idempotency_key_returns_the_first_reply_and_charges_once(
    service: RunningService, client: DownstreamClient
) -> None:
    first = await client.charge("t1", "deposit", 40, idempotency_key="t1:deposit")
    again = await client.charge("t1", "deposit", 40, idempotency_key="t1:deposit")
    assert not first.replayed and again.replayed
    assert again.body == first.body
    with pytest.raises(DownstreamRefused) as reused:
        await client.charge("t1", "deposit", 99, idempotency_key="t1:deposit")
    assert reused.value.status == 409 and "other parameters" in str(reused.value)
    assert [c["id"] for c in await service.books.charges()] == [first.body["id"]]
    assert await _rules(service) == []


async def test_without_keys_the_books_show_the_second_charge(
    service: RunningService, client: DownstreamClient
) -> None:
    await client.charge("t1", "deposit", 40, idempotency_key=None)
    await client.charge("t1", "deposit", 40, idempotency_key=None)
    assert len(await service.books.charges()) == 2
    found = judge(await service.books.history(), await service.books.charges())
    assert [f.rule for f in found] == [ServiceRule.NO_CHARGE_TWICE]
    assert "t1 was charged 2 times for deposit" in found[0].message


async def test_a_service_without_its_fence_takes_the_stale_write_and_the_judge_sees_it(
    tmp_path: Path,
) -> None:
    async with (
        serve_downstream(tmp_path / "books.db", fencing=False) as service,
        aiohttp.ClientSession() as session,
    ):
        client = DownstreamClient(service.url, session)
        await client.write_artifact("report", "v5", token=5, writer="w2")
        await client.write_artifact("report", "late", token=4, writer="w1")
        found = judge(await service.books.history(), await service.books.charges())
    assert [f.rule for f in found] == [ServiceRule.NO_STALE_WRITE]
    assert "fence token 4 after it had seen 5" in found[0].message


async def test_bad_requests_are_refused_in_words(
    service: RunningService, client: DownstreamClient
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.put(f"{service.url}/artifacts/k", data=b"not json") as reply:
            assert reply.status == 400
            assert (await reply.json())["message"] == "the body must be a JSON object"
        async with session.put(
            f"{service.url}/artifacts/k",
            json={"value": "v", "writer": "w"},
            headers={"Fence-Token": "seven"},
        ) as reply:
            assert reply.status == 400
            assert "whole number" in (await reply.json())["message"]
        async with session.post(f"{service.url}/charges", json={"task": "t", "memo": "m"}) as r:
            assert r.status == 400
            assert "whole amount" in (await r.json())["message"]
        async with session.get(f"{service.url}/books") as reply:
            books = await reply.json()
    assert [h["verdict"] for h in books["history"]] == ["bad_request"] * 3


async def test_requests_at_once_each_get_a_transaction_of_their_own(
    service: RunningService, client: DownstreamClient
) -> None:
    # One connection serves every request: two requests' statements must never share a
    # transaction, or a second BEGIN lands inside the first and a reply is a server error.
    async def write(token: int) -> bool:
        try:
            await client.write_artifact("page", f"v{token}", token=token, writer=f"w{token}")
        except DownstreamRefused as refused:
            assert refused.error == Verdict.STALE_TOKEN, refused
            return False
        return True

    tokens = [7, 3, 12, 1, 9, 15, 4, 11, 2, 14, 6, 10, 13, 5, 8]
    charges = [client.charge("t1", "deposit", 40, idempotency_key="t1:deposit") for _ in tokens]
    taken, charged = await asyncio.gather(
        asyncio.gather(*(write(t) for t in tokens)), asyncio.gather(*charges)
    )
    assert sum(not c.replayed for c in charged) == 1  # one charge, the rest its first reply
    assert len({c.body["id"] for c in charged}) == 1
    assert any(taken) and (await service.books.artifact("page") or {})["token"] == 15
    assert len(await service.books.history()) == 2 * len(tokens)
    assert await _rules(service) == []


async def test_a_request_waiting_for_the_file_leaves_the_event_loop_free(tmp_path: Path) -> None:
    # Another connection holds the file's write lock: the books' transaction waits for it on
    # aiosqlite's thread, and the loop the service answers on goes on meanwhile.
    path = tmp_path / "books.db"
    books = await Books.open(path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        waiting = asyncio.create_task(books.charge("t1", "deposit", 40, "t1:deposit"))
        for _ in range(50):
            await asyncio.sleep(0)  # the loop turns while the charge waits (busy_timeout 2 s)
        assert not waiting.done()
        holder.execute("COMMIT")
        reply = await waiting
        assert reply.status == 200 and not reply.replayed
        assert [h["verdict"] for h in await books.history()] == ["charged"]
    finally:
        holder.close()
        await books.close()


def _ms() -> int:
    return time.time_ns() // 1_000_000


async def test_a_stale_holder_s_downstream_write_is_refused(
    tmp_path: Path, service: RunningService, client: DownstreamClient
) -> None:
    clock = VirtualClock(_ms())
    async with await LeaseStore.open_async(
        tmp_path / "keys.db", clock=clock, config=LeaseConfig(ttl_ms=60_000)
    ) as store:
        await store.enqueue("t1")
        with pytest.raises(LeaseLost) as lost:
            async with store.hold("t1", "w1") as stale:
                await client.write_artifact("t1/out", "w1's", token=stale.token, writer="w1")
                clock.advance(60_001)  # w1 pauses past its lease without knowing
                async with store.hold("t1", "w2") as fresh:
                    await client.write_artifact("t1/out", "w2's", token=fresh.token, writer="w2")
                with pytest.raises(DownstreamRefused) as refused:
                    await client.write_artifact("t1/out", "w1 late", token=stale.token, writer="w1")
                assert refused.value.status == 409
                with pytest.raises(LeaseRejected):
                    await stale.checkpoint({"late": True})
        # a body that goes on after a refusal is told at the end that the lease is gone
        assert lost.value.reason is LostBecause.SUPERSEDED
    assert await service.books.artifact("t1/out") == {
        "key": "t1/out",
        "value": "w2's",
        "token": 2,
        "writer": "w2",
    }


async def test_without_the_service_s_fence_a_stale_holder_s_write_lands_and_is_judged(
    tmp_path: Path,
) -> None:
    clock = VirtualClock(_ms())
    async with (
        serve_downstream(tmp_path / "books.db", fencing=False) as service,
        aiohttp.ClientSession() as session,
        await LeaseStore.open_async(
            tmp_path / "keys.db", clock=clock, config=LeaseConfig(ttl_ms=60_000)
        ) as store,
    ):
        client = DownstreamClient(service.url, session)
        await store.enqueue("t1")
        # leaving the stale hold completes nothing: the store refuses it
        with pytest.raises(LeaseRejected):
            async with store.hold("t1", "w1") as stale:
                clock.advance(60_001)  # w1 pauses past its lease without knowing
                async with store.hold("t1", "w2") as fresh:
                    await client.write_artifact("t1/out", "w2's", token=fresh.token, writer="w2")
                # the service has no fence to stop the stale holder
                await client.write_artifact("t1/out", "w1 late", token=stale.token, writer="w1")
        found = judge(await service.books.history(), await service.books.charges())
        assert await service.books.artifact("t1/out") == {
            "key": "t1/out",
            "value": "w1 late",
            "token": 1,
            "writer": "w1",
        }
    assert [f.rule for f in found] == [ServiceRule.NO_STALE_WRITE]


_CHARGING_WORKER = """
import asyncio, sys
import aiohttp
from core.downstream.client import DownstreamClient
from core.engine.config import LeaseConfig, Mode
from core.engine.store import LeaseStore

async def main() -> None:
    db, url, mode = sys.argv[1], sys.argv[2], Mode(sys.argv[3])
    cfg = LeaseConfig(ttl_ms=60_000)
    async with await LeaseStore.open_async(db, config=cfg, mode=mode) as store, \\
            aiohttp.ClientSession() as session:
        client = DownstreamClient(url, session)
        async with store.hold("t1", "w1") as lease:
            async def deposit(key: str) -> dict[str, object]:
                sent = key if mode is not Mode.NO_IDEMPOTENCY else None
                charged = await client.charge("t1", "deposit", 40, idempotency_key=sent)
                print("charged", flush=True)
                await asyncio.Event().wait()  # killed here: after the call, before its record
                return charged.body
            await lease.effect("deposit", deposit)

asyncio.run(main())
"""


@pytest.mark.parametrize("mode", [Mode.CORRECT, Mode.NO_IDEMPOTENCY])
async def test_a_kill_between_a_call_and_its_record_charges_once_by_the_key(
    tmp_path: Path, service: RunningService, client: DownstreamClient, mode: Mode
) -> None:
    db = tmp_path / "keys.db"
    async with await LeaseStore.open_async(db, mode=mode) as store:
        await store.enqueue("t1", kind="tools")
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CHARGING_WORKER,
        str(db),
        service.url,
        mode.value,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert worker.stdout is not None
    async with asyncio.timeout(30):
        assert await worker.stdout.readline() == b"charged\n"
    worker.kill()
    await worker.wait()
    # the next worker's store is past the dead one's lease, as the machine's clock will be
    later = VirtualClock(_ms() + 61_000)

    async def deposit(key: str) -> dict[str, object]:
        sent = key if mode is not Mode.NO_IDEMPOTENCY else None
        return (await client.charge("t1", "deposit", 40, idempotency_key=sent)).body

    store = await LeaseStore.open_async(db, clock=later, mode=mode)
    async with store, store.hold("t1", "w2") as lease:
        await lease.effect("deposit", deposit)
    charges = await service.books.charges()
    if mode is Mode.CORRECT:
        assert len(charges) == 1
        assert [h["verdict"] for h in await service.books.history()] == ["charged", "replayed"]
        assert await _rules(service) == []
    else:
        assert len(charges) == 2
        assert await _rules(service) == [ServiceRule.NO_CHARGE_TWICE]


def test_the_judges_findings_are_said_in_chinese_with_no_latin_letter() -> None:
    """A zh run's verdict names the harm in Chinese: the words come from the table in both
    languages, a charge by its number; only the caller's own names are left as they are."""
    history = [
        {"seq": 1, "endpoint": "artifact", "verdict": "accepted", "key": "报告", "token": 5},
        {"seq": 2, "endpoint": "artifact", "verdict": "accepted", "key": "报告", "token": 4},
        {"seq": 3, "endpoint": "artifact", "verdict": "accepted", "key": "报告", "token": None},
    ]
    charges = [
        {"id": "ch_3", "task": "任务一", "memo": "押金"},
        {"id": "ch_7", "task": "任务一", "memo": "押金"},
    ]
    found = judge(history, charges)
    said = [f.sentence("zh") for f in found]
    assert said == [
        "下游服务已经见过围栏令牌 5，却仍接受了对 报告 的写入，所带令牌是更旧的 4（第 2 次请求）",
        "下游服务已经见过围栏令牌 5，却仍接受了对 报告 的一次不带令牌的写入（第 3 次请求）",
        "任务一 为同一件事（押金）被扣了 2 次款（第 3、7 笔扣款）",
    ]
    english = found[2].sentence("en")
    assert english == "任务一 was charged 2 times for 押金 (ch_3, ch_7)"
