"""The picker's titles and summaries are broken into lines by Chinese rules, as the narration
is: a number keeps its unit ("30 秒", never "30 / 秒"), no line starts with closing
punctuation, and every option is shown whole."""

import itertools
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import OptionList

from demo.app import BorrowedKeysApp
from demo.i18n import tr
from demo.screens.picker import PickerScreen, bundled_scenarios
from demo.widgets.cjk_wrap import NO_LINE_START, UNITS


def shown_lines(options: OptionList) -> list[str]:
    """Every line the list draws, top to bottom, scrolled page by page."""
    lines: list[str] = []
    height = options.scrollable_content_region.height
    total = options.virtual_size.height
    for top in range(0, total, height):
        options.scroll_to(y=top, animate=False, immediate=True)
        first = int(options.scroll_offset.y)
        for y in range(top - first, min(height, total - first)):
            lines.append(options.render_line(y).text.strip())
    return lines


def split_units(lines: list[str], titles: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Consecutive lines where a number was parted from its unit, or a line begins with
    closing punctuation; a title's last line and its summary's first are not one sentence."""
    return [
        (before, after)
        for before, after in itertools.pairwise(lines)
        if after
        and not any(t.replace(" ", "").endswith(before.replace(" ", "")) for t in titles)
        and (after[0] in NO_LINE_START or (before[-1:].isdigit() and after[0] in UNITS))
    ]


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_picker_wraps_by_chinese_rules_and_shows_every_summary_whole(
    tmp_path: Path, lang: str, size: tuple[int, int]
) -> None:
    app = BorrowedKeysApp(lang=lang, live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        options = app.screen.query_one(OptionList)
        lines = shown_lines(options)
        width = options.scrollable_content_region.width
        assert all(cell_len(line) <= width for line in lines)
        said = [(sc.title_in(lang), sc.summary_in(lang) or "") for sc in bundled_scenarios()] + [
            (tr("sandbox", lang), tr("sandbox_summary", lang))
        ]
        assert split_units(lines, tuple(t for t, _ in said)) == []
        whole = "".join(t + s for t, s in said)
        assert "".join(lines).replace(" ", "") == whole.replace(" ", "")  # nothing cut off


def test_the_check_finds_a_number_parted_from_its_unit() -> None:
    assert split_units(["租期是 30", "秒；long_lease"]) == [("租期是 30", "秒；long_lease")]
    assert split_units(["租期是", "30 秒；"]) == []
    assert split_units(["和它的 P99", "步骤要 15 秒"], ("租期短过一步和它的 P99",)) == []
