"""The lease as a library (`store.hold`), over SQLite and PostgreSQL, on real stores.

The store stops answering (a lock held by another connection) and the body is cancelled
with LeaseLost by the renew deadline; a stale holder's checkpoint and downstream write are
refused; an effect runs once across a SIGKILL and a redo. Where a lease has to run out, the
store of the next holder is opened on a virtual clock past its expiry, so no test waits
for a lease's time to pass.
"""

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.engine.backends import postgresql as pg_backend
from core.engine.clock import DatabaseClock, VirtualClock
from core.engine.config import LeaseConfig, Mode, TimingWarning
from core.engine.errors import (
    FencedWrite,
    InvalidArgument,
    InvalidId,
    InvalidPayload,
    LeaseRejected,
    RejectReason,
    UnknownTask,
)
from core.engine.hold import LeaseLost, LostBecause, NotClaimed, NotClaimedBecause
from core.engine.store import LeaseStore
from core.fleet.relay import Relays, through, upstream_of
from tests.pgserver_kit import with_schema

ROOT = Path(__file__).resolve().parents[2]

# Short real timings for the tests that need the renewer to run: a beat of 100 ms, the
# renew deadline 400 ms after the last answered renewal, the lease 800 ms.
FAST = LeaseConfig(ttl_ms=800, heartbeat_every_ms=100, renew_deadline_ms=400)
# The same shape with room for a loaded machine, for a test whose lease must live until the
# test itself cuts the store off: a process starved of the processor for 400 ms (it happened,
# on 2 cores under CI) lost FAST's lease before the store was cut, for no reason of the store's.
ROOMY = LeaseConfig(ttl_ms=3_000, heartbeat_every_ms=200, renew_deadline_ms=1_500)
# Timings no test outlives: the renewer never renews before the test is over.
SLOW = LeaseConfig(ttl_ms=60_000)
# A cut road: the same beat and renew deadline, and a lease that outlives the PostgreSQL
# driver's reconnect backoff (0.05 s doubling), so a renewal let go at the deadline that
# reconnects once the road heals would still land before the lease runs out.
CUT = LeaseConfig(ttl_ms=3_000, heartbeat_every_ms=100, renew_deadline_ms=400)

Opener = Callable[..., Awaitable[LeaseStore]]


@pytest.fixture
def where(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """This test's store: a SQLite file, or a fresh schema on the test PostgreSQL."""
    if backend == "sqlite":
        return str(tmp_path / "keys.db")
    return with_schema(str(request.getfixturevalue("postgres_url")))


@pytest.fixture
async def opened(where: str) -> AsyncIterator[Opener]:
    stores: list[LeaseStore] = []

    async def open_one(**kwargs: Any) -> LeaseStore:
        store = await LeaseStore.open_async(where, **kwargs)
        stores.append(store)
        return store

    yield open_one
    for store in stores:
        await store.close()


def _ms() -> int:
    return time.time_ns() // 1_000_000


async def _forever() -> None:
    await asyncio.Event().wait()


async def test_open_async_needs_no_clock(opened: Opener) -> None:
    store = await opened()
    assert isinstance(store.clock, DatabaseClock)


async def test_a_hold_renews_by_itself_and_completes_on_exit(opened: Opener) -> None:
    store = await opened(config=FAST)
    await store.enqueue("t1")
    async with store.hold("t1", "w1") as lease:
        first = lease.lease
        # the body awaits nothing of the lease; the renewer renews anyway
        async with asyncio.timeout(5):
            while lease.renewals < 3:
                await asyncio.sleep(0.02)
        assert lease.lease.lease_token == first.lease_token
        assert lease.lease.expires_at is not None and first.expires_at is not None
        assert lease.lease.expires_at > first.expires_at
        assert lease.token == first.fence_token
    row = await store.task("t1")
    assert row.status == "done"
    assert row.owner_id == "w1"


async def test_a_held_task_is_not_claimed_and_says_by_whom(opened: Opener) -> None:
    store = await opened(config=SLOW)
    await store.enqueue("t1")
    async with store.hold("t1", "w1"):
        with pytest.raises(NotClaimed) as refused:
            async with store.hold("t1", "w2"):
                raise AssertionError("claimed a held task")
    assert refused.value.reason is NotClaimedBecause.HELD
    assert refused.value.owner_id == "w1"
    assert "held by w1 until" in str(refused.value)
    with pytest.raises(NotClaimed) as done:
        async with store.hold("t1", "w2"):
            pass
    assert done.value.reason is NotClaimedBecause.DONE
    with pytest.raises(UnknownTask):
        async with store.hold("nobody", "w2"):
            pass


async def test_bad_arguments_are_refused_with_typed_errors(opened: Opener) -> None:
    store = await opened(config=SLOW)
    await store.enqueue("t1")
    with pytest.raises(InvalidId):
        store.hold(41, "w1")  # type: ignore[arg-type]
    with pytest.raises(InvalidId):
        store.hold("t1", "")
    async with store.hold("t1", "w1") as lease:
        with pytest.raises(InvalidArgument):
            await lease.checkpoint({"at": 1}, step=-1)
        with pytest.raises(InvalidPayload):
            await lease.checkpoint({"at": float("nan")})
        with pytest.raises(InvalidArgument):
            await lease.effect("k", "not a function")  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument):
            await lease.effect("k", lambda key: key)  # type: ignore[arg-type,return-value]

        async def unstorable(key: str) -> object:
            return object()

        with pytest.raises(InvalidPayload):
            await lease.effect("k2", unstorable)
        with pytest.raises(InvalidId):
            await lease.effect("", unstorable)
        with pytest.raises(InvalidArgument):
            async with lease:
                pass
    assert (await store.task("t1")).status == "done"


