"""Real worker processes on PostgreSQL: SIGKILLed mid-step, restarted, and their server
processes terminated (`pg_terminate_backend`) in the middle of a transaction.

The same checks as tests/real/test_real_workers.py on SQLite: every task completed exactly once,
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
from tests.real.test_real_workers import (
    ROOT,
    WAIT_S,
    Fleet,
    at_most_each_second,
    check_consistent,
    check_fleet_history,
    finish,
    read_state,
    resting,
    seed_db,
    task_rows,
)

pytestmark = pytest.mark.slow

WORKERS = ("w1", "w2", "w3", "w4")


def _admin(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(backend.Target.parse(url).conninfo, autocommit=True)


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
    for wid in WORKERS:
        fleet.start(wid)
    terminated: set[int] = set()
    snapshots = 0
    # Chaos: kill holders part-way through a task (restarting them at once), and cut a
    # worker's server connection while it is inside a write transaction, until five kills
    # and two cuts are done or nothing is left to do. A transaction is open only for a
    # moment, so this polls quickly, bounded by WAIT_S, never a pause standing for time.
    all_resting = at_most_each_second(lambda: resting(url) or None)
    pages = rng.randint(1, 2)  # how far into its task the next victim gets
    end = time.monotonic() + WAIT_S
    while fleet.killed < 5 or len(terminated) < 2:
        assert time.monotonic() < end, f"chaos not done within {WAIT_S:.0f} s"
        if len(terminated) < 2:
            pid = terminate_one_in_a_transaction(url, terminated)
            if pid is not None:
                terminated.add(pid)
        victims = fleet.part_way(WORKERS, pages)
        if fleet.killed < 5 and victims:
            victim = rng.choice(victims)
            fleet.kill(victim)
            fleet.start(victim)
            check_consistent(read_state(url))  # type: ignore[arg-type]
            snapshots += 1
            pages = rng.randint(1, 2)
        elif all_resting():
            break  # every task is done or waits for a person: nothing left to interrupt
        time.sleep(0.005)  # a poll of real processes, bounded by `end`
    codes = finish(fleet, WORKERS)
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
        [*cmd, "--max-seconds", str(int(WAIT_S)), *extra],  # a bound, not a pace
        capture_output=True,
        text=True,
        timeout=WAIT_S * 2,
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
