"""What a counterexample file says, in English and Chinese: a time step names the lease ends
it passes, and the titles read as sentences."""

import importlib
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import parse_scenario
from core.scenarios.player import PlayResult, play
from core.search.explore.bfs import ExploreParams, explore
from core.search.explore.story import narrate, replay, scenario_text, write_counterexamples
from core.sim.spec import Advance, Claim
from demo.i18n import mode_word, tr

importlib.import_module("demo.screens.explore")  # it adds its words (the heading's) to tr


def _scenario(mode: Mode, rule: str, depth: int = 4) -> str:
    params = ExploreParams(mode=mode, depth=depth)
    report = explore(params)
    cex = next(c for c in report.counterexamples if c.rule == rule)
    return scenario_text(params, cex)


def test_a_time_step_names_the_lease_end_it_passes() -> None:
    """seed_sql lends a done task out again once its old lease's end has passed: the time
    step that passes it says so, with the task's status, in both languages, the task named as
    each screen names it (t1, 任务 1)."""
    scenario = parse_scenario(_scenario(Mode.SEED_SQL, "reclaimed_after_end"), "<x>")
    advance = scenario.steps[2]
    assert advance.say == (
        "Time passes to 0:00:30.001; t1 is done, and the end of its lease 1 "
        "(Acheng's, 0:00:30.000) has just passed."
    )
    assert advance.say_zh == (
        "时间来到 0:00:30.001；任务 1 已完成，它的租约号 1（阿澄的）到期时刻 0:00:30.000 刚刚过去。"
    )


def test_a_lease_the_keeper_expires_is_named_once() -> None:
    """Where the keeper's own event says a lease ran out, the step does not say it twice;
    a later step passes no lease end and names none."""
    steps, _, sim = replay(ExploreParams(), [Claim("acheng"), Advance(30_001), Advance(1_000)])
    sim.close()
    assert [narrate(d, "en") for d in steps[1:]] == [
        "Time passes to 0:00:30.001; Acheng's lease 1 ran out at 0:00:30.000.",
        "Time passes to 0:00:31.001.",
    ]
    assert narrate(steps[1], "zh") == "时间来到 0:00:30.001；阿澄的租约号 1 在 0:00:30.000 到期。"


def test_the_titles_say_the_mode_in_words() -> None:
    text = _scenario(Mode.NO_FENCING, "page_without_live_lease", depth=3)
    scenario = parse_scenario(text, "<x>")
    assert scenario.title_zh is not None and scenario.summary_zh is not None
    assert scenario.title_zh.startswith("穷举搜索：在“误区三：只有心跳，没有围栏”下最短的“")
    assert scenario.title_zh.endswith("”（3 步）")
    assert scenario.summary_zh.startswith("由穷举搜索找到：在“误区三：只有心跳，没有围栏”下，")
    for said in (scenario.title_zh, scenario.summary_zh):
        assert "no_fencing" not in said and "explore" not in said
    assert "claims a task:" in text and "any task" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_app_heading_has_no_two_colons_in_a_row(lang: str) -> None:
    for mode in Mode:
        heading = tr("explore_title", lang, meaning=mode_word(mode.value, lang))
        outside = heading.split("（" if lang == "zh" else " (")[0]
        assert ":" not in outside and "：" not in outside, heading
    # the mode in words, never by its id
    assert tr("explore_title", "zh", meaning=mode_word("no_idempotency", "zh")) == (
        "穷举所有交错（缺少幂等：副作用会重复）"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_written_file_plays_green(lang: str, tmp_path: Path) -> None:
    for mode in (Mode.SEED_SQL, Mode.NO_FENCING):
        params = ExploreParams(mode=mode, depth=4)
        written = write_counterexamples(params, explore(params).counterexamples, tmp_path)
        for c in written:
            assert c.path is not None and c.verified
            scenario = parse_scenario(Path(c.path).read_bytes(), c.path)
            result = PlayResult()
            for _ in play(scenario, lang=lang, result=result):
                pass
            assert result.failed == 0 and result.passed > 0