async def test_the_body_failing_gives_the_task_back(opened: Opener) -> None:
    store = await opened(config=SLOW)
    await store.enqueue("t1")
    with pytest.raises(ZeroDivisionError):
        async with store.hold("t1", "w1"):
            _ = 1 / 0
    row = await store.task("t1")
    assert row.status == "queued"
    assert row.error_code == "ZeroDivisionError"


async def test_checkpoint_and_resume_carry_state_to_the_next_holder(opened: Opener) -> None:
    store = await opened(config=SLOW)
    await store.enqueue("t1", kind="approval")
    async with store.hold("t1", "w1") as first:
        assert first.resume() is None
        await first.checkpoint({"url": "/form", "done": ["opened"]})
        await first.park()
        with pytest.raises(InvalidArgument):
            await first.checkpoint({"late": True})
    assert (await store.task("t1")).status == "waiting"
    await store.approve("t1")
    async with store.hold("t1", "w2") as second:
        assert second.resume() == {"url": "/form", "done": ["opened"]}
        assert second.token > first.token
    assert (await store.task("t1")).status == "done"


@contextmanager
def _store_locked(where: str) -> Iterator[None]:
    """Another connection holds the write lock: the store answers no one until it lets go."""
    if not where.startswith("postgresql"):
        lite = sqlite3.connect(where, isolation_level=None)
        lite.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            lite.execute("ROLLBACK")
            lite.close()
        return
    target = pg_backend.Target.parse(where)
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute(f'LOCK TABLE "{target.schema}".agent_tasks IN ACCESS EXCLUSIVE MODE')
        try:
            yield
        finally:
            conn.execute("ROLLBACK")


async def test_the_body_is_cancelled_with_lease_lost_when_the_store_stops_answering(
    opened: Opener, where: str
) -> None:
    store = await opened(config=ROOMY)
    await store.enqueue("t1")
    cancelled = False
    with pytest.raises(LeaseLost) as lost:
        async with store.hold("t1", "w1") as lease:
            async with asyncio.timeout(5):
                while lease.renewals < 1:
                    await asyncio.sleep(0.02)
            with _store_locked(where):
                locked_at = time.monotonic()
                try:
                    await _forever()
                except asyncio.CancelledError:
                    cancelled = True
                    stopped_after = time.monotonic() - locked_at
                    raise
    assert cancelled
    error = lost.value
    assert error.reason is LostBecause.RENEW_DEADLINE_PASSED
    assert "renew_deadline" in str(error) and "w1" in str(error) and "t1" in str(error)
    # self-fencing comes by the renew deadline (1.5 s after the last renewal sent), before
    # the lease's 3 s ttl would let another worker in
    assert stopped_after < ROOMY.ttl_ms / 1000
    assert error.last_renewed_ms is not None and error.at_ms > error.last_renewed_ms
    with pytest.raises(LeaseLost):
        lease.resume()


