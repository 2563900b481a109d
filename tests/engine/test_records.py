"""The records' JSON: an event's detail text, kept for its next use, is always the text
`dump_json` gives for that detail."""

import enum

import pytest

from core.engine.records import detail_json, dump_json
from core.engine.vocabulary import Operation


class _Word(enum.StrEnum):
    HEARTBEAT = "heartbeat"


# Each pair is equal as Python values (so equal as dict keys) but not as JSON text.
_LOOKALIKES = [
    ({"x": 1}, {"x": True}),
    ({"x": 0}, {"x": False}),
    ({"x": 1}, {"x": 1.0}),
    ({"x": 0.0}, {"x": -0.0}),
    ({"x": (1, 1)}, {"x": (1, True)}),
    ({"x": Operation.HEARTBEAT}, {"x": "heartbeat"}),
    ({"x": Operation.HEARTBEAT}, {"x": _Word.HEARTBEAT}),
]


@pytest.mark.parametrize(("first", "then"), _LOOKALIKES)
def test_a_kept_detail_text_is_the_text_dump_json_gives(
    first: dict[str, object], then: dict[str, object]
) -> None:
    for detail in (first, then, first, then):
        assert detail_json(detail) == dump_json(detail)


def test_a_detail_gives_one_text_in_any_key_order() -> None:
    assert detail_json({"a": 1, "b": "x"}) == detail_json({"b": "x", "a": 1}) == '{"a":1,"b":"x"}'


def test_a_detail_dump_json_refuses_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValueError):
            detail_json({"x": float("nan")})
