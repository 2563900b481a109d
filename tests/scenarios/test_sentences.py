"""Expectations as sentences an audience reads (core/scenarios/sentences.py)."""

import pytest

from core.scenarios.format import Expectation, parse_scenario
from core.scenarios.library import bundled_files
from core.scenarios.sentences import expectation_sentence


@pytest.mark.parametrize(
    ("exp", "en", "zh"),
    [
        (
            Expectation("rejected", "fenced", (("worker", "acheng"), ("count", 1))),
            "Acheng was refused once: fenced",
            "阿澄被拒收一次：围栏令牌落后",
        ),
        (
            Expectation("task", "grant", (("status", "queued"),)),
            "grant is queued",
            "审批排队中",
        ),
        (
            Expectation("worker", "linzhou", (("state", "idle"),)),
            "Linzhou is idle",
            "临舟空闲",
        ),
        (
            Expectation("task", "floor6", (("owner", "linzhou"), ("fence_token", 2))),
            "floor6: held by Linzhou, fence token 2",
            "第六层：由临舟持有，围栏令牌 2",
        ),
        (
            Expectation("ledger", "floor6/3", (("writer", "elder"),)),
            "Page floor6/3: written by Elder",
            "第六层第 3 页：由校对官写下",
        ),
        (
            Expectation("effect", "agent/3/api_call", (("applied", 2),)),
            "Effect agent/3/api_call was applied twice",
            "副作用 agent/3/api_call 执行了 2 次",
        ),
        (Expectation("violation", "any", (("count", 0),)), "No safety violation", "没有安全违规"),
        (
            Expectation("metric", "recovery_time", (("max", 70_000),)),
            "Recovery took at most 70s",
            "恢复用时至多 70 秒",  # Chinese units in a Chinese sentence
        ),
        (
            Expectation("rejected", "fenced", (("worker", "w7"), ("count", 3))),
            "Worker 7 was refused 3 times: fenced",  # a numbered worker by its name, not w7
            "7 号执行者被拒收 3 次：围栏令牌落后",
        ),
    ],
)
def test_an_expectation_reads_as_a_sentence(exp: Expectation, en: str, zh: str) -> None:
    assert expectation_sentence(exp, "en") == en
    assert expectation_sentence(exp, "zh") == zh


def test_every_bundled_expectation_has_a_sentence_in_both_languages() -> None:
    for f in bundled_files():
        scenario = parse_scenario(f.read_bytes(), f.name)
        for step in scenario.steps:
            for exp in step.expects:
                for lang in ("en", "zh"):
                    said = expectation_sentence(exp, lang)
                    assert said and said != exp.to_toml(), (f.name, exp)
                    assert "{" not in said and "}" not in said, (f.name, said)


def test_a_step_that_says_nothing_reads_as_its_act() -> None:
    from core.scenarios.sentences import action_sentence
    from core.sim.spec import Advance, Approve, Write

    assert action_sentence(Advance(10_000), "en") == "10 s pass"
    assert action_sentence(Advance(10_000), "zh") == "过了 10 秒"
    assert action_sentence(Write("acheng", "floor6/2", "v"), "en") == "Acheng: write floor6/2"
    assert action_sentence(Write("acheng", "floor6/2", "v"), "zh") == "阿澄：写入总册 floor6/2"
    assert action_sentence(Approve("grant"), "en") == "Approve grant"


def test_the_box_check_is_said_in_the_runs_language() -> None:
    """The `box` check's English line, said again in Chinese: words, verbs and the DOM
    summary in Chinese, the URL and file names as written."""
    url = "https://archive.example/crawl/page/1"
    box = (
        f"URL: {url} · actions done: 1:open, 2:act, 3:extract · "
        f"DOM summary: 3 nodes read from {url} · screenshot: shot-crawl-4.png · next step: open"
    )
    zh = expectation_sentence(Expectation("task", "crawl", (("box", box),)), "zh")
    assert zh == (
        f"网页抓取：最新的检查点里是 “网址：{url} · 已做操作：第 1 步打开、第 2 步操作、第 3 步提取 · "
        f"DOM 摘要：从 {url} 读出 3 个节点 · 截图：shot-crawl-4.png · 下一步：打开”"
    )
    en = expectation_sentence(Expectation("task", "crawl", (("box", box),)), "en")
    assert en == f"crawl: its newest checkpoint holds “{box}”"


def test_a_reopened_page_is_said_in_chinese() -> None:
    from core.scenarios.glossary import ledger_value

    url = "https://archive.example/crawl/page/1"
    assert ledger_value(f"reopen {url}; screenshot", "zh") == f"重新打开 {url}；截图"


def test_a_page_the_worker_made_is_said_in_the_runs_language() -> None:
    """A ledger check of a page with no value_zh (the worker wrote it) says the page as the
    Ledger panel shows it in that language."""
    url = "https://archive.example/crawl/page/2"
    exp = Expectation("ledger", "crawl/5", (("writer", "linzhou"), ("value", f"open {url}")))
    assert f"写着“打开 {url}”" in expectation_sentence(exp, "zh")
    assert f"says “open {url}”" in expectation_sentence(exp, "en")