async def test_on_postgresql_a_cut_connection_cancels_the_body_and_nothing_late_lands(
    postgres_url: str,
) -> None:
    """The road to the server is cut (the fleet's relay drops the connection and refuses new
    ones), not a lock: the body is cancelled with LeaseLost by the renew deadline, and once
    the road is back nothing of the lost holder lands: not the renewal it let go at the
    deadline, not a checkpoint, not a downstream write; the next holder goes on with a
    greater fence token."""
    where = with_schema(postgres_url)
    relays = Relays(upstream_of(where))
    try:
        books = await LeaseStore.open_async(where, config=CUT)
        cut_off = await LeaseStore.open_async(through(where, relays.port("w1")), config=CUT)
        try:
            await books.enqueue("t1")
            cancelled = False
            with pytest.raises(LeaseLost) as lost:
                async with cut_off.hold("t1", "w1") as lease:
                    async with asyncio.timeout(5):
                        while lease.renewals < 1:
                            await asyncio.sleep(0.02)
                    await lease.checkpoint({"page": 1})
                    relays.cut("w1")
                    cut_at = time.monotonic()
                    try:
                        await _forever()
                    except asyncio.CancelledError:
                        cancelled = True
                        stopped_after = time.monotonic() - cut_at
                        raise
            assert cancelled
            assert lost.value.reason is LostBecause.RENEW_DEADLINE_PASSED
            # by the renew deadline, counted from the last renewal sent before the cut
            assert stopped_after <= CUT.deadline_ms / 1000 + 0.1
            seen = (await books.events())[-1].seq
            before = await books.task("t1")
            assert before.fence_token == lease.token and before.owner_id == "w1"
            relays.heal("w1")
            # a read on w1's store queues behind whatever its driver still had on the way
            # (the renewal let go at the deadline, reconnecting): once it answers, that ended
            await cut_off.task("t1")
            after_heal = await books.task("t1")
            assert after_heal.lease_expires_at == before.lease_expires_at, "a late renewal landed"
            with pytest.raises(LeaseLost):
                await lease.checkpoint({"page": "late"})
            clock = VirtualClock(_ms() + CUT.ttl_ms + 1)  # the next holder, past the expiry
            nxt = await LeaseStore.open_async(where, config=CUT, clock=clock)
            try:
                async with nxt.hold("t1", "w2") as fresh:
                    assert fresh.token > lease.token
                    await nxt.fenced_write(fresh.lease, "page", "w2's")
                    with pytest.raises(FencedWrite):
                        await cut_off.fenced_write(lease.lease, "page", "w1's late page")
            finally:
                await nxt.close()
            # what w1 wrote after its loss: only the record of it and the store's refusals
            landed = {e.event for e in await books.events(seen) if e.worker_id == "w1"}
            assert landed <= {"self_fenced", "write_rejected", "renew_rejected"}, landed
            assert [(r.key, r.value) for r in await books.ledger()] == [("page", "w2's")]
            assert (await books.task("t1")).status == "done"
        finally:
            await cut_off.close()
            await books.close()
    finally:
        relays.close()


# A held write lock on SQLite: the same beat and renew deadline as FAST, and a lease long
# enough that a renewal let go at the deadline, once the lock is released, would still find
# it live (SQLite's busy handler notices a released lock within about 100 ms) and renew it.
LOCKED = LeaseConfig(ttl_ms=1_200, heartbeat_every_ms=100, renew_deadline_ms=400)


async def test_on_sqlite_a_held_write_lock_cancels_the_body_and_the_renewal_let_go_never_lands(
    tmp_path: Path,
) -> None:
    """Another connection holds the file's write lock (BEGIN IMMEDIATE) past the renew
    deadline: the body is cancelled with LeaseLost by then, and once the lock is released
    the renewal the hold let go at the deadline (still waiting for the lock on the driver's
    thread) does not renew the lease of a holder that has stopped."""
    path = tmp_path / "keys.db"
    store = await LeaseStore.open_async(path, config=LOCKED)
    books = await LeaseStore.open_async(path, config=LOCKED)
    try:
        await store.enqueue("t1")
        seen = 0
        cancelled = False
        expiry_while_locked: int | None = None
        with pytest.raises(LeaseLost) as lost:
            async with store.hold("t1", "w1") as lease:
                async with asyncio.timeout(5):
                    while lease.renewals < 1:
                        await asyncio.sleep(0.02)
                seen = (await books.events())[-1].seq
                locker = sqlite3.connect(path, isolation_level=None)
                try:
                    locker.execute("BEGIN IMMEDIATE")
                    locked_at = time.monotonic()
                    try:
                        await _forever()
                    except asyncio.CancelledError:
                        cancelled = True
                        stopped_after = time.monotonic() - locked_at
                        # the lock is still held: no renewal has committed since it was taken
                        (expiry_while_locked,) = locker.execute(
                            "SELECT lease_expires_at FROM agent_tasks WHERE task_id = 't1'"
                        ).fetchone()
                        raise
                finally:
                    locker.execute("ROLLBACK")
                    locker.close()
        assert cancelled
        error = lost.value
        assert error.reason is LostBecause.RENEW_DEADLINE_PASSED
        assert "renew_deadline" in str(error) and "w1" in str(error) and "t1" in str(error)
        assert error.last_renewed_ms is not None and error.at_ms > error.last_renewed_ms
        # by the renew deadline, counted from the last renewal sent before the lock
        assert stopped_after <= LOCKED.deadline_ms / 1000 + 0.1
        # A read on w1's store queues on its driver's thread behind whatever it still had on
        # the way (the renewal let go at the deadline, waiting for the lock): once it
        # answers, that has ended, one way or the other.
        async with asyncio.timeout(5):
            await store.task("t1")
        after = await books.task("t1")
        assert after.owner_id == "w1" and after.status == "running"
        assert after.lease_expires_at == expiry_while_locked, "a late renewal landed"
        landed = {e.event for e in await books.events(seen) if e.worker_id == "w1"}
        assert "renewed" not in landed, landed
        assert landed <= {"self_fenced"}, landed
        with pytest.raises(LeaseLost):
            await lease.checkpoint({"page": "late"})
    finally:
        await store.close()
        await books.close()


