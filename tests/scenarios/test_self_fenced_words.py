"""A self-fenced worker's line says which deadline it passed, and a record that does not say
(a run saved before records carried it) is still a sentence, with no hole where the time was."""

import pytest

from core.engine.records import EventRow
from core.scenarios.telling import event_sentence


def _row(**detail: object) -> EventRow:
    return EventRow(1, 49_210, "self_fenced", "t2", "acheng", 1, 2, "renew_deadline_passed", detail)


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "Acheng stops of their own accord: no renewal by the renew deadline 0:00:11"),
        ("zh", "阿澄主动停手：续约截止时刻 0:00:11 已过，没有续上"),
    ],
)
def test_the_deadline_passed_is_named(lang: str, said: str) -> None:
    assert event_sentence(_row(renew_deadline=11_000), lang) == said


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "Acheng stops of their own accord: no renewal by the renew deadline"),
        ("zh", "阿澄主动停手：续约截止时刻已过，没有续上"),
    ],
)
def test_a_record_without_its_deadline_leaves_no_hole(lang: str, said: str) -> None:
    assert event_sentence(_row(), lang) == said
