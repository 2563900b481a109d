"""The check of the books: the totals chain breaks exactly at a page from another world.

A late holder writes from its own memory, so its page is not the current holder's page
written twice; in a mode that takes it, the chain of totals breaks at it and nowhere else,
and in the correct mode it never breaks. A page is blamed only when the checker found its
writer's lease was not the task's current, live one at the instant of the write; a break
between two pages of current leases is a step done again, and is said as that.
"""

import dataclasses
import json
from importlib.resources import files

import pytest

from core.engine.config import Mode
from core.engine.records import LedgerRow
from core.scenarios.format import load_scenario
from core.scenarios.sentences import (
    books_sentences,
    page_fence,
    refused_page_sentence,
    seam_sentence,
)
from core.sim.books import Figures, broken_pages, check_books, figures, refused_page
from core.sim.kinds import LEDGER, edition
from core.sim.simulation import Simulation
from core.tools.cli import main
from tests.sim.test_books_every_mode import Register

BUNDLED = sorted(
    p.name.removesuffix(".toml") for p in files("scenarios").iterdir() if p.name.endswith(".toml")
)


def _row(step: int, grain: int, total: int, writer: str, fence: int) -> LedgerRow:
    return LedgerRow(
        f"floor6/{step}",
        f"page {step}: west ferry {grain} dan (total {total})",
        fence,
        writer,
        0,
        "floor6",
    )


def test_a_chain_from_one_world_holds() -> None:
    rows = [_row(1, 100, 100, "a", 1), _row(2, 50, 150, "a", 1), _row(3, 7, 157, "b", 2)]
    assert check_books(rows) == ()


def test_a_page_from_an_older_world_breaks_the_chain_there_and_nowhere_else() -> None:
    rows = [
        _row(1, 100, 100, "linzhou", 1),
        _row(2, 50, 150, "linzhou", 1),
        _row(3, 9, 159, "linzhou", 1),  # his page, over hers (150 + 20 = 170)
        _row(4, 30, 200, "elder", 2),  # built on her own 170
        _row(5, 10, 210, "elder", 2),
    ]
    (seam,) = check_books(rows, {"floor6/3"})
    assert seam.key == "floor6/3" and seam.other.key == "floor6/4"
    assert (seam.before_total, seam.after_amount, seam.after_total) == (159, 30, 200)


def test_the_stale_page_is_the_checkers_word_not_the_lower_token() -> None:
    # a redo under the newer lease (token 2) over a page of the older one: the lower token
    # is a healthy page, written under its lease while it was current
    rows = [_row(1, 68, 68, "linzhou", 2), _row(2, 54, 223, "acheng", 1)]
    (seam,) = check_books(rows)
    assert seam.stale is None and seam.key == "floor6/1" and seam.redo.writer == "linzhou"
    assert broken_pages(rows) == frozenset()
    # before the fence tag no token tells them apart: the checker's word still does
    rows = [_row(2, 50, 150, "linzhou", 0), _row(3, 9, 159, "linzhou", 0)]
    rows.append(_row(4, 30, 200, "elder", 0))
    assert broken_pages(rows, {"floor6/3"}) == {"floor6/3"}
    # a stale page nobody has built on yet is named too: the chain cannot say it
    assert broken_pages(rows[:2], {"floor6/3"}) == {"floor6/3"}


def test_figures_read_both_languages_and_pages_without_totals_are_no_links() -> None:
    assert figures("page 3: west ferry 73 dan (total 288)") == Figures(73, 288)
    said = figures("第 3 页：西渡口 73 石（累计 288）")
    assert said is not None and (said.amount, said.total) == (73, 288)
    assert figures("page 1: north bank, 120 dan") is None
    assert figures("open https://archive.example/t/page/1") is None


def test_a_refused_page_is_read_against_the_page_there() -> None:
    there = _row(3, 117, 340, "elder", 2)
    found = refused_page("page 3: stone bridge 73 dan (total 296)", "floor6/3", [there])
    assert found is not None and (found.total, found.over_total) == (296, 340)
    assert found.over is there
    assert refused_page(there.value, "floor6/3", [there]) is None  # the same page: no harm


def played(name: str, mode: Mode | None = None) -> Simulation:
    scenario = load_scenario(str(files("scenarios") / f"{name}.toml"))
    settings = scenario.settings
    if mode is not None:
        settings = dataclasses.replace(settings, mode=mode)
    sim = Simulation(settings)
    for step in scenario.steps:
        if step.action is not None:
            sim.apply(step.action)
    return sim


def stale_pages(sim: Simulation) -> set[str]:
    """The pages the ledger holds now that were written under a lease that was not the
    task's current, live one: from the register, not from what the pages say."""
    register = Register(expiry=sim.mode is not Mode.NO_EXPIRY)
    register.feed(sim.events(0))
    return register.stale_in({row.key for row in sim.snapshot().ledger})


