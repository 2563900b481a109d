"""The essay's lessons beyond the story are on screen: the lease card, the skeleton, formula
and rule, the portfolio map (help page and docs/lessons.md), and the visibility timeout in
queue words with its twin."""

import dataclasses
from pathlib import Path

from rich.console import Console

from core.engine.config import Mode
from core.scenarios.format import load_scenario
from core.sim.simulation import Simulation
from demo.screens.help import help_renderable

ROOT = Path(__file__).resolve().parents[2]
FORMULA = "可恢复执行 = 有限所有权 + 心跳续约 + 围栏令牌 + 中间结果落盘 + 幂等副作用"
RULE = "一旦证明消失，资格必须可回收，旧持有人也必须失去改写权"
CARD = ("owner_id", "lease_token", "expires_at", "renew_deadline", "attempt", "fence_token")
PORTFOLIO = (
    "agent_tasks",
    "LeaseStore.claim",
    "LeaseStore.heartbeat",
    "save_checkpoint",
    "tests/engine/test_fence_rule.py",
)


def shown(lang: str) -> str:
    console = Console(width=300, record=True)
    console.print(help_renderable(lang, 300))
    return console.export_text()


def test_the_help_page_has_the_card_the_formula_the_rule_and_the_portfolio() -> None:
    zh, en = shown("zh"), shown("en")
    assert FORMULA in zh and RULE in zh
    assert "durable execution = bounded ownership + heartbeat renewal + fencing token" in en
    for page in (zh, en):
        assert all(field in page for field in CARD)
        assert all(item in page for item in PORTFOLIO)
    assert "13" in en.split("The seed's portfolio demo")[1]


# The seed's line 238 and its closing section, and their English in the glossary's voice
LAST_WORDS = (
    (
        "旧 worker 即使复活，也只能成为“过期知识的携带者”，无法成为“当前世界的改写者”",
        "an old holder can only be a carrier of stale knowledge, never a rewriter of the "
        "current world",
    ),
    (
        "任务可以中断、资格可以续借、结果可以接力、旧人回来也推不翻新世界",
        "a task can be interrupted, a right renewed, a result handed on",
    ),
    ("守住这一点，长任务才不会变成长赌局", "a long task never becomes a long gamble"),
)


def _flat(text: str) -> str:
    """The words without the line breaks a wrap put in (and the indents after them)."""
    return " ".join(text.split())


def test_the_seeds_last_words_are_in_the_help_and_the_last_chapter() -> None:
    from core.scenarios.player import play, render_line

    story = load_scenario(ROOT / "scenarios" / "00_story_5_lessons.toml")
    told = {
        lang: "".join(
            piece
            for record in play(story, lang=lang)
            for piece, _style in render_line(record, lang)
        )
        for lang in ("zh", "en")
    }
    for zh, en in LAST_WORDS:
        for page in (shown("zh"), told["zh"]):
            assert "".join(zh.split()) in "".join(page.split()), zh
        assert en in _flat(shown("en")), en
        assert en in _flat(told["en"]), en


def test_the_lessons_document_maps_every_lesson_and_the_six_portfolio_items() -> None:
    doc = (ROOT / "docs" / "lessons.md").read_text("utf-8")
    assert FORMULA in doc and RULE in doc
    for item in (*CARD, *PORTFOLIO, "13_portfolio_demo", "19_visibility_timeout"):
        assert item in doc, item
    for path in ("core/engine/models.py", "core/sim/worker.py", "tests/engine/test_fence_rule.py"):
        assert (ROOT / path).exists()
    assert "test_a_superseded_holder_cannot_write_a_page_its_successor_has_not_reached" in (
        ROOT / "tests" / "engine" / "test_fence_rule.py"
    ).read_text("utf-8")


def _seed_items(text: str) -> list[str]:
    """The first cells of a table's rows that name one of the seed's six demo pieces."""
    return [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| 一个")]


def test_the_readme_lists_the_six_portfolio_items_as_the_lessons_document_does() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    items = _seed_items(readme)
    assert len(items) == 6
    assert items == _seed_items((ROOT / "docs" / "lessons.md").read_text("utf-8"))
    assert readme.index("| 一个故障演示") < readme.index("## More")
    assert all(item in readme for item in (*PORTFOLIO, "13_portfolio_demo"))


def test_visibility_timeout_a_stale_receipt_gets_through_unless_the_sink_checks_a_token() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "19_visibility_timeout.toml")
    words = " ".join(s.say or "" for s in scenario.steps)
    for queue_word in (
        "receives",
        "ChangeMessageVisibility",
        "acks",
        "reappears",
        "receipt handle",
    ):
        assert queue_word in words
    results = {}
    for mode in (Mode.NO_FENCING, Mode.CORRECT):
        sim = Simulation(dataclasses.replace(scenario.settings, mode=mode))
        for step in scenario.steps:
            if step.action is not None:
                sim.apply(step.action)
        results[mode] = (
            sim.snapshot().violations,
            [e.reason for e in sim.events() if e.event == "write_rejected"],
        )
        sim.close()
    assert results[Mode.NO_FENCING] == ({"stale_write_accepted": 1}, [])
    assert results[Mode.CORRECT] == ({}, ["fenced"])
