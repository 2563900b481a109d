"""The later lessons: each new mode (or setting) beside its correct twin, under the same fault.

The seed's SQL as printed, the heartbeat sent by the work loop, self-fencing, lease sizing,
mistake one's task with no version and mistake four's ignored box; and the bundled mistake
scenarios' parenthesised claims about their twins ("press m: ...") hold in the twin run.
"""

import dataclasses
from pathlib import Path

import pytest

from core.engine.config import LeaseConfig, Mode
from core.engine.policies import SEED_STATEMENTS, policy_for
from core.engine.statements import statements_for
from core.scenarios.format import load_scenario
from core.scenarios.session import Session
from core.search.fuzz.pool import run_chaos
from core.sim.simulation import Simulation
from core.sim.spec import SimSettings, TaskSpec, WorkerSpec
from core.tools.cli import main as cli_main
from tests.simkit import act, advance, make_sim, named

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def played(name: str, mode: Mode | None = None, **changes: object) -> Simulation:
    """A bundled scenario's actions, replayed in `mode` (its own when None)."""
    scenario = load_scenario(SCENARIOS / name)
    settings = scenario.settings
    if mode is not None:
        settings = dataclasses.replace(settings, mode=mode)
    if changes:
        settings = dataclasses.replace(settings, **changes)  # type: ignore[arg-type]
    sim = Simulation(settings)
    for step in scenario.steps:
        if step.action is not None:
            sim.apply(step.action)
    return sim


def holders(sim: Simulation, task: str) -> list[str]:
    return [e.worker_id or "" for e in named(sim, "claimed", task_id=task)]


# -- seed_sql: the essay's three statements as printed -----------------------------------


def stall_past_expiry_then_finish(mode: Mode) -> Simulation:
    """Scenario 15's faults: a stall past the expiry, then a second worker arrives late."""
    sim = make_sim(("acheng",), (TaskSpec("floor6", steps=4, step_time_ms=15_000),), mode=mode)
    advance(sim, 35)
    act(sim, "stall", worker="acheng")
    advance(sim, 55)
    act(sim, "resume", worker="acheng")
    advance(sim, 28)
    act(sim, "add_worker", worker="linzhou")
    advance(sim, 120)
    return sim


def test_seed_sql_renews_after_expiry_and_completes_a_finished_task_twice() -> None:
    sim = stall_past_expiry_then_finish(Mode.SEED_SQL)
    # The heartbeat 15 s after the lease expired was accepted, and renewed the same lease.
    late = [e for e in named(sim, "renewed", worker_id="acheng") if e.at == 95_000]
    assert late and late[0].detail["expires_at"] == 155_000
    assert named(sim, "renew_rejected") == []
    # The finished task was claimed again by the newcomer and completed a second time.
    assert holders(sim, "floor6") == ["acheng", "linzhou"]
    assert [e.worker_id for e in named(sim, "completed")] == ["acheng", "linzhou"]
    assert sim.snapshot().violations == {"reclaimed_after_end": 1, "completed_twice": 1}
    sim.close()


def test_correct_twin_refuses_the_late_heartbeat_and_completes_once() -> None:
    sim = stall_past_expiry_then_finish(Mode.CORRECT)
    (refused,) = named(sim, "renew_rejected")
    assert (refused.at, refused.worker_id, refused.reason) == (95_000, "acheng", "expired")
    # She claims again (lease 2) and finishes; the done row keeps no expiry to be re-claimed.
    assert holders(sim, "floor6") == ["acheng", "acheng"]
    assert len(named(sim, "completed")) == 1
    row = sim.snapshot().task("floor6")
    assert row is not None and row.row.status == "done"
    assert (row.row.lease_expires_at, row.row.renew_deadline) == (None, None)
    assert sim.snapshot().violations == {}
    sim.close()


