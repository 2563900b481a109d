"""The headless Session: playback, stepping back, modes, fork-and-record, saving."""

import json
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.engine.errors import StoreClosed
from core.scenarios.format import load_scenario, parse_scenario
from core.scenarios.player import event_record, play
from core.scenarios.session import Session, figures_expectations, sandbox_settings
from core.sim.simulation import ActionError, Simulation
from core.sim.spec import (
    AddWorker,
    Advance,
    Enqueue,
    FreezeHeartbeat,
    Heal,
    Kill,
    Partition,
    Resume,
    Stall,
)

HERE = Path(__file__).parents[1] / "tui_scenarios"
FOG = HERE / "fog.toml"
MANUAL = HERE / "manual.toml"


def history(session: Session) -> list[tuple[int, int, str, str | None, str | None]]:
    return [(e.seq, e.at, e.event, e.task_id, e.worker_id) for e in session.events(0)]


def player_events(path: Path) -> list[dict[str, object]]:
    return [r for r in play(load_scenario(path)) if r["type"] == "event"]


def test_next_step_plays_and_judges() -> None:
    s = Session(load_scenario(FOG))
    assert s.step_count == 4 and s.position == 0
    out = s.next_step()
    assert out is not None and out.index == 0
    assert [c.ok for c in out.checks] == [True, True]
    while s.next_step() is not None:
        pass
    assert s.position == 4 and s.at_end
    assert s.last_outcome is not None and s.last_outcome.ok


def test_whole_playback_equals_headless_player() -> None:
    s = Session(load_scenario(FOG))
    while s.next_step():
        pass
    mine = [event_record(e) for e in s.events(0)]
    assert mine == player_events(FOG)
    assert s.transcript_jsonl().splitlines() == [
        json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        for r in player_events(FOG)
    ]


def test_previous_step_is_exact() -> None:
    s = Session(load_scenario(FOG))
    s.next_step()
    s.next_step()
    before = history(s)
    s.next_step()
    assert s.previous_step()
    assert s.position == 2
    assert history(s) == before
    s.goto(0)
    assert s.position == 0 and not s.previous_step()


def test_restart_and_set_mode() -> None:
    s = Session(load_scenario(FOG))
    s.next_step()
    s.restart()
    assert s.position == 0 and s.now_ms == 0
    s.set_mode(Mode.NO_FENCING)
    assert s.mode is Mode.NO_FENCING and s.snapshot().mode == "no_fencing"
    assert s.position == 0


def test_act_forks_and_drops_the_script() -> None:
    s = Session(load_scenario(FOG))
    s.next_step()
    assert not s.forked and not s.live
    s.tick(5_000)  # time does not run by itself in an unforked playback
    assert s.now_ms == 1_000
    result = s.act(Kill(worker="linzhou"))
    assert result.ok and s.forked and s.live and s.at_end
    assert s.next_step() is None
    s.tick(2_000)
    s.tick(3_000)
    assert [r.action for r in s.recorded] == [
        Kill(worker="linzhou"),
        Advance(by_ms=5_000),
    ]
    assert s.recorded[0].at_ms == 1_000 and s.now_ms == 6_000


def test_step_back_after_fork_returns_to_the_fork_point() -> None:
    s = Session(load_scenario(FOG))
    s.next_step()
    s.next_step()
    at_two = history(s)
    s.act(Stall(worker="linzhou"))
    s.tick(10_000)
    assert s.previous_step()
    assert not s.forked and s.recorded == [] and s.position == 2
    assert history(s) == at_two
    s.previous_step()
    s.act(Kill(worker="acheng"))  # forks again, from the earlier point
    assert s.forked and s.position == 1


def test_sandbox_records_and_undoes() -> None:
    s = Session()
    assert s.is_sandbox and s.live and s.step_count == 0
    s.tick(1_000)
    s.act(FreezeHeartbeat(worker="acheng"))
    s.tick(500)
    s.act(Enqueue(task="extra"))
    assert [r.action.name for r in s.recorded] == [
        "advance",
        "freeze_heartbeat",
        "advance",
        "enqueue",
    ]
    assert s.previous_step()
    # the last act is undone; the time that passed before it stays
    assert [r.action.name for r in s.recorded] == ["advance", "freeze_heartbeat", "advance"]
    assert s.snapshot().task("extra") is None
    assert s.snapshot().worker("acheng").heartbeat_frozen  # type: ignore[union-attr]


def test_refused_act_is_reported_not_raised() -> None:
    s = Session()
    result = s.act(Kill(worker="nobody"))
    assert not result.ok and "nobody" in result.message


