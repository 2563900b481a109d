"""Opening a store: every bad target gives one clear line and leaves the file as it was."""

import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from core.engine import models
from core.engine.backends import sqlite as backend
from core.engine.clock import VirtualClock
from core.engine.config import Mode
from core.engine.errors import SchemaVersionError, StoreError, UnknownTask
from core.engine.store import LeaseStore

Opener = Callable[[Path], Awaitable[LeaseStore]]


async def _inline(path: Path) -> LeaseStore:
    return LeaseStore.open_inline(path, clock=VirtualClock())


async def _aio(path: Path) -> LeaseStore:
    return await LeaseStore.open_async(path, clock=VirtualClock())


OPENERS = [pytest.param(_inline, id="inline"), pytest.param(_aio, id="async")]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


async def _refused(
    opener: Opener, path: Path, error: type[StoreError] = StoreError, match: str | None = None
) -> str:
    with pytest.raises(error, match=match) as err:
        await opener(path)
    message = str(err.value)
    assert "\n" not in message
    assert str(path) in message
    return message


@pytest.mark.parametrize("opener", OPENERS)
async def test_missing_folder(tmp_path: Path, opener: Opener) -> None:
    path = tmp_path / "nowhere" / "keys.db"
    await _refused(opener, path, match="does not exist")
    assert not path.parent.exists()


@pytest.mark.parametrize("opener", OPENERS)
async def test_a_directory(tmp_path: Path, opener: Opener) -> None:
    await _refused(opener, tmp_path, match="directory")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("opener", OPENERS)
@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"just some notes\n" * 64, id="text"),
        pytest.param(b"SQLite format 3\x00" + b"\xff" * 2000, id="corrupt-header"),
    ],
)
async def test_a_file_that_is_not_a_database(
    tmp_path: Path, opener: Opener, content: bytes
) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    await _refused(opener, path)
    assert _files(tmp_path) == {"notes.db": content}


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write any file")
@pytest.mark.parametrize("opener", OPENERS)
async def test_an_unwritable_file(tmp_path: Path, opener: Opener) -> None:
    path = tmp_path / "keys.db"
    store = await opener(path)
    await store.close()
    before = _files(tmp_path)
    path.chmod(0o444)
    try:
        await _refused(opener, path, match="cannot read and write")
    finally:
        path.chmod(0o644)
    assert _files(tmp_path) == before


