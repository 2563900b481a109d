"""A SQLite store never loses work silently to its file being swapped out from under it.

A worker whose database file is deleted or replaced stops with one line instead of
finishing tasks into a file nobody reads; a simulation refuses a store that real workers
use instead of writing its scenario into it.
"""

import asyncio
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.engine import drivers
from core.engine.backends import sqlite as sqlite_backend
from core.engine.clock import DatabaseClock, VirtualClock
from core.engine.errors import StoreError
from core.engine.store import LeaseStore
from core.sim.simulation import run_inline
from core.tools.cli import main
from core.tools.realworker import main as realworker_main


@pytest.fixture(autouse=True)
def look_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is looked at before every transaction here (not at most every 50 ms)."""
    monkeypatch.setattr(sqlite_backend, "FILE_CHECK_EVERY_S", 0.0)


async def _real(db: Path) -> LeaseStore:
    store = await LeaseStore.open_async(db, clock=DatabaseClock())
    await store.enqueue("t1")
    return store


async def test_a_deleted_database_file_stops_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "work.db"
    store = await _real(db)
    lease = await store.claim("w1")
    assert lease is not None
    for name in ("work.db", "work.db-wal", "work.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    with pytest.raises(StoreError, match="deleted while this store had it open") as err:
        await store.heartbeat(lease)
    assert "\n" not in str(err.value)
    # With no new look at the file, the store stays stopped all the same.
    monkeypatch.setattr(sqlite_backend, "FILE_CHECK_EVERY_S", 60.0)
    with pytest.raises(StoreError, match="deleted"):
        await store.tasks()
    await store.close()
    assert not db.exists()  # nothing made a new, empty database in its place


async def test_a_database_file_renamed_over_stops_the_store(tmp_path: Path) -> None:
    db, other = tmp_path / "work.db", tmp_path / "other.db"
    store = await _real(db)
    second = await _real(other)
    await second.close()
    os.replace(other, db)
    with pytest.raises(StoreError, match="replaced while this store had it open"):
        await store.claim("w1")
    await store.close()


async def test_a_file_rewritten_with_another_store_stops_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(drivers, "CHECK_STORE_EVERY", 1)
    db = tmp_path / "work.db"
    store = await _real(db)
    # The same file (same inode), now holding a store of another name.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE store_meta SET value = 'someone-else' WHERE key = 'store_id'")
    with pytest.raises(StoreError, match="replaced by another store"):
        await store.claim("w1")
    await store.close()


async def test_a_simulation_refuses_a_store_real_workers_use(tmp_path: Path) -> None:
    db = tmp_path / "work.db"
    await (await _real(db)).close()
    before = db.read_bytes()
    with pytest.raises(StoreError, match="holds real work") as err:
        LeaseStore.open_inline(db, clock=VirtualClock(), scratch=True)
    assert "\n" not in str(err.value)
    assert db.read_bytes() == before


def test_play_refuses_a_store_real_workers_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "work.db"
    asyncio.run(_close_real(db))
    before = db.read_bytes()
    assert main(["play", "01_fog", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds real work" in err
    assert db.read_bytes() == before


async def _close_real(db: Path) -> None:
    await (await _real(db)).close()


def test_a_store_from_before_the_stamp_with_tasks_counts_as_real(tmp_path: Path) -> None:
    db = tmp_path / "work.db"
    asyncio.run(_close_real(db))
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM store_meta WHERE key = 'used_by'")
    with pytest.raises(StoreError, match="holds real work"):
        LeaseStore.open_inline(db, clock=VirtualClock(), scratch=True)


def test_a_simulation_file_can_be_played_into_and_kept(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    assert main(["play", "01_fog", "--db", str(db)]) == 0
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    # Still a simulation's store: opened again as one, it is not refused.
    run_inline(LeaseStore.open_inline(copy, clock=VirtualClock(), scratch=True).close())


def _damage_the_task_table(db: Path) -> None:
    """Overwrite the first page of agent_tasks (its b-tree's root) with garbage."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'agent_tasks'"
    ).fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with db.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xde\xad" * (page_size // 2))


@pytest.mark.parametrize("command", ["enqueue", "worker"])
def test_a_damaged_database_is_one_line_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    db = tmp_path / "work.db"
    asyncio.run(_close_real(db))
    _damage_the_task_table(db)
    before = db.read_bytes()
    args = ["--task", "t2"] if command == "enqueue" else ["--id", "w1", "--max-seconds", "10"]
    assert realworker_main([command, "--db", str(db), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "the database file is damaged (database disk image is malformed)" in err
    assert "Error" not in err and "Traceback" not in err
    assert db.read_bytes() == before


async def test_a_full_disk_is_one_line_and_keeps_what_was_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "work.db"
    store = await _real(db)
    await store.close()
    pages = sqlite3.connect(db).execute("PRAGMA page_count").fetchone()[0]
    real = sqlite_backend._apply_pragmas

    def small_disk(conn: sqlite3.Connection, *, file_backed: bool) -> None:
        real(conn, file_backed=file_backed)
        # SQLite answers exactly as on a full disk once the file may not grow.
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")

    monkeypatch.setattr(sqlite_backend, "_apply_pragmas", small_disk)
    store = await LeaseStore.open_async(db, clock=DatabaseClock())
    with pytest.raises(StoreError, match=r"^the disk is full \(database or disk is full\)") as err:
        await store.enqueue("t2", payload={"blob": "x" * 100_000})
    assert "\n" not in str(err.value)
    assert [t.task_id for t in await store.tasks()] == ["t1"]
    await store.close()


def test_a_store_the_full_disk_would_not_let_be_made_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sqlite_backend._apply_pragmas

    def no_room(conn: sqlite3.Connection, *, file_backed: bool) -> None:
        real(conn, file_backed=file_backed)
        conn.execute("PRAGMA max_page_count = 2")  # what a full disk lets SQLite have

    monkeypatch.setattr(sqlite_backend, "_apply_pragmas", no_room)
    db = tmp_path / "new.db"
    with pytest.raises(StoreError, match="disk is full") as err:
        LeaseStore.open_inline(db, clock=VirtualClock())
    assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []
