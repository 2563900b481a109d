"""The chaos fuzzer: correct mode survives it, every mistake mode is caught and reproduced."""

import json
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import load_scenario
from core.scenarios.player import PlayResult, play
from core.search.fuzz.generate import ChaosParams, Failure, Schedule, generate
from core.search.fuzz.pool import run_chaos
from core.search.fuzz.replay import replay
from core.search.fuzz.shrink import shrink
from core.search.fuzz.write import verify_text
from core.sim.simulation import Simulation
from core.sim.spec import Kill, Stall
from core.tools.cli import main as cli_main

MISTAKES = [
    (Mode.NO_EXPIRY, "stuck_task"),
    (Mode.NO_FENCING, "stale_write_accepted"),
    (Mode.CLIENT_CLOCK, "double_owner"),
    (Mode.NO_IDEMPOTENCY, "duplicate_effect"),
]


# Run counts are what each test needs, with a margin, not a soak: `borrowed-keys chaos --runs
# 5000` is the soak. Under make test every run costs time on every change.


def test_correct_mode_has_no_violation_and_no_liveness_failure() -> None:
    report = run_chaos(120, seed=1000, mode=Mode.CORRECT)
    summary = report.summary()
    assert summary["violations"] == {}
    assert summary["liveness_failures"] == 0
    assert report.ok
    # The runs really were faulty and really finished their work.
    assert summary["faults_injected"] > 600
    assert summary["tasks_done"] > summary["tasks"] // 2
    assert summary["tasks_done"] + summary["tasks_dead"] + summary["tasks_waiting"] == 600
    assert summary["rejections"].get("superseded", 0) > 0


@pytest.mark.parametrize(("mode", "violation"), MISTAKES, ids=[m.value for m, _ in MISTAKES])
def test_mistake_mode_is_found_and_its_reproducer_replays(
    mode: Mode, violation: str, tmp_path: Path
) -> None:
    # 60 runs hold at least two violating runs of each mode (seeds 0-59).
    report = run_chaos(60, seed=0, mode=mode, out_dir=tmp_path)
    summary = report.summary()
    assert summary["violation_runs"].get(violation, 0) >= 1
    assert not report.ok
    reps = [r for r in report.reproducers if r.failure == violation]
    assert len(reps) == 1
    rep = reps[0]
    assert rep.verified
    assert rep.faults_after <= rep.faults_before
    assert rep.path is not None
    scenario = load_scenario(rep.path)
    assert scenario.settings.mode is mode
    # Replayed by the loader + the simulation directly...
    sim = Simulation(scenario.settings)
    for step in scenario.steps:
        if step.action is not None:
            sim.apply(step.action)
    assert sim.snapshot().violations.get(violation, 0) >= 1
    sim.close()
    # ...and by the player, whose expectation on the last step holds.
    result = PlayResult()
    records = list(play(scenario, result=result))
    assert result.failed == 0 and result.passed == 1
    assert records[-1]["violations"].get(violation, 0) >= 1
    assert cli_main(["play", rep.path]) == 0


def test_shrinking_reduces_the_fault_count() -> None:
    params = ChaosParams(mode=Mode.NO_FENCING)
    failure = Failure(violation="stale_write_accepted")
    for seed in range(200):
        schedule, result = generate(params, seed)
        if "stale_write_accepted" in result.violations and schedule.faults >= 4:
            break
    else:  # pragma: no cover
        pytest.fail("no no_fencing run with enough faults to shrink")
    assert replay(schedule, failure).shows
    small, replays = shrink(schedule, failure)
    assert small.faults < schedule.faults
    assert small.end_ms <= schedule.end_ms
    assert replays >= 1
    assert replay(small, failure).shows
    # Removing any one remaining action loses the violation (1-minimal).
    for i in range(small.faults):
        fewer = Schedule(small.settings, small.timed[:i] + small.timed[i + 1 :], small.end_ms)
        assert not replay(fewer, failure).shows


