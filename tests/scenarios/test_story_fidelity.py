"""The story chapters teach what the seed teaches, to the letter: no fence before the fence
tag, the keeper's "lendable again" at the instant the sand runs out, a box only after a
renewal, the seed's chapter numbers and times, and mistake four as the seed writes it."""

import itertools
import json
from importlib.resources import files
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import load_scenario
from core.scenarios.player import play, render_line
from core.sim.simulation import Simulation

BEFORE_THE_FENCE = ("00_story_1_keeper", "00_story_2_fog", "00_story_3_box", "00_story_4a_fire")


def path(name: str) -> str:
    return str(files("scenarios") / f"{name}.toml")


def played(name: str) -> Simulation:
    scenario = load_scenario(path(name))
    sim = Simulation(scenario.settings)
    for step in scenario.steps:
        if step.action is not None:
            sim.apply(step.action)
    return sim


@pytest.mark.parametrize("name", BEFORE_THE_FENCE)
def test_no_fence_token_appears_before_the_fence_tag(name: str) -> None:
    """ "从那天起……还会附上一枚细长的铜片……城里把它叫'围栏签'": before that, no fence at all."""
    scenario = load_scenario(path(name))
    assert scenario.settings.mode is Mode.BEFORE_FENCE
    for step in scenario.steps:
        for exp in step.expects:
            assert "fence_token" not in dict(exp.params), f"{name}:{exp.line}"
    sim = played(name)
    for ev in sim.events():
        assert ev.fence_token is None, ev
        assert not any("fence" in k for k in ev.detail), ev
    snap = sim.snapshot()
    assert all(w.fence_token is None for w in snap.workers)
    assert all(t.row.fence_token == 0 for t in snap.tasks)  # never issued
    shown = [r for r in play(scenario) if r["type"] in ("event", "expect")]
    lines = [render_line(r, lang) for r in shown for lang in ("en", "zh")]
    text = "".join(t for line in lines for t, _ in line)
    assert "fence " not in text and "围栏令牌" not in text
    sim.close()


def test_the_seed_times_of_chapter_two() -> None:
    """One 时辰 = 40 s: 辰时一刻 to 午时三刻 is 2¼ 时辰 (90 s); a renewal every half 时辰
    (20 s) pushes the return time by half a 时辰."""
    settings = load_scenario(path("00_story_2_fog")).settings
    assert (settings.config.ttl_ms, settings.config.heartbeat_ms) == (90_000, 20_000)
    sim = played("00_story_2_fog")
    renewed = [e for e in sim.events() if e.event == "renewed"]
    claimed = [e for e in sim.events() if e.event == "claimed"]
    assert renewed[0].detail["expires_at"] - claimed[0].detail["expires_at"] == 20_000
    resumed = next(e for e in sim.events() if e.event == "resumed")
    assert resumed.at - claimed[1].at == 80_000  # "两个时辰后，雾散了"
    sim.close()


STORY = sorted(p.stem for p in Path(str(files("scenarios"))).glob("00_story_*.toml"))
BOXES = {
    "00_story_3_box": 8,
    "00_story_4a_fire": 8,
    "00_story_4b_fence": 8,
    "00_story_5_lessons": 8,
}


def unrenewed_boxes(sim: Simulation) -> list[str]:
    """Every box a holder sealed before that holder's lease had been renewed once."""
    renewed: set[tuple[str | None, str | None, int | None]] = set()
    found = []
    for ev in sim.events():
        lease = (ev.task_id, ev.worker_id, ev.lease_token)
        if ev.event == "renewed":
            renewed.add(lease)
        if ev.event == "checkpoint_saved" and lease not in renewed:
            found.append(f"{ev.at} ms: {ev.worker_id} sealed box {ev.detail.get('step')}")
    return found


