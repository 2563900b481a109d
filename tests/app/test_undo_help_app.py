"""The help page says how far undo goes back."""

from core.scenarios.session import MAX_UNDO
from demo.controls import CONTROLS


def test_the_help_page_says_the_undo_depth() -> None:
    previous = next(c for c in CONTROLS if c.action == "previous_step" and c.help is not None)
    assert previous.help is not None
    assert f"{MAX_UNDO} in a row at most" in previous.help.en
    assert f"最多连续 {MAX_UNDO} 个" in previous.help.zh