async def test_a_frozen_hold_sends_no_renewal_while_the_body_goes_on(opened: Opener) -> None:
    """The frozen heartbeat of the fleet's faults on a hold: renewals stop, the body works
    on, and the renew deadline still lets the lease go; a thaw in time renews again."""
    store = await opened(config=FAST)
    await store.enqueue("t1")
    await store.enqueue("t2")
    async with store.hold("t2", "w1") as thawed:
        thawed.freeze()
        assert thawed.frozen
        thawed.thaw()
        renewed = thawed.renewals
        async with asyncio.timeout(5):
            while thawed.renewals < renewed + 2:
                await asyncio.sleep(0.02)
    steps = 0
    with pytest.raises(LeaseLost) as lost:
        async with store.hold("t1", "w1") as lease:
            async with asyncio.timeout(5):
                while lease.renewals < 1:
                    await asyncio.sleep(0.02)
            lease.freeze()
            await lease.quiet()  # the renewal on its way, if one was, has landed
            before = lease.renewals
            while True:  # the body's own work, which the freeze does not touch
                await asyncio.sleep(0.01)
                steps += 1
    assert lease.renewals == before
    assert steps > 5
    assert lost.value.reason is LostBecause.RENEW_DEADLINE_PASSED
    assert "its renewals were frozen" in str(lost.value)
    assert lost.value.cause is None
    # its record says which deadline it passed, on the store's clock, as a simulated
    # worker's does: the last renewal the store answered, plus the renew deadline
    fenced = [e for e in await store.events() if e.event == "self_fenced"]
    assert lost.value.last_renewed_ms is not None
    assert [e.detail.get("renew_deadline") for e in fenced] == [
        lost.value.last_renewed_ms + FAST.deadline_ms
    ]


async def test_a_renewal_the_store_refuses_cancels_the_body(where: str, opened: Opener) -> None:
    clock = VirtualClock(_ms())
    store = await opened(config=LeaseConfig(ttl_ms=3_000, heartbeat_every_ms=50), clock=clock)
    await store.enqueue("t1")
    with pytest.raises(LeaseLost) as lost:
        async with store.hold("t1", "w1"):
            clock.advance(3_001)  # the store's clock: w1's lease has run out
            assert await store.claim("w2", "t1") is not None
            await _forever()
    assert lost.value.reason is LostBecause.SUPERSEDED
    assert isinstance(lost.value.cause, LeaseRejected)
    assert (await store.task("t1")).owner_id == "w2"


async def test_a_stale_holder_is_refused_its_checkpoint_and_downstream_write(
    opened: Opener,
) -> None:
    clock = VirtualClock(_ms())
    store = await opened(config=SLOW, clock=clock)
    await store.enqueue("t1")
    with pytest.raises(LeaseRejected) as refused:
        async with store.hold("t1", "w1") as stale:
            await stale.checkpoint({"page": 1})
            # w1 pauses past its lease (its renewer would renew at 20 s; it has not yet)
            clock.advance(SLOW.ttl_ms + 1)
            async with store.hold("t1", "w2") as fresh:
                await fresh.checkpoint({"page": 2})
                assert fresh.token > stale.token
                await store.fenced_write(fresh.lease, "page", "w2's")
                with pytest.raises(FencedWrite):
                    await store.fenced_write(stale.lease, "page", "w1's late page")
            await stale.checkpoint({"page": "late"})
    assert refused.value.reason is RejectReason.SUPERSEDED
    assert (await store.task("t1")).status == "done"
    saved = await store.load_checkpoint("t1")
    assert saved is not None and saved.state["state"] == {"page": 2}
    assert [(r.key, r.value) for r in await store.ledger()] == [("page", "w2's")]


