"""Real worker processes on one file database, killed with SIGKILL mid-step and restarted.

These tests use the real clock (they must: the processes are real). They assert outcomes,
never timings: on a loaded machine a slow heartbeat only means another worker takes the task
over, which is exactly what the engine must make safe. They wait on what a worker says (a
line on its stdout) or on the database, never for a stretch of time; every wait has a
generous bound (WAIT_S), there to end a hung run, not to pace a healthy one.
"""

import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from core.engine.clock import DatabaseClock
from core.engine.config import LeaseConfig
from core.engine.models import SCHEMA_VERSION
from core.engine.records import EventRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import RESTING_STATUSES
from core.sim.checker import SafetyChecker
from core.sim.simulation import run_inline

pytestmark = pytest.mark.slow

T = TypeVar("T")

TTL = "1500ms"
TTL_MS = 1500
# The bound on any wait for a real process (a start under load can take many seconds): far
# more than a healthy run needs, so only a hung one reaches it.
WAIT_S = 180.0
ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    ("t1", "ledger", 4),
    ("t2", "browser", 4),
    ("t3", "tools", 3),
    ("t4", "approval", 4),
    ("t5", "ledger", 3),
    ("t6", "tools", 4),
]


def seed_db(db: Path) -> None:
    async def go() -> None:
        store = await LeaseStore.open_async(db, clock=DatabaseClock())
        for task_id, kind, steps in TASKS:
            await store.enqueue(task_id, kind, {"steps": steps, "step_time_ms": 250}, 100)
        await store.close()

    asyncio.run(go())


class Fleet:
    """Worker processes by id; each one's stdout and stderr go to files in `logs`, and the
    lines each has printed since it last started can be waited on (`wait_for`)."""

    def __init__(self, db: Path, logs: Path) -> None:
        self.db = db
        self.logs = logs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.killed = 0
        self.said: dict[str, list[str]] = {}  # worker -> its stdout lines since its start
        self._heard = threading.Condition()

    def start(self, wid: str, *extra: str) -> None:
        cmd = [
            sys.executable,
            "-m",
            "core.tools.realworker",
            "worker",
            "--db",
            str(self.db),
            "--id",
            wid,
            "--ttl",
            TTL,
            "--heartbeat-every",
            "400ms",
            "--poll-every",
            "150ms",
            "--exit-when-idle",
            "--max-seconds",
            str(int(WAIT_S)),
            *extra,
        ]
        err = (self.logs / f"{wid}.err").open("ab")
        with self._heard:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=ROOT)
            self.procs[wid] = proc
            self.said[wid] = []
        err.close()
        threading.Thread(target=self._listen, args=(wid, proc), daemon=True).start()

    def _listen(self, wid: str, proc: subprocess.Popen[bytes]) -> None:
        """Copy the worker's stdout to its log, line by line, and wake whoever waits."""
        assert proc.stdout is not None
        with (self.logs / f"{wid}.out").open("ab") as log:
            for raw in proc.stdout:
                log.write(raw)
                log.flush()
                with self._heard:
                    if self.procs.get(wid) is proc:
                        self.said[wid].append(raw.decode(errors="replace"))
                    self._heard.notify_all()
        with self._heard:  # the pipe closed: the process is gone
            self._heard.notify_all()

    def wait_for(self, what: str, found: Callable[[], T | None], timeout: float = WAIT_S) -> T:
        """Wait until `found()` (called with the lines locked, each time a worker prints or
        exits, and every second for what the database says) is not None."""
        end = time.monotonic() + timeout
        with self._heard:
            while (answer := found()) is None:
                left = end - time.monotonic()
                if left <= 0:
                    pytest.fail(f"{what}: not within {timeout:.0f} s")
                self._heard.wait(min(left, 1.0))
        return answer

    def says(self, wid: str, *words: str) -> bool:
        """Whether the worker has printed a line with all these words since its start."""
        return any(all(w in line.split() for w in words) for line in self.said.get(wid, []))

    def part_way(self, workers: tuple[str, ...], pages: int) -> list[str]:
        """The live workers among `workers` that have written `pages` pages (or more) of the
        task they claimed last."""
        with self._heard:
            return [
                w
                for w in workers
                if self.procs[w].poll() is None and self.pages_into_task(w) >= pages
            ]

    def pages_into_task(self, wid: str) -> int:
        """How many pages the worker has written since its newest claim (0: none held)."""
        lines = [line.split() for line in self.said.get(wid, [])]
        claims = [n for n, words in enumerate(lines) if "claimed" in words]
        if not claims:
            return 0
        return sum("write_accepted" in words for words in lines[claims[-1] :])

    def kill(self, wid: str) -> None:
        proc = self.procs[wid]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=WAIT_S)
        self.killed += 1

    def alive(self) -> list[str]:
        return [w for w, p in self.procs.items() if p.poll() is None]

    def stop_all(self) -> dict[str, int]:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes = {}
        for wid, proc in self.procs.items():
            try:
                codes[wid] = proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung worker
                proc.kill()
                codes[wid] = proc.wait()
        return codes

    def stderr(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.logs.glob("*.err")))