def test_seed_sql_guards_are_the_printed_ones_and_ours_are_stronger() -> None:
    from core.engine.backends.sqlite import dialect

    seed = statements_for(dialect(), policy_for(Mode.SEED_SQL))
    ours = statements_for(dialect(), policy_for(Mode.CORRECT))
    claim_where = seed.claim_named.sql.split(" WHERE ", 1)[1].split(" RETURNING ")[0]
    assert "status = 'queued' OR agent_tasks.lease_expires_at < :judge_now" in claim_where
    assert "'running'" not in claim_where
    for stmt in (seed.heartbeat, seed.complete):
        where = stmt.sql.split(" WHERE ", 1)[1].split(" RETURNING ")[0]
        assert "owner_id = :worker_id" in where and "lease_token = :lease_token" in where
        assert "status" not in where and "lease_expires_at" not in where
    assert "lease_expires_at" not in seed.complete.sql.split(" WHERE ")[0]
    assert "lease_expires_at=NULL" in ours.complete.sql.replace(" ", "")
    for stmt in (ours.heartbeat, ours.complete):
        where = stmt.sql.split(" WHERE ", 1)[1].split(" RETURNING ")[0]
        assert "status = 'running'" in where and "lease_expires_at >= :now" in where
    assert "AND (status = 'queued' OR lease_expires_at < NOW());" in SEED_STATEMENTS["claim"]


def test_the_cli_prints_the_seeds_sql_beside_ours(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["sql"]) == 0
    out = capsys.readouterr().out
    assert SEED_STATEMENTS["heartbeat"] in out
    assert "status = 'running'" in out  # ours, compiled for SQLite
    assert cli_main(["sql", "--mode", "seed_sql"]) == 0
    out = capsys.readouterr().out
    assert "lease_expires_at >= :now" not in out


def test_sql_says_line_by_line_what_the_store_adds_to_the_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every column the claim sets beyond the seed's has a line saying why, and the
    claim's subquery (the fence counter) does not break its layout."""
    assert cli_main(["sql", "--mode", "seed_sql"]) == 0
    out = capsys.readouterr().out
    claim = out.split("-- claim: what this store runs")[1].split("-- heartbeat:")[0]
    for added in ("fence_token:", "renew_deadline:", "max_attempts:", ":now:", ":ttl:"):
        assert f"--   + {added}" in claim
    assert (
        "\nWHERE task_id = :task_id\n  AND (status = 'queued' OR lease_expires_at < :judge_now)"
        in claim
    )
    heartbeat = out.split("-- heartbeat: what this store runs")[1].split("-- complete:")[0]
    assert "--   + renew_deadline:" in heartbeat and "--   + fence_token" not in heartbeat


def test_the_fuzzer_finds_completed_twice_under_seed_sql(tmp_path: Path) -> None:
    report = run_chaos(20, seed=0, mode=Mode.SEED_SQL, out_dir=tmp_path)
    summary = report.summary()
    assert summary["violation_runs"].get("completed_twice", 0) >= 1
    (rep,) = [r for r in report.reproducers if r.failure == "completed_twice"]
    assert rep.verified and rep.path is not None
    assert cli_main(["play", rep.path]) == 0
    # The correct twin of the same schedules never completes a task twice.
    assert run_chaos(20, seed=0, mode=Mode.CORRECT).summary()["violations"] == {}


# -- heartbeat_in_work: renewal coupled to the business logic ------------------------------


def slow_steps(mode: Mode) -> Simulation:
    sim = make_sim(
        ("acheng", "linzhou"), (TaskSpec("floor6", steps=3, step_time_ms=90_000),), mode=mode
    )
    advance(sim, 900)
    return sim


def test_heartbeat_in_work_loses_a_healthy_lease_and_the_task_thrashes() -> None:
    sim = slow_steps(Mode.HEARTBEAT_IN_WORK)
    assert holders(sim, "floor6") == ["acheng", "linzhou", "acheng", "linzhou", "acheng"]
    refused = named(sim, "renew_rejected", reason="superseded")
    assert len(refused) == 4
    # Each renewal came at the end of a 90 s step, 30 s after the 60 s lease ran out.
    first = refused[0]
    assert (first.at, first.worker_id) == (90_000, "acheng")
    row = sim.snapshot().task("floor6")
    assert row is not None and row.row.status == "dead" and row.checkpoint_step is None
    assert named(sim, "killed") == [] and sim.snapshot().violations == {}
    sim.close()


