"""A saved fleet run replayed without a process: belief against truth from its history, the
page `export` makes of it, and `fleet --check` judging it again.

tests/fleet_runs/stalled.jsonl is a history in the first saved form (no store rows, no
frames; kept to prove old files still load): w1 holds t1, is stalled past its expiry, w2
claims, w1 resumes and its next page is refused as fenced. tests/fleet_runs/stalled_run.jsonl
is the same story recorded from real processes by tests/fleet_runs/record.py, in today's
form: with the store's final rows and the screen's frames.
"""

import argparse
import json
import re
from pathlib import Path

import pytest

from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.fleet.command import BadOption, checked, run_check_command
from core.fleet.history import FleetTimeline, HistoryError, load_history
from core.sim.timeline import BeliefEnd, CallOutcome, LeaseEnd
from demo.export.cli import main as export_main

STALLED = Path(__file__).parent.parent / "fleet_runs" / "stalled.jsonl"
RECORDED = STALLED.with_name("stalled_run.jsonl")


def test_a_saved_run_replays_belief_against_truth() -> None:
    run = load_history(STALLED)
    view = run.timeline_at(run.end)
    w1 = view.row("w1")
    assert w1 is not None
    # the store's lease ended when w2 claimed (5 s); w1 believed on until the refusal (6 s)
    assert w1.leases[0].ended_by is LeaseEnd.RECLAIMED and w1.leases[0].end == 5000
    assert w1.beliefs[0].ended_by is BeliefEnd.REFUSED and w1.beliefs[0].end == 6000
    refused = [c for c in w1.calls if c.outcome is CallOutcome.REFUSED]
    assert [c.reason for c in refused] == ["fenced"]
    w2 = view.row("w2")
    assert w2 is not None and w2.beliefs[0].ended_by is BeliefEnd.RELEASED


def test_a_moment_before_the_takeover_shows_w1_still_holding() -> None:
    view = load_history(STALLED).timeline_at(3000)
    w1 = view.row("w1")
    assert w1 is not None and w1.leases[0].end is None and w1.beliefs[0].end is None
    assert view.row("w2") is None


def _claim(seq: int, at: int) -> EventRow:
    return EventRow(seq, at, EventKind.CLAIMED, "t1", "w1", 1, 1, None, {"expires_at": at + 3000})


def test_a_lease_a_process_stops_naming_ends_its_belief_there() -> None:
    tl = FleetTimeline(1000, 3000, 2000)
    tl.believe(0, {"w1": None})
    tl.take([_claim(1, 100)])
    # the process has not said so yet: a line that did not change is no news
    tl.believe(150, {"w1": None})
    assert tl.view(150).rows[0].beliefs[0].end is None
    tl.believe(200, {"w1": ("t1", 1)})
    tl.believe(2500, {"w1": None})  # it let go by itself (its own renew deadline)
    belief = tl.view(3000).rows[0].beliefs[0]
    assert belief.end == 2500 and belief.ended_by is BeliefEnd.FORGOT


def test_a_signal_from_the_supervisor_ends_a_killed_workers_belief() -> None:
    tl = FleetTimeline(1000, 3000, 2000)
    tl.take([_claim(1, 100), EventRow(0, 900, EventKind.KILLED, None, "w1", None, None, None, {})])
    belief = tl.view(1000).rows[0].beliefs[0]
    assert belief.end == 900 and belief.ended_by is BeliefEnd.KILLED


def test_export_turns_a_saved_run_into_a_page_in_words(tmp_path: Path) -> None:
    assert export_main([str(STALLED), "--out", str(tmp_path), "--lang", "zh"]) == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "真实进程上的一局" in page and "<svg" in page
    assert "守住了" in page  # the verdict of the whole history, checked again
    for code in ("write_rejected", "None", "fenced", "lease_token"):
        assert code not in page, code