def test_a_schedule_replays_exactly() -> None:
    """The recorded schedule gives the same history as the run that chose it."""
    params = ChaosParams(mode=Mode.CLIENT_CLOCK)
    for seed in range(40):
        schedule, result = generate(params, seed)
        sim = Simulation(schedule.settings)
        for action in schedule.actions():
            # Only the actions that applied were kept, so each applies again.
            outcome = sim.apply(action)
            assert outcome.ok, f"seed {seed}: {action} was refused on replay: {outcome.message}"
        assert sim.violations() == result.violations
        assert sim.metrics().wasted_steps == result.wasted_steps
        statuses = {t.row.task_id: t.row.status for t in sim.snapshot().tasks}
        assert sum(s == "done" for s in statuses.values()) == result.done
        sim.close()


def test_liveness_failure_is_reported_in_long_lease_mode(tmp_path: Path) -> None:
    report = run_chaos(60, seed=0, mode=Mode.LONG_LEASE, out_dir=tmp_path)
    summary = report.summary()
    assert summary["violations"] == {}  # a one-hour lease is slow, not unsafe
    assert summary["liveness_failures"] >= 1
    reps = [r for r in report.reproducers if r.failure.startswith("liveness:")]
    assert reps and reps[0].verified and reps[0].path is not None
    text = Path(reps[0].path).read_text(encoding="utf-8")
    _, task, status = reps[0].failure.split(":")
    assert verify_text(text, Failure(task=task, status=status))
    assert cli_main(["play", reps[0].path]) == 0


def test_jobs_do_not_change_the_summary(tmp_path: Path) -> None:
    one = run_chaos(30, seed=7, mode=Mode.NO_FENCING, jobs=1, out_dir=tmp_path / "a")
    two = run_chaos(30, seed=7, mode=Mode.NO_FENCING, jobs=2, out_dir=tmp_path / "b")
    assert one.reproducers  # the runs found something to reproduce in both
    a, b = one.summary(), two.summary()
    for s in (a, b):
        for rep in s["reproducers"]:
            rep["path"] = Path(rep["path"]).name
    assert a == b
    for rep in one.reproducers:
        assert rep.path is not None
        twin = tmp_path / "b" / Path(rep.path).name
        assert Path(rep.path).read_text() == twin.read_text()


def test_chaos_command_json_and_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli_main(["chaos", "--runs", "20", "--seed", "3", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["ok"] is True and out["runs"] == 20 and out["mode"] == "correct"
    assert out["failing_runs"] == [] and out["violations"] == {}

    code = cli_main(
        ["chaos", "--runs", "40", "--mode", "no_fencing", "--json", "--out", str(tmp_path)]
    )
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 1
    assert out["violation_runs"]["stale_write_accepted"] >= 1
    first = out["failing_runs"][0]
    assert f"seed {first['seed']}" in captured.err
    assert list(tmp_path.glob("chaos-no_fencing-stale_write_accepted-seed*.toml"))


def test_chaos_command_rejects_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["chaos", "--runs", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--runs" in err


def test_refused_actions_are_dropped_from_reproducers() -> None:
    """A fault on a dead worker does nothing; the shrinker never keeps one."""
    params = ChaosParams(mode=Mode.NO_EXPIRY)
    schedule, result = generate(params, 0)
    assert "stuck_task" in result.violations
    w = schedule.settings.workers[0].id
    noisy = Schedule(
        schedule.settings,
        ((0, Kill(worker=w)), (1, Stall(worker=w)), *schedule.timed[1:]),
        schedule.end_ms,
    )
    got = replay(noisy, Failure(violation="stuck_task"))
    assert (1, Stall(worker=w)) not in got.kept


REGRESSIONS = sorted((Path(__file__).parents[1] / "chaos_regressions").glob("*.toml"))


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_chaos_regressions_play_clean(path: Path) -> None:
    """Schedules the fuzzer once flagged in correct mode; each now passes its expectations.

    Both were false stuck_task verdicts: a worker that had just come back (resumed or healed),
    or that lost its lease mid-step, counted as idle before it had looked for work.
    """
    scenario = load_scenario(path)
    assert scenario.settings.mode is Mode.CORRECT
    result = PlayResult()
    records = list(play(scenario, result=result))
    assert result.failed == 0 and result.passed >= 2
    assert records[-1]["violations"] == {}