def test_heartbeat_in_its_own_task_keeps_one_holder_through_slow_steps() -> None:
    sim = slow_steps(Mode.CORRECT)
    assert holders(sim, "floor6") == ["acheng"]
    assert named(sim, "renew_rejected") == []
    (done,) = named(sim, "completed")
    assert (done.at, done.worker_id) == (270_000, "acheng")
    sim.close()


def test_heartbeat_in_work_renews_between_steps_only() -> None:
    sim = make_sim(("acheng",), (TaskSpec("t", steps=4, step_time_ms=10_000),))
    coupled = make_sim(
        ("acheng",), (TaskSpec("t", steps=4, step_time_ms=10_000),), mode=Mode.HEARTBEAT_IN_WORK
    )
    for run in (sim, coupled):
        advance(run, 45)
    # Its own task renews every 20 s; the coupled loop after every 10 s step.
    assert [e.at for e in named(sim, "renewed")] == [20_000, 40_000]
    assert [e.at for e in named(coupled, "renewed")] == [10_000, 20_000, 30_000, 40_000]
    sim.close()
    coupled.close()


# -- self-fencing and the renew deadline ------------------------------------------------------


def partition_at_25s(*, self_fencing: bool) -> Simulation:
    settings = SimSettings(
        config=LeaseConfig(ttl_ms=60_000),
        workers=(
            WorkerSpec("acheng", self_fencing=self_fencing),
            WorkerSpec("linzhou"),
        ),
        tasks=(TaskSpec("floor6", steps=6),),
    )
    sim = Simulation(settings)
    advance(sim, 25)
    act(sim, "partition", worker="acheng")
    advance(sim, 35)
    return sim


def test_a_self_fencing_holder_stops_at_its_renew_deadline_before_its_lease_expires() -> None:
    sim = partition_at_25s(self_fencing=True)
    (fenced,) = named(sim, "self_fenced")
    # Renewed at 20 s: deadline 20 + 40 = 60 s, expiry 20 + 60 = 80 s.
    assert (fenced.at, fenced.detail["renew_deadline"], fenced.detail["expires_at"]) == (
        60_000,
        60_000,
        80_000,
    )
    w = sim.snapshot().worker("acheng")
    assert w is not None and w.task_id is None and w.state == "partitioned"
    row = sim.snapshot().task("floor6")
    assert row is not None and row.row.owner_id == "acheng"  # the store still lends it to her
    advance(sim, 30)  # linzhou takes over at 85 s
    act(sim, "heal", worker="acheng")
    advance(sim, 120)
    # Nothing of hers reached the store after her deadline: no write, accepted or refused.
    late = [
        e
        for e in sim.events()
        if e.worker_id == "acheng" and e.at > 60_000 and e.reason != "partitioned"
        if e.event in ("write_accepted", "write_rejected", "checkpoint_rejected", "renewed")
    ]
    assert late == []
    assert holders(sim, "floor6") == ["acheng", "linzhou"]
    sim.close()


def test_without_self_fencing_the_partitioned_holder_writes_after_losing_the_floor() -> None:
    sim = partition_at_25s(self_fencing=False)
    assert named(sim, "self_fenced") == []
    w = sim.snapshot().worker("acheng")
    assert w is not None and w.task_id == "floor6"  # still believes it holds the floor
    advance(sim, 30)
    act(sim, "heal", worker="acheng")
    advance(sim, 120)
    late = [
        e
        for e in sim.events()
        if e.worker_id == "acheng" and e.at > 85_000 and e.reason != "partitioned"
        if e.event.startswith(("write_", "checkpoint_"))
    ]
    assert late, "its stale page 3 reached the store after linzhou took over"
    sim.close()


