"""The asyncio driver: close ordered after every call, every call yields, WAL flushes off the
loop, what a cancelled call does, and the database's clock judging.

No test waits for time: where a transaction must be held on the driver's thread, another
connection holds the write lock, and the test releases it.
"""

import asyncio
import random
import sqlite3
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import pytest

from core.engine import drivers
from core.engine.backends import sqlite as backend
from core.engine.clock import DatabaseClock, VirtualClock
from core.engine.config import LeaseConfig
from core.engine.drivers import AsyncSqliteDriver, InlineDriver
from core.engine.errors import StoreClosed, StoreError
from core.engine.store import LeaseStore


def _task_count(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM agent_tasks").fetchone()[0])
    finally:
        conn.close()


async def _turn(times: int = 20) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


# -- close ------------------------------------------------------------------------------------


async def test_enqueues_racing_close_end_with_a_clear_error_and_lose_nothing(
    tmp_path: Path,
) -> None:
    """An enqueue loop and close(), many times: no crash, StoreClosed, every return committed.

    Before the guard, a write on the loop while the thread closed the connection crashed
    the interpreter in 7 of 20 runs.
    """
    path = tmp_path / "race.db"
    rng = random.Random(10)
    returned = 0
    holder = backend.connect(path)
    for run in range(150):
        store = await LeaseStore.open_async(path, clock=VirtualClock())
        ok: list[str] = []
        # In one run of three another connection holds the write lock around the close,
        # so the call in flight is on the driver's thread when close() comes.
        contended = run % 3 == 0

        async def enqueue_forever(
            store: LeaseStore = store, ok: list[str] = ok, run: int = run
        ) -> None:
            i = 0
            while True:
                task_id = f"r{run}-{i}"
                await store.enqueue(task_id)
                ok.append(task_id)
                i += 1

        loop_task = asyncio.create_task(enqueue_forever())
        await _turn(rng.randint(0, 30))
        if contended:
            holder.execute("BEGIN IMMEDIATE")
            await _turn(rng.randint(0, 5))
        closers = [asyncio.create_task(store.close()) for _ in range(rng.randint(1, 2))]
        if contended:
            await _turn(rng.randint(0, 5))
            holder.execute("COMMIT")
        with pytest.raises(StoreClosed, match="closed") as err:
            await loop_task
        assert "\n" not in str(err.value)
        await asyncio.gather(*closers)
        returned += len(ok)
    holder.close()
    assert _task_count(path) == returned


async def test_close_waits_for_a_transaction_on_the_thread_and_refuses_later_ones(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys.db"
    store = await LeaseStore.open_async(path, clock=VirtualClock())
    holder = backend.connect(path)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        in_flight = asyncio.create_task(store.enqueue("in-flight"))
        await _turn()  # it found the lock taken and waits on the driver's thread
        closing = asyncio.create_task(store.close())
        await _turn()
        assert not closing.done()  # close is ordered after the transaction in flight
        with pytest.raises(StoreClosed):
            await store.enqueue("too-late")
    finally:
        holder.execute("COMMIT")
        holder.close()
    await asyncio.wait_for(in_flight, timeout=30)
    await asyncio.wait_for(closing, timeout=30)
    conn = sqlite3.connect(path)
    ids = [r[0] for r in conn.execute("SELECT task_id FROM agent_tasks")]
    conn.close()
    assert ids == ["in-flight"]


async def test_stores_and_drivers_are_async_context_managers(tmp_path: Path) -> None:
    async with await LeaseStore.open_async(tmp_path / "a.db", clock=VirtualClock()) as store:
        await store.enqueue("t1")
    with pytest.raises(StoreClosed):
        await store.tasks()
    async with LeaseStore.open_inline(tmp_path / "b.db", clock=VirtualClock()) as inline:
        await inline.enqueue("t1")
    with pytest.raises(StoreClosed):
        await inline.enqueue("t2")
    async with InlineDriver.open() as driver:
        assert await driver.read(lambda c: c.execute("SELECT 1").fetchone()[0]) == 1
    async with await AsyncSqliteDriver.open(tmp_path / "c.db") as adriver:
        assert await adriver.read(lambda c: c.execute("SELECT 1").fetchone()[0]) == 1
    assert issubclass(StoreClosed, StoreError)
    await store.close()  # closing twice is harmless


# -- yielding and WAL flushes ----------------------------------------------------------------


async def test_every_call_lets_other_tasks_run(tmp_path: Path) -> None:
    """2,000 uncontended store calls: a heartbeat-like task gets a turn at every one."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async with await LeaseStore.open_async(tmp_path / "keys.db", clock=VirtualClock()) as store:
        other = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        start = ticks
        for i in range(1_000):
            await store.enqueue(f"t{i}")
            await store.task(f"t{i}")
        ran = ticks - start
        other.cancel()
    assert ran >= 2_000


async def test_wal_flushes_run_on_another_connection_never_inside_a_loop_commit(
    tmp_path: Path,
) -> None:
    store = await LeaseStore.open_async(tmp_path / "keys.db", clock=VirtualClock())
    driver = store.driver
    assert isinstance(driver, AsyncSqliteDriver)
    autocheckpoint = await driver.read(
        lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    )
    assert autocheckpoint == 0
    flusher = driver.wal_flusher
    assert flusher is not None
    for i in range(3 * drivers.WAL_FLUSH_EVERY):
        await store.enqueue(f"t{i}")
    await store.close()  # waits for the flush still running, if any
    assert flusher.done >= 1
    # An in-memory database has no WAL and needs no flusher.
    memory = await AsyncSqliteDriver.open(":memory:")
    assert memory.wal_flusher is None
    await memory.close()


# -- cancellation -----------------------------------------------------------------------------


async def test_a_call_cancelled_at_its_yield_writes_nothing(tmp_path: Path) -> None:
    async with await LeaseStore.open_async(tmp_path / "keys.db", clock=VirtualClock()) as store:
        call = asyncio.create_task(store.enqueue("never"))
        await asyncio.sleep(0)  # the call is now at its suspension point, before any write
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await store.tasks() == []


async def test_a_call_cancelled_while_queued_on_the_thread_never_runs(tmp_path: Path) -> None:
    path = tmp_path / "keys.db"
    store = await LeaseStore.open_async(path, clock=VirtualClock())
    holder = backend.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    try:
        first = asyncio.create_task(store.enqueue("first"))
        await _turn()
        queued = asyncio.create_task(store.enqueue("queued"))  # behind `first` on the thread
        await _turn()
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(queued, timeout=5)  # promptly: it had not begun
    finally:
        holder.execute("COMMIT")
        holder.close()
    await asyncio.wait_for(first, timeout=30)
    assert [t.task_id for t in await store.tasks()] == ["first"]
    await store.close()


async def _waiting_on_the_lock() -> None:
    """Until the driver's thread is inside `run_write` (its BEGIN IMMEDIATE waiting in the
    busy handler), not merely queued for the thread."""
    async with asyncio.timeout(5):
        while True:
            frames = sys._current_frames()
            for thread in threading.enumerate():
                if thread.name.startswith("bk-sqlite") and thread.ident in frames:
                    frame: FrameType | None = frames[thread.ident]
                    while frame is not None:
                        if frame.f_code is backend.run_write.__code__:
                            return
                        frame = frame.f_back
            await asyncio.sleep(0.005)


async def test_a_call_cancelled_while_it_waits_for_the_lock_writes_nothing_once_it_is_free(
    tmp_path: Path,
) -> None:
    """The thread has started the call, which waits in SQLite's busy handler for another
    connection's lock: cancelled then, it has written nothing, and the lock's release does
    not let it write late."""
    path = tmp_path / "keys.db"
    driver = await AsyncSqliteDriver.open(path)
    holder = backend.connect(path)
    ran = threading.Event()

    def write(conn: sqlite3.Connection) -> None:
        ran.set()
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('probe', 'late')")

    holder.execute("BEGIN IMMEDIATE")
    try:
        call = asyncio.create_task(driver.write(write))
        await _waiting_on_the_lock()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, timeout=5)  # promptly: it held no lock
    finally:
        holder.execute("COMMIT")
        holder.close()
    # a read queues on the driver's thread behind the dropped call: it has ended by then
    value = await asyncio.wait_for(
        driver.read(
            lambda c: c.execute("SELECT value FROM store_meta WHERE key = 'probe'").fetchone()
        ),
        timeout=10,
    )
    assert value is None
    assert not ran.is_set()
    await driver.close()


async def test_a_call_cancelled_mid_transaction_ends_it_first_and_may_have_committed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys.db"
    driver = await AsyncSqliteDriver.open(path)
    holder = backend.connect(path)
    begun = threading.Event()
    release = threading.Event()

    def write(conn: sqlite3.Connection) -> None:
        begun.set()
        release.wait(30)
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('probe', 'committed')")

    holder.execute("BEGIN IMMEDIATE")  # sends the call to the driver's thread
    call = asyncio.create_task(driver.write(write))
    await _turn()
    holder.execute("COMMIT")
    holder.close()
    assert await asyncio.to_thread(begun.wait, 30)  # the transaction has begun on the thread
    call.cancel()
    await _turn()
    assert not call.done()  # the cancellation waits for the transaction to end
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(call, timeout=30)
    value = await driver.read(
        lambda c: c.execute("SELECT value FROM store_meta WHERE key = 'probe'").fetchone()
    )
    assert value == ("committed",)
    await driver.close()


# -- the database's clock ---------------------------------------------------------------------


async def test_a_skewed_process_clock_changes_no_expiry_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = LeaseConfig(ttl_ms=60_000)
    path = tmp_path / "keys.db"
    async with await LeaseStore.open_async(path, clock=DatabaseClock(), config=config) as store:
        await store.enqueue("t1")
        before = time.time_ns() // 1_000_000
        lease = await store.claim("w1")
        after = time.time_ns() // 1_000_000
        assert lease is not None
        assert before + 60_000 <= lease.expires_at <= after + 60_000
        for skew_s in (3_600, -3_600):  # this process's clock an hour ahead, then behind
            real = time.time_ns
            monkeypatch.setattr(time, "time_ns", lambda real=real, s=skew_s: real() + s * 10**9)
            monkeypatch.setattr(time, "time", lambda real=real, s=skew_s: real() / 1e9 + s)
            # Ahead, a process clock would call the lease expired and hand the task over.
            assert await store.claim("w2") is None
            renewed = await store.heartbeat(lease)
            # Behind, it would stamp the renewal an hour early; the database's time is used.
            assert abs(renewed.expires_at - (real() // 1_000_000 + 60_000)) < 5_000
            lease = renewed
            # live by the database's clock: its expiry is still the next to come
            assert await store.next_expiry() == lease.expires_at
            monkeypatch.undo()