def _args(path: Path, lang: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(check=str(path), lang=lang)


def test_check_judges_a_saved_run_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_check_command(_args(STALLED)) == 0
    assert "Verdict: held" in capsys.readouterr().out
    # plant the harm: w1's refused page accepted instead, from the lease w2 replaced
    lines = STALLED.read_text().splitlines()
    stale = json.loads(lines[5])
    stale.update(event="write_accepted", reason=None, detail={"key": "t1/2"})
    lines[5] = json.dumps(stale)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    assert run_check_command(_args(broken)) == 1
    said = capsys.readouterr().out
    assert "Verdict: broken" in said
    assert "a page was accepted from a lease that was no longer the current one" in said
    # in Chinese every finding is said in Chinese too, with no English figures beside it
    assert run_check_command(_args(broken, "zh")) == 1
    said = capsys.readouterr().out
    assert "收下了一页来自已不是当前租约的写入" in said
    assert not re.search(r"[A-Za-z]{4,}", said.replace("t1", "")), said


def test_a_file_that_is_not_a_saved_run_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(STALLED.read_text().splitlines()[0] + "\n[1, 2]\n")
    with pytest.raises(HistoryError, match=r"bad\.jsonl:2: "):
        load_history(bad)
    assert run_check_command(_args(bad)) == 2


def test_a_fleet_starts_at_most_32_workers() -> None:
    from core.fleet.options import add_fleet_options

    p = argparse.ArgumentParser()
    add_fleet_options(p)
    assert checked(p.parse_args(["--workers", "32"])).workers == 32
    with pytest.raises(BadOption, match="--workers"):
        checked(p.parse_args(["--workers", "33"]))


def test_plus_worker_past_the_bound_starts_no_process(tmp_path: Path) -> None:
    from core.fleet.supervisor import Fleet, FleetSettings

    with Fleet(FleetSettings(db=str(tmp_path / "f.db")), tmp_path / "logs") as fleet:
        assert fleet.add_worker_within(0) is None and not fleet.workers


# -- the store's final rows in the file ----------------------------------------------------


def test_a_recorded_run_checked_from_its_file_gives_the_saved_verdict() -> None:
    run = load_history(RECORDED)
    assert run.rows is not None and not run.skipped
    assert [r.task_id for r in run.rows.tasks] == ["t1"] and len(run.rows.ledger) == 4
    check = run.check()
    assert check.verdict.name.lower() == run.verdict["verdict"] == "held"
    saved = [(f["rule"], f["task"], f["detail"]) for f in run.verdict["findings"]]
    assert [(f.rule, f.task_id, f.detail) for f in check.findings] == saved


def _planted(tmp_path: Path, table: str, change: dict[str, object]) -> Path:
    """The recorded run with one row of `table` changed (or, for effects, one added)."""
    lines = RECORDED.read_text().splitlines()
    if table == "effects":
        row = {
            "idempotency_key": "t1/charge",
            "task_id": "t1",
            "effect": "charge",
            "fence_token": 2,
            "result": {},
            "applied_at": 0,
            "applied_count": 1,
        }
        row.update(change)
        lines.insert(-1, json.dumps({"t": "row", "v": 1, "table": "effects", "row": row}))
    else:
        for n, raw in enumerate(lines):
            line = json.loads(raw)
            if line.get("t") == "row" and line["table"] == table:
                line["row"].update(change)
                lines[n] = json.dumps(line)
                break
    out = tmp_path / "planted.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize(
    ("table", "change", "en", "zh"),
    [
        # the store says t1 is still running, while its events say it was completed
        (
            "agent_tasks",
            {"status": "running"},
            "a task was not completed exactly once (t1 is running and was completed 1 times)",
            "有一项任务不是恰好完成一次",
        ),
        # an effect row applied twice, which no event of the history shows
        (
            "effects",
            {"applied_count": 2},
            "an effect was not applied exactly once (t1/charge applied 2 times)",
            "有一个副作用不是恰好执行一次",
        ),
    ],
)
def test_a_planted_row_turns_the_file_check_red(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    table: str,
    change: dict[str, object],
    en: str,
    zh: str,
) -> None:
    planted = _planted(tmp_path, table, change)
    assert run_check_command(_args(planted)) == 1
    said = capsys.readouterr().out
    assert "Verdict: broken" in said and en in said, said
    assert (
        "The verdict saved with the run was another (held, checked again broken): the file" in said
    )
    assert run_check_command(_args(planted, "zh")) == 1
    said = capsys.readouterr().out
    assert "结论：没有守住" in said and zh in said, said


def test_an_old_file_without_rows_is_checked_and_says_which_rules_it_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = load_history(STALLED)
    assert run.rows is None and [str(r) for r in run.skipped] == [
        "completion_count",
        "effect_count",
    ]
    assert run_check_command(_args(STALLED)) == 0
    said = capsys.readouterr().out
    assert "so two rules were not applied: each task the store says is done" in said
    assert run_check_command(_args(STALLED, "zh")) == 0
    assert "所以有两条规则没有检查" in capsys.readouterr().out
    assert run_check_command(_args(RECORDED)) == 0
    assert "not applied" not in capsys.readouterr().out


def test_a_row_of_a_newer_version_is_refused_in_one_line(tmp_path: Path) -> None:
    planted = _planted(tmp_path, "ledger", {})
    text = planted.read_text().replace('"v": 1', '"v": 9', 1)
    planted.write_text(text)
    line = next(n for n, raw in enumerate(text.splitlines(), 1) if '"v": 9' in raw)
    with pytest.raises(HistoryError, match=rf"planted\.jsonl:{line}: .*version 9, newer"):
        load_history(planted)


