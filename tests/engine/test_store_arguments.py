"""The Python API refuses a bad argument with a typed error that names it, before writing.

Each call below used to fail with whatever Python or the database said (OverflowError,
TypeError, AttributeError, a NOT NULL constraint) or to accept nonsense (a fractional
attempt count, a negative step, a task kind nobody runs); and one inline store shared by
four threads failed most calls with SQLite's own messages and left an event with no task.
"""

import asyncio
import contextlib
import math
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.clock import VirtualClock
from core.engine.errors import BorrowedKeysError, InvalidArgument
from core.engine.store import LeaseStore


@pytest.fixture
async def store() -> Any:
    s = LeaseStore.open_inline(clock=VirtualClock())
    await s.enqueue("t1")
    yield s
    await s.close()


@pytest.mark.parametrize(
    ("max_attempts", "said"),
    [
        (10**30, "max_attempts must be between 1 and 1000000, got a number of 31 digits"),
        ("3", "max_attempts must be a whole number, got str '3'"),
        (2.5, "max_attempts must be a whole number, got float 2.5"),
        (0, "max_attempts must be between 1 and 1000000, got 0"),
        (True, "max_attempts must be a whole number, got bool True"),
    ],
)
async def test_enqueue_names_a_bad_max_attempts(
    store: LeaseStore, max_attempts: Any, said: str
) -> None:
    with pytest.raises(InvalidArgument, match=f"^{said}$"):
        await store.enqueue("t2", max_attempts=max_attempts)
    assert [t.task_id for t in await store.tasks()] == ["t1"]


async def test_enqueue_names_an_unknown_kind(store: LeaseStore) -> None:
    with pytest.raises(InvalidArgument, match="kind 'nope' is not a task kind; the kinds are"):
        await store.enqueue("t2", kind="nope")


@pytest.mark.parametrize(
    ("step", "said"),
    [
        (2**70, "step must be between 0 and 9007199254740992, got a number of 22 digits"),
        (math.nan, "step must be a whole number, got float nan"),
        (-1, "step must be between 0 and 9007199254740992, got -1"),
        ("1", "step must be a whole number, got str '1'"),
    ],
)
async def test_save_checkpoint_names_a_bad_step(store: LeaseStore, step: Any, said: str) -> None:
    lease = await store.claim("w1")
    assert lease is not None
    with pytest.raises(InvalidArgument, match=f"^{said}$"):
        await store.save_checkpoint(lease, step, {})
    assert await store.load_checkpoint("t1") is None


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.heartbeat(None),
        lambda s: s.complete("t1"),
        lambda s: s.save_checkpoint({"task_id": "t1"}, 1, {}),
        lambda s: s.fenced_write(None, "t1/1", "a page"),
        lambda s: s.fail(None, "boom"),
        lambda s: s.park(None),
        lambda s: s.apply_effect(None, "t1/1/notify", "notify"),
        lambda s: s.heartbeat_many([None]),
        lambda s: s.complete_many([None]),
    ],
)
async def test_a_call_given_no_lease_says_so(store: LeaseStore, call: Any) -> None:
    with pytest.raises(InvalidArgument, match=r"lease(s\[0\])? must be a Lease, as claim returns"):
        await call(store)


@settings(max_examples=60, deadline=None)
@given(
    max_attempts=st.one_of(st.integers(), st.floats(), st.text(max_size=5), st.none()),
    step=st.one_of(st.integers(), st.floats(), st.text(max_size=5), st.none()),
    kind=st.text(max_size=8),
)
def test_any_argument_is_taken_or_refused_in_the_engines_words(
    max_attempts: Any, step: Any, kind: str
) -> None:
    async def run() -> None:
        s = LeaseStore.open_inline(clock=VirtualClock())
        try:
            try:
                await s.enqueue("t1", kind=kind, max_attempts=max_attempts)
            except BorrowedKeysError:
                await s.enqueue("t1")
            lease = await s.claim("w1")
            assert lease is not None
            with contextlib.suppress(BorrowedKeysError):
                await s.save_checkpoint(lease, step, {})
        finally:
            await s.close()

    asyncio.run(run())


def test_one_inline_store_shared_by_four_threads_writes_every_call_whole(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    store = LeaseStore.open_inline(db, clock=VirtualClock())
    errors: list[BaseException] = []

    def enqueue_many(thread: int) -> None:
        for i in range(100):
            try:
                asyncio.run(store.enqueue(f"t{thread}-{i}"))
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=enqueue_many, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    asyncio.run(store.close())
    assert errors == []
    with sqlite3.connect(db) as conn:
        tasks = conn.execute("SELECT count(*) FROM agent_tasks").fetchone()[0]
        enqueued = conn.execute("SELECT count(*) FROM events WHERE event = 'enqueued'").fetchone()[
            0
        ]
    assert (tasks, enqueued) == (400, 400)