def test_the_worker_view_carries_the_renew_deadline() -> None:
    sim = make_sim(("acheng",), (TaskSpec("t", steps=6),), self_fencing=True)
    advance(sim, 25)
    w = sim.snapshot().worker("acheng")
    assert w is not None and (w.renew_deadline, w.self_fencing) == (60_000, True)
    sim.close()


def test_scenario_17_shows_both_holders_under_the_same_partition() -> None:
    sim = played("17_self_fencing.toml")
    assert [e.worker_id for e in named(sim, "self_fenced")] == ["acheng"]
    refused = {(r.worker_id, r.reason) for r in sim.snapshot().rejections}
    assert ("linzhou", "fenced") in refused
    assert not any(w == "acheng" and r != "partitioned" for w, r in refused)
    sim.close()


# -- lease sizing: too short, sized, one hour --------------------------------------------------


def test_a_lease_too_short_for_the_step_and_its_p99_flaps() -> None:
    sim = played("18_lease_too_short.toml")
    assert holders(sim, "floor6") == ["acheng", "linzhou", "acheng"]
    assert len(named(sim, "renew_rejected", reason="superseded")) == 2
    sim.close()


def test_the_same_hiccups_are_absorbed_by_a_lease_sized_from_step_p99_and_margin() -> None:
    sized = load_scenario(SCENARIOS / "08_mistake_long_lease.toml").settings
    sim = played("18_lease_too_short.toml", config=sized.config)
    assert sized.config.ttl_ms == 30_000
    assert holders(sim, "floor6") == ["acheng"]
    assert sim.snapshot().rejections == ()
    sim.close()


def test_sized_lease_recovers_a_crash_in_seconds_and_one_hour_in_an_hour() -> None:
    hour = played("08_mistake_long_lease.toml")
    sized = played("08_mistake_long_lease.toml", Mode.CORRECT)
    for sim in (hour, sized):
        assert holders(sim, "floor6") == ["acheng", "linzhou"]  # the hiccup lost nothing
    (late,) = named(hour, "claimed", worker_id="linzhou")
    (soon,) = named(sized, "claimed", worker_id="linzhou")
    assert (late.at, soon.at) == (3_645_000, 75_000)  # as the narration says
    assert hour.snapshot().metrics.recovery_time_ms >= 3_600_000
    assert sized.snapshot().metrics.recovery_time_ms <= 40_000
    hour.close()
    sized.close()


# -- mistakes one and four, on screen ---------------------------------------------------------


def test_no_expiry_task_has_no_version_in_the_snapshot() -> None:
    sim = played("07_mistake_no_expiry.toml")
    snap = sim.snapshot()
    row = snap.task("floor6")
    assert row is not None
    assert (row.row.status, row.row.owner_id) == ("running", "acheng")
    assert (row.row.lease_token, row.row.fence_token, row.row.lease_expires_at) == (0, 0, None)
    assert row.remaining_ms is None
    sim.close()
    sim = make_sim(("acheng",), (TaskSpec("t"),), mode=Mode.NO_EXPIRY)
    advance(sim, 5)
    w = sim.snapshot().worker("acheng")
    assert w is not None and w.task_id == "t"
    assert (w.lease_token, w.store_remaining_ms, w.renew_deadline) == (0, None, None)
    sim.close()


def test_no_checkpoint_never_saves_a_box_and_the_successor_starts_blank() -> None:
    """Mistake four as the seed writes it: nothing is saved, the successor starts at 1."""
    sim = played("10_mistake_no_checkpoint.toml")
    assert named(sim, "checkpoint_saved") == []
    assert named(sim, "checkpoint_ignored") == []
    assert sim.snapshot().checkpoints == ()
    keys = [e.detail["key"] for e in named(sim, "write_accepted", worker_id="linzhou")]
    assert keys[0] == "floor6/1"
    sim.close()
    unread = played("10_mistake_no_checkpoint.toml", Mode.UNREAD_CHECKPOINT)
    (ignored,) = named(unread, "checkpoint_ignored")
    assert (ignored.worker_id, ignored.detail["step"]) == ("linzhou", 3)
    assert len(named(unread, "checkpoint_saved", worker_id="acheng")) == 3
    unread.close()
    twin = played("10_mistake_no_checkpoint.toml", Mode.CORRECT)
    assert named(twin, "checkpoint_ignored") == []
    keys = [e.detail["key"] for e in named(twin, "write_accepted", worker_id="linzhou")]
    assert keys[0] == "floor6/4"  # (press m: he reads the box and starts at step 4)
    twin.close()


