"""A SQLite store never loses work silently to its file being swapped out from under it.

A worker whose database file is deleted or replaced stops with one line instead of
finishing tasks into a file nobody reads; a simulation refuses a store that real workers
use instead of writing its scenario into it.
"""

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.engine import drivers
from core.engine.backends import sqlite as sqlite_backend
from core.engine.clock import DatabaseClock, VirtualClock
from core.engine.errors import ClockBehind, StoreError
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


def _integrity(db: Path) -> list[str]:
    """The whole-file check, on a connection that can flush nothing into the file."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


def _tasks(db: Path) -> list[str]:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT task_id FROM agent_tasks ORDER BY 1")]
    finally:
        conn.close()


async def _busy_store(db: Path, tasks: list[str]) -> LeaseStore:
    """A store with committed work still in its log (no WAL flush yet)."""
    store = await LeaseStore.open_async(db, clock=DatabaseClock())
    for task in tasks:
        await store.enqueue(task)
    lease = await store.claim("w1")
    assert lease is not None
    for _ in range(20):
        await store.heartbeat(lease)
    assert os.path.getsize(f"{db}-wal") > 32
    return store


async def _other_store(db: Path) -> None:
    store = await LeaseStore.open_async(db, clock=DatabaseClock())
    for task in ("o1", "o2", "o3"):
        await store.enqueue(task)
    await store.close()


async def test_a_file_renamed_over_a_running_store_is_not_given_its_log(
    tmp_path: Path,
) -> None:
    db, other, kept = tmp_path / "work.db", tmp_path / "other.db", tmp_path / "kept.db"
    await _other_store(other)
    store = await _busy_store(db, ["w1", "w2"])
    os.link(db, kept)  # the replaced store stays reachable, to check it too
    os.replace(other, db)
    with pytest.raises(StoreError, match="replaced while this store had it open"):
        await store.tasks()
    await store.close()
    # The next open finds the other store as it was made, whole.
    again = await LeaseStore.open_async(db, clock=DatabaseClock())
    assert [t.task_id for t in await again.tasks()] == ["o1", "o2", "o3"]
    await again.close()
    assert _integrity(db) == ["ok"]
    # The replaced file is whole too, as of its last WAL flush: what was only in the log is
    # given up at once rather than flushed, since the log is named after a file that is
    # now another store's (and the sooner it goes, the less that store can meet it).
    assert _integrity(kept) == ["ok"]


async def test_a_file_copied_over_a_running_store_is_not_given_its_log(
    tmp_path: Path,
) -> None:
    db, other = tmp_path / "work.db", tmp_path / "other.db"
    await _other_store(other)
    store = await _busy_store(db, ["w1", "w2"])
    # Written long ago, as a store's file is between its WAL flushes; then a look at it.
    os.utime(db, ns=(0, 0))
    await store.tasks()
    shutil.copyfile(other, db)  # the same file (inode), another store's bytes in it
    with pytest.raises(StoreError, match="replaced by another store"):
        await store.tasks()
    await store.close()  # closing flushes nothing of ours into the copy
    assert _integrity(db) == ["ok"]
    assert _tasks(db) == ["o1", "o2", "o3"]
    assert _integrity(other) == ["ok"]


def test_a_log_left_by_another_store_is_refused_and_both_files_left_as_they_are(
    tmp_path: Path,
) -> None:
    db, other = tmp_path / "work.db", tmp_path / "other.db"
    asyncio.run(_other_store(other))
    # A worker killed with its work still in the log: the log stays beside the file.
    script = (
        "import asyncio, os, sys\n"
        "from core.engine.store import LeaseStore\n"
        "from core.engine.clock import DatabaseClock\n"
        "async def main():\n"
        "    store = await LeaseStore.open_async(sys.argv[1], clock=DatabaseClock())\n"
        "    for t in ('w1', 'w2', 'w3', 'w4'):\n"
        "        await store.enqueue(t)\n"
        "    lease = await store.claim('w1')\n"
        "    for _ in range(20):\n"
        "        await store.heartbeat(lease)\n"
        "    os._exit(0)\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True, cwd=Path.cwd())
    assert os.path.getsize(f"{db}-wal") > 32
    os.replace(other, db)
    before = {name: (tmp_path / name).read_bytes() for name in ("work.db", "work.db-wal")}
    with pytest.raises(StoreError) as err:
        sqlite_backend.connect(db)
    assert "does not fit the file" in str(err.value)
    assert "\n" not in str(err.value)
    after = {name: (tmp_path / name).read_bytes() for name in ("work.db", "work.db-wal")}
    assert after == before
    # The log moved away, the file opens as it was: the other store, whole.
    os.replace(f"{db}-wal", tmp_path / "stray-wal")
    os.remove(f"{db}-shm")
    assert _tasks(db) == ["o1", "o2", "o3"]
    assert _integrity(db) == ["ok"]


def test_a_log_of_its_own_file_is_replayed_as_always(tmp_path: Path) -> None:
    db = tmp_path / "work.db"
    script = (
        "import asyncio, os, sys\n"
        "from core.engine.store import LeaseStore\n"
        "from core.engine.clock import DatabaseClock\n"
        "async def main():\n"
        "    store = await LeaseStore.open_async(sys.argv[1], clock=DatabaseClock())\n"
        "    await store.enqueue('w1')\n"
        "    os._exit(0)\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True, cwd=Path.cwd())
    assert os.path.getsize(f"{db}-wal") > 32
    sqlite_backend.connect(db).close()
    assert _tasks(db) == ["w1"]


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


async def test_on_sqlite_a_clock_behind_an_instant_in_the_store_stops_the_store(
    tmp_path: Path,
) -> None:
    """One clock on SQLite: an instant written by a process whose clock is two minutes ahead
    of ours makes every later call of ours refuse, naming the difference."""
    db = tmp_path / "work.db"
    store = await _real(db)
    await store.tasks()  # an instant of our own clock is no trouble
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET at = at + 120000 WHERE seq = (SELECT max(seq) FROM events)")
    with pytest.raises(ClockBehind, match=r"is 2m behind an instant already written") as err:
        await store.claim("w1")
    assert "\n" not in str(err.value)
    assert [t.status for t in await _tasks_after(store, db)] == ["queued"]  # nothing written
    await store.close()


async def _tasks_after(store: LeaseStore, db: Path) -> list[Any]:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET at = at - 120000 WHERE seq = (SELECT max(seq) FROM events)")
    return list(await store.tasks())
