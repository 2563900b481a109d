"""The explorer's partial-order reduction (sleep sets, core/search/explore/bfs.py): with two
tasks, calls of two workers on two tasks are not tried in both orders. It must reach every
state at the same depth, and find every rule at the same shortest length, as the full
search; and the choices it takes as independent must commute on the real engine."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.engine.config import Mode
from core.search.explore import bfs as ex
from core.search.explore.bfs import ExploreParams, explore
from core.search.explore.branch import Branches
from core.search.explore.canonical import canonical_pair, read
from core.search.explore.world import (
    Footprint,
    broken_rules,
    choices,
    claimed,
    footprint,
    independent,
)
from core.sim.spec import Action, Claim
from core.tools.cli import main

# Two workers and two tasks, where calls on different tasks can commute, to a depth that
# holds each mode's shortest traces (3 and 4 steps) and stays fast.
WORLD = ExploreParams(workers=2, tasks=2, steps=1, depth=4)


def _found(report: ex.ExploreReport) -> dict[str, int]:
    return {c.rule: c.length for c in report.counterexamples}


@pytest.mark.parametrize(
    "mode",
    [Mode.NO_FENCING, Mode.SEED_SQL, Mode.CLIENT_CLOCK, Mode.NO_IDEMPOTENCY, Mode.NO_EXPIRY],
)
def test_the_reduced_search_finds_every_rule_at_the_full_searchs_length(mode: Mode) -> None:
    full = explore(replace(WORLD, mode=mode, reduction=False))
    reduced = explore(replace(WORLD, mode=mode))
    assert _found(reduced) == _found(full)
    assert _found(full), "the world is big enough for the mode to break a rule"
    # A sleep set prunes transitions, never states: each is reached at its least depth.
    assert [lv.states for lv in reduced.levels] == [lv.states for lv in full.levels]
    assert reduced.transitions <= full.transitions
    if mode is not Mode.NO_EXPIRY:  # there every choice is global (a task can be stuck)
        assert reduced.transitions < full.transitions


def test_one_task_is_not_reduced() -> None:
    """With one task no two calls touch different tasks: the same search either way."""
    params = ExploreParams(mode=Mode.NO_FENCING, depth=4)
    assert explore(params).summary() == explore(replace(params, reduction=False)).summary()


def _step(branches: Branches, action: Action) -> tuple[Footprint, tuple[str, ...]]:
    """Make `action`; its footprint (a claim of any task's as known once made) and the
    rules it broke."""
    sim = branches.sim
    mine = footprint(sim, action)
    before = sim.workers[action.worker].lease if isinstance(action, Claim) else None
    found = len(sim.checker.found)
    sim.apply(action)
    if isinstance(action, Claim) and action.task is None:
        mine = claimed(sim, action, before)
    return mine, tuple(sorted(broken_rules(sim, found)))


DEPTH = 3


@pytest.mark.parametrize("mode", [Mode.CORRECT, Mode.NO_FENCING, Mode.SEED_SQL])
def test_the_choices_taken_as_independent_commute(mode: Mode) -> None:
    """On every state of two workers and two tasks to depth 2, every two choices the
    reduction takes as independent, made in either order, are each offered after the
    other, break the same rules, and reach one state (the same key, workers as they are)."""
    params = ExploreParams(mode=mode, workers=2, tasks=2, steps=1)
    branches = Branches(params)
    level = [branches.root()]
    seen = {canonical_pair(branches.sim, read(branches.sim))[0]}
    pairs = 0
    for _ in range(DEPTH):
        following = []
        for handle in level:
            branches.goto(handle)
            offered = choices(branches.sim, read(branches.sim).rows)
            prints: dict[Action, Footprint] = {}
            alone: dict[Action, tuple[str, ...]] = {}
            for a in offered:
                branches.goto(handle)
                prints[a], alone[a] = _step(branches, a)
                key = canonical_pair(branches.sim, read(branches.sim))[0]
                if key not in seen:
                    seen.add(key)
                    following.append(branches.here((), None))
            for i, a in enumerate(offered):
                for b in offered[i + 1 :]:
                    if not independent(prints[a], prints[b]):
                        continue
                    pairs += 1
                    ends = []
                    for first, second in ((a, b), (b, a)):
                        branches.goto(handle)
                        _step(branches, first)
                        sim = branches.sim
                        assert second in choices(sim, read(sim).rows)
                        _, broke = _step(branches, second)
                        assert broke == alone[second], (first, second)
                        ends.append(canonical_pair(branches.sim, read(branches.sim)))
                    assert ends[0][0] == ends[1][0], (a, b)
                    assert ends[0][1] == ends[1][1], (a, b)
        level = following
    branches.close()
    assert pairs > 0, "the world has independent choices to check"


def test_the_command_without_the_reduction_finds_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--no-reduction` tries calls on two tasks in both orders: the same states and
    shortest traces."""
    used: list[bool] = []
    run = ex.explore

    def spy(params: ExploreParams, **kw: Any) -> ex.ExploreReport:
        used.append(params.reduction)
        return run(params, **kw)

    monkeypatch.setattr("core.tools.explore_cli.explore", spy)
    docs = []
    for flag in ([], ["--no-reduction"]):
        argv = ["explore", "--mode", "no_fencing", "--tasks", "2", "--steps", "1"]
        argv += ["--depth", "3", "--json", "--out", str(tmp_path), *flag]
        assert main(argv) == 1
        docs.append(json.loads(capsys.readouterr().out))
    assert used == [True, False]
    reduced, full = docs
    assert reduced["states_per_level"] == full["states_per_level"]
    lengths = [{c["rule"]: c["length"] for c in d["counterexamples"]} for d in docs]
    assert lengths[0] == lengths[1] == {"page_without_live_lease": 3}


def test_two_jobs_reduce_as_one_does() -> None:
    """The sleep sets travel with the states dealt to the other job: the same result."""
    params = replace(WORLD, mode=Mode.NO_FENCING, depth=4)
    one, two = explore(params, jobs=1), explore(params, jobs=2)
    assert two.summary() == one.summary()
    assert [c.actions for c in two.counterexamples] == [c.actions for c in one.counterexamples]