def test_figures_expectations() -> None:
    assert [e.to_toml() for e in figures_expectations({})] == ['{ violation = "any", count = 0 }']
    exps = figures_expectations({"double_owner": 2, "stale_write_accepted": 1, "stuck_task": 0})
    assert [e.to_toml() for e in exps] == [
        '{ violation = "stale_write_accepted", count = 1 }',
        '{ violation = "double_owner", count = 2 }',
    ]


@pytest.mark.parametrize("mode", [Mode.CORRECT, Mode.NO_FENCING])
def test_saved_scenario_replays_the_session_exactly(tmp_path: Path, mode: Mode) -> None:
    s = Session(load_scenario(FOG), mode=mode)
    s.next_step()
    s.next_step()
    s.act(Stall(worker="linzhou"))
    s.tick(40_000)
    s.act(AddWorker(worker="elder"))
    s.tick(25_000)
    s.act(Resume(worker="linzhou"))
    s.tick(60_000)
    path = s.save_as_scenario(tmp_path / "saved.toml")
    again = load_scenario(path)
    assert again.settings == s.settings
    records = list(play(again))
    replayed = [r for r in records if r["type"] == "event"]
    assert replayed == [event_record(e) for e in s.events(0)]
    summary = records[-1]
    assert summary["failed"] == 0 and summary["passed"] >= 1
    assert summary["violations"] == {k: v for k, v in s.snapshot().violations.items() if v}


def test_saved_sandbox_replays(tmp_path: Path) -> None:
    s = Session()
    s.tick(3_000)
    s.act(Partition(worker="acheng"))
    s.tick(90_000)
    s.act(Heal(worker="acheng"))
    s.tick(10_000)
    text = s.scenario_text()
    again = parse_scenario(text, "saved.toml")
    assert again.settings == sandbox_settings()
    replay = Session(again)
    while replay.next_step():
        pass
    assert history(replay) == history(s)
    assert replay.last_outcome is not None and replay.last_outcome.ok


def test_saved_playback_keeps_only_expectations_that_held(tmp_path: Path) -> None:
    # In no_fencing mode the stale page is accepted, so "rejected" fails and is dropped.
    s = Session(load_scenario(MANUAL), mode=Mode.NO_FENCING)
    while s.next_step():
        pass
    again = parse_scenario(s.scenario_text(), "saved.toml")
    records = list(play(again))
    assert records[-1]["failed"] == 0


def test_playback_equals_applying_the_steps_to_a_simulation() -> None:
    s = Session(load_scenario(MANUAL))
    while s.next_step():
        pass
    sim = Simulation(load_scenario(MANUAL).settings)
    for step in load_scenario(MANUAL).steps:
        if step.action is not None:
            sim.apply(step.action)
    assert [e.event for e in sim.events(0)] == [e.event for e in s.events(0)]
    sim.close()
    s.close()


def test_close_ends_every_worker_and_the_database() -> None:
    s = Session(load_scenario(FOG))
    s.next_step()
    processes = [
        p
        for worker in s.sim.workers.values()
        for p in (worker.work_process, worker.heartbeat_process)
        if p is not None
    ]
    assert processes and not any(p.done for p in processes)
    s.close()
    assert all(p.done for p in processes)
    with pytest.raises(StoreClosed, match="closed"):
        s.events(0)


def test_snapshot_may_leave_out_lists_nobody_looks_at() -> None:
    s = Session()
    s.tick(60_000)  # the sandbox's tasks write ledger pages and checkpoints
    full = s.snapshot()
    assert full.ledger and full.checkpoints
    lean = s.snapshot(include=())
    assert lean.ledger == () and lean.checkpoints == () and lean.effects == ()
    assert lean.tasks == full.tasks  # checkpoint steps come from a cheaper read
    assert lean.workers == full.workers and lean.violations == full.violations
    only_ledger = s.snapshot(include={"ledger"})
    assert only_ledger.ledger == full.ledger and only_ledger.checkpoints == ()


def test_time_runs_on_after_the_script_ends() -> None:
    s = Session(load_scenario(FOG))
    assert not s.live
    s.tick(5_000)
    assert s.now_ms == 0, "during playback time moves only with the script"
    while s.next_step() is not None:
        pass
    assert s.live
    before = s.now_ms
    s.tick(5_000)
    assert s.now_ms == before + 5_000
    assert s.recorded and s.recorded[-1].action.name == "advance"


