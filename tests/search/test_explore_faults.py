"""The faults the explorer leaves out of its choices hide no broken rule.

`choices` offers no partition, no frozen heartbeat and (outside client_clock) no skewed
clock, and a stall, a kill and a restart only where a lease never ends: each is argued to
add no history that a silent worker has not already. Offering all of them anyway, in every
mistake mode, finds the same rules broken by traces of the same length.
"""

from collections.abc import Sequence

import pytest

from core.engine.config import Mode
from core.engine.records import TaskRow
from core.search.explore import branch, world
from core.search.explore.bfs import ENGINE_ERROR, ExploreParams, ExploreReport, explore
from core.sim.simulation import Simulation
from core.sim.spec import Action, FreezeHeartbeat, Heal, Partition, Resume, Skew
from tests.search.test_explore import SHORTEST

DEPTH = 4
MISTAKES = [m for m in Mode if m is not Mode.CORRECT]


def _found(report: ExploreReport) -> dict[str, int]:
    return {c.rule: c.length for c in report.counterexamples if c.rule != ENGINE_ERROR}


def every_fault(sim: Simulation, rows: Sequence[TaskRow]) -> list[Action]:
    """The explorer's choices, and every fault a worker can suffer besides."""
    out = world.choices(sim, rows)
    offered = set(out)
    for wid in sorted(sim.workers):
        f = sim.workers[wid].faults
        if f.dead:
            continue
        extra: list[Action] = [Heal(wid) if f.partitioned else Partition(wid)]
        extra.append(Resume(wid) if f.heartbeat_frozen else FreezeHeartbeat(wid))
        if f.skew_ms == 0:
            extra.append(Skew(wid, by_ms=sim.config.ttl_ms // 2))
        out += [a for a in extra if a not in offered]
    return out


@pytest.mark.parametrize("mode", MISTAKES, ids=[m.value for m in MISTAKES])
def test_faults_left_out_of_the_choices_hide_no_broken_rule(
    mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = ExploreParams(mode=mode, depth=DEPTH)
    without = explore(params)
    monkeypatch.setattr(world, "offers_faults", lambda sim: True)  # stall, kill, restart
    monkeypatch.setattr(branch, "choices", every_fault)
    with_faults = explore(params)
    assert with_faults.transitions > without.transitions  # the faults were tried
    assert ENGINE_ERROR not in {c.rule for c in with_faults.counterexamples}
    assert _found(with_faults) == _found(without)
    expected = {rule: n for rule, n in SHORTEST.get(mode, {}).items() if n <= DEPTH}
    assert _found(without) == expected