@pytest.mark.parametrize("opener", OPENERS)
async def test_an_unwritable_file_as_reported_by_the_os(
    tmp_path: Path, opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root writes through 0444, so the permission check is also shown with access() saying no.
    path = tmp_path / "keys.db"
    store = await opener(path)
    await store.close()
    before = _files(tmp_path)
    monkeypatch.setattr(os, "access", lambda *_args, **_kw: False)
    await _refused(opener, path, match="cannot read and write")
    monkeypatch.undo()
    assert _files(tmp_path) == before


def _stamp(path: Path, value: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE store_meta SET value = ? WHERE key = 'schema_version'", (value,))
    conn.close()


@pytest.mark.parametrize("opener", OPENERS)
async def test_a_newer_schema_version(tmp_path: Path, opener: Opener) -> None:
    path = tmp_path / "keys.db"
    store = await opener(path)
    await store.enqueue("t1")
    await store.close()
    _stamp(path, "999")
    before = _files(tmp_path)
    assert set(before) == {"keys.db"}
    message = await _refused(opener, path, SchemaVersionError, match="newer")
    assert "999" in message and str(models.SCHEMA_VERSION) in message
    assert _files(tmp_path) == before


@pytest.mark.parametrize("opener", OPENERS)
async def test_an_unreadable_schema_version(tmp_path: Path, opener: Opener) -> None:
    path = tmp_path / "keys.db"
    store = await opener(path)
    await store.close()
    _stamp(path, "one")
    before = _files(tmp_path)
    await _refused(opener, path, match="schema version")
    assert _files(tmp_path) == before


@pytest.mark.parametrize("opener", OPENERS)
async def test_reopening_the_same_version_keeps_the_data(tmp_path: Path, opener: Opener) -> None:
    path = tmp_path / "keys.db"
    store = await opener(path)
    await store.enqueue("t1")
    await store.close()
    store = await opener(path)
    assert [t.task_id for t in await store.tasks()] == ["t1"]
    await store.close()


def _pragmas(conn: sqlite3.Connection) -> tuple[str, int, int, int]:
    return (
        conn.execute("PRAGMA journal_mode").fetchone()[0],
        conn.execute("PRAGMA synchronous").fetchone()[0],
        conn.execute("PRAGMA busy_timeout").fetchone()[0],
        conn.execute("PRAGMA foreign_keys").fetchone()[0],
    )


WAL_NORMAL = ("wal", 1, backend.BUSY_TIMEOUT_MS, 1)


@pytest.mark.parametrize("opener", OPENERS)
async def test_a_file_database_uses_wal_and_synchronous_normal_on_every_connection(
    tmp_path: Path, opener: Opener
) -> None:
    path = tmp_path / "keys.db"
    first = await opener(path)
    second = await opener(path)  # a second connection to the same file sets its own
    try:
        for store in (first, second):
            journal, sync, _busy, fk = await store.driver.read(_pragmas)
            # (On the async driver's loop path a transaction never waits for a lock, so
            # busy_timeout reads 0 inside it; the connection's own setting is checked below.)
            assert (journal, sync, fk) == (WAL_NORMAL[0], WAL_NORMAL[1], WAL_NORMAL[3])
        raw = backend.connect(path)
        assert _pragmas(raw) == WAL_NORMAL
        raw.close()
    finally:
        await first.close()
        await second.close()


async def test_async_driver_never_blocks_the_loop_on_a_lock_held_elsewhere(
    tmp_path: Path,
) -> None:
    import asyncio

    path = tmp_path / "keys.db"
    store = await LeaseStore.open_async(path, clock=VirtualClock())
    holder = backend.connect(path)
    try:
        conn = store.driver._conn  # type: ignore[attr-defined]
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == backend.BUSY_TIMEOUT_MS
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        enqueue = asyncio.create_task(store.enqueue("t1"))
        turned = time.monotonic()
        for _ in range(20):  # the loop keeps turning: the enqueue waits on the driver's thread
            await asyncio.sleep(0)
        # Waiting on the loop would take the whole busy_timeout (2 s); turning takes micro-
        # seconds. The margin is wide on purpose: this checks blocking, not speed.
        assert time.monotonic() - turned < backend.BUSY_TIMEOUT_MS / 2000
        assert not enqueue.done()
        holder.execute("COMMIT")
        await asyncio.wait_for(enqueue, timeout=10)
        assert (await store.task("t1")).status == "queued"
        # Uncontended, the same driver runs transactions straight away on the loop.
        assert await store.claim("w1") is not None
    finally:
        holder.close()
        await store.close()


async def test_an_in_memory_database_works(clock: VirtualClock) -> None:
    store = LeaseStore.open_inline(":memory:", clock=clock)
    await store.enqueue("t1")
    assert await store.claim("w1") is not None
    journal, _sync, busy, fk = await store.driver.read(_pragmas)
    assert (journal, busy, fk) == ("memory", backend.BUSY_TIMEOUT_MS, 1)
    await store.close()


def test_busy_database_is_retried_then_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keys.db"
    holder = backend.connect(path)
    backend.create_schema(holder)
    other = backend.connect(path)
    other.execute("PRAGMA busy_timeout = 0")
    monkeypatch.setattr(time, "sleep", lambda _s: None)  # no real waiting
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="busy"):
            backend.run_write(other, lambda c: c.execute("DELETE FROM events"))
    finally:
        holder.execute("ROLLBACK")
    assert backend.run_write(other, lambda c: 42) == 42
    holder.close()
    other.close()


def test_someone_elses_database_is_left_alone(tmp_path: Path) -> None:
    import sqlite3

    from core.engine.backends import sqlite as backend
    from core.engine.errors import StoreError

    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a borrowed-keys store") as err:
        backend.connect(path)
    assert "\n" not in str(err.value)
    assert path.read_bytes() == before


def test_nan_is_not_json() -> None:
    from core.engine.records import dump_json

    with pytest.raises(ValueError):
        dump_json({"x": float("nan")})


# -- fence tokens come from a counter, never max() + 1 ----------------------------------------


async def test_deleting_a_finished_task_never_lets_a_fence_token_be_issued_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys.db"
    store = LeaseStore.open_inline(path, clock=VirtualClock())
    await store.enqueue("t1")
    first = await store.claim("w1")
    assert first is not None and first.fence_token == 1
    await store.complete(first)
    await store.driver.write(lambda c: c.execute("DELETE FROM agent_tasks WHERE task_id = 't1'"))
    await store.enqueue("t2")
    second = await store.claim("w2")
    assert second is not None
    issued = [e.fence_token for e in await store.events() if e.event == "claimed"]
    assert second.fence_token > max(issued[:-1]) == first.fence_token
    # The old holder's token cannot reach the ledger behind the new one: its task is gone, so
    # its write is refused before any page is touched.
    await store.fenced_write(second, "t2/page", "new")
    with pytest.raises(UnknownTask):
        await store.fenced_write(first, "t2/page", "stale")
    assert [(p.key, p.value) for p in await store.ledger()] == [("t2/page", "new")]
    await store.close()


async def test_a_version_1_store_is_migrated_above_every_token_it_remembers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys.db"
    store = LeaseStore.open_inline(path, clock=VirtualClock())
    for task_id in ("t1", "t2", "t3"):
        await store.enqueue(task_id)
        lease = await store.claim("w1")
        assert lease is not None
        await store.complete(lease)
    await store.close()
    # What version 1 looked like: no counter, no queue order, pages without their task; the
    # tasks that drew 2 and 3 deleted since.
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE fence_counter")
        conn.execute("DROP INDEX ix_agent_tasks_queue")
        conn.execute("ALTER TABLE agent_tasks DROP COLUMN queue_seq")
        conn.execute("ALTER TABLE ledger DROP COLUMN task_id")
        conn.execute("DELETE FROM agent_tasks WHERE task_id IN ('t2', 't3')")
        conn.execute("UPDATE store_meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    store = LeaseStore.open_inline(path, clock=VirtualClock())
    await store.enqueue("t4")
    lease = await store.claim("w1")
    assert lease is not None and lease.fence_token == 4  # 3 survives in the events
    version = await store.driver.read(
        lambda c: c.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
    )
    assert version == (str(models.SCHEMA_VERSION),)
    await store.close()


async def test_statements_are_compiled_once_per_dialect_and_policy(clock: VirtualClock) -> None:

    first = LeaseStore.open_inline(clock=clock)
    second = LeaseStore.open_inline(clock=clock)
    other = LeaseStore.open_inline(clock=clock, mode=Mode.NO_FENCING)
    assert first.sql is second.sql
    assert other.sql is not first.sql
    assert other.sql.ledger_write.sql != first.sql.ledger_write.sql
    for store in (first, second, other):
        await store.close()


def test_the_store_schema_is_its_own_metadata_not_sqlmodels_global_one() -> None:
    """A host application's SQLModel tables never land in the store's schema, nor ours in its."""
    from sqlmodel import Field, SQLModel

    class HostTable(SQLModel, table=True):
        __tablename__ = "host_things"
        id: int = Field(primary_key=True)

    assert "host_things" in SQLModel.metadata.tables
    assert "host_things" not in models.metadata.tables
    assert "agent_tasks" not in SQLModel.metadata.tables
    assert {"agent_tasks", "checkpoints", "ledger", "effects", "events"} <= set(
        models.metadata.tables
    )
    SQLModel.metadata.remove(HostTable.__table__)  # type: ignore[attr-defined]


def test_a_busy_error_that_already_rolled_the_transaction_back_is_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SQLite may roll a transaction back by itself on SQLITE_BUSY (and on FULL, IOERR,
    # NOMEM); the retry must not trip over a ROLLBACK with no transaction left.
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    conn = backend.connect(":memory:")
    backend.create_schema(conn)
    calls: list[int] = []

    def fn(c: sqlite3.Connection) -> int:
        calls.append(1)
        if len(calls) == 1:
            c.execute("ROLLBACK")  # what SQLite's automatic rollback leaves behind
            raise sqlite3.OperationalError("database is locked")
        c.execute("INSERT INTO store_meta (key, value) VALUES ('probe', 'x')")
        return 7

    assert backend.run_write(conn, fn) == 7
    assert len(calls) == 2 and not conn.in_transaction
    assert conn.execute("SELECT value FROM store_meta WHERE key = 'probe'").fetchall() == [("x",)]
    conn.close()


def test_a_statement_that_stays_busy_is_reported_as_a_store_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    conn = backend.connect(":memory:")
    backend.create_schema(conn)

    def fn(c: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(StoreError, match="busy"):
        backend.run_write(conn, fn)
    assert not conn.in_transaction
    conn.close()
