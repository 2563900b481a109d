"""A page is written in the language of its moment; a screen that switches language after
(the app's `l`) says the pages, and a refused page's note, in the new one: the snapshot
keeps both forms of each scripted page, and the words are made when it is drawn."""

import re

import pytest

from core.scenarios.glossary import page_words
from core.scenarios.library import open_scenario
from core.scenarios.sentences import refused_note
from core.scenarios.session import Session

LATE = {"en": "page 3: stone bridge 73 dan (total 288)", "zh": "第 3 页：石桥 73 石（累计 288）"}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _to_the_refused_page(lang: str) -> Session:
    session = Session(open_scenario("01_fog"), lang=lang)
    while refused_note(session.snapshot(), lang) is None:
        played = session.next_step() or session.reveal()  # a question waits for its reveal
        assert played is not None, "01_fog refuses Acheng's stale page"
    return session


@pytest.mark.parametrize(("first", "then"), [("zh", "en"), ("en", "zh")])
def test_a_refused_pages_note_follows_the_language_switched_to(first: str, then: str) -> None:
    session = _to_the_refused_page(first)
    assert LATE[first] in (refused_note(session.snapshot(), first) or "")
    session.lang = then  # what the app's `l` does
    note = refused_note(session.snapshot(), then) or ""
    assert LATE[then] in note and LATE[first] not in note, note
    if then == "en":
        assert not _CJK.search(note), note


def test_the_ledgers_pages_follow_it_too() -> None:
    session = _to_the_refused_page("zh")
    snap = session.snapshot()
    (first,) = [p for p in snap.ledger if p.key == "floor6/1"]
    assert first.value == "第 1 页：北岸 120 石（累计 120）"  # the store keeps what was written
    assert (
        page_words(first.value, "en", snap.page_forms) == "page 1: north bank 120 dan (total 120)"
    )
    assert page_words(first.value, "zh", snap.page_forms) == first.value
