"""The app's word tables (demo/words) join into one, and a word two tables define is refused."""

import pytest

from demo.i18n import WORDS, _joined
from demo.words.fleet import FLEET
from demo.words.panels import PANELS
from demo.words.presenter import PRESENTER
from demo.words.serve import SERVE


def test_every_part_is_in_the_one_table() -> None:
    for table in (FLEET, PANELS, PRESENTER, SERVE):
        assert table.items() <= WORDS.items()


def test_a_word_defined_twice_is_a_mistake_not_an_override() -> None:
    with pytest.raises(ValueError, match="defined twice: \\['undo'\\]"):
        _joined({"undo": ("Undo", "撤销")}, {"undo": ("Take back", "收回")})