def stale(sim: Simulation) -> frozenset[str]:
    return frozenset(sim.snapshot().stale_pages)


@pytest.mark.parametrize("name", BUNDLED)
def test_each_bundled_scenario_breaks_the_books_exactly_at_its_stale_pages(name: str) -> None:
    sim = played(name)
    try:
        assert broken_pages(sim.snapshot().ledger, stale(sim)) == stale_pages(sim)
    finally:
        sim.close()


@pytest.mark.parametrize(
    ("name", "page"), [("00_story_4a_fire", "floor6/3"), ("09_mistake_no_fencing", "floor6/3")]
)
def test_the_stale_write_lessons_break_the_books_at_the_late_page(name: str, page: str) -> None:
    sim = played(name)
    try:
        ledger = sim.snapshot().ledger
        (seam,) = check_books(ledger, stale(sim))
        assert seam.key == page and seam.stale is not None and seam.stale.writer == "linzhou"
        assert seam.other.writer == "elder"
    finally:
        sim.close()


@pytest.mark.parametrize("name", BUNDLED)
def test_in_the_correct_mode_the_books_never_break(name: str) -> None:
    sim = played(name, Mode.CORRECT)
    try:
        assert check_books(sim.snapshot().ledger, stale(sim)) == ()
    finally:
        sim.close()


def test_the_late_page_is_not_the_current_holders_page_written_twice() -> None:
    # the same fire and return with the fence: the elder's page 3 stays, and his, refused,
    # said another total
    fenced = played("09_mistake_no_fencing", Mode.CORRECT)
    taken = played("09_mistake_no_fencing")
    try:
        hers = next(p for p in fenced.snapshot().ledger if p.key == "floor6/3")
        his = next(p for p in taken.snapshot().ledger if p.key == "floor6/3")
        assert (hers.writer, his.writer) == ("elder", "linzhou")
        mine, theirs = figures(his.value), figures(hers.value)
        assert mine is not None and theirs is not None and mine.total != theirs.total
    finally:
        fenced.close()
        taken.close()


def test_the_fence_keeps_out_a_page_and_the_refusal_says_what_it_would_have_written() -> None:
    sim = played("09_mistake_no_fencing", Mode.CORRECT)
    try:
        snap = sim.snapshot()
        (refused,) = [r for r in snap.rejections if r.operation == "write"]
        assert refused.worker_id == "linzhou" and refused.key == "floor6/3"
        assert refused.value == "page 3: stone bridge 73 dan (total 296)"
        en = refused_page_sentence("linzhou", "floor6/3", "floor6", refused.value, snap.ledger)
        assert en == (
            "The fence kept out what Linzhou would have written: “page 3: stone bridge 73 dan"
            " (total 296)”. It would have put total 296 over Elder's 340 on page 3."
        )
        zh = refused_page_sentence(
            "linzhou", "floor6/3", "floor6", refused.value, snap.ledger, "zh"
        )
        assert "296" in zh and "校对官第 3 页的 340" in zh and "_" not in zh
    finally:
        sim.close()


def test_the_broken_page_is_said_in_both_languages() -> None:
    sim = played("09_mistake_no_fencing")
    try:
        (seam,) = check_books(sim.snapshot().ledger, stale(sim))
        assert seam_sentence(seam) == (
            "The books break at page 3. It is Linzhou's page, written from the memory of an"
            " old lease (fence token 1); page 4 is Elder's (fence token 2), built on another"
            " total: 296 + 138 is not 478. Two worlds meet here."
        )
        zh = seam_sentence(seam, "zh")
        assert zh.startswith("账本在第 3 页断开。这一页是临舟") and "校对官" in zh
    finally:
        sim.close()


def test_a_page_older_than_its_task_shows_the_newest_token_beside_its_own() -> None:
    assert page_fence(1, 2) == "1 (newest 2)"
    assert page_fence(1, 2, "zh") == "1（最新 2）"
    assert page_fence(2, 2) == "2" and page_fence(2, None) == "2"