def read_state(db: Path) -> dict[str, Any]:
    """Open the database as another process would and read everything in one snapshot."""
    store = LeaseStore.open_inline(db, clock=DatabaseClock())
    sql = store.sql

    def body(conn: sqlite3.Connection) -> dict[str, Any]:
        return {
            "tasks": [tuple(r) for r in sql.task_all.run(conn)],
            "events": [
                EventRow(seq, at, ev, t, w, lt, ft, reason, json.loads(detail))
                for seq, at, ev, t, w, lt, ft, reason, detail in sql.event_since.run(
                    conn, {"since": 0}
                )
            ],
            "ledger": [tuple(r) for r in sql.ledger_all.run(conn)],
            "effects": [tuple(r) for r in sql.effect_all.run(conn)],
            "checkpoints": [tuple(r) for r in sql.checkpoint_all.run(conn)],
        }

    try:
        return run_inline(store.driver.read(body))
    finally:
        run_inline(store.close())


def task_rows(state: dict[str, Any]) -> dict[str, Any]:
    from core.engine.records import TaskRow

    return {r[0]: TaskRow(*r) for r in state["tasks"]}


def check_consistent(state: dict[str, Any]) -> None:
    """Cross-table facts that hold after every committed transaction."""
    tasks = task_rows(state)
    events: list[EventRow] = state["events"]
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    claims: dict[str, list[EventRow]] = {}
    for ev in events:
        if ev.event == "claimed" and ev.task_id:
            claims.setdefault(ev.task_id, []).append(ev)
    for task_id, row in tasks.items():
        mine = claims.get(task_id, [])
        if row.status == "queued" and not mine:
            continue
        if mine:  # the row's tokens are those of the latest claim in the log
            assert row.lease_token == max(e.lease_token or 0 for e in mine), task_id
            assert row.fence_token == max(e.fence_token or 0 for e in mine), task_id
        done = [e for e in events if e.event == "completed" and e.task_id == task_id]
        assert len(done) == (1 if row.status == "done" else 0), (task_id, row.status)
    accepted = {(e.detail.get("key"), e.fence_token) for e in events if e.event == "write_accepted"}
    for key, _value, fence, *_ in state["ledger"]:
        assert (key, fence) in accepted, key
        assert fence <= tasks[key.split("/")[0]].fence_token
    applied = Counter(e.detail.get("key") for e in events if e.event == "effect_applied")
    for key, *_rest, count in state["effects"]:
        assert applied[key] == count, key
    saved = Counter(e.task_id for e in events if e.event == "checkpoint_saved")
    have = Counter(c[0] for c in state["checkpoints"])
    assert have == saved


def check_fleet_history(state: dict[str, Any]) -> Counter[str]:
    """What must hold after a fleet of real workers ran TASKS through kills and restarts, on
    either backend; returns how often each effect key was applied (once each)."""
    check_consistent(state)
    tasks = task_rows(state)
    events: list[EventRow] = state["events"]
    # Every task is done exactly once.
    assert {t: r.status for t, r in tasks.items()} == {t: "done" for t, *_ in TASKS}
    completed = Counter(e.task_id for e in events if e.event == "completed")
    assert completed == Counter({t: 1 for t, *_ in TASKS})
    # Somebody really took over a task from a killed worker.
    claims = [e for e in events if e.event == "claimed"]
    assert max(Counter(e.task_id for e in claims).values()) >= 2
    # No fence token was issued twice.
    fences = [e.fence_token for e in claims]
    assert len(fences) == len(set(fences))
    # No page accepted a token behind its task's newest, nor a lower token after a higher
    # one; the checker agrees on all.
    highest: dict[str, int] = {}
    newest: dict[str, int] = {}
    for e in events:
        if e.event == "claimed":
            newest[str(e.task_id)] = e.fence_token or 0
        if e.event == "write_accepted":
            key = str(e.detail["key"])
            assert (e.fence_token or 0) == newest[str(e.task_id)], key
            assert (e.fence_token or 0) >= highest.get(key, 0), key
            highest[key] = e.fence_token or 0
    checker = SafetyChecker(ttl_ms=TTL_MS)
    for e in events:
        checker.observe(e)
    assert dict(checker.violations) == {}
    # Every effect key was applied once (some were deduplicated on a takeover, maybe).
    for key, *_rest, count in state["effects"]:
        assert count == 1, key
    applied = Counter(str(e.detail.get("key")) for e in events if e.event == "effect_applied")
    assert applied and set(applied.values()) == {1}
    # Each task's ledger has a page for every step.
    pages = Counter(str(key).split("/")[0] for key, *_ in state["ledger"])
    assert pages == Counter({t: steps for t, _, steps in TASKS})
    return applied