@pytest.mark.parametrize("name", STORY)
def test_a_box_is_sealed_only_after_the_key_has_been_renewed(name: str) -> None:
    """ "只要钥匙续过沙，持有人就可以把……中间结果封进一个带编号的木匣": every chapter."""
    sim = played(name)
    assert unrenewed_boxes(sim) == []
    saved = [e for e in sim.events() if e.event == "checkpoint_saved"]
    assert len(saved) == BOXES.get(name, 0)
    sim.close()


@pytest.mark.parametrize("name", STORY)
def test_every_chapter_keeps_the_seeds_proportions(name: str) -> None:
    """One 时辰 = 40 s, as chapter 2 says on screen: "每半个时辰派学徒来报一次" is a heartbeat
    every 20 s, and each one "把归还时刻顺延半个时辰", 20 s further than the last."""
    config = load_scenario(path(name)).settings.config
    assert config.heartbeat_ms == 20_000
    sim = played(name)
    by_lease: dict[tuple[str | None, int | None], list[int]] = {}
    for ev in sim.events():
        if ev.event in ("claimed", "renewed") and "expires_at" in ev.detail:
            by_lease.setdefault((ev.task_id, ev.lease_token), []).append(ev.detail["expires_at"])
    for expiries in by_lease.values():
        assert all(b - a == 20_000 for a, b in itertools.pairwise(expiries)), expiries
    sim.close()


def test_the_box_rule_finds_a_box_sealed_before_the_first_renewal(tmp_path: Path) -> None:
    """A page shorter than the heartbeat seals its first box before the first renewal."""
    text = Path(path("00_story_4b_fence")).read_text(encoding="utf-8")
    quick = tmp_path / "quick.toml"
    quick.write_text(text.replace('step_time = "25s"', 'step_time = "10s"'), encoding="utf-8")
    scenario = load_scenario(str(quick))
    sim = Simulation(scenario.settings)
    first = scenario.steps[0].action
    assert first is not None
    sim.apply(first)
    assert unrenewed_boxes(sim) == ["10000 ms: linzhou sealed box 1"]
    sim.close()


def test_chapter_titles_follow_the_seed_numbers() -> None:
    titles = {
        n: load_scenario(path(n)).title_zh or ""
        for n in (
            "00_story_1_keeper",
            "00_story_2_fog",
            "00_story_3_box",
            "00_story_4a_fire",
            "00_story_4b_fence",
            "00_story_5_lessons",
        )
    }
    assert [t.split("：")[0] for t in titles.values()] == [
        "故事·一",
        "故事·二",
        "故事·三（上）",
        "故事·三（下）",
        "故事·三（下·续）",
        "故事·四",
    ]


@pytest.mark.parametrize("name", ["00_story_4a_fire", "00_story_4b_fence"])
def test_what_the_seed_only_supposes_is_named_a_what_if(name: str) -> None:
    scenario = load_scenario(path(name))
    assert any("what-if" in (s.say or "") for s in scenario.steps)
    assert any("假设" in (s.say_zh or "") for s in scenario.steps)


def test_the_lessons_chapter_ends_on_the_skeleton_the_formula_and_the_rule() -> None:
    last = load_scenario(path("00_story_5_lessons")).steps[-1]
    assert "可恢复执行 = 有限所有权 + 心跳续约 + 围栏令牌 + 中间结果落盘 + 幂等副作用" in (
        last.say_zh or ""
    )
    assert "一旦证明消失，资格必须可回收，旧持有人也必须失去改写权" in (last.say_zh or "")
    for part in ("Lease", "Checkpoint", "Idempotency", "Fencing Token"):
        assert part in (last.say or "")


def test_mistake_four_leaves_the_successor_a_blank_scene() -> None:
    """ "误区四：只回收资格，不保存中间结果……下一位拿到的只是空白现场"."""
    sim = played("10_mistake_no_checkpoint")
    snap = sim.snapshot()
    assert snap.checkpoints == ()
    assert [e for e in sim.events() if e.event.startswith("checkpoint")] == []
    records = [
        json.loads(json.dumps(r)) for r in play(load_scenario(path("10_mistake_no_checkpoint")))
    ]
    assert all(r.get("event") != "checkpoint_saved" for r in records)
    sim.close()


