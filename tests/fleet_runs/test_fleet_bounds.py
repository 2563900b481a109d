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
        assert len(log.lines) <= 50
        assert sum(len(json.dumps(line)) for line in log.lines) <= 60_000 or len(log.lines) == 1
    assert log.lines[-1] == log.saved()[-1] or len(log.saved()) == len(log.lines) + 1
