"""One table of faults below both apps (core/fleet/faults.py): the app's fault table
(demo/controls.py `FAULTS`) and the headless run (`--faults`) read the same rows, so a fault
is one row, its `Fleet` method named once ("The fleet's `apply_fault` branches come from the
same table (no second list of faults)")."""

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import pytest

from core.fleet.faults import FAULT_ACT, FAULT_ACTS, HAND_FAULTS
from core.fleet.headless import _press, parse_faults
from core.fleet.supervisor import Fleet
from core.sim.spec import WORKER_ACTIONS
from demo.controls import FAULTS


def test_the_apps_faults_are_the_rows_of_the_table_below_them() -> None:
    assert {f.action for f in FAULTS} == set(FAULT_ACT)
    assert set(FAULT_ACT) <= set(WORKER_ACTIONS)  # the simulation's acts, by their names
    for act in FAULT_ACTS:
        for method in (act.fleet, act.undo):
            assert method is None or callable(getattr(Fleet, method)), method
    assert {f.act.fleet for f in FAULTS} == {a.fleet for a in FAULT_ACTS}


def test_the_headless_names_are_the_tables_in_its_old_order() -> None:
    # the order `random` draws from: a seed replays the faults it did
    assert [a.hand for a in parse_faults("random")] == [
        "kill",
        "stall",
        "freeze",
        "restart",
        "partition",
    ]
    assert parse_faults("freeze, kill") == (FAULT_ACT["freeze_heartbeat"], FAULT_ACT["kill"])
    assert parse_faults("none") == ()
    with pytest.raises(ValueError, match="heal"):
        parse_faults("heal")  # taking a fault back is the hand's, never a fault of its own
    assert parse_faults("random") == HAND_FAULTS


@dataclass
class _Belief:
    task: str | None = "t1"


@dataclass
class _Proc:
    pid: int = 100
    alive: bool = True
    ready: bool = True
    stalled: bool = False
    frozen: bool = False
    belief: _Belief = field(default_factory=_Belief)
    write_held: dict[str, object] | None = None  # a simulated worker holds no write


class _Fleet:
    """A fleet of one worker that records which of its methods each fault called."""

    relays = object()

    def __init__(self) -> None:
        self.workers = {"acheng": _Proc()}
        self.called: list[str] = []

    def partitioned(self, worker_id: str) -> bool:
        return False

    def __getattr__(self, name: str) -> Callable[[str], bool]:
        if not callable(getattr(Fleet, name, None)):
            raise AttributeError(name)

        def method(worker_id: str) -> bool:
            self.called.append(name)
            if name in ("restart", "kill"):
                self.workers[worker_id].pid += 1
            return True

        return method


@pytest.mark.parametrize(
    ("hand", "calls", "down", "words"),
    [
        ("kill", ["kill", "restart"], True, ["Killed Acheng", "Restarted Acheng"]),
        ("stall", ["stall", "resume"], False, ["Stalled Acheng", "Resumed Acheng"]),
        (
            "freeze",
            ["freeze", "thaw"],
            False,
            ["Froze the heartbeat of Acheng", "Thawed the heartbeat of Acheng"],
        ),
        ("restart", ["restart"], False, ["Restarted Acheng"]),
        (
            "partition",
            ["partition", "heal"],
            False,
            ["Cut the road from Acheng", "The road from Acheng"],
        ),
    ],
)
def test_the_hand_presses_a_row_and_takes_it_back_by_the_methods_it_names(
    hand: str, calls: list[str], down: bool, words: list[str]
) -> None:
    fleet = _Fleet()
    said: list[str] = []
    undo: list[tuple[float, Callable[[], object]]] = []
    expected_down: set[str] = set()
    run = type("Run", (), {"faults": []})()
    faults = parse_faults(hand)
    _press(
        cast(Fleet, fleet),
        random.Random(1),
        faults,
        run,
        undo,
        expected_down,
        0.0,
        1.0,
        said.append,
        "en",
    )
    assert ("acheng" in expected_down) is down  # a kill is no death by itself
    for _at, action in undo:
        action()
    assert fleet.called == calls
    assert not expected_down
    assert len(said) == len(words)
    for line, start in zip(said, words, strict=True):
        assert start in line, said
