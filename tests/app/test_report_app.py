"""The end of a run in the app: the report under the last step, what broke in sight on a small
screen, and a header that says the mode's harm beside the correct run's figure."""

from pathlib import Path

import pytest

from demo.widgets.narration import NarrationPanel
from demo.widgets.status_header import StatusHeader
from tests.app.apps import scenario_app


def shown(widget: NarrationPanel | StatusHeader) -> str:
    return "\n".join(widget.render_line(y).text.rstrip() for y in range(widget.size.height))


@pytest.mark.parametrize(
    ("name", "lang", "broke", "header", "twin"),
    [
        (
            "10_mistake_no_checkpoint",
            "en",
            "What broke: steps done again (3, against 0 in the correct run)",
            "steps done or due again 3 (correct run: 0)",
            "The same faults in the correct run: 0 pages corrupted",
        ),
        (
            "08_mistake_long_lease",
            "zh",
            "坏在哪里：任务无人可接的最长时间（60 分 5 秒，正确做法下是 35 秒）",
            "无人可接 60 分 5 秒（正确做法 35 秒）",
            "同样的故障，正确做法下：0 页被写坏",
        ),
        (
            "09_mistake_no_fencing",
            "en",
            "What broke: stale write accepted",
            "stale write accepted × 1",
            "The same faults in the correct run: 0 pages corrupted",
        ),
    ],
)
@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_the_run_ends_on_its_report(
    tmp_path: Path,
    name: str,
    lang: str,
    broke: str,
    header: str,
    twin: str,
    size: tuple[int, int],
) -> None:
    app = scenario_app(name, tmp_path, lang)
    async with app.run_test(size=size) as pilot:
        session = app.screen.session  # type: ignore[attr-defined]
        narration = app.screen.query_one("#narration", NarrationPanel)
        status = app.screen.query_one("#status", StatusHeader)
        await pilot.pause()
        assert broke not in (narration._text.plain if narration._text else "")
        while not session.at_end:
            await pilot.press("v" if session.question is not None else "n")
        await pilot.pause()
        assert narration._text is not None
        said = narration._text.plain
        assert broke in said and twin in said, said
        # what broke stays in sight, even where the step is folded
        assert broke in shown(narration).replace("\n█ ", "").replace("█ ", ""), shown(narration)
        light = shown(status).replace("\n ", " ")
        assert header in light, light
        assert ("safe" if lang == "en" else "安全") not in light