def test_recorded_steps_are_stamped_when_each_act_began_and_narrated_in_both_languages() -> None:
    s = Session(settings=sandbox_settings())
    s.tick(10_000)
    s.tick(2_013)  # coalesced with the first tick
    s.act(Stall(worker="acheng"))
    steps = s.recorded_steps()
    assert steps[0].say == "From 0:00:00 to 0:00:12.013, 12.013 s pass."
    # sentences, with the story's names: never "stall acheng"
    assert steps[1].say == "At 0:00:12.013, Acheng stalls."
    assert steps[1].say_zh == "0:00:12.013，阿澄停顿了。"


def test_acting_after_the_script_records_without_dropping_anything() -> None:
    s = Session(load_scenario(FOG))
    s.next_step()
    s.act(Stall(worker=s.settings.workers[0].id))
    assert s.forked and s.dropped_script
    s = Session(load_scenario(FOG))
    while s.next_step() is not None:
        pass
    s.act(Stall(worker=s.settings.workers[0].id))
    assert s.forked and not s.dropped_script
    assert len(s.recorded) == 1


# -- a fork hands the script's workers over to themselves; p undoes in every sandbox ------


def bundled(name: str) -> Path:
    return Path(__file__).parents[2] / "scenarios" / name


def test_after_a_fork_the_scripts_workers_go_on_by_themselves(tmp_path: Path) -> None:
    s = Session(load_scenario(bundled("01_fog.toml")))
    for _ in range(4):
        s.next_step()  # to step 4: Acheng, driven by hand, holds floor6; the fog is on
    acheng = s.snapshot().worker("acheng")
    assert acheng is not None and not acheng.autopilot
    s.act(Enqueue(task="extra"))  # e: the playback forks
    assert s.handed_over == ("acheng",)
    assert s.acts_count == 1  # the hand-over is the fork's, not the person's act
    for _ in range(40):
        s.tick(5_000)  # 200 s of free play
    snap = s.snapshot()
    assert snap.worker("acheng").autopilot  # type: ignore[union-attr]
    statuses = {t.task_id: t.row.status for t in snap.tasks}
    assert statuses["extra"] != "queued"  # taken up: the world did not stand still
    assert statuses["floor6"] == "running" or statuses["floor6"] == "done"
    # the saved run replays exactly, the hand-over included
    again = load_scenario(s.save_as_scenario(tmp_path / "fork.toml"))
    replayed = [r for r in play(again) if r["type"] == "event"]
    assert replayed == [event_record(e) for e in s.events(0)]


BY_HAND = """
title = "One page by hand"
lease_ttl = "60s"
heartbeat_every = "20s"

[[workers]]
id = "acheng"
autopilot = false

[[tasks]]
id = "t"
steps = 3
step_time = "10s"

[[step]]
do = "claim"
worker = "acheng"

[[step]]
do = "write"
worker = "acheng"
key = "t/1"
value = "page 1: north bank, 120 dan"
"""


def test_a_worker_handed_over_keeps_its_memory_of_the_work() -> None:
    # Acheng wrote page 1 by hand and saved no checkpoint: her memory holds step 1. On her
    # own she goes on with page 2, not again from the checkpoint's nothing.
    s = Session(parse_scenario(BY_HAND, "by_hand.toml"))
    while s.next_step():
        pass
    s.act(Enqueue(task="extra"))  # the fork
    s.tick(60_000)
    keys = [str(e.detail.get("key")) for e in s.events(0) if e.event == "write_accepted"]
    assert keys[:3] == ["t/1", "t/2", "t/3"], keys
    assert s.snapshot().task("t").row.status == "done"  # type: ignore[union-attr]


def test_p_in_a_sandbox_with_nothing_to_undo_changes_nothing() -> None:
    s = Session()
    s.act(Enqueue(task="extra"))
    assert s.previous_step()  # the only act undone
    s.tick(37_000)  # the clock runs on to 0:00:37
    before = history(s)
    assert not s.previous_step()  # nothing to undo: the run is not restarted
    assert s.now_ms == 37_000 and history(s) == before


def test_p_undoes_one_act_after_a_finished_scripts_free_play() -> None:
    s = Session(load_scenario(bundled("14_sandbox.toml")))
    while s.next_step():
        pass
    s.tick(2_000)
    s.act(Kill(worker="acheng"))
    s.tick(3_000)
    s.act(Enqueue(task="extra"))
    assert s.undoes and s.undo_target == Enqueue(task="extra")
    assert s.previous_step()  # undoes the enqueue only, as in the picker's sandbox
    assert s.forked and s.snapshot().task("extra") is None
    assert s.snapshot().worker("acheng").state == "dead"  # type: ignore[union-attr]
    assert s.previous_step()  # undoes the kill: no act left, back where the fork began
    assert not s.forked and s.recorded == []


