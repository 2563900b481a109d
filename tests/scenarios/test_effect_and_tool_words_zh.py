"""On a Chinese screen an effect's key and a tool step's page are sentences: the event log
names a call as the Effects panel does ("第 3 步：调用内部 API"), not "agent/3/api_call", and a
tool page says its step and verb, the artifact's address kept as written."""

import re

import pytest

from core.engine.records import EventRow
from core.scenarios.glossary import ledger_value
from core.scenarios.telling import effect_key_words, event_sentence, page_key_words

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


def test_a_tools_result_says_its_charges_by_their_numbers_in_chinese() -> None:
    receipts = '["ch_1", "ch_4", "ch_13"]'
    assert ledger_value(receipts, "zh") == "收费单 1、4、13 号"
    assert ledger_value(receipts, "en") == "charges ch_1, ch_4, ch_13"
    assert ledger_value('["ch_1", "x"]', "zh") == '["ch_1", "x"]'  # another shape as written


@pytest.mark.parametrize(
    ("key", "task", "said"),
    [("t2/result", "t2", "任务 2 的结果"), ("floor6/sent", "floor6", "第六层的回信")],
)
def test_an_artifact_of_the_service_is_named_as_a_sentence_in_chinese(
    key: str, task: str, said: str
) -> None:
    assert page_key_words(key, task, "zh", named=True) == f"\x1f{said}\x1f"
    assert page_key_words(key, task, "en", named=True) == key


def test_an_approvals_draft_names_its_task_in_chinese() -> None:
    assert ledger_value("refund for t1", "zh") == "任务 1 的退款"
    assert ledger_value("refund for floor6", "zh") == "floor6 的退款"
    assert ledger_value("refund for t1", "en") == "refund for t1"