def approve_waiting(db: Path) -> None:
    async def go() -> None:
        store = await LeaseStore.open_async(db, clock=DatabaseClock())
        try:
            for row in await store.tasks():
                if row.status == "waiting":
                    await store.approve(row.task_id)
        finally:
            await store.close()

    asyncio.run(go())


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    db = tmp_path / "workers.db"
    logs = tmp_path / "logs"
    logs.mkdir()
    seed_db(db)
    f = Fleet(db, logs)
    yield f
    f.stop_all()


def chaos(fleet: Fleet, workers: tuple[str, ...], rng: random.Random) -> int:
    """Kill a worker mid-task five times (after it has written a page of the task it holds,
    so it dies between steps with its lease live) and restart it at once; a second process
    reads the whole database after each kill. Stops early if the work is all done first.
    Returns how many snapshots were read."""
    snapshots = 0
    all_resting = at_most_each_second(lambda: resting(fleet.db) or None)
    while fleet.killed < 5:
        pages = rng.randint(1, 2)  # how far into its task the victim gets

        def mid_task(pages: int = pages) -> str | None:
            found = fleet.part_way(workers, pages)
            if found:
                return rng.choice(found)
            return "" if all_resting() else None

        victim = fleet.wait_for("a worker part-way through a task", mid_task)
        if not victim:
            break  # every task is done or waits for a person: nothing left to interrupt
        fleet.kill(victim)
        fleet.start(victim)
        check_consistent(read_state(fleet.db))  # a second process reads while they write
        snapshots += 1
    return snapshots


def finish(fleet: Fleet, workers: tuple[str, ...]) -> dict[str, int]:
    """Approve the task that parks for a human, restart any worker that left early, until
    every task is done; then let the workers see it and leave; their exit codes."""

    def all_done() -> bool | None:
        approve_waiting(fleet.db)
        for wid in workers:
            if fleet.procs[wid].poll() is not None:
                fleet.start(wid)
        return all(r.status == "done" for r in task_rows(read_state(fleet.db)).values()) or None

    fleet.wait_for("every task done", at_most_each_second(all_done))
    for proc in fleet.procs.values():
        proc.wait(timeout=WAIT_S)  # --exit-when-idle: each one leaves by itself
    return fleet.stop_all()


def resting(db: Path | str) -> bool:
    """Every task done, dead or waiting for a person: no worker has anything to do."""
    return all(r.status in RESTING_STATUSES for r in task_rows(read_state(db)).values())


def at_most_each_second(check: Callable[[], T]) -> Callable[[], T | None]:
    """`check`, run again only once a second has passed since it last ran (a database read
    on every line a worker prints would be most of the test's work); None in between."""
    last = [-1.0]

    def throttled() -> T | None:
        if time.monotonic() - last[0] < 1.0:
            return None
        last[0] = time.monotonic()
        return check()

    return throttled


def test_sigkilled_workers_leave_every_task_done_once(fleet: Fleet) -> None:
    rng = random.Random(int(os.environ.get("BK_REAL_SEED", "6")))
    db = fleet.db
    workers = ("w1", "w2", "w3")
    for wid in workers:
        fleet.start(wid)
    snapshots = chaos(fleet, workers, rng)
    codes = finish(fleet, workers)

    assert fleet.killed >= 3
    assert snapshots >= 3
    errors = fleet.stderr()
    assert "Traceback" not in errors, errors
    assert "locked" not in errors and "busy" not in errors, errors
    assert set(codes.values()) == {0}, (codes, errors)

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()

    state = read_state(db)
    applied = check_fleet_history(state)
    assert {k.split("/")[0] for k in applied} == {"t3", "t6"}