# -- redo brings back what undo took away; a mode switch can keep the step ------------------


def test_redo_brings_back_the_act_and_the_time_after_it() -> None:
    s = Session()
    s.tick(1_000)
    s.act(FreezeHeartbeat(worker="acheng"))
    s.tick(4_000)
    s.act(Enqueue(task="extra"))
    s.tick(9_000)
    before, recorded = history(s), list(s.recorded)
    assert s.redo_target is None and not s.redo()
    assert s.previous_step()  # the enqueue and the 9 s after it are gone
    assert s.now_ms == 5_000 and s.snapshot().task("extra") is None
    assert s.redo_target == Enqueue(task="extra")
    s.tick(2_000)  # time let pass since the undo does not stand in the way
    assert s.redo()
    assert s.now_ms == 14_000 and history(s) == before and s.recorded == recorded
    assert s.redo_target is None


def test_redo_after_undoing_a_forks_first_act_forks_again() -> None:
    s = Session(load_scenario(bundled("01_fog.toml")))
    for _ in range(4):
        s.next_step()
    fork_at = s.position
    assert s.act(Kill(worker="acheng")).ok
    s.tick(10_000)
    s.act(Enqueue(task="extra"))
    before, acts = history(s), s.acts_count
    assert s.previous_step() and s.previous_step()  # both acts undone: the script is back
    assert not s.forked and s.position == fork_at
    assert s.redo() and s.forked and s.acts_count == 1  # the kill and its 10 s
    assert s.redo() and history(s) == before and s.acts_count == acts
    assert not s.redo()


def test_a_new_act_ends_what_can_be_redone() -> None:
    s = Session()
    s.act(Enqueue(task="extra"))
    assert s.previous_step()
    s.act(Kill(worker="acheng"))
    assert s.redo_target is None and not s.redo()
    assert s.snapshot().task("extra") is None


def test_set_mode_can_keep_the_step() -> None:
    s = Session(load_scenario(bundled("01_fog.toml")))
    while s.position < 6:
        s.next_step() or s.reveal()
    at = s.now_ms
    assert s.set_mode(Mode.NO_FENCING, keep_step=True) == 6
    assert s.mode is Mode.NO_FENCING and s.position == 6 and s.now_ms == at
    assert s.snapshot().mode == "no_fencing"
    assert s.last_outcome is not None and s.last_outcome.index == 5
    assert s.set_mode(Mode.CORRECT) == 0 and s.position == 0


def test_set_mode_stops_before_a_step_the_new_mode_cannot_play(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = Session(load_scenario(bundled("01_fog.toml")))
    while s.position < 6:
        s.next_step() or s.reveal()
    apply = Simulation.apply
    played: list[object] = []

    def refusing(sim: Simulation, action: object) -> object:
        # the fifth step's act does not fit the new mode's run
        if sim.mode is Mode.NO_FENCING:
            played.append(action)
            if len(played) == 5:
                raise ActionError("does not fit")
        return apply(sim, action)  # type: ignore[arg-type]

    assert all(step.action is not None for step in s.steps[:5])
    monkeypatch.setattr(Simulation, "apply", refusing)
    assert s.set_mode(Mode.NO_FENCING, keep_step=True) == 4
    assert s.position == 4 and s.mode is Mode.NO_FENCING
    assert s.last_outcome is not None and s.last_outcome.index == 3


@pytest.mark.parametrize("name", ["13_portfolio_demo.toml", "02_fire_midnight_return.toml"])
def test_step_zero_shows_the_scenario_before_it_starts(name: str) -> None:
    # the autopilots would claim at the run's first instant: at step 0 nobody has yet, and
    # the first step plays that claim, as the same run the player plays
    path = Path(__file__).parents[2] / "scenarios" / name
    s = Session(load_scenario(path))
    snap = s.snapshot()
    assert [(t.row.status, t.row.owner_id) for t in snap.tasks] == [("queued", None)]
    assert "claimed" not in [e.event for e in s.events(0)]
    s.next_step()
    assert any(e.event == "claimed" and e.at == 0 for e in s.events(0))
    while s.position < len(s.steps):
        s.reveal() if s.question is not None else s.next_step()
    assert [event_record(e) for e in s.events(0)] == player_events(path)
    s.previous_step()  # a rebuilt run replays from a run not yet begun, to the same place
    s.restart()
    assert "claimed" not in [e.event for e in s.events(0)]
    s.close()