# -- m leads where the narration says -----------------------------------------------------------


def test_m_toggles_a_mistake_scenario_with_its_correct_twin() -> None:
    session = Session(load_scenario(SCENARIOS / "11_mistake_client_clock.toml"))
    assert session.next_mode() is Mode.CORRECT
    session.set_mode(session.next_mode())
    assert session.mode is Mode.CORRECT
    assert session.next_mode() is Mode.CLIENT_CLOCK
    sandbox = Session()
    assert sandbox.next_mode() is list(Mode)[1]
    session.close()
    sandbox.close()


def test_the_twins_the_narration_promises() -> None:
    # 07: (press m) her lease expires at 0:01:20 and Linzhou takes over at 0:01:25.
    sim = played("07_mistake_no_expiry.toml", Mode.CORRECT)
    assert [e.at for e in named(sim, "claimed", worker_id="linzhou")] == [85_000]
    sim.close()
    # 09: with the fence, his stale page is refused.
    sim = played("09_mistake_no_fencing.toml", Mode.CORRECT)
    assert named(sim, "write_accepted", worker_id="linzhou", fence_token=1, at=125_000) == []
    assert sim.snapshot().violations == {}
    sim.close()
    # 11: the keeper's clock judges; Acheng keeps the floor throughout.
    sim = played("11_mistake_client_clock.toml", Mode.CORRECT)
    assert holders(sim, "floor6") == ["acheng"] and sim.snapshot().violations == {}
    sim.close()
    # 12: the same key returns the first call's result.
    sim = played("12_mistake_no_idempotency.toml", Mode.CORRECT)
    assert [e.applied_count for e in sim.snapshot().effects] == [1]
    sim.close()
    # 16: the heartbeat in its own task; Acheng finishes alone at 0:04:30.
    sim = played("16_heartbeat_in_work.toml", Mode.CORRECT)
    assert holders(sim, "floor6") == ["acheng"]
    assert [e.at for e in named(sim, "completed")] == [270_000]
    sim.close()
    # 15: every statement guarded: no second completion.
    sim = played("15_seed_sql.toml", Mode.CORRECT)
    assert len(named(sim, "completed")) == 1 and sim.snapshot().violations == {}
    sim.close()


# -- on screen: the renew deadline, and a task with no version -----------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[tasks]]\nid = "t1"\n[[step]]\ndo = "advance"\nby = "1s"\n'
            'expect = [{ task = "t1", expires_at = "soon" }]\n',
            "t.toml:7: expires_at: bad duration 'soon'",
        ),
        ('[[workers]]\nid = "w"\nself_fencing = "yes"\n', "t.toml:4: self_fencing must be"),
        ('mode = "seed_SQL"\n', 't.toml:2: unknown mode "seed_SQL" (did you mean "seed_sql"?)'),
    ],
)
def test_bad_new_keys_get_one_line_and_exit_2(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.toml"
    path.write_text('title = "t"\n' + text, encoding="utf-8")
    assert cli_main(["play", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(str(tmp_path)) and message in err and "\n" not in err


def test_expires_at_and_renew_deadline_are_checked_against_the_task_row(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'title = "t"\n[[workers]]\nid = "w"\n[[tasks]]\nid = "t1"\n'
        '[[step]]\ndo = "advance"\nby = "25s"\n'
        'expect = [{ task = "t1", expires_at = "80s", renew_deadline = "1m" }]\n'
        '[[step]]\ndo = "advance"\nby = "1m"\n'
        'expect = [{ task = "t1", status = "done", expires_at = "", renew_deadline = "" }]\n',
        encoding="utf-8",
    )
    assert cli_main(["play", str(path)]) == 0
