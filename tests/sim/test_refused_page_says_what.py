"""A refused page says what the stale write would have done, for pages that say no total too
(the tools kinds' pages, 13's "call_api #3 -> artifact://..."): whose accepted page it would
have covered and under which tokens, or that the page was still empty."""

import pytest

from core.engine.config import Mode
from core.engine.records import LedgerRow
from core.scenarios.sentences import books_sentences, refused_note, refused_page_sentence
from tests.sim.test_books import played

PAGE = "call_api #3 -> artifact://report/3-call_api.json"


def _row(key: str, value: str, writer: str, fence: int) -> LedgerRow:
    return LedgerRow(key, value, fence, writer, 0, "report")


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "en",
            "The fence kept out what A would have written: “call the API #3 -> "
            "artifact://report/3-call_api.json”. It would have put that over B's page 3 (fence "
            "token 2): the same words, but then as A's page (fence token 1), from a lease that "
            "is no longer current.",
        ),
        (
            "zh",
            "围栏挡下了执行者 A 本来要写的：“第 3 步调用 API，产物存于 artifact://report/3-call_api.json”。"
            "它会盖掉执行者 B 写的第 3 页（围栏令牌 2）：字一样，"
            "可这一页就成了执行者 A 凭已不再有效的租约写的（围栏令牌 1）。",
        ),
    ],
)
def test_the_portfolio_demos_refusal_names_the_page_it_would_have_covered(
    lang: str, said: str
) -> None:
    sim = played("13_portfolio_demo", Mode.CORRECT)
    try:
        assert refused_note(sim.snapshot(), lang) == said
    finally:
        sim.close()


def test_a_different_page_is_quoted_and_an_empty_one_said_empty() -> None:
    there = [_row("report/3", "call_api #3 -> artifact://report/3-other.json", "B", 2)]
    said = refused_page_sentence("A", "report/3", "report", PAGE, there, fence_token=1)
    assert said.endswith(
        "It would have put that over B's page 3 (fence token 2), which says “call the API #3 "
        "-> artifact://report/3-other.json”."
    )
    said = refused_page_sentence("A", "report/3", "report", PAGE, [], "zh", reason="expired")
    assert said.startswith("租约校验挡下了执行者 A 本来要写的（租约已过期）")
    assert said.endswith("第 3 页还空着：它会成为那里的第一页，来自一份已不再有效的租约。")


def test_a_late_page_let_in_says_whose_page_it_took_the_place_of() -> None:
    # 13 under mistake three: A's page 3 says no total, so no sum fails; it was written over
    # B's accepted page 3, and the books say so
    sim = played("13_portfolio_demo", Mode.NO_FENCING)
    try:
        said = {key: text for key, text, _stale in books_sentences(sim.snapshot(), "en")}
        assert said["report/3"] == (
            "Page 3 is A's, written when A's lease was no longer the task's current one (fence "
            "token 1, newest 2), over B's page (fence token 2): a page of another world, let "
            "into the ledger in place of the current one's."
        )
    finally:
        sim.close()
