"""Every statement a narration makes about state is an `expect` line: a step that names a
worker of the run, a token, a clock time or a page has expectations, each worker it names
is the subject (or the owner, writer, ...) of one, and each token number it names is
checked by one."""

import re
from importlib.resources import files
from pathlib import Path

import pytest

from core.scenarios.format import Scenario, Step, load_scenario
from core.scenarios.glossary import PEOPLE

TOKEN = re.compile(
    r"(?:lease token|lease tag|lease|fence token|fence tag|租约号|围栏令牌|围栏签) ?(\d+)"
)
TIME = re.compile(r"\b\d:\d\d:\d\d\b")
PAGE = re.compile(r"\bpages? \d+|第 ?\d+ ?页")

SCENARIOS = sorted(Path(str(files("scenarios"))).glob("*.toml"))


def _checked(step: Step) -> set[str]:
    """Every value the step's expectations name: subjects and the values of their keys."""
    out = set()
    for exp in step.expects:
        out.add(exp.value)
        out |= {str(v) for _k, v in exp.params}
    return out


def unproven(scenario: Scenario, name: str) -> list[str]:
    run_workers = {w.id for w in scenario.settings.workers}
    run_workers |= {
        str(getattr(s.action, "worker", "")) for s in scenario.steps if s.action is not None
    }
    found = []
    for n, step in enumerate(scenario.steps, 1):
        en, zh = step.say or "", step.say_zh or ""
        text = f"{en} {zh}"
        if not text.strip():
            continue
        # the story's people by their names (a worker whose English name is its id, "A",
        # is the file's id, as any other)
        named = [w for w in run_workers if w in PEOPLE and PEOPLE[w][0] != w and PEOPLE[w][0] in en]
        tokens = set(TOKEN.findall(text))
        if (named or tokens or TIME.search(text) or PAGE.search(text)) and not step.expects:
            found.append(f"{name} step {n}: names state but expects nothing")
            continue
        checked = _checked(step)
        found += [f"{name} step {n}: {w} named, never expected" for w in named if w not in checked]
        found += [
            f"{name} step {n}: token {t} named, never expected" for t in tokens if t not in checked
        ]
    return found


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_narrated_claim_about_state_has_an_expectation(path: Path) -> None:
    assert unproven(load_scenario(path), path.stem) == []


def test_the_rule_finds_a_narration_with_nothing_checked() -> None:
    from core.scenarios.format import parse_scenario

    text = b"""
title = "t"
[[workers]]
id = "acheng"
[[workers]]
id = "linzhou"
[[tasks]]
id = "floor6"
[[step]]
say = "Acheng holds lease 1 until 0:01:00."
say_zh = "x"
do = "advance"
by = "1s"
[[step]]
say = "Acheng still holds lease token 2."
say_zh = "x"
expect = [{ task = "floor6", owner = "linzhou" }]
"""
    assert unproven(parse_scenario(text, "t.toml"), "t") == [
        "t step 1: names state but expects nothing",
        "t step 2: acheng named, never expected",
        "t step 2: token 2 named, never expected",
    ]
