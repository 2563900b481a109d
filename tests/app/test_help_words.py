"""The help page's Chinese as the app shows it: every code glossed, no number broken from
its unit."""

import pytest

from tests.scenarios.test_chinese_words import unglossed


def test_the_chinese_help_page_as_shown_leaves_no_code_unglossed() -> None:
    from demo.screens.help import help_renderable

    assert unglossed(help_renderable("zh", 100).plain) == []


@pytest.mark.parametrize("width", [9, 11, 15])
def test_the_help_never_breaks_a_number_from_its_unit(width: int) -> None:
    from demo.screens.help import wrap

    for line in wrap("租期 60 秒，worker 每 20 秒发一次 heartbeat，共 3 步、12 页。", width):
        assert not line.startswith(("秒", "步", "页")) and not line.rstrip().endswith(
            ("60", "20", " 3", "12")
        ), line
