"""The whole of a box over the Checkpoints table, readable on screen in the run's language.

The seed's browser agent box:
"已打开到哪个 URL；已完成哪些操作；当前截图或 DOM 摘要在哪；下一步计划是什么"."""

from pathlib import Path

import pytest

from demo.widgets.panels import BoxDetail
from tests.app.apps import scenario_app

URL = "https://archive.example/crawl/page/1"
PARTS = {
    "en": (
        f"URL: {URL}",
        "actions done: 1:open, 2:act, 3:extract",
        f"DOM summary: 3 nodes read from {URL}",
        "next step: screenshot",
    ),
    "zh": (
        f"网址：{URL}",
        "已做操作：第 1 步打开、第 2 步操作、第 3 步提取",
        f"DOM 摘要：从 {URL} 读出 3 个节点",
        "下一步：截图",
    ),
}


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_newest_box_is_read_whole_on_screen(
    tmp_path: Path, lang: str, size: tuple[int, int]
) -> None:
    app = scenario_app("05_browser_agent", tmp_path, lang)
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        detail = app.screen.query_one("#box-detail", BoxDetail)
        text = "".join(str(detail.render()).split())  # wrapped to the panel's width
        for part in PARTS[lang]:
            assert "".join(part.split()) in text, (part, text)
        # all of it inside the screen, nothing cut or scrolled away
        region = detail.region
        assert region.height > 0 and app.screen.region.contains_region(region)
        assert detail.virtual_size.height <= detail.content_size.height, detail.virtual_size


async def test_the_row_under_the_cursor_is_the_box_shown(tmp_path: Path) -> None:
    app = scenario_app("05_browser_agent", tmp_path, "en")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        detail = app.screen.query_one("#box-detail", BoxDetail)
        assert "Box crawl #3 (step 3)" in str(detail.render())
        app.screen.query_one("#checkpoints").focus()
        await pilot.press("down")
        await pilot.pause()
        shown = "".join(str(detail.render()).split())
        assert "Boxcrawl#2(step2)" in shown and "nextstep:extract" in shown, shown


@pytest.mark.parametrize(
    ("lang", "before", "after"),
    [
        ("en", "whoever takes over starts from the first step", "3 steps already done"),
        ("zh", "接手的人只能从第一步做起", "已经做过的 3 步只好从头再做"),
    ],
)
async def test_an_empty_shelf_says_what_it_costs_the_successor(
    tmp_path: Path, lang: str, before: str, after: str
) -> None:
    # Mistake four saves no box: Linzhou's takeover does Acheng's three pages again.
    app = scenario_app("10_mistake_no_checkpoint", tmp_path, lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        detail = app.screen.query_one("#box-detail", BoxDetail)
        assert before in str(detail.render())
        session = app.screen.session  # type: ignore[attr-defined]
        while not session.at_end:
            await pilot.press("v" if session.question is not None else "n")
        await pilot.press("2")
        await pilot.pause()
        assert after in str(detail.render())
