"""The end of a run: what broke, the history that proves it, and its bill beside the correct
run's, the same faults played again (never a figure written down)."""

import io
import json
from contextlib import redirect_stdout
from functools import cache
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.engine.vocabulary import EventKind
from core.scenarios.library import open_scenario
from core.scenarios.report import Bill, bill_of, figures_text, report_lines
from core.scenarios.session import Session, sandbox_settings
from core.scenarios.twin import header_harm, scenario_twin, session_report, session_twin
from core.sim.books import broken_pages
from core.sim.rules import MODE_HARM, Harm
from core.sim.spec import Action, Advance, Kill
from core.tools.cli import main

SCENARIOS = sorted(p.stem for p in Path("scenarios").glob("[0-9]*.toml"))


def played(name: str, mode: Mode) -> Session:
    """The whole script of `name` under `mode` (every mode the `m` list offers), questions
    revealed, as the app plays it."""
    session = Session(open_scenario(name), mode=mode)
    while not session.at_end:
        if session.next_step() is None:
            session.reveal()
    return session


@cache
def correct_bill(name: str) -> Bill:
    """The correct run of `name`, played here on its own: what the twin must come to."""
    session = played(name, Mode.CORRECT)
    try:
        return bill_of(session.snapshot())
    finally:
        session.close()


def figure(harm: Harm, bill: Bill) -> int:
    return bill.steps_redone if harm is Harm.STEPS_DONE_AGAIN else bill.out_of_reach_ms


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_harm_is_named_with_its_proof_and_its_bill_is_the_runs(name: str) -> None:
    for mode in Mode:
        session = played(name, mode)
        snap, events = session.snapshot(), session.events(0)
        report = session_report(session)
        named = [f.anomaly for f in report.findings]
        where = f"{name} under {mode.value}"
        # every rule the checker found broken is named, once, and nothing else is
        broken = {kind for kind, count in snap.violations.items() if count}
        assert {n for n in named if n not in set(Harm)} == broken, where
        assert len(named) == len(set(named)), where
        for finding in report.findings:
            proof = finding.proof
            assert 3 <= len(proof) <= 5, (where, finding)
            assert [ev.seq for ev in proof] == sorted({ev.seq for ev in proof}), where
            assert all(ev in events for ev in proof), where
            if finding.anomaly in broken:  # the checker's own verdict closes the proof
                assert proof[-1].event == EventKind.VIOLATION, where
                assert proof[-1].reason == finding.anomaly, where
        # the bill is this run's: the books' seams, the effects, the checker's two figures
        bill = report.bill
        assert bill.pages_corrupted == len(broken_pages(snap.ledger, snap.stale_pages)), where
        assert bill.effects_doubled == sum(
            e.applied_count - 1 for e in snap.effects if e.applied_count > 1
        ), where
        assert bill.steps_redone == snap.metrics.wasted_steps, where
        assert bill.out_of_reach_ms == snap.metrics.out_of_reach_ms, where
        said = [line for line, _kind in report_lines(report, "en")]
        assert any(figures_text(bill, "en") in line for line in said), where
        if mode is Mode.CORRECT:
            assert report.twin is None, where
            session.close()
            continue
        # beside it, the correct run of the same faults, played
        assert report.twin is not None, where
        assert report.twin.bill == correct_bill(name), where
        assert any(figures_text(report.twin.bill, "en") in line for line in said), where
        harm = MODE_HARM.get(mode)
        if harm is not None:
            worse = figure(harm, bill) > figure(harm, report.twin.bill)
            assert (harm.value in named) == worse, where
            # the header never says only "safe" where the mode's harm happened
            shown = header_harm(session, snap)
            if worse:
                assert shown == (harm, figure(harm, bill), figure(harm, report.twin.bill)), where
            else:
                assert shown is None, where
        session.close()


def acts_of(kill_at: int) -> list[Action]:
    return [Advance(kill_at), Kill("acheng"), Advance(200_000)]


def sandbox_run(mode: Mode, acts: list[Action]) -> Session:
    session = Session(settings=sandbox_settings(mode))
    for act in acts:
        assert session.act(act).ok
    return session


@pytest.mark.parametrize("kill_at", [15_000, 25_000])
def test_the_correct_figures_are_the_same_acts_played_again_in_the_correct_mode(
    kill_at: int,
) -> None:
    # a run nobody scripted: the twin can only know its figures by playing it
    session = sandbox_run(Mode.NO_CHECKPOINT, acts_of(kill_at))
    twin = session_twin(session)
    alone = sandbox_run(Mode.CORRECT, acts_of(kill_at))
    assert twin is not None
    assert twin.bill == bill_of(alone.snapshot())
    assert twin.bill.out_of_reach_ms == alone.snapshot().metrics.out_of_reach_ms
    # the mistake redid what the checkpoint would have kept
    assert bill_of(session.snapshot()).steps_redone > twin.bill.steps_redone
    session.close()
    alone.close()


def test_two_runs_have_two_correct_twins() -> None:
    killed = session_twin(sandbox_run(Mode.NO_CHECKPOINT, acts_of(25_000)))
    spared = session_twin(sandbox_run(Mode.NO_CHECKPOINT, [Advance(225_000)]))
    assert killed is not None and spared is not None
    assert (killed.bill.out_of_reach_ms, spared.bill.out_of_reach_ms) == (61_000, 0)


def test_play_json_carries_the_report_beside_the_correct_run() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["play", "10_mistake_no_checkpoint", "--json"]) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    summary = records[-1]
    assert summary["type"] == "summary"
    report = summary["report"]
    assert [a["name"] for a in report["anomalies"]] == ["steps_done_again"]
    proof = report["anomalies"][0]["proof"]
    events = [r for r in records if r["type"] == "event"]
    assert all({"type": "event", **line} in events for line in proof)
    assert report["bill"]["steps_redone"] == 3
    twin = scenario_twin(open_scenario("10_mistake_no_checkpoint"), "en")
    assert report["correct"] == {**twin.bill.as_record(), "skipped_steps": [], "refused_acts": 0}
    assert (
        report["correct"]["steps_redone"] == correct_bill("10_mistake_no_checkpoint").steps_redone
    )
    assert "What broke: steps done again (3, against 0 in the correct run)" in report["said"]
    # the rest of the summary as it was
    assert set(summary) == {"type", "t", "passed", "failed", "violations", "harm", "report"}


def test_play_says_the_report_in_chinese() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["play", "09_mistake_no_fencing", "--lang", "zh"]) == 0
    text = out.getvalue()
    assert "坏在哪里：过期写入被接受" in text
    assert "1 页被写坏（差 44）" in text
    assert "同样的故障，正确做法下：0 页被写坏" in text


def test_a_twin_carried_forward_frame_by_frame_is_the_twin_played_afresh() -> None:
    # the app asks on every frame while time runs: the twin plays only the newest stretch
    session = sandbox_run(Mode.NO_CHECKPOINT, [Advance(25_000), Kill("acheng")])
    carried = None
    for _ in range(40):
        session.tick(5_000)
        carried = session_twin(session)
    assert carried is not None
    afresh = sandbox_run(Mode.CORRECT, [Advance(25_000), Kill("acheng"), Advance(200_000)])
    assert carried.bill == bill_of(afresh.snapshot())
    # an undo takes the twin back with it
    session.previous_step()
    undone = session_twin(session)
    alone = sandbox_run(Mode.CORRECT, [Advance(25_000)])
    assert undone is not None and undone.bill == bill_of(alone.snapshot())
    session.close()
    afresh.close()
    alone.close()