# -- a belief ends when the worker said so ---------------------------------------------------


class _Said:
    """A worker process as the fleet reads it: its lines, nothing else (no process)."""

    def __init__(self) -> None:
        self.generation = 1
        self.lines: list[dict[str, object]] = []
        self.alive = True

    def said_since(self, n: int) -> tuple[int, list[dict[str, object]]]:
        return self.generation, self.lines[n:]

    def believe(self, held: tuple[str, int] | None, at: int | None) -> None:
        lease = None if held is None else {"task": held[0], "lease_token": held[1]}
        line: dict[str, object] = {"t": "belief", "worker": "w1", "lease": lease}
        if at is not None:
            line["at"] = at
        self.lines.append(line)


def test_a_belief_is_stamped_by_the_time_the_worker_printed_less_its_skew(tmp_path: Path) -> None:
    import time

    from core.fleet.history import Believed
    from core.fleet.supervisor import Fleet, FleetSettings

    with Fleet(FleetSettings(db=str(tmp_path / "f.db")), tmp_path / "logs") as fleet:
        w1 = _Said()
        fleet.workers["w1"] = w1  # type: ignore[assignment]
        now = time.time_ns() // 1_000_000
        w1.believe(("t1", 1), now - 5_000)
        w1.believe(None, now - 4_000)  # let go a second later: both between two reads
        fleet.poll()
        fleet.poll()  # kept one read late
        assert list(fleet.beliefs) == [
            Believed(now - 5_000, "w1", ("t1", 1)),
            Believed(now - 4_000, "w1", None),
        ]
        # under libfaketime its clock is five minutes ahead: the skew the fleet gave it
        # comes off, so the belief lands on the true timeline, beside the store's events
        fleet.skews["w1"] = 300_000
        w1.believe(("t2", 1), now - 3_000 + 300_000)
        # a line stamped later than the read that found it (a clock off by more than the
        # fleet knows) is put at that read; one with no time, at the read too
        w1.believe(None, now + 900_000)
        fleet.poll()
        before_read = time.time_ns() // 1_000_000
        fleet.poll()
        assert list(fleet.beliefs)[2] == Believed(now - 3_000, "w1", ("t2", 1))
        last = list(fleet.beliefs)[3]
        assert last.held is None and now - 3_000 <= last.at <= before_read
        del fleet.workers["w1"]  # no process to stop


def test_the_frames_a_run_keeps_are_bounded_and_keep_the_moments_that_matter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    from core.fleet import frame as frames
    from core.fleet.frame import FleetFrame, FrameLog

    saved = load_history(RECORDED).frames[0]
    monkeypatch.setattr(frames, "MAX_SAVED_FRAMES", 6)
    log = FrameLog()
    stall = EventRow(0, 0, EventKind.STALLED, None, "w1", None, None, None, {})
    for n in range(40):  # one a second, each showing a new event; every tenth a fault
        snap = dataclasses.replace(saved.snap, now_ms=n * 1000, last_event_seq=n)
        fresh = (stall,) if n % 10 == 0 else ()
        frame = FleetFrame(snap, saved.pids, saved.ours, {}, {}, (), fresh, ())
        log.take(frame, saved.origin)
        # a frame read a tenth of a second later showing nothing new is not kept
        log.take(dataclasses.replace(frame, fresh=()), saved.origin)
    kept = [line["snap"]["now_ms"] for line in log.saved()]  # type: ignore[index]
    assert len(kept) <= 6 and kept == sorted(kept)
    assert {0, 10_000, 20_000, 30_000} <= set(kept)  # every fault is still there
    assert all(not line["snap"]["checkpoints"] for line in log.saved())  # type: ignore[index]


# -- why a worker stopped, kept with the frames ----------------------------------------------


def _with_said(tmp_path: Path, said: object) -> Path:
    recorded = Path(__file__).parents[1] / "fleet_runs" / "stalled_run.jsonl"
    lines = recorded.read_text().splitlines()
    n = max(k for k, raw in enumerate(lines) if '"t": "frame"' in raw)
    line = json.loads(lines[n])
    line["said"] = said
    lines[n] = json.dumps(line)
    path = tmp_path / "said.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_saved_frame_keeps_the_line_a_worker_stopped_with(tmp_path: Path) -> None:
    from demo.screens.fleet import ended

    words = "borrowed-keys worker w1: stopped: the database file was deleted"
    run = load_history(_with_said(tmp_path, {"w1": words}))
    last = run.frames[-1]
    assert last.said == {"w1": words}
    assert ended(2, last.said["w1"], "en") == f"stopped: {words}"  # as the pane says it
    with pytest.raises(HistoryError, match=r"said\.jsonl:\d+: .*last words"):
        load_history(_with_said(tmp_path, {"w1": 7}))
