"""A long fleet session's memory is bounded: each worker keeps its last lines only (read by
their absolute index), and the saved-frames log keeps a bounded number and size of frames."""

import json
import sys
from pathlib import Path

import pytest

from core.fleet import frame as frames
from core.fleet import process
from core.fleet.process import WorkerProcess
from tests.app.test_fleet_follow import frame

N = 5000


def test_a_worker_keeps_its_last_lines_read_by_absolute_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "MAX_LINES", 300)
    talk = f'for i in range({N}): print(\'{{"t": "belief", "i": %d}}\' % i)'
    w = WorkerProcess("acheng", [sys.executable, "-c", talk], tmp_path)
    w.start()
    assert w.wait_for(lambda line: line.get("i") == N - 1, timeout=60) is not None
    assert w.proc is not None and w.proc.wait(timeout=60) == 0
    assert len(w.said()) == 300 and w.said_count == N
    _, new = w.said_since(N - 10)
    assert [line["i"] for line in new] == list(range(N - 10, N))
    _, kept = w.said_since(3)  # long gone: what is kept
    assert kept[0]["i"] == N - 300
    assert w.wait_for(lambda line: True, timeout=1, since=N - 2) == {"t": "belief", "i": N - 2}
    assert w.ready


def test_the_saved_frames_log_is_bounded_in_number_and_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(frames, "MAX_SAVED_FRAMES", 50)
    monkeypatch.setattr(frames, "MAX_SAVED_BYTES", 60_000)
    log = frames.FrameLog()
    for n in range(1, 400):
        log.take(frame(n), 0)
        assert len(log) <= 50
        assert sum(len(json.dumps(line)) for line in log.lines) <= 60_000 or len(log.lines) == 1
    assert log.lines[-1] == log.saved()[-1] or len(log.saved()) == len(log.lines) + 1


def test_a_long_fleet_session_keeps_bounded_memory_and_a_checkable_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames driven directly (no worker process, no sleep): a writer elsewhere claims,
    writes, completes and is refused again and again, the supervisor notes a signal each
    time. What the fleet and its frame maker keep stays within its bounds; the save still
    holds the whole run, and its check says held."""
    from core.engine.clock import DatabaseClock
    from core.engine.errors import BorrowedKeysError
    from core.engine.store import LeaseStore
    from core.engine.vocabulary import EventKind
    from core.fleet import supervisor
    from core.fleet.frame import FrameMaker
    from core.fleet.history import load_history
    from core.fleet.supervisor import Fleet, FleetSettings
    from core.fleet.verdict import Verdict
    from core.sim.simulation import run_inline

    for name, bound in (
        ("KEEP_EVENTS", 40),
        ("KEEP_FAULTS", 10),
        ("KEEP_FINDINGS", 10),
        ("KEEP_BELIEFS", 10),
    ):
        monkeypatch.setattr(supervisor, name, bound)
    for name, bound in (
        ("SHOWN_FINISHED", 10),
        ("SHOWN_PAGES", 20),
        ("SHOWN_EFFECTS", 20),
        ("KEPT_REJECTIONS", 15),
        ("TIMELINE_KEPT_MS", 1),  # what ended before the last millisecond is forgotten
        ("TIMELINE_TRIM_EVERY_MS", 0),
    ):
        monkeypatch.setattr(frames, name, bound)
    n = 150
    db = str(tmp_path / "fleet.db")
    with Fleet(FleetSettings(db=db), tmp_path / "logs") as fleet:
        maker = FrameMaker(fleet, record=True)
        store = LeaseStore.open_inline(db, clock=DatabaseClock(), config=fleet.settings.config)
        try:
            for i in range(n):
                worker = ("acheng", "linzhou", "w4")[i % 3]
                run_inline(store.enqueue(f"t{i}", "ledger", {}, 100))
                lease = run_inline(store.claim(worker, f"t{i}"))
                assert lease is not None
                for page in (1, 2):
                    run_inline(store.fenced_write(lease, f"t{i}/{page}", "v"))
                run_inline(store.complete(lease))
                with pytest.raises(BorrowedKeysError):  # too late: refused, a register line
                    run_inline(store.fenced_write(lease, f"t{i}/3", "v"))
                fleet._note(EventKind.STALLED, worker, pid=None)
                made = maker.frame()
                snap = made.snap
                assert len(fleet.events) <= 40 and len(fleet.faults) <= 10
                assert len(snap.tasks) <= 10 + 1 and len(snap.ledger) <= 20
                assert len(snap.rejections) <= 15 and len(made.faults) <= 10
                assert maker.log is not None and len(maker.log) <= frames.MAX_SAVED_FRAMES
        finally:
            run_inline(store.close())
        timeline = maker.timeline.timeline
        start = timeline.kept_from
        leases = [lease for row in timeline.rows.values() for lease in row.leases]
        calls = [call for row in timeline.rows.values() for call in row.calls]
        assert start > 0 and not any(lease.task_id == "t0" for lease in leases), (
            "the timeline forgets what ended long ago"
        )
        assert all(lease.end is None or lease.end >= start for lease in leases)
        assert all(call.at >= start for call in calls)
        assert fleet.events.count > 5 * n and fleet.faults.count == n  # counted, all of them
        path = tmp_path / "run.jsonl"
        assert maker.log is not None
        check = fleet.save(path, maker.log.saved())
    assert check.verdict is Verdict.HELD, check.findings
    saved = load_history(path)
    assert len(saved.signals) == n, "every signal is in the save, not only those kept"
    assert len(saved.events) == check.events > 5 * n
    assert saved.check().verdict is Verdict.HELD


def test_a_timeline_that_forgot_its_start_draws_its_axis_from_what_it_keeps() -> None:
    from core.engine.records import EventRow
    from core.sim.timeline import Timeline
    from demo.widgets.timeline_view import make_scale, render_timeline

    timeline = Timeline(1000, 3000, 2000)
    for i in range(60):  # a claim and a completion every ten seconds
        at = i * 10_000
        claim = EventRow(2 * i + 1, at, "claimed", f"t{i}", "acheng", 1, i + 1, None, {})
        done = EventRow(2 * i + 2, at + 5_000, "completed", f"t{i}", "acheng", 1, i + 1)
        timeline.feed([claim, done])
    timeline.forget_before(500_000)
    view = timeline.view(600_000)
    assert view.first_ms == 500_000
    row = view.row("acheng")
    assert row is not None and all(lease.start >= 490_000 for lease in row.leases)
    scale = make_scale(view, 100)
    assert scale.cell(500_000) == 0 and scale.cell(600_000) > 50
    assert all(at >= 500_000 for _, at in scale.labels())
    assert "8:20" in render_timeline(view, 120, "en", {}).plain  # 500 s, where the axis starts