_KILLED_WORKER = """
import asyncio, sys
from pathlib import Path
from core.engine.config import LeaseConfig
from core.engine.store import LeaseStore

async def main() -> None:
    where, calls = sys.argv[1], Path(sys.argv[2])
    async with await LeaseStore.open_async(where, config=LeaseConfig(ttl_ms=60_000)) as store:
        async with store.hold("t1", "w1") as lease:
            async def charge(key: str) -> dict[str, object]:
                with calls.open("a") as f:
                    f.write(key + "\\n")
                return {"receipt": "r-1", "key": key}
            await lease.effect("charge", charge)
            print("charged", flush=True)
            await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_an_effect_runs_once_across_a_kill_and_a_redo(
    opened: Opener, where: str, tmp_path: Path
) -> None:
    store = await opened()
    await store.enqueue("t1", kind="tools")
    calls = tmp_path / "calls.txt"
    worker = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WORKER, where, str(calls)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert worker.stdout is not None
    assert worker.stdout.readline() == "charged\n"
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    assert calls.read_text() == "t1:charge\n"
    # The next worker's store is ahead of the dead one's lease (60 s), as the machine's
    # clock will be once it runs out.
    later = await opened(clock=VirtualClock(_ms() + 61_000), config=SLOW)
    ran: list[str] = []

    async def charge_again(key: str) -> dict[str, object]:
        ran.append(key)
        return {"receipt": "r-2", "key": key}

    async with later.hold("t1", "w2") as lease:
        assert lease.lease.attempt == 2
        got = await lease.effect("charge", charge_again)
    assert got == {"receipt": "r-1", "key": "t1:charge"}
    assert ran == []
    assert calls.read_text() == "t1:charge\n"


async def test_without_idempotency_the_redo_runs_the_effect_again(opened: Opener) -> None:
    clock = VirtualClock(_ms())
    store = await opened(config=SLOW, clock=clock, mode=Mode.NO_IDEMPOTENCY)
    await store.enqueue("t1", kind="tools")
    ran: list[str] = []

    async def charge(key: str) -> int:
        ran.append(key)
        return len(ran)

    async with store.hold("t1", "w1") as first:
        assert await first.effect("charge", charge) == 1
        assert await first.effect("charge", charge) == 2  # the mistake: nothing is looked up
        await first.park()
    await store.approve("t1")
    async with store.hold("t1", "w2") as second:
        assert await second.effect("charge", charge) == 3
    assert ran == ["t1:charge"] * 3


async def test_with_idempotency_a_repeat_in_the_same_hold_is_answered(opened: Opener) -> None:
    store = await opened(config=SLOW)
    await store.enqueue("t1", kind="tools")
    ran: list[str] = []

    async def charge(key: str) -> int:
        ran.append(key)
        return len(ran)

    async with store.hold("t1", "w1") as lease:
        assert await lease.effect("charge", charge) == 1
        assert await lease.effect("charge", charge) == 1
        assert await lease.effect("refund", charge) == 2
    assert ran == ["t1:charge", "t1:refund"]


@pytest.mark.parametrize(
    ("heartbeat_ms", "warned"),
    [(29_999, False), (30_000, False), (30_001, True)],
    ids=["under-half", "half", "over-half"],
)
async def test_a_hold_that_renews_slower_than_half_its_ttl_is_warned_where_it_is_made(
    opened: Opener, heartbeat_ms: int, warned: bool
) -> None:
    """The seed: "续约频率快于租期的一半" (renew more often than half the lease): a hold that
    does not still runs, and says so (the same rule of thumb a scenario file is warned of)."""
    config = LeaseConfig(ttl_ms=60_000, heartbeat_every_ms=heartbeat_ms, renew_deadline_ms=45_000)
    store = await opened(config=config)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        store.hold("t1", "w1")
    said = [w for w in seen if issubclass(w.category, TimingWarning)]
    assert bool(said) is warned
    if warned:
        assert "more than half of lease_ttl" in str(said[0].message)
        assert said[0].filename == __file__  # where the hold is made, not inside the store
