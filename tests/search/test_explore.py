"""The explorer: breadth-first search of every state of a small world on the real engine.

Bounds are small (depth 3 to 5, a few hundred states each) so the file stays fast; the
figures for larger worlds are measured by `make bench` (bench/explore.py).
"""

from collections import Counter
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from core.engine.config import Mode
from core.scenarios.format import parse_scenario
from core.search.explore import bfs as ex
from core.search.explore import branch, world
from core.search.explore.bfs import ExploreParams, Restore, explore
from core.search.explore.canonical import canonical, canonical_pair, read
from core.search.explore.pool import plan
from core.search.explore.story import scenario_text, verify, write_counterexamples
from core.sim.simulation import ActionError, Simulation, run_inline
from core.sim.spec import (
    Action,
    Advance,
    Claim,
    Complete,
    Effect,
    Fail,
    Heartbeat,
    Kill,
    SimSettings,
    Stall,
    WorkerSpec,
    Write,
)
from core.tools.cli import main

# The shortest trace to each rule each mistake mode breaks, in 2 workers, 1 task of 2 steps.
# A change that makes the search miss a shorter trace (or find a longer one first) fails.
SHORTEST: dict[Mode, dict[str, int]] = {
    Mode.NO_FENCING: {"page_without_live_lease": 3, "stale_write_accepted": 4},
    Mode.SEED_SQL: {"reclaimed_after_end": 4, "completed_twice": 5},
    # claim; the effect twice, before any page
    Mode.NO_IDEMPOTENCY: {"duplicate_effect": 3},
    # claim; a skew past the lease; claim
    Mode.CLIENT_CLOCK: {"double_owner": 3},
    Mode.NO_EXPIRY: {"stuck_task": 3},
    # Before the fence tag a claim issues no fence token by design (no rule is broken by
    # it), and the ledger takes any page; a stale page is told by its lease token (the
    # checker remembers the newest issued).
    Mode.BEFORE_FENCE: {"page_without_live_lease": 3, "stale_write_accepted": 4},
}


def _found(report: ex.ExploreReport) -> dict[str, int]:
    return {c.rule: c.length for c in report.counterexamples if c.rule != ex.ENGINE_ERROR}


def test_correct_breaks_no_rule_within_the_bound() -> None:
    report = explore(ExploreParams(mode=Mode.CORRECT, depth=5))
    assert report.ok and report.counterexamples == []
    assert report.depth == 5 and not report.exhausted
    assert report.states == report.levels[-1].states > 100
    assert report.claim().endswith("no violation; bounded at depth 5, not exhausted")


@pytest.mark.parametrize("mode", list(SHORTEST))
def test_every_mistake_is_found_by_its_shortest_trace(mode: Mode) -> None:
    depth = max(SHORTEST[mode].values())
    report = explore(ExploreParams(mode=mode, depth=depth))
    assert _found(report) == SHORTEST[mode]
    assert not report.ok


@pytest.mark.parametrize("workers", [1, 2])
def test_a_small_world_is_exhausted(workers: int) -> None:
    """One task of one step: the search runs out of new states before the bound, and the
    claim is then every interleaving."""
    report = explore(ExploreParams(workers=workers, steps=1, depth=60))
    assert report.exhausted and report.ok
    assert report.depth < 60
    assert "every interleaving (exhausted)" in report.claim()


def test_the_written_counterexample_plays_and_its_expectations_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = ExploreParams(mode=Mode.NO_FENCING, depth=4)
    report = explore(params)
    written = write_counterexamples(params, report.counterexamples, tmp_path)
    assert [c.verified for c in written] == [True, True]
    stale = next(c for c in written if c.rule == "stale_write_accepted")
    assert stale.path is not None
    assert main(["play", stale.path]) == 0
    assert "stale write accepted × 1" in capsys.readouterr().out
    scenario = parse_scenario(Path(stale.path).read_bytes(), stale.path)
    assert len(scenario.steps) == stale.length == 4
    assert all(s.say and s.say_zh for s in scenario.steps)
    last = scenario.steps[-1]
    assert {e.subject for e in last.expects} >= {"violation", "ledger", "task"}
    # The expectations prove the violation: the same steps on the fenced ledger fail them.
    text = Path(stale.path).read_text(encoding="utf-8")
    assert not verify(text.replace('mode = "no_fencing"', 'mode = "correct"'))


