"""A scripted page in both languages: `value_zh` beside `value`, and a Chinese run writes the
Chinese page into the ledger itself (not only a translation on screen), while the worker's
work and its boxes stay the same in both languages."""

from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from core.scenarios.format import Scenario, ScenarioError, load_scenario, parse_scenario
from core.scenarios.player import play
from core.scenarios.session import Session
from core.scenarios.writer import action_items
from core.sim.simulation import Simulation
from core.sim.spec import SimSettings, Write, in_language

SCENARIOS = sorted(Path(str(files("scenarios"))).glob("*.toml"))


def path(name: str) -> str:
    return str(files("scenarios") / f"{name}.toml")


def played(scenario: Scenario, lang: str) -> tuple[dict[str, str], list[Any]]:
    """The ledger's pages after a play in `lang`, and every box saved."""
    sims: list[Simulation] = []

    def make(settings: SimSettings) -> Simulation:
        sims.append(Simulation(settings))
        return sims[-1]

    for record in play(scenario, lang=lang, make_sim=make):
        if record["type"] == "summary":  # the run is over, its store not closed yet
            assert record["failed"] == 0
            snap = sims[0].snapshot()
    pages = {p.key: p.value for p in snap.ledger}
    boxes = [(c.task_id, c.step, c.state) for c in snap.checkpoints]
    return pages, boxes


@pytest.mark.parametrize(
    ("name", "page_en", "page_zh"),
    [
        ("01_fog", "page 1: north bank 120 dan (total 120)", "第 1 页：北岸 120 石（累计 120）"),
        ("00_story_2_fog", "page 1: north bank, 120 dan", "第 1 页：北岸 120 石"),
    ],
)
def test_a_chinese_run_writes_the_chinese_page_into_the_ledger(
    name: str, page_en: str, page_zh: str
) -> None:
    scenario = load_scenario(path(name))
    zh, zh_boxes = played(scenario, "zh")
    en, en_boxes = played(scenario, "en")
    assert zh["floor6/1"] == page_zh
    assert en["floor6/1"] == page_en
    assert zh.keys() == en.keys()
    # What a page means to its worker is read from its English form: the same boxes.
    assert zh_boxes == en_boxes


def test_the_app_session_writes_its_pages_in_the_language_on_screen() -> None:
    scenario = load_scenario(path("01_fog"))
    session = Session(scenario, lang="zh")
    for _ in range(3):  # the claim, the fog, page 1
        session.next_step()
    (page,) = [p for p in session.snapshot().ledger if p.key == "floor6/1"]
    assert page.value == "第 1 页：北岸 120 石（累计 120）"
    session.lang = "en"  # the switch: a step back replays in the language now on screen
    session.previous_step()
    session.next_step()
    (page,) = [p for p in session.snapshot().ledger if p.key == "floor6/1"]
    assert page.value == "page 1: north bank 120 dan (total 120)"
    # a saved run keeps both forms
    assert 'value_zh = "第 1 页：北岸 120 石（累计 120）"' in session.scenario_text()
    session.close()


def test_value_zh_round_trips_and_is_left_out_when_not_given() -> None:
    write = Write("a", key="p/1", value="page 1", value_zh="第 1 页")
    assert dict(action_items(write))["value_zh"] == "第 1 页"
    assert "value_zh" not in dict(action_items(Write("a", key="p/1", value="page 1")))
    assert write.page == "page 1"
    localized = in_language(write, "zh")
    assert isinstance(localized, Write) and localized.page == "第 1 页"
    assert action_items(localized) == action_items(write)  # the run's language is not saved


TEXT = """
title = "t"
[[workers]]
id = "a"
autopilot = false
[[tasks]]
id = "p"
[[step]]
do = "claim"
worker = "a"
[[step]]
do = "write"
worker = "a"
key = "p/1"
"""


def test_a_value_zh_without_a_value_is_an_error_on_its_line() -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario((TEXT + 'value_zh = "第 1 页"\n').encode(), "w.toml")
    assert str(err.value) == 'w.toml:15: "value_zh" without value: add value = "..."'
    text = TEXT + 'value = "page 1"\nexpect = [{ ledger = "p/1", value_zh = "第 1 页" }]\n'
    with pytest.raises(ScenarioError) as err:
        parse_scenario(text.encode(), "e.toml")
    assert str(err.value) == 'e.toml:16: "value_zh" without value: add value = "..."'


def test_a_ledger_expectation_takes_the_page_in_either_language_and_no_other() -> None:
    text = TEXT + 'value = "page 1"\nvalue_zh = "第 1 页"\n'
    good = '{ ledger = "p/1", value = "page 1", value_zh = "第 1 页" }'
    wrong = '{ ledger = "p/1", value = "page 1", value_zh = "第 2 页" }'
    for expect, ok in ((good, True), (wrong, False)):
        scenario = parse_scenario((text + f"expect = [{expect}]\n").encode(), "t.toml")
        for lang in ("en", "zh"):
            checks = [r["ok"] for r in play(scenario, lang=lang) if r["type"] == "expect"]
            # the wrong Chinese form fails the Chinese run; the English run wrote "page 1"
            assert checks == [ok or lang == "en"], (expect, lang)


@pytest.mark.parametrize("scenario_path", SCENARIOS, ids=lambda p: p.stem)
def test_every_scripted_page_of_the_bundled_scenarios_has_its_chinese_form(
    scenario_path: Path,
) -> None:
    scenario = load_scenario(scenario_path)
    scripted = {s.action.key: s.action for s in scenario.steps if isinstance(s.action, Write)}
    for write in scripted.values():
        # a write with no value writes its worker's own page, said in Chinese as it is made
        assert write.value is None or write.value_zh, (
            f"{scenario_path.stem}: {write.key} has no value_zh"
        )
    for step in scenario.steps:
        for exp in step.expects:
            if exp.value in scripted and exp.has("value"):
                assert exp.has("value_zh"), f"{scenario_path.stem}:{exp.line}"
