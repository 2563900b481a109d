"""A number never leaves its word or its unit at a line break, in wrapped Chinese: not
"第 3 / 页", "围栏令牌 / 1", "租约号 / 2", "30 / 秒", nor a ledger page's "120 / 石"."""

import html
import itertools
import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
from rich.text import Text

from core.scenarios.format import load_scenario
from demo.export.frames import Frame, Recording
from demo.export.page import build_page
from demo.widgets.cjk_wrap import html_unbroken, tokens, wrap, wrap_text


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


# The units the bundled Chinese puts after a number (the wrapper's own list is what is tested).
UNITS = set("秒分步页次个位号层天时石刻")


def split_numbers(lines: list[str]) -> list[str]:
    """Every break that leaves a number at a line's end before its unit, or at a line's
    start after its word."""
    found = []
    for a, b in itertools.pairwise(line.strip() for line in lines):
        if not (a and b):
            continue
        if (a[-1].isdigit() and b[0] in UNITS) or (b[0].isdigit() and _cjk(a[-1])):
            found.append(f"{a[-8:]} / {b[:8]}")
    return found


SENTENCES = (
    "临舟这才写下第 3 页，交给账房。",
    "她拿着围栏令牌 1 回来，账房拒收。",
    "校对官领到租约号 2，从第 3 步接着做。",
    "租期 30 秒，心跳每 20 秒一次。",
    "她写下第 1 页：北岸 120 石，交给账房。",
)


@pytest.mark.parametrize("width", range(10, 41))
def test_no_width_breaks_a_number_from_its_word_or_unit(width: int) -> None:
    for sentence in SENTENCES:
        lines = wrap(sentence, width)
        assert "".join(lines).replace(" ", "") == sentence.replace(" ", "")  # nothing lost
        assert split_numbers(lines) == [], (width, lines)
        styled = wrap_text(Text(sentence), width).plain.splitlines()
        assert split_numbers(styled) == [], (width, styled)


@pytest.mark.parametrize("width", [23, 25, 27])
def test_a_ledger_page_keeps_its_dan_at_the_widths_that_split_it(width: int) -> None:
    """At these widths the page's "120" ended a line and "石" began the next."""
    lines = wrap("她写下第 1 页：北岸 120 石，交给账房。", width)
    assert any("120 石" in line for line in lines), lines


def test_a_village_and_a_glossary_word_that_begins_with_a_unit_stay_whole() -> None:
    assert "北岸 120 石，" in tokens("第 1 页：北岸 120 石，")
    assert tokens("12 页签") == ["12 页签"]


def _chinese(node: object) -> list[str]:
    if isinstance(node, dict):
        return [t for v in node.values() for t in _chinese(v)]
    if isinstance(node, list):
        return [t for v in node for t in _chinese(v)]
    return [node] if isinstance(node, str) and any(_cjk(c) for c in node) else []


def test_no_bundled_chinese_text_is_broken_inside_a_number_at_any_width() -> None:
    texts = [
        text
        for path in sorted(Path(str(files("scenarios"))).glob("*.toml"))
        for text in _chinese(tomllib.loads(path.read_text("utf-8")))
    ]
    found = [
        (width, hit)
        for text in texts
        for width in range(24, 100, 8)
        for hit in split_numbers(wrap(text, width))
    ]
    assert found == []


def test_a_page_for_the_browser_keeps_a_number_with_its_word_and_unit() -> None:
    """The exported page is wrapped by the browser, which breaks at any space: a number and
    its word and unit sit in one span the page's style does not break."""
    text = "临舟写下第 3 页，拿着围栏令牌 1 <回来>，租期 30 秒。"
    shown = html_unbroken(text, html.escape)
    for bound in ("第 3 页，", "围栏令牌 1", "期 30 秒。"):
        assert f'<span class="nb">{bound}</span>' in shown
    assert "&lt;回来&gt;" in shown  # the rest escaped as before
    assert html.unescape(re.sub(r"</?span[^>]*>", "", shown)) == text  # nothing lost


def test_the_exported_chinese_page_uses_it() -> None:
    scenario = load_scenario(str(files("scenarios") / "13_portfolio_demo.toml"))
    frame = Frame(
        index=1, keys=(), panel="tab-ledger", svg="<svg></svg>", narration="他写下第 3 页。"
    )
    zh = build_page(scenario, [Recording("zh", (80, 24), (frame,))], command="c")
    en = build_page(scenario, [Recording("en", (80, 24), (frame,))], command="c")
    assert '<p class="say"><span class="nb">' not in en
    assert '<span class="nb">第 3 页。</span>' in zh and ".nb { white-space: nowrap; }" in zh


@pytest.mark.parametrize("width", range(10, 41))
def test_a_lease_and_its_fence_stay_on_one_line(width: int) -> None:
    """The refusal's "当前 L2 F2）" broke as "当前 L2 / F2）": the pair is one token."""
    sentence = "阿澄提交第 3 页被拒：围栏令牌落后（所带令牌 L1 F1，当前 L2 F2）"
    lines = wrap(sentence, width)
    assert "".join(lines).replace(" ", "") == sentence.replace(" ", "")
    assert any("L1 F1" in line for line in lines) and any("L2 F2" in line for line in lines)
    styled = wrap_text(Text(sentence), width).plain
    assert "L1 F1" in styled and "L2 F2" in styled, (width, styled)