def test_the_same_run_gives_the_same_states_and_the_same_files(tmp_path: Path) -> None:
    params = ExploreParams(mode=Mode.SEED_SQL, depth=4)
    first, second = explore(params), explore(params)
    assert first.summary() == second.summary()
    a = write_counterexamples(params, first.counterexamples, tmp_path / "a")
    b = write_counterexamples(params, second.counterexamples, tmp_path / "b")
    assert [c.rule for c in a] == [c.rule for c in b] == ["reclaimed_after_end"]
    for x, y in zip(a, b, strict=True):
        assert x.path and y.path
        assert Path(x.path).read_bytes() == Path(y.path).read_bytes()


def test_two_jobs_give_what_one_gives(tmp_path: Path) -> None:
    params = ExploreParams(mode=Mode.NO_FENCING, depth=4)
    one, two = explore(params, jobs=1), explore(params, jobs=2)
    assert two.summary() == one.summary()
    assert [c.actions for c in two.counterexamples] == [c.actions for c in one.counterexamples]
    a = write_counterexamples(params, one.counterexamples, tmp_path / "one")
    b = write_counterexamples(params, two.counterexamples, tmp_path / "two")
    for x, y in zip(a, b, strict=True):
        assert x.path and y.path
        assert Path(x.path).read_bytes() == Path(y.path).read_bytes()


def test_the_jobs_take_turns_with_the_next_level() -> None:
    """Each new state goes to the next job in turn, whichever job found it, in the next
    level's order."""
    new = [(0, 0), (0, 3), (1, 1), (2, 0), (0, 5)]
    keeps = plan(new, 2)
    assert [k.next_position for k in keeps] == [0, 1, 2, 3, 4]
    assert [(k.position, k.choice) for k in keeps] == new
    assert [k.job for k in keeps] == [0, 1, 0, 1, 0]
    assert sorted(Counter(k.job for k in plan(new, 3)).values()) == [1, 2, 2]


def test_restoring_a_copy_is_exactly_replaying_from_the_root() -> None:
    snap = explore(ExploreParams(mode=Mode.CLIENT_CLOCK, depth=3))
    replay = explore(ExploreParams(mode=Mode.CLIENT_CLOCK, depth=3, restore=Restore.REPLAY))
    assert snap.summary() == replay.summary()


def test_a_copy_knows_its_state_as_a_fresh_reading_does() -> None:
    """A copy carries the reading, key and form found when its state was reached, and
    expanding it uses them instead of reading again: after the restore, reading and
    reducing the state give exactly those, for every new state three levels down."""
    branches = branch.Branches(ExploreParams(mode=Mode.NO_EXPIRY, workers=3))
    seen: set[bytes] = set()
    level = [branches.root()]
    checked = 0
    for _ in range(3):
        kept = [c.handle for h in level for c in branch.expand(branches, h, seen) if c.handle]
        for handle in kept:
            assert isinstance(handle, branch._Copy) and handle.known is not None
            branches.goto(handle)
            reading = read(branches.sim)
            assert (reading, *canonical_pair(branches.sim, reading)) == handle.known
            checked += 1
        level = kept
    assert checked > 20
    branches.close()


def test_a_restored_run_goes_on_as_the_original_did() -> None:
    settings = ExploreParams().settings()
    sim = Simulation(settings)
    sim.apply(Claim("acheng"))
    saved = sim.save()
    steps: list[Action] = [Advance(30_001), Claim("linzhou"), Write("acheng", "t1/1", "late")]
    for a in steps:
        sim.apply(a)
    expected = [(e.event, e.at, e.worker_id, e.reason) for e in sim.events()]
    sim.restore(saved)
    sim.apply(Write("acheng", "t1/9", "a branch not taken"))
    sim.restore(saved)
    for a in steps:
        sim.apply(a)
    assert [(e.event, e.at, e.worker_id, e.reason) for e in sim.events()] == expected
    sim.close()


def test_a_restored_run_remembers_the_newest_lease_before_the_fence_tag() -> None:
    """Without fence tokens the checker tells a stale page by its lease token: a restored
    run must remember the newest one issued, or the stale page goes unnoticed."""
    sim = Simulation(ExploreParams(mode=Mode.BEFORE_FENCE).settings())
    for a in (Claim("acheng"), Advance(30_001), Claim("linzhou")):
        sim.apply(a)
    sim.restore(sim.save())
    sim.apply(Write("acheng", "t1/1", "late"))
    assert sim.violations() == {"stale_write_accepted": 1}
    sim.close()


