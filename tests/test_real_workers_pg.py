"""Real worker processes on PostgreSQL: SIGKILLed mid-step, restarted, and their server
processes terminated (`pg_terminate_backend`) in the middle of a transaction.

The same checks as tests/test_real_workers.py on SQLite: every task completed exactly once,
no fence token issued twice, no page accepted a token behind its key's newest, every effect
applied once, no traceback, and the safety checker finds nothing in the log.
"""

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.engine.backends import postgresql as backend
from tests.pgserver_kit import with_schema
from tests.test_real_workers import (
    ROOT,
    Fleet,
    approve_waiting,
    check_consistent,
    check_fleet_history,
    read_state,
    seed_db,
    task_rows,
)

pytestmark = pytest.mark.slow

WORKERS = ("w1", "w2", "w3", "w4")


def _admin(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(backend.Target.parse(url).conninfo, autocommit=True)


def holders(url: str) -> dict[str, str]:
    """worker -> task, for running tasks."""
    schema = backend.Target.parse(url).schema
    with _admin(url) as conn:
        rows = conn.execute(
            f'SELECT owner_id, task_id FROM "{schema}".agent_tasks WHERE status = %s',
            ("running",),
        ).fetchall()
    return {owner: task for owner, task in rows if owner}


def terminate_one_in_a_transaction(url: str, spared: set[int]) -> int | None:
    """End the server process of one of this fleet's workers (named by its URL's
    application_name; other tests share the server) inside a write transaction right now."""
    name = psycopg.conninfo.conninfo_to_dict(backend.Target.parse(url).conninfo)["application_name"]
    with _admin(url) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
            "AND backend_xid IS NOT NULL AND pid <> pg_backend_pid() "
            "AND NOT (pid = ANY(%s)) LIMIT 1",
            (name, list(spared)),
        ).fetchone()
        if row is None:
            return None
        ended = conn.execute("SELECT pg_terminate_backend(%s, 5000)", (row[0],)).fetchone()
    return int(row[0]) if ended and ended[0] else None


@pytest.fixture
def pg_fleet(postgres_url: str, tmp_path: Path) -> Iterator[Fleet]:
    # The fleet's connections carry a name of their own: the test ends only theirs.
    url = with_schema(postgres_url) + f"&application_name=bk-fleet-{os.getpid()}"
    logs = tmp_path / "logs"
    logs.mkdir()
    seed_db(url)  # type: ignore[arg-type]
    fleet = Fleet(url, logs)  # type: ignore[arg-type]
    yield fleet
    fleet.stop_all()
    with _admin(url) as conn:
        backend.drop_schema(conn, backend.Target.parse(url).schema)


def test_sigkilled_workers_and_terminated_backends_leave_every_task_done_once(
    pg_fleet: Fleet,
) -> None:
    fleet = pg_fleet
    url = str(fleet.db)
    rng = random.Random(int(os.environ.get("BK_REAL_SEED", "6")))
    started = time.monotonic()
    for wid in WORKERS:
        fleet.start(wid)
    terminated: set[int] = set()
    snapshots = 0
    # Chaos: kill holders mid-step (restarting them a moment later), and cut a worker's
    # server connection while it is inside a write transaction.
    while (fleet.killed < 5 or len(terminated) < 2) and time.monotonic() - started < 20:
        pause_until = time.monotonic() + rng.uniform(0.3, 0.8)
        while time.monotonic() < pause_until and len(terminated) < 2:
            pid = terminate_one_in_a_transaction(url, terminated)
            if pid is not None:
                terminated.add(pid)
            time.sleep(0.005)
        if fleet.killed < 5:
            held = {w: t for w, t in holders(url).items() if w in fleet.alive()}
            if held:
                victim = rng.choice(sorted(held))
                fleet.kill(victim)
                time.sleep(rng.uniform(0.0, 0.4))
                fleet.start(victim)
        check_consistent(read_state(url))  # type: ignore[arg-type]
        snapshots += 1
    # Let them finish; approve the task that parks for a human; restart any that left early.
    while time.monotonic() - started < 50:
        approve_waiting(url)  # type: ignore[arg-type]
        state = read_state(url)  # type: ignore[arg-type]
        if all(r.status == "done" for r in task_rows(state).values()):
            break
        for wid in WORKERS:
            if fleet.procs[wid].poll() is not None:
                fleet.start(wid)
        time.sleep(0.3)
    deadline = time.monotonic() + 15
    while fleet.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    codes = fleet.stop_all()
    print(f"SIGKILLed {fleet.killed} holders; ended {len(terminated)} server processes mid-write")

    assert fleet.killed >= 3
    assert len(terminated) >= 1, "no worker was caught inside a transaction"
    assert snapshots >= 3
    errors = fleet.stderr()
    assert "Traceback" not in errors, errors
    assert set(codes.values()) == {0}, (codes, errors)

    check_fleet_history(read_state(url))  # type: ignore[arg-type]


def _worker(url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "core.tools.realworker", "worker", "--db", url, "--id", "w1"]
    return subprocess.run(
        [*cmd, "--max-seconds", "5", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_worker_and_enqueue_take_a_postgresql_url(postgres_url: str) -> None:
    url = with_schema(postgres_url)
    enqueue = subprocess.run(
        [
            *(sys.executable, "-m", "core.tools.realworker", "enqueue", "--db", url),
            *("--task", "a", "--steps", "2", "--step-time", "50ms"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert enqueue.returncode == 0, enqueue.stderr
    done = _worker(url, "--ttl", "2s", "--poll-every", "100ms", "--exit-when-idle")
    assert done.returncode == 0, done.stderr
    assert "completed a" in done.stdout
    assert task_rows(read_state(url))["a"].status == "done"  # type: ignore[arg-type]


def test_worker_refuses_someone_elses_schema_in_one_line(postgres_url: str) -> None:
    url = with_schema(postgres_url)
    schema = backend.Target.parse(url).schema
    with _admin(url) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'CREATE TABLE "{schema}".invoices (n int)')
    result = _worker(url)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "not a borrowed-keys store" in result.stderr
    with _admin(url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
        backend.drop_schema(conn, schema)
    assert tables == [("invoices",)]