def test_play_says_where_the_books_break_and_what_the_fence_kept_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["play", "09_mistake_no_fencing"]) == 0
    out = capsys.readouterr().out
    assert out.count("✗ The books break at page 3.") == 1
    assert main(["play", "02_fire_midnight_return", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "• 围栏挡下了临舟本来要写的" in out and "账本在" not in out
    assert main(["play", "09_mistake_no_fencing", "--json"]) == 0
    books = [
        r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["type"] == "books"
    ]
    assert [(r["broken"], r["writer"], r["meets"]) for r in books] == [
        ("floor6/3", "linzhou", "floor6/4")
    ]


@pytest.mark.parametrize(("name", "step"), [("00_story_4a_fire", 6), ("09_mistake_no_fencing", 5)])
def test_the_narration_points_at_the_break_with_the_runs_own_figures(name: str, step: int) -> None:
    scenario = load_scenario(str(files("scenarios") / f"{name}.toml"))
    sim = played(name)
    try:
        (seam,) = check_books(sim.snapshot().ledger, stale(sim))
    finally:
        sim.close()
    said = f"{seam.before_total} + {seam.after_amount}"
    for lang in ("en", "zh"):
        say = scenario.steps[step - 1].narration(lang) or ""
        assert said in say and str(seam.after_total) in say and "3" in say


def test_the_first_holder_reads_the_reports_as_filed_and_any_later_one_the_recount() -> None:
    assert [edition(n) for n in (1, 2, 3, 7)] == [1, 2, 2, 2]
    start = LEDGER.initial_state("floor6", 8)
    assert LEDGER.take(start, 1) == start  # the first holder's memory is as it always was
    first = LEDGER.run_step("floor6", 3, 8, LEDGER.take(start, 1)).page
    later = LEDGER.run_step("floor6", 3, 8, LEDGER.take(start, 2)).page
    assert first != later and later == LEDGER.run_step("floor6", 3, 8, LEDGER.take(start, 5)).page


def test_mistake_four_breaks_the_books_at_a_redo_and_says_so_in_both_languages() -> None:
    scenario = load_scenario(str(files("scenarios") / "10_mistake_no_checkpoint.toml"))
    sim = Simulation(scenario.settings)
    try:
        for step in scenario.steps[:4]:
            assert step.action is not None
            sim.apply(step.action)
        snap = sim.snapshot()
        (key, en, old), *_ = books_sentences(snap, "en")
        assert (key, old) == ("floor6/1", False) and len(books_sentences(snap)) == 1
        assert en == (
            "The books do not add up at page 1, and no page there is stale: Linzhou did step 1"
            " again and read other figures this time. Page 1 now says total 68; page 2,"
            " Acheng's, was built on 169: 68 + 54 is not 223. Work done again, not two worlds."
        )
        (_, zh, _), *_ = books_sentences(snap, "zh")
        assert "临舟把第 1 步又做了一遍" in zh and "旧租约" not in zh and "阿澄" in zh
    finally:
        sim.close()


def test_a_page_the_lease_check_refused_is_not_said_as_the_fences() -> None:
    there = _row(3, 117, 340, "elder", 2)
    value = "page 3: stone bridge 73 dan (total 296)"
    en = refused_page_sentence("linzhou", "floor6/3", "floor6", value, [there], reason="expired")
    assert en.startswith("The lease check kept out what Linzhou would have written (expired)")
    assert "fence" not in en and "over Elder's 340" in en
    zh = refused_page_sentence(
        "linzhou", "floor6/3", "floor6", value, [there], "zh", reason="superseded"
    )
    assert zh.startswith("租约校验挡下了临舟本来要写的（已有新租约）") and "围栏" not in zh


def test_no_scripted_page_announces_that_it_is_stale() -> None:
    for name in BUNDLED:
        for step in load_scenario(str(files("scenarios") / f"{name}.toml")).steps:
            action = step.action
            for text in (getattr(action, "value", None), getattr(action, "value_zh", None)):
                assert text is None or ("stale" not in text and "过期" not in text), name


def test_the_fogs_late_page_is_what_acheng_read_under_her_lease() -> None:
    # the file gives no page: the one written is what her memory makes at that instant, not
    # a page written to look late; the books tell it from Linzhou's by what each read
    scenario = load_scenario(str(files("scenarios") / "01_fog.toml"))
    sim = Simulation(scenario.settings)
    try:
        late = None
        for step in scenario.steps:
            action = step.action
            assert action is not None
            if getattr(action, "key", None) == "floor6/3" and action.name == "write":
                assert getattr(action, "value", "") is None
                work = sim.workers["acheng"].work
                assert work is not None
                late = LEDGER.run_step("floor6", 3, 6, work.state_at(2)).page
                assert sim.own_page("acheng", "floor6/3") == late
            sim.apply(action)
        assert late == "page 3: stone bridge 73 dan (total 288)"
        (refused,) = [r for r in sim.snapshot().rejections if r.operation == "write"]
        assert refused.value == late
    finally:
        sim.close()
    for mode, broken in ((Mode.NO_FENCING, {"floor6/3"}), (Mode.CORRECT, set())):
        taken = played("01_fog", mode)
        try:
            assert broken_pages(taken.snapshot().ledger, stale(taken)) == broken
        finally:
            taken.close()
    fenced = played("01_fog", Mode.CORRECT)
    try:
        snap = fenced.snapshot()
        (refused,) = [r for r in snap.rejections if r.operation == "write"]
        assert refused.value is not None
        said = refused_page_sentence("acheng", "floor6/3", "floor6", refused.value, snap.ledger)
        assert said.endswith("It would have put total 288 over Linzhou's 332 on page 3.")
    finally:
        fenced.close()
