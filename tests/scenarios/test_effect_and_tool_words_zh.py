"""On a Chinese screen an effect's key and a tool step's page are sentences: the event log
names a call as the Effects panel does ("第 3 步：调用内部 API"), not "agent/3/api_call", and a
tool page says its step and verb, the artifact's address kept as written."""

import re

import pytest

from core.engine.records import EventRow
from core.scenarios.glossary import ledger_value
from core.scenarios.telling import effect_key_words, event_sentence

LATIN_ID = re.compile(r"[a-z]+(?:[/_][a-z0-9]+)+")


@pytest.mark.parametrize("event", ["effect_applied", "effect_deduplicated"])
def test_an_effect_event_names_the_call_as_the_effects_panel_does(event: str) -> None:
    row = EventRow(1, 30_000, event, "agent", "acheng", 1, 1, detail={"key": "agent/3/api_call"})
    zh = event_sentence(row, "zh")
    assert "第 3 步：调用内部 API" in zh and not LATIN_ID.search(zh), zh
    en = event_sentence(row, "en")
    assert "step 3: the internal API" in en and "agent/3/api_call" not in en, en


def test_a_key_of_another_shape_is_said_as_written() -> None:
    assert effect_key_words("charge-7", "zh") == "charge-7"
    assert effect_key_words("agent/x/api_call", "zh") == "agent/x/api_call"


def test_a_tool_page_is_a_sentence_in_chinese() -> None:
    page = "call_api #3 -> artifact://agent/3-call_api.json"
    said = ledger_value(page, "zh")
    assert said == "第 3 步调用 API，产物存于 artifact://agent/3-call_api.json"
    assert ledger_value(page, "en").endswith("#3 -> artifact://agent/3-call_api.json")
