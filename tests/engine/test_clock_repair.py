"""A SQLite store a clock ahead wrote to: the error says until when, and
`borrowed-keys store repair-clock --db FILE` brings it back, never while a lease granted on
the machine's clock is live."""

import time
from pathlib import Path

import pytest

from core.engine.clock import DatabaseClock, VirtualClock
from core.engine.errors import ClockBehind
from core.engine.store import LeaseStore
from core.tools.cli import main

AHEAD_MS = 120_000


def _now() -> int:
    return int(time.time() * 1000)


async def _ahead_claims(db: Path, task: str) -> None:
    """A process whose clock is two minutes ahead enqueues and claims `task`."""
    ahead = LeaseStore.open_inline(str(db), clock=VirtualClock(_now() + AHEAD_MS))
    await ahead.enqueue(task)
    assert await ahead.claim("fast", task) is not None
    await ahead.close()


async def test_a_clock_ahead_locks_the_store_until_a_repair_and_its_lease_is_expired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    await _ahead_claims(db, "t1")
    store = LeaseStore.open_inline(str(db), clock=DatabaseClock())
    with pytest.raises(ClockBehind, match=r"The store stays so until 20\d\d-.*repair-clock"):
        await store.enqueue("t2")
    assert main(["store", "repair-clock", "--db", str(db)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("Repaired: the store's newest instant moved back from ")
    assert "the leases the clock ahead granted were expired: t1" in said
    # the store works on the machine's clock again, and the task the clock ahead held is
    # claimable now, with a newer fence token
    await store.enqueue("t2")
    lease = await store.claim("w1", "t1")
    assert lease is not None and lease.fence_token == 2
    await store.close()
    assert main(["store", "repair-clock", "--db", str(db)]) == 0
    assert capsys.readouterr().out.startswith("Nothing to repair")


async def test_no_repair_while_a_lease_granted_on_the_machines_clock_is_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    store = LeaseStore.open_inline(str(db), clock=DatabaseClock())
    await store.enqueue("t1")
    assert await store.claim("w1") is not None
    await store.close()
    await _ahead_claims(db, "t2")
    before = db.read_bytes()
    assert main(["store", "repair-clock", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "not repaired: the lease of t1 held by w1 was granted on this machine's clock" in err
    assert "nothing was changed" in err and db.read_bytes() == before


def test_a_missing_store_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["store", "repair-clock", "--db", str(tmp_path / "none.db")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