def test_the_browser_box_shows_what_the_seed_lists() -> None:
    """ "已打开到哪个 URL；已完成哪些操作；当前截图或 DOM 摘要在哪；下一步计划是什么"."""
    from core.scenarios.glossary import box_contents

    sim = Simulation(load_scenario(path("05_browser_agent")).settings)
    scenario = load_scenario(path("05_browser_agent"))
    assert scenario.steps[0].action is not None
    sim.apply(scenario.steps[0].action)
    (box, *_) = sorted(sim.snapshot().checkpoints, key=lambda c: -c.seq)
    shown = box_contents(box.state, "zh")
    url = "https://archive.example/crawl/page/1"
    for part in (f"网址：{url}", "已做操作：第 1 步打开、第 2 步操作、第 3 步提取", f"DOM 摘要：从 {url} 读出"):
        assert part in shown
    assert "下一步：截图" in shown
    assert not any(word in shown for word in ("open", "extract", "screenshot", "nodes"))
    sim.close()


def test_the_browser_crawl_opens_a_page_of_its_own_each_time_and_the_successor_reopens() -> None:
    """Scenario 05: "resume from the saved page" is the saved URL opened again, and the
    crawl's second open is a second page."""
    sim = played("05_browser_agent")
    pages = {p.key: p.value for p in sim.snapshot().ledger}
    assert pages["crawl/1"] == "open https://archive.example/crawl/page/1"
    assert pages["crawl/4"] == "reopen https://archive.example/crawl/page/1; screenshot"
    assert pages["crawl/5"] == "open https://archive.example/crawl/page/2"
    sim.close()


def test_tool_outputs_go_to_the_artifact_store_and_the_box_keeps_their_addresses() -> None:
    sim = played("06_tool_calling")
    (box, *_) = sorted(sim.snapshot().checkpoints, key=lambda c: -c.seq)
    assert box.state["artifacts"][0] == "artifact://agent/1-retrieve.json"
    assert len(box.state["artifacts"]) == 4
    sim.close()


def test_a_box_expectation_checks_what_the_box_holds() -> None:
    from core.scenarios.format import parse_scenario

    text = (Path(path("05_browser_agent"))).read_text("utf-8")
    wrong = text.replace("next step: screenshot", "next step: act", 1)
    assert wrong != text
    results = {
        name: [
            r["ok"] for r in play(parse_scenario(t.encode(), "05.toml")) if r["type"] == "expect"
        ]
        for name, t in (("right", text), ("wrong", wrong))
    }
    assert all(results["right"]) and results["wrong"].count(False) == 1


def test_the_visibility_timeout_scenario_names_every_queue_on_screen() -> None:
    """ "如果你做过 SQS、Celery、RabbitMQ、Kafka consumer group、Temporal 活动执行器，就会见过另一个
    词：Visibility Timeout。" """
    first = load_scenario(path("19_visibility_timeout")).steps[0]
    for text in (first.say, first.say_zh):
        assert text is not None
        for name in ("SQS", "Celery", "RabbitMQ", "Kafka consumer group", "Temporal"):
            assert name in text, (name, text)


def test_chapter_four_quotes_the_seed_letter_for_letter() -> None:
    steps = load_scenario(path("00_story_5_lessons")).steps
    said = "".join(s.say_zh or "" for s in steps)
    for sentence in (
        "只要抄写员还能定期送出“我还在”的信号，守库房就承认这项工作仍由她负责。",
        "再把它翻成更工程化的一句判断：一个长任务只有在“能证明自己还活着”时才继续拥有执行权；"
        "一旦证明消失，资格必须可回收，旧持有人也必须失去改写权。",
    ):
        assert sentence in said
