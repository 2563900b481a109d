"""The fleet: real worker processes under a supervisor, faulted by signals and by their
control channel, judged by the simulations' safety checker from the events table.

Real processes on the real clock (marked slow), with 1.5 s leases so each test takes
seconds. They wait on what a worker prints (its JSON lines) or on the process table, never
for a stretch of time; every wait has a generous bound (WAIT_S) that only a hung run reaches.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.engine.config import Mode
from core.engine.people import called
from core.fleet.frame import FrameMaker
from core.fleet.history import load_history
from core.fleet.process import WorkerProcess
from core.fleet.settings import FLEET_KINDS
from core.fleet.supervisor import Fleet, FleetSettings, libfaketime
from core.fleet.verdict import Verdict
from core.sim.timeline import BeliefEnd
from tests.pgserver_kit import with_schema

pytestmark = pytest.mark.slow

WAIT_S = 120.0
ROOT = Path(__file__).resolve().parents[2]
Line = dict[str, Any]


def holds(task: str) -> Callable[[Line], bool]:
    return lambda line: line.get("t") == "belief" and (line.get("lease") or {}).get("task") == task


def in_a_step(task: str) -> Callable[[Line], bool]:
    """Holding `task` and inside a step: its work is waiting for the step to end, which it
    will have by the time it is resumed, so its page is the first thing it sends."""
    return lambda line: holds(task)(line) and line.get("step") is not None


def said(event: str, reason: str | None = None) -> Callable[[Line], bool]:
    def match(line: Line) -> bool:
        if line.get("t") != "event" or line.get("event") != event:
            return False
        return reason is None or line.get("reason") == reason

    return match


def wait(proc: WorkerProcess, what: Callable[[Line], bool], since: int = 0) -> Line:
    line = proc.wait_for(what, WAIT_S, since=since)
    assert line is not None, f"{proc.worker_id} never said it: {proc.said()[-5:]}"
    return line


def make_fleet(db: str, tmp_path: Path, **kw: Any) -> Fleet:
    settings = FleetSettings(db=db, ttl_ms=1500, poll_ms=150, steps=6, step_ms=600, **kw)
    return Fleet(settings, tmp_path / "logs")


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    f = make_fleet(str(tmp_path / "fleet.db"), tmp_path)
    yield f
    f.close()


def stall_takeover_resume(fleet: Fleet) -> None:
    """Stall the holder past its expiry, let another worker claim, resume the first: its
    next page is refused as fenced, in its own words, in the store's rows and in the check."""
    fleet.enqueue(1)
    w1 = fleet.add_worker()
    wait(w1, in_a_step("t1"))
    assert fleet.stall("w1")
    mark = w1.said_count
    w2 = fleet.add_worker()
    wait(w2, said("claimed"))  # only after w1's lease ran out by the database's clock
    assert fleet.resume("w1")
    refused = wait(w1, said("write_rejected"), since=mark)
    assert refused["reason"] == "fenced"
    wait(w2, said("completed"))
    snap = FrameMaker(fleet).frame().snap  # what the Rejected panel shows
    assert any(
        r.operation == "write" and r.worker_id == "w1" and r.reason == "fenced"
        for r in snap.rejections
    )
    # and belief against truth: w1 believed its lease until the store refused it
    assert snap.timeline is not None
    w1_row = snap.timeline.row("w1")
    assert w1_row is not None and w1_row.beliefs[0].ended_by is BeliefEnd.REFUSED
    store_end, belief_end = w1_row.leases[0].end, w1_row.beliefs[0].end
    assert store_end is not None and belief_end is not None and store_end < belief_end
    check = fleet.final_check()
    assert check.verdict is Verdict.HELD, check.findings
    assert check.refused_pages >= 1 and check.completed == 1


def test_a_stalled_holder_resumed_after_a_takeover_is_fenced(fleet: Fleet) -> None:
    stall_takeover_resume(fleet)


