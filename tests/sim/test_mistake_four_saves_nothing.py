"""Mistake four saves nothing in any scenario it is chosen on, a scripted box included:
"只回收资格，不保存中间结果……下一位拿到的只是空白现场"."""

import dataclasses
from importlib.resources import files

import pytest

from core.engine.config import Mode
from core.engine.vocabulary import EventKind
from core.scenarios.format import load_scenario
from core.sim.simulation import ActionError, Simulation
from core.sim.spec import Checkpoint

BUNDLED = sorted(
    p.name.removesuffix(".toml") for p in files("scenarios").iterdir() if p.name.endswith(".toml")
)


@pytest.mark.parametrize("name", BUNDLED)
def test_no_box_is_ever_sealed_under_mistake_four(name: str) -> None:
    scenario = load_scenario(str(files("scenarios") / f"{name}.toml"))
    sim = Simulation(dataclasses.replace(scenario.settings, mode=Mode.NO_CHECKPOINT))
    try:
        for step in scenario.steps:
            if step.action is not None:
                try:
                    sim.apply(step.action)
                except ActionError:
                    continue
            assert sim.snapshot().checkpoints == (), f"{name}: {step.line}"
        assert not [e for e in sim.events(0) if e.event == EventKind.CHECKPOINT_SAVED]
    finally:
        sim.close()


def test_in_the_fog_linzhou_starts_from_a_blank_scene() -> None:
    # 01 scripts Acheng's boxes of steps 1 and 2: under mistake four neither is sealed,
    # and Linzhou does every page from page 1
    scenario = load_scenario(str(files("scenarios") / "01_fog.toml"))
    assert any(isinstance(s.action, Checkpoint) for s in scenario.steps)
    sim = Simulation(dataclasses.replace(scenario.settings, mode=Mode.NO_CHECKPOINT))
    try:
        for step in scenario.steps:
            if step.action is not None:
                sim.apply(step.action)
        ledger = {row.key: row.writer for row in sim.snapshot().ledger}
        assert ledger["floor6/1"] == ledger["floor6/2"] == "linzhou"
    finally:
        sim.close()