def test_a_reader_process_sees_a_consistent_state_while_workers_write(fleet: Fleet) -> None:
    """A separate process opens the database over and over while two workers write: from
    their first claim until they have nothing left to do (and at least five times)."""
    script = (
        "import sys, json\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from tests.real.test_real_workers import read_state, check_consistent, resting\n"
        "from pathlib import Path\n"
        "db = Path(sys.argv[1])\n"
        "n, done = 0, False\n"
        "while n < 5 or not done:\n"
        "    done = resting(db)\n"
        "    check_consistent(read_state(db))\n"
        "    n += 1\n"
        "print(json.dumps({'snapshots': n}))\n"
    )
    fleet.start("w1")
    fleet.start("w2")
    # The reader starts once the workers are at work (a task claimed), not after a guess.
    fleet.wait_for(
        "a claim", lambda: fleet.says("w1", "claimed") or fleet.says("w2", "claimed") or None
    )
    reader = subprocess.run(
        [sys.executable, "-c", script, str(fleet.db), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        cwd=ROOT,
    )
    assert reader.returncode == 0, reader.stderr
    assert json.loads(reader.stdout)["snapshots"] >= 5
    events = read_state(fleet.db)["events"]
    assert any(e.event == "write_accepted" for e in events)


def test_sigterm_stops_a_worker_cleanly(fleet: Fleet) -> None:
    fleet.start("w1")
    fleet.wait_for("w1's claim", lambda: fleet.says("w1", "claimed") or None)
    codes = fleet.stop_all()
    assert codes == {"w1": 0}
    assert "Traceback" not in fleet.stderr()
    out = (fleet.logs / "w1.out").read_text()
    assert "claimed" in out


def test_a_worker_whose_database_is_deleted_stops_with_one_line(fleet: Fleet) -> None:
    fleet.start("w1")
    fleet.wait_for("w1's claim", lambda: fleet.says("w1", "claimed") or None)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{fleet.db}{suffix}").unlink(missing_ok=True)
    code = fleet.procs["w1"].wait(timeout=WAIT_S)
    err = fleet.stderr()
    assert code == 2, err
    assert err.count("\n") == 1 and "was deleted while this store had it open" in err
    assert "Error" not in err  # words, not a class name
    assert not fleet.db.exists()  # and no fresh, empty database in its place


def _worker(db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "core.tools.realworker", "worker", "--db", str(db), "--id", "w1"]
    return subprocess.run(
        [*cmd, "--max-seconds", "5", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_worker_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    junk = tmp_path / "notes.db"
    junk.write_bytes(b"these are my notes, not a database\n" * 10)
    before = junk.read_bytes()
    err = _one_line_error(_worker(junk))
    assert "not a SQLite database" in err
    assert junk.read_bytes() == before


def test_worker_refuses_a_newer_schema(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    seed_db(db)
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE store_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    conn.commit()
    conn.close()
    before = db.read_bytes()
    err = _one_line_error(_worker(db))
    assert "newer" in err
    assert db.read_bytes() == before


def test_worker_refuses_an_unwritable_database(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root may write any file; a pseudo-filesystem still says no
        err = _one_line_error(_worker(Path("/proc/borrowed-keys.db")))
        assert "/proc/borrowed-keys.db" in err
        return
    db = tmp_path / "locked.db"
    seed_db(db)
    before = db.read_bytes()
    db.chmod(0o444)
    try:
        err = _one_line_error(_worker(db))
    finally:
        db.chmod(0o644)
    assert "cannot read and write" in err
    assert db.read_bytes() == before
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        _one_line_error(_worker(folder / "new.db"))
    finally:
        folder.chmod(0o755)
    assert not (folder / "new.db").exists()


def test_worker_rejects_bad_options(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    err = _one_line_error(_worker(db, "--ttl", "2s", "--heartbeat-every", "5s"))
    assert "renew_deadline" in err or "heartbeat" in err
    _one_line_error(_worker(db, "--ttl", "soon"))
    assert not db.exists()


SKEWED_WORKER = """
import sys, time
skew_ns = int(sys.argv[1]) * 10**9
real_ns, real_s = time.time_ns, time.time
time.time_ns = lambda: real_ns() + skew_ns  # this process's clock, off by minutes
time.time = lambda: real_s() + skew_ns / 1e9
from core.tools.realworker import main
sys.exit(main(sys.argv[2:]))
"""


def test_a_worker_with_a_skewed_clock_changes_no_expiry_decision(tmp_path: Path) -> None:
    """The database's clock judges: a worker minutes ahead or behind decides nothing."""
    db = tmp_path / "skew.db"

    async def seed() -> None:
        config = LeaseConfig(ttl_ms=60_000)
        async with await LeaseStore.open_async(db, clock=DatabaseClock(), config=config) as s:
            for task_id in ("live", "lapsed"):
                await s.enqueue(task_id, "ledger", {"steps": 1, "step_time_ms": 50}, 100)
                assert await s.claim("gone", task_id) is not None

    asyncio.run(seed())
    conn = sqlite3.connect(db)
    with conn:  # the holder of `lapsed` went quiet a second before its lease ran out
        conn.execute(
            "UPDATE agent_tasks SET lease_expires_at = lease_expires_at - 61000"
            " WHERE task_id = 'lapsed'"
        )
    conn.close()
    # Behind by ten minutes, a worker judging by its own clock would leave `lapsed` alone;
    # ahead by ten minutes, it would take `live` from its holder. The one behind runs until
    # it says it completed `lapsed` (however slow its start); the one ahead has two seconds
    # of polls to take `live` wrongly (fewer on a loaded machine: never a false failure).
    for wid, skew_s, until in (("behind", -600, "lapsed"), ("ahead", 600, None)):
        options = ["--id", wid, "--ttl", "2s", "--poll-every", "100ms"]
        options += ["--max-seconds", str(int(WAIT_S)) if until else "2"]
        proc = subprocess.Popen(
            [sys.executable, "-c", SKEWED_WORKER, str(skew_s), "worker", "--db", str(db), *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        for line in proc.stdout:  # ends at the worker's exit (--max-seconds at the latest)
            if until is not None and f" completed {until} " in f"{line.rstrip()} ":
                proc.send_signal(signal.SIGTERM)
                break
        _out, err = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    state = read_state(db)
    tasks = task_rows(state)
    claims = [(e.task_id, e.worker_id) for e in state["events"] if e.event == "claimed"]
    assert claims == [("live", "gone"), ("lapsed", "gone"), ("lapsed", "behind")]
    assert tasks["lapsed"].status == "done"
    assert (tasks["live"].status, tasks["live"].owner_id, tasks["live"].lease_token) == (
        "running",
        "gone",
        1,
    )


def test_on_sqlite_a_clock_of_its_own_is_told_and_the_worker_behind_it_stops(
    tmp_path: Path,
) -> None:
    """SQLite has no clock: each process's own judges. A worker two minutes ahead (libfaketime:
    the C library's clock, which SQLite reads) warns as it starts and takes a lease the
    healthy worker still holds by the machine's clock; the healthy worker then finds an
    instant in the store later than its own clock and stops with one line, instead of
    working on beside a second holder."""
    if shutil.which("faketime") is None:
        pytest.skip("needs libfaketime (`apt-get install faketime`; .ci/run installs it)")
    db = tmp_path / "clocks.db"

    async def seed() -> None:
        async with await LeaseStore.open_async(db, clock=DatabaseClock()) as s:
            await s.enqueue("t1", "ledger", {"steps": 1000, "step_time_ms": 100}, 5)

    asyncio.run(seed())
    cmd = [sys.executable, "-m", "core.tools.realworker", "worker", "--db", str(db)]
    options = ["--ttl", "30s", "--poll-every", "100ms", "--max-seconds", str(int(WAIT_S))]

    def start(wid: str, *prefix: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*prefix, *cmd, "--id", wid, *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            start_new_session=True,  # the faketime wrapper passes no signal on: stop the group
        )

    healthy = start("healthy")
    assert healthy.stdout is not None
    for line in healthy.stdout:
        if " claimed t1 " in f"{line.rstrip()} ":
            break
    ahead = start("ahead", "faketime", "-f", "+120s")
    try:
        _out, err = healthy.communicate(timeout=WAIT_S)
    finally:
        os.killpg(ahead.pid, signal.SIGTERM)
        _ahead_out, ahead_err = ahead.communicate(timeout=WAIT_S)
    assert healthy.returncode == 2, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert "behind an instant already written to the store" in err
    assert "on SQLite each process's own clock judges leases" in err
    assert "warning: this process's clock is 2m ahead of the machine's" in ahead_err, ahead_err
    assert "is 2m behind an instant" in err
    claims = [(e.worker_id, e.task_id) for e in read_state(db)["events"] if e.event == "claimed"]
    assert claims == [("healthy", "t1"), ("ahead", "t1")]