def test_a_holder_killed_mid_step_leaves_its_task_completed_once(fleet: Fleet) -> None:
    fleet.enqueue(1)
    w1 = fleet.add_worker()
    wait(w1, said("write_accepted"))  # one page in: killed between steps, lease live
    assert fleet.kill("w1")
    assert w1.exit_status == -signal.SIGKILL
    # Its pane: no memory left, beside the lease the store still lends it (never the task
    # and tokens it last printed)
    dead = FrameMaker(fleet).frame().snap.worker("w1")
    assert dead is not None
    assert (dead.task_id, dead.lease_token, dead.fence_token) == (None, None, None)
    assert dead.store_task_id == "t1" and dead.store_remaining_ms is not None
    # The successor is started elsewhere (as in another terminal): the fleet sees it only
    # in the store's rows, and gives it no fault buttons.
    cmd = [sys.executable, "-m", "core.tools.realworker", "worker", "--db", fleet.settings.db]
    cmd += ["--id", "x1", "--ttl", "1500ms", "--poll-every", "150ms", "--exit-when-idle"]
    cmd += ["--max-seconds", str(int(WAIT_S))]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert " completed t1 " in done.stdout
    frame = FrameMaker(fleet).frame()
    assert "x1" in {v.id for v in frame.snap.workers} and "x1" not in frame.ours
    assert frame.pids == {"w1": w1.pid}
    assert frame.exit_status == {"w1": -signal.SIGKILL}  # shown dead, with its status
    check = fleet.final_check()
    assert check.verdict is Verdict.HELD, check.findings
    assert check.completed == 1 and check.claims == 2


def test_a_frozen_heartbeat_loses_the_lease_while_the_work_goes_on(fleet: Fleet) -> None:
    fleet.enqueue(1)
    w1 = fleet.add_worker()
    wait(w1, holds("t1"))
    assert fleet.freeze("w1")
    mark = w1.said_count
    w2 = fleet.add_worker()
    wait(w2, said("claimed"))
    # By the time w2 claimed, w1's lease had run out unrenewed: a renewal w1 printed just
    # before it read the freeze is older than that, so only its lines from here on must
    # hold none (a renewal line is printed as soon as the store granted it).
    after_claim = w1.said_count
    # Its heartbeat stopped, not its work: it wrote (or tried to write) another page after
    # the freeze, and never renewed again.
    wait(w1, lambda line: said("write_accepted")(line) or said("write_rejected")(line), mark)
    assert not any(said("renewed")(line) for line in w1.said_since(after_claim)[1])
    wait(w2, said("completed"))
    check = fleet.final_check()
    assert check.verdict is Verdict.HELD, check.findings
    assert check.completed == 1


def test_a_worker_that_skips_the_fence_turns_the_verdict_red(tmp_path: Path) -> None:
    """The planted bug: the same stall, with workers whose ledger takes any token."""
    f = make_fleet(str(tmp_path / "bug.db"), tmp_path, mode=Mode.NO_FENCING)
    try:
        f.enqueue(1)
        w1 = f.add_worker()
        wait(w1, in_a_step("t1"))
        f.stall("w1")
        mark = w1.said_count
        w2 = f.add_worker()
        wait(w2, said("claimed"))
        f.resume("w1")
        wait(w1, said("write_accepted"), since=mark)  # the stale page, taken
        f.poll()
        assert f.found, "the running checker saw nothing"
        check = f.final_check()
        assert check.verdict is Verdict.BROKEN
        assert "stale_write_accepted" in {x.rule for x in check.findings}
    finally:
        f.close()


