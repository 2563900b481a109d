"""Every run schema (`bk_run_...`) is dropped when its run ends, however it ends.

A run that closes drops its own; a process that exits without closing drops its own at
exit; one that could not (SIGKILL, `os._exit`) leaves a schema whose run lock nobody holds,
and the next run drops it. A live run's schema is never touched.
"""

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.engine.backends import postgresql as backend
from core.engine.clock import VirtualClock
from core.engine.store import LeaseStore
from core.sim.simulation import Simulation, run_inline

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 20.0  # a deadline for waiting on another process, never a pause

OPEN_AND_LEAVE = """
import os, sys
from core.engine.clock import VirtualClock
from core.engine.store import LeaseStore
from core.sim.simulation import run_inline
store = LeaseStore.open_inline(sys.argv[1], clock=VirtualClock(), scratch=True)
run_inline(store.enqueue("t1"))
session = store.driver.session
print(session.target.schema, session.conn.info.backend_pid, flush=True)
if sys.argv[2] == "kill":
    os._exit(0)  # no clean-up of any kind, as after SIGKILL
sys.exit(0)  # a normal exit that forgot to close the store
"""


def _schemas(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)",
            (backend.SCRATCH_PREFIX,),
        )
        return {name for (name,) in rows}


def _run_elsewhere(url: str, how: str) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AND_LEAVE, url, how],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S * 3,
        check=True,
    )
    schema, pid = done.stdout.split()
    return schema, int(pid)


def _wait_until_gone(url: str, pid: int) -> None:
    """Until the server has ended the dead client's backend (and so released its locks)."""
    deadline = time.monotonic() + WAIT_S
    with psycopg.connect(url, autocommit=True) as conn:
        while conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            assert time.monotonic() < deadline, f"backend {pid} still there"
            conn.execute("SELECT pg_sleep(0.01)")


def test_a_run_killed_without_clean_up_is_dropped_by_the_next_run(postgres_url: str) -> None:
    live = LeaseStore.open_inline(postgres_url, clock=VirtualClock(), scratch=True)
    live_schema = live.driver.session.target.schema  # type: ignore[attr-defined]
    stale, pid = _run_elsewhere(postgres_url, "kill")
    _wait_until_gone(postgres_url, pid)
    assert {stale, live_schema} <= _schemas(postgres_url)
    fresh = LeaseStore.open_inline(postgres_url, clock=VirtualClock(), scratch=True)
    left = _schemas(postgres_url)
    assert stale not in left
    assert live_schema in left  # its owner is alive: untouched, and it still works
    run_inline(live.enqueue("t1"))
    assert [t.task_id for t in run_inline(live.tasks())] == ["t1"]
    run_inline(fresh.close())
    run_inline(live.close())
    assert live_schema not in _schemas(postgres_url)


def test_a_process_that_exits_without_closing_its_run_drops_it(postgres_url: str) -> None:
    schema, _pid = _run_elsewhere(postgres_url, "exit")
    assert schema not in _schemas(postgres_url)


def test_a_run_that_fails_while_starting_drops_its_schema(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    name = backend.scratch_schema_name

    def recorded() -> str:
        made.append(name())
        return made[-1]

    def broken(self: Any, task: Any) -> None:
        raise RuntimeError("cannot start")

    monkeypatch.setattr(backend, "scratch_schema_name", recorded)
    monkeypatch.setattr(Simulation, "_enqueue", broken)
    from core.scenarios.library import open_scenario

    with pytest.raises(RuntimeError):
        Simulation(open_scenario("01_fog").settings, db_path=postgres_url)
    assert made and made[0] not in _schemas(postgres_url)