def test_a_run_with_autopilot_workers_cannot_be_saved() -> None:
    sim = Simulation(SimSettings(workers=(WorkerSpec("w1"),)))
    with pytest.raises(ActionError, match="autopilot"):
        sim.save()
    sim.close()


def test_the_command_exits_0_when_no_rule_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", "--depth", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no violation" in out
    assert list(tmp_path.iterdir()) == []


def test_the_command_exits_1_and_writes_the_counterexample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["explore", "--mode", "no_idempotency", "--depth", "4", "--out", str(tmp_path)])
    assert code == 1
    assert "side effect done twice: 3 steps" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["explore-no_idempotency-duplicate_effect.toml"]


def test_the_command_without_the_memory_says_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--no-memo` sends every call to the store, and prints the same summary."""
    used: list[bool] = []
    run = ex.explore

    def spy(params: ExploreParams, **kw: Any) -> ex.ExploreReport:
        used.append(params.memo)
        return run(params, **kw)

    monkeypatch.setattr("core.tools.explore_cli.explore", spy)
    summaries = []
    for flag in ([], ["--no-memo"]):
        argv = ["explore", "--mode", "seed_sql", "--depth", "4", "--json", *flag]
        assert main([*argv, "--out", str(tmp_path)]) == 1
        summaries.append(capsys.readouterr().out)
    assert used == [True, False]
    assert summaries[0] == summaries[1]


@pytest.mark.parametrize(
    "argv",
    [["--depth", "0"], ["--workers", "9"], ["--jobs", "0"], ["--steps", "0"]],
)
def test_bad_arguments_exit_2_with_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "must be between" in err
    assert not (tmp_path / "out").exists()


def test_the_narration_says_what_the_engine_did() -> None:
    params = ExploreParams(mode=Mode.CLIENT_CLOCK, depth=4)
    report = explore(params)
    double = next(c for c in report.counterexamples if c.rule == "double_owner")
    text = scenario_text(params, double)
    # claim; a skew past the lease; claim: no waiting needed
    assert double.length == 3
    assert "Acheng's own clock runs 45s ahead" in text
    assert "阿澄自己的时钟比库房快了 45s" in text
    assert (
        "Broken: two live leases at once: Acheng's lease 1 is still live, until "
        "0:00:30.000, and lease 2 exists now." in text
    )
    assert "违反规则：同时有两份未过期的租约：阿澄的租约号 1 仍然有效" in text


@pytest.mark.parametrize("mode", [Mode.NO_FENCING, Mode.CLIENT_CLOCK])
def test_faults_left_out_where_a_lease_ends_hide_no_broken_rule(
    mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stall, kill and restart are offered only where a lease never ends; offering them
    in a mode where leases end finds the same rules broken by traces of the same length."""
    params = ExploreParams(mode=mode, depth=4)
    without = explore(params)
    monkeypatch.setattr(world, "offers_faults", lambda sim: True)
    with_faults = explore(params)
    assert with_faults.transitions > without.transitions  # the faults were tried
    assert _found(with_faults) == _found(without) == SHORTEST[mode]


def test_the_refused_call_shortcut_changes_no_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused call is taken as its parent's state without computing the canonical form;
    computing it every time gives the same states, transitions and traces."""
    params = ExploreParams(mode=Mode.NO_FENCING, depth=5)
    fast = explore(params)
    monkeypatch.setattr(branch, "_CALLS", ())
    full = explore(params)
    assert fast.summary() == full.summary()


def test_a_checker_copy_remembers_everything_the_checker_does() -> None:
    """A restored run goes on from a copy of the checker: a field the copy forgot (as the
    newest lease token once was) would change later verdicts without a sound."""
    sim = Simulation(ExploreParams(mode=Mode.BEFORE_FENCE, workers=3).settings())
    steps: list[Action] = [
        Claim("acheng"),
        Effect("acheng", "t1/1/notify"),
        Advance(30_001),
        Claim("linzhou"),
        Write("acheng", "t1/1", "late"),
        Stall("linzhou"),
        Kill("elder"),
        Complete("linzhou"),
    ]
    for a in steps:
        sim.apply(a)
    copy = sim.checker.copy()
    assert copy == sim.checker
    assert all(getattr(copy, f.name) == getattr(sim.checker, f.name) for f in fields(copy))
    sim.close()


def _state_after(params: ExploreParams, steps: list[Action]) -> tuple[Simulation, bytes]:
    sim = Simulation(params.settings())
    for a in steps:
        sim.apply(a)
    return sim, canonical(sim, read(sim))


def _claimed_by_any(sim: Simulation) -> str | None:
    """The task the claim of any task gives acheng from this state."""
    sim.apply(Claim("acheng"))
    lease = sim.workers["acheng"].lease
    return None if lease is None else lease.task_id


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # the queue: each task claimed once and failed back, in one order and the other
        (
            [Claim("acheng", "t1"), Fail("acheng"), Claim("linzhou", "t2"), Fail("linzhou")],
            [Claim("acheng", "t1"), Claim("linzhou", "t2"), Fail("linzhou"), Fail("acheng")],
        ),
        # two expired leases, both further back than any rule looks: which ran out first
        (
            [Claim("acheng", "t1"), Claim("linzhou", "t2"), Advance(1), Heartbeat("linzhou")],
            [Claim("acheng", "t1"), Claim("linzhou", "t2"), Advance(1), Heartbeat("acheng")],
        ),
    ],
    ids=["pending", "expired"],
)
def test_two_states_that_differ_only_in_the_queues_order_are_two(
    first: list[Action], second: list[Action]
) -> None:
    """The claim of any task takes the queued tasks by their place in the queue and the
    expired ones by their expiry: two states alike in everything else but those orders
    are two states, since that claim picks a different task in each."""
    params = ExploreParams(tasks=2, steps=1)
    far: list[Action] = [
        Advance(5 * params.ttl_ms)
    ]  # past the far mark, where expiries are all one
    a, key_a = _state_after(params, first + far)
    b, key_b = _state_after(params, second + far)
    assert key_a != key_b
    assert (_claimed_by_any(a), _claimed_by_any(b)) == ("t1", "t2")
    a.close()
    b.close()


def test_the_store_reads_the_queue_first_in_first_out() -> None:
    """`LeaseStore.queue()` is the order the claim of any task takes: a task failed back
    goes behind every task queued then, whatever its id."""
    sim = Simulation(ExploreParams(tasks=3, steps=1).settings())
    assert run_inline(sim.store.queue()) == ["t1", "t2", "t3"]
    for a in (Claim("acheng", "t1"), Fail("acheng"), Claim("linzhou", "t3")):
        sim.apply(a)
    assert run_inline(sim.store.queue()) == ["t2", "t1"]
    sim.close()


# Every mode in three worlds, small enough for the whole set to stay fast.
MEMO_WORLDS = (
    ExploreParams(workers=2, tasks=1, steps=2, depth=5),
    ExploreParams(workers=3, tasks=1, steps=1, depth=5),
    ExploreParams(workers=2, tasks=2, steps=1, depth=3),
)


@pytest.mark.parametrize("mode", list(Mode))
def test_answering_a_refused_call_from_memory_changes_no_result(mode: Mode, tmp_path: Path) -> None:
    """A call refused with nothing changed is not sent to the store again from a state
    alike in all it reads; sending every call gives the same states, transitions, depth,
    shortest traces and written files."""
    for base in MEMO_WORLDS:
        reports, files = {}, {}
        for memo in (True, False):
            params = replace(base, mode=mode, memo=memo)
            reports[memo] = explore(params)
            out = tmp_path / f"{base.workers}x{base.tasks}-{memo}"
            written = write_counterexamples(params, reports[memo].counterexamples, out)
            files[memo] = [Path(c.path).read_bytes() for c in written if c.path]
        assert reports[True].summary() == reports[False].summary()
        assert files[True] == files[False]


def test_a_refused_call_is_answered_from_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory is used: exhausting 2 workers, 1 task of 1 step sends about a quarter
    fewer calls to the store with it, for the same result."""
    calls: Counter[bool] = Counter()
    apply = Simulation.apply
    counting: list[bool] = []

    def counted(sim: Simulation, action: Action) -> object:
        calls[counting[0]] += 1
        return apply(sim, action)

    monkeypatch.setattr(Simulation, "apply", counted)
    reports = {}
    for memo in (True, False):
        counting[:] = [memo]
        reports[memo] = explore(ExploreParams(steps=1, depth=60, memo=memo))
    assert reports[True].summary() == reports[False].summary()
    assert reports[True].exhausted
    assert calls[False] == reports[False].transitions
    assert calls[True] < 0.8 * calls[False]