def test_headless_runs_random_faults_and_exits_on_its_verdict(tmp_path: Path) -> None:
    save = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--workers", "3"]
    cmd += ["--tasks", "3", "--ttl", "1500ms", "--step-time", "300ms", "--steps", "3"]
    cmd += ["--seconds", "8", "--seed", "7", "--save", str(save)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: held." in done.stdout
    assert "Traceback" not in done.stderr
    last = save.read_text().splitlines()[-1]
    assert '"verdict": "held"' in last
    # the saved run replays: what the processes said they held, on the same timeline
    saved = load_history(save)
    assert any(b.held is not None for b in saved.beliefs), "no belief was saved"
    view = saved.timeline_at(saved.end)
    assert view.rows and all(b.end is not None for r in view.rows for b in r.beliefs)
    assert saved.check().verdict is Verdict.HELD
    # with the store's final rows and the frames a screen would have shown, for export
    assert saved.rows is not None and len(saved.rows.tasks) == 3 and not saved.skipped
    assert saved.frames and saved.frames[-1].at >= saved.frames[0].at


def test_headless_without_tasks_keeps_every_worker_busy(tmp_path: Path) -> None:
    """No --tasks: a steady queue. New tasks keep arriving, so the workers hold a lease
    most of the time through the faults, and the run goes on until its time is up."""
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--workers", "3"]
    cmd += ["--ttl", "1500ms", "--step-time", "300ms", "--steps", "3"]
    cmd += ["--seconds", "4", "--seed", "3", "--faults", "random"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "a steady queue of" in done.stdout
    share = next(
        line for line in done.stdout.splitlines() if "held a lease" in line
    )  # "The running workers held a lease 87% of the time."
    assert int(share.split("lease ", 1)[1].split("%", 1)[0]) >= 60, done.stdout
    # every worker, not a pooled share that one idle worker could hide in
    least = share.split("The least busy, ", 1)[1]
    assert int(least.split("held one ", 1)[1].split("%", 1)[0]) >= 60, done.stdout
    assert "Not every task was done" not in done.stdout  # a steady queue never runs dry


def test_headless_refuses_bad_options_in_one_line() -> None:
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--faults", "meteor"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "meteor" in done.stderr


def _gone(pid: int) -> bool:
    """Whether a process has ended (a zombie nobody reaped yet has ended too)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _live_commands() -> Iterator[tuple[int, str]]:
    """Each live process's pid and command line (its title), arguments joined by spaces."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if not _gone(int(entry.name)):
            yield int(entry.name), cmdline


def _server_of(folder: str) -> list[int]:
    """The pids of the PostgreSQL processes whose command line names `folder`."""
    return [pid for pid, cmd in _live_commands() if folder in cmd and "postgres" in cmd]


def _titled(title: str) -> list[int]:
    """The pids of the live processes whose command line (their title) starts with `title`."""
    return [pid for pid, cmd in _live_commands() if cmd.startswith(title)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_nothing_outlives_a_sigkilled_supervisor(tmp_path: Path) -> None:
    """SIGKILL the supervisor of a fleet on its own PostgreSQL: within five seconds no worker
    is left (the parent-death signal), and the server stops too (the watchdog)."""
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--pg", "--workers", "3"]
    cmd += ["--tasks", "3", "--ttl", "1500ms", "--seconds", "120", "--faults", "stall"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    pids: list[int] = []
    pgdata = ""
    for line in proc.stdout:  # "A fleet ... on URL ..." then "Started w1 as pid N." each
        if line.startswith("A fleet"):
            pgdata = line.split("host=", 1)[1].split(",", 1)[0]
        if line.startswith("Started "):
            pids.append(int(line.rstrip(".\n").rsplit(" ", 1)[1]))
        if len(pids) == 3:
            break
    assert len(pids) == 3 and not any(_gone(p) for p in pids)
    assert pgdata and _server_of(pgdata)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=WAIT_S)
    end = time.monotonic() + 5.0
    while not all(_gone(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)  # polling the process table, bounded by the 5 s the rule allows
    assert [p for p in pids if not _gone(p)] == []
    end = time.monotonic() + 60.0  # a server stop that hangs is what this bound catches
    while (_server_of(pgdata) or Path(pgdata).exists()) and time.monotonic() < end:
        time.sleep(0.1)
    assert _server_of(pgdata) == []
    assert not Path(pgdata).exists()  # the fresh folder removed as well


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_sigkilled_supervisor_on_sqlite_leaves_no_worker_no_folder_no_database(
    tmp_path: Path,
) -> None:
    """SIGKILL the supervisor of a fleet on its own SQLite file: no worker is left (the
    parent-death signal), and the fresh folder with the database, its WAL and the workers'
    logs goes too (the watchdog, on SQLite as on PostgreSQL)."""
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--workers", "2"]
    cmd += ["--ttl", "1500ms", "--seconds", "120", "--faults", "none"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    pids: list[int] = []
    db = ""
    for line in proc.stdout:  # "A fleet ... on /tmp/bk-fleet-.../fleet.db, ..." then "Started"
        if line.startswith("A fleet"):
            db = line.split(" on ", 1)[1].split(", ", 1)[0]
        if line.startswith("Started "):
            pids.append(int(line.rstrip(".\n").rsplit(" ", 1)[1]))
        if len(pids) == 2:
            break
    folder = Path(db).parent
    assert db.endswith("fleet.db") and folder.name.startswith("bk-fleet-")
    assert Path(db).exists() and (folder / "logs").is_dir()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=WAIT_S)
    end = time.monotonic() + 5.0
    while not all(_gone(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)  # polling the process table, bounded by the 5 s the rule allows
    assert [p for p in pids if not _gone(p)] == []
    end = time.monotonic() + 10.0
    while folder.exists() and time.monotonic() < end:
        time.sleep(0.05)  # polling the file system, bounded
    assert not folder.exists()  # no database, no WAL, no logs


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signalled_supervisor_on_sqlite_leaves_no_worker_and_no_folder(
    ending: signal.Signals,
) -> None:
    """`kill PID` and Ctrl-C end a headless fleet on its own SQLite file as a clean exit
    does: every worker gone, and no /tmp/bk-fleet-* folder of this run left behind."""
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--workers", "2"]
    cmd += ["--ttl", "1500ms", "--seconds", "120", "--faults", "none"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    # a hung start is ended by the kill below, which closes the pipe the loop reads
    timer = threading.Timer(WAIT_S, proc.kill)
    timer.start()
    pids: list[int] = []
    db = ""
    try:
        for line in proc.stdout:  # "A fleet ... on /tmp/bk-fleet-.../fleet.db, ..." then "Started"
            if line.startswith("A fleet"):
                db = line.split(" on ", 1)[1].split(", ", 1)[0]
            if line.startswith("Started "):
                pids.append(int(line.rstrip(".\n").rsplit(" ", 1)[1]))
            if len(pids) == 2:
                break
    finally:
        timer.cancel()
    folder = Path(db).parent
    assert len(pids) == 2 and not any(_gone(p) for p in pids)
    assert folder.name.startswith("bk-fleet-") and Path(db).exists()
    # the run's own folder, as it printed it (its logs are inside): other tests' fleets
    # make bk-fleet-* folders of their own at the same time
    assert folder.parent == Path(tempfile.gettempdir())
    # a worker takes its title once it runs, a moment after "Started": the check below must
    # be able to see a leftover by its title, so wait (polling, bounded) until it could
    end = time.monotonic() + WAIT_S
    while not set(pids) <= set(_titled("borrowed-keys worker")) and time.monotonic() < end:
        time.sleep(0.05)
    assert set(pids) <= set(_titled("borrowed-keys worker"))
    os.kill(proc.pid, ending)
    out, _ = proc.communicate(timeout=WAIT_S)
    assert "Traceback" not in out
    # the supervisor reaps its workers before it exits, so no wait is needed here
    assert [p for p in pids if not _gone(p)] == []
    assert [p for p in _titled("borrowed-keys worker") if p in pids] == []
    assert not folder.exists()  # no database, no WAL, no logs


def test_a_fleet_on_a_database_of_the_users_leaves_no_log_folder(tmp_path: Path) -> None:
    """`--db PATH`: the workers' logs go in a fresh folder of their own, removed at the end;
    the user's database stays where it was."""
    db = tmp_path / "mine.db"
    before = set(Path(tempfile.gettempdir()).glob("bk-fleet-logs-*"))
    cmd = [sys.executable, "-m", "demo.cli", "fleet", "--headless", "--db", str(db)]
    cmd += ["--workers", "1", "--tasks", "1", "--steps", "1", "--ttl", "1500ms"]
    cmd += ["--faults", "none"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert db.exists()
    assert set(Path(tempfile.gettempdir()).glob("bk-fleet-logs-*")) <= before


def test_on_postgresql_a_stalled_holder_resumed_after_a_takeover_is_fenced(
    postgres_url: str, tmp_path: Path
) -> None:
    f = make_fleet(with_schema(postgres_url), tmp_path)
    try:
        stall_takeover_resume(f)
    finally:
        f.close()


async def test_the_app_drives_real_processes_and_saves_their_history(tmp_path: Path) -> None:
    """Pilot: the fleet screen's Stall and Resume on a real holder; the Rejected panel shows
    its page refused as fenced, the light stays green, and `s` saves a history that held."""
    from demo.fleet_app import FleetApp
    from demo.screens.fleet import FleetScreen
    from demo.widgets.panels import RejectedTable
    from demo.widgets.timeline_view import OwnershipTimeline
    from demo.widgets.worker_pane import WorkerGrid, WorkerPane

    f = make_fleet(str(tmp_path / "app.db"), tmp_path)
    saves = tmp_path / "saves"
    try:
        f.enqueue(1)
        w1 = f.add_worker()
        app = FleetApp(f, "en", saves)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)

            async def until(what: str, found: Callable[[], bool]) -> None:
                end = time.monotonic() + WAIT_S
                while not found():
                    assert time.monotonic() < end, f"{what}: not within {WAIT_S:.0f} s"
                    await pilot.pause(0.05)  # the screen reads a frame every 0.1 s

            def pane_of(wid: str) -> Any:
                frame = screen.frame
                if frame is None:  # under load the first frame may not be read yet
                    return None
                return next((v for v in frame.snap.workers if v.id == wid), None)

            await until(
                "w1 in a step of t1",
                lambda: (
                    (v := pane_of("w1")) is not None and v.task_id == "t1" and v.step is not None
                ),
            )
            grid = app.screen.query_one("#workers", WorkerGrid)
            titled = f"pid {w1.pid}"
            await until(
                "w1's pane names its pid",
                lambda: "w1" in grid.panes and titled in str(grid.panes["w1"].border_title),
            )
            screen.post_message(WorkerPane.FaultRequested("w1", "stall"))
            await until("w1 stalled", lambda: (v := pane_of("w1")) is not None and v.stalled)
            f.add_worker("w2")
            await until(
                "w2 holds t1", lambda: (v := pane_of("w2")) is not None and v.task_id == "t1"
            )
            screen.post_message(WorkerPane.FaultRequested("w1", "resume"))
            table = app.screen.query_one("#rejected", RejectedTable)

            def fenced_in_panel() -> bool:
                frame = screen.frame
                return (
                    frame is not None
                    and any(
                        r.worker_id == "w1" and r.reason == "fenced" and r.operation == "write"
                        for r in frame.snap.rejections
                    )
                    and table.row_count > 0
                )

            await until("w1's page refused in the Rejected panel", fenced_in_panel)
            assert screen.frame is not None and screen.frame.snap.violations == {}
            # key 6: Belief vs truth, the simulations' panel, on the real processes
            await pilot.press("6")
            drawn = app.screen.query_one("#timeline", OwnershipTimeline)

            def gap_drawn() -> bool:
                words = str(drawn.render())
                return called("w1", "en") in words and "refused" in words

            await until("w1's belief ended by the refusal on the timeline", gap_drawn)
            await pilot.press("s")
            await until("the history saved", lambda: any(saves.glob("fleet-*.jsonl")))
            saved = next(saves.glob("fleet-*.jsonl"))

            def verdict_line() -> str | None:
                """The file's last line once it is written whole (a save may be under way)."""
                text = saved.read_text()
                last = text.rstrip("\n").rsplit("\n", 1)[-1]
                return last if text.endswith("\n") and '"verdict"' in last else None

            await until("the save written whole", lambda: verdict_line() is not None)
            assert '"verdict": "held"' in (verdict_line() or "")
            # with the store's final rows and the screen's frames, for --check and export
            run = load_history(saved)
            assert run.rows is not None and [r.task_id for r in run.rows.tasks] == ["t1"]
            assert run.check().verdict is Verdict.HELD
            pids = {frame.pids.get("w1") for frame in run.frames}
            assert w1.pid in pids and any(fr.snap.rejections for fr in run.frames)
    finally:
        f.close()


def test_on_postgresql_a_partitioned_holder_healed_after_a_takeover_is_fenced(
    postgres_url: str, tmp_path: Path
) -> None:
    """A real network cut: the holder's relay to the server drops its connections and
    refuses new ones; its lease runs out by the server's clock, another worker claims and
    finishes the task, all the while the holder keeps running and believing (its calls fail
    and are tried again, far past the bound of one reconnect); once the road is back the
    holder's late page is refused by the fence, and it lives on."""
    f = make_fleet(with_schema(postgres_url), tmp_path)
    try:
        assert f.relays is not None
        f.enqueue(1)
        w1 = f.add_worker()
        wait(w1, in_a_step("t1"))
        assert f.partition("w1")
        mark = w1.said_count
        w2 = f.add_worker()
        wait(w2, said("claimed"))
        wait(w2, said("completed"))  # a whole task's time: many reconnect bounds
        cut_off = wait(w1, lambda line: holds("t1")(line) and bool(line.get("unreachable")))
        assert w1.alive and cut_off["lease"]["task"] == "t1"  # still believing, still there
        assert f.heal("w1")
        refused = wait(w1, said("write_rejected"), since=mark)
        assert refused["task"] == "t1"
        wait(w1, lambda line: holds("t1")(line) is False and line.get("t") == "belief", mark)
        assert w1.alive  # it reconnected by itself: the cut cost it the task, not its life
        check = f.final_check()
        assert check.verdict is Verdict.HELD, check.findings
        assert check.completed == 1
    finally:
        f.close()


def test_on_postgresql_a_partitioned_self_fencing_holder_gives_the_lease_up_by_itself(
    postgres_url: str, tmp_path: Path
) -> None:
    """Where the workers self-fence (`--self-fence`), a holder cut off gives its lease up at
    its renew deadline, while still cut off and still running: nothing late is sent."""
    f = make_fleet(with_schema(postgres_url), tmp_path, self_fencing=True)
    try:
        f.enqueue(1)
        w1 = f.add_worker()
        wait(w1, in_a_step("t1"))
        assert f.partition("w1")
        mark = w1.said_count
        gave_up = wait(
            w1,
            lambda line: line.get("t") == "belief" and line.get("lease") is None,
            since=mark,
        )
        assert f.partitioned("w1") and w1.alive  # by itself, before the road came back
        assert gave_up["unreachable"] is True
        w2 = f.add_worker()
        wait(w2, said("completed"))
        assert f.heal("w1")
        assert w1.alive
        check = f.final_check()
        assert check.verdict is Verdict.HELD, check.findings
        assert not any(said("write_accepted")(line) for line in w1.said_since(mark)[1])
    finally:
        f.close()


@pytest.mark.skipif(libfaketime() is None, reason="needs libfaketime (apt-get install faketime)")
def test_on_sqlite_a_worker_with_a_skewed_clock_takes_a_live_lease(tmp_path: Path) -> None:
    """SQLite means one machine and one clock: each process's store reads its own clock, so a
    worker five minutes ahead (libfaketime) judges a live lease expired and takes it; the
    fleet, which knows the skew it applied, judges on the true timeline: two live owners.
    Both workers say what is wrong with the clocks, and the fleet shows it."""
    settings = FleetSettings(db=str(tmp_path / "skew.db"), ttl_ms=1500, poll_ms=150, steps=60)
    fleet = Fleet(settings, tmp_path / "logs")
    try:
        fleet.enqueue(1)
        w1 = fleet.add_worker()
        wait(w1, holds("t1"))  # a task of 60 steps: held for far longer than this test
        fleet.add_worker("w2")
        assert fleet.skew("w2", 300_000)
        wait(fleet.workers["w2"], said("claimed"))
        fleet.poll()
        assert "double_owner" in {f.rule for f in fleet.found}
        assert fleet.final_check().verdict is Verdict.BROKEN
        # Each clock is told: the skewed worker warned as it started, and the healthy one,
        # finding an instant in the store later than its own clock, stopped with one line.
        assert w1.proc is not None
        assert w1.proc.wait(timeout=WAIT_S) == 2
        assert "behind an instant already written to the store" in (w1.last_words() or "")
        ahead = fleet.workers["w2"].last_words() or ""
        assert "warning: this process's clock is 5m ahead of the machine's" in ahead
        assert set(FrameMaker(fleet).frame().said) == {"w1", "w2"}  # said on the screen
    finally:
        fleet.close()


def test_on_postgresql_a_server_restart_mid_run_loses_nothing_and_doubles_nothing() -> None:
    """A server of its own (the shared test server is not ours to restart), restarted with
    `pg_ctl restart -m fast` while both workers hold a lease: their connections drop, they
    reconnect by themselves, and every task is completed exactly once."""
    import tempfile
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    # Not under pytest's folder: as root the server runs as another user (see conftest).
    folder = Path(tempfile.mkdtemp(prefix="bk-fleet-restart-"))
    server = pgserver.get_server(folder / "pg", cleanup_mode="delete")  # type: ignore[attr-defined]
    f = make_fleet(str(server.get_uri()), folder)
    try:
        f.enqueue(2)
        ws = [f.add_worker(), f.add_worker()]
        for w in ws:
            wait(w, lambda line: line.get("t") == "belief" and bool(line.get("lease")))
        pgserver.pg_ctl(  # type: ignore[attr-defined]
            ["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user
        )
        for task in ("t1", "t2"):
            end = time.monotonic() + WAIT_S
            while not any(e.event == "completed" and e.task_id == task for e in f.final_events()):
                assert time.monotonic() < end, f"{task} never completed"
                f.workers["w1"].wait_for(said("completed"), 1.0)  # woken by a completion
        assert all(w.alive for w in ws)
        check = f.final_check()
        assert check.verdict is Verdict.HELD, check.findings
        assert check.completed == 2
    finally:
        f.close()
        # pgserver's cleanup stops the server process it started, and after `pg_ctl restart`
        # the server is another process: it would be left running on a deleted folder. So
        # whatever server runs on this test's own data directory is stopped first (pg_ctl
        # reads its pid there); no other server is touched.
        with contextlib.suppress(subprocess.CalledProcessError):
            pgserver.pg_ctl(  # type: ignore[attr-defined]
                ["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user
            )
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    assert not _server_of(str(folder)), "the restarted server was left running"


def test_adding_tasks_reads_only_the_ids_it_tries_not_every_task(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet that has run for an hour adds a few tasks at the cost of a few: reading every
    task's row to add one made the writing store keep all of them (1.5 kB a task)."""
    fleet.enqueue(30)
    read_all: list[str] = []
    real_tasks = type(fleet.store).tasks

    async def tasks(store: Any) -> Any:
        read_all.append("tasks")
        return await real_tasks(store)

    monkeypatch.setattr(type(fleet.store), "tasks", tasks)
    made = fleet.enqueue(3)
    assert made == ["t31", "t32", "t33"]
    assert read_all == []
    kinds = {row.task_id: row.kind for row in fleet.newest(100, 0, 0)[0]}
    # the kinds in turn, as before: the n-th task of a new store gets the n-th kind
    assert kinds == {f"t{n}": FLEET_KINDS[(n - 1) % len(FLEET_KINDS)] for n in range(1, 34)}
