"""The books on screen: the Ledger marks the page where they break and says whose worlds
meet there; the Rejected panel says what a refused page would have written."""

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from core.engine.config import Mode
from core.scenarios.library import open_scenario
from demo.app import BorrowedKeysApp
from demo.screens.main import MainScreen
from demo.widgets.panels import BooksNote, LedgerTable, RefusedNote


def app_for(name: str, tmp_path: Path, lang: str) -> BorrowedKeysApp:
    return BorrowedKeysApp(
        open_scenario(name), open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )


async def _play_to_the_end(pilot: Pilot[Any], steps: int) -> None:
    for _ in range(steps):
        await pilot.press("n")
        await pilot.press("v")  # a step that asks first: reveal, and it plays
    await pilot.pause()


@pytest.mark.parametrize(
    ("lang", "said"),
    [("en", "The books break at page 3."), ("zh", "账本在第 3 页断开。")],
)
async def test_the_ledger_marks_the_page_where_the_books_break(
    tmp_path: Path, lang: str, said: str
) -> None:
    app = app_for("09_mistake_no_fencing", tmp_path, lang)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await pilot.press("1")  # the Ledger
        await pilot.pause()
        note = screen.query_one("#books-note", BooksNote)
        assert not note.display  # the books add up until his page comes back
        await _play_to_the_end(pilot, 5)
        assert note.display and str(note.render()).startswith(said)
        ledger = screen.query_one("#ledger", LedgerTable)
        rows = {str(ledger.get_row_at(i)[1]): ledger.get_row_at(i) for i in range(ledger.row_count)}
        # the key names its task as the screen does: floor6/3, 第六层/3
        p3, p4 = ("floor6/3", "floor6/4") if lang == "en" else ("第六层/3", "第六层/4")
        assert set(rows) >= {"✗ " + p3, p4} and p3 not in rows
        assert str(rows["✗ " + p3][3]) in ("1 (newest 2)", "1（最新 2）")
        assert str(rows[p4][3]) == "2"
        # page 1 was written under the newest lease of its time: no later claim makes it stale
        assert str(rows[p3.replace("/3", "/1")][3]) == "1"
        assert str(ledger.get_row_at(ledger.cursor_row)[1]) == "✗ " + p3  # brought into sight


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "over Elder's 340"), ("zh", "校对官第 3 页的 340")]
)
async def test_the_rejected_panel_says_what_the_fence_kept_out(
    tmp_path: Path, lang: str, said: str
) -> None:
    app = app_for("02_fire_midnight_return", tmp_path, lang)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await _play_to_the_end(pilot, 6)
        await pilot.press("3")  # the Rejected panel
        await pilot.pause()
        note = screen.query_one("#refused-note", RefusedNote)
        assert note.display and said in str(note.render()).replace("\n", "")
        await pilot.press("1")
        await pilot.pause()
        assert not screen.query_one("#books-note", BooksNote).display  # the books add up


async def test_at_80x24_the_ledger_keeps_its_header_and_two_rows_under_the_books(
    tmp_path: Path,
) -> None:
    # the narration folds, and what folding cannot give the body scrolls for: the table's
    # header and two pages stay in sight under the note that says where the books break
    app = app_for("09_mistake_no_fencing", tmp_path, "en")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await _play_to_the_end(pilot, 5)
        await pilot.pause()
        await pilot.pause()
        note = screen.query_one("#books-note", BooksNote)
        assert note.display
        ledger = screen.query_one("#ledger", LedgerTable)
        body = screen.query_one("#body")
        assert ledger.region.y + 1 + 2 <= body.region.bottom
        assert note.region.y >= body.region.y  # the note itself is in sight too


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "The lease check kept out what Acheng would have written (expired)"),
        ("zh", "租约校验挡下了阿澄本来要写的（租约已过期）"),
    ],
)
async def test_the_rejected_panel_says_which_check_refused(
    tmp_path: Path, lang: str, said: str
) -> None:
    # off the script: Acheng stalls at step 4, her lease runs out with nobody after it,
    # and the page she writes when she resumes is refused by the lease check, not the fence
    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        for key in ["n"] * 4 + ["z"] + ["right"] * 11 + ["u"] + ["right"] * 3 + ["3"]:
            await pilot.press(key)
        await pilot.pause()
        note = screen.query_one("#refused-note", RefusedNote)
        text = str(note.render()).replace("\n", "")
        assert note.display and text.startswith(said), text
        assert "fence" not in text and "围栏" not in text


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "The books break at page 3."), ("zh", "账本在第 3 页断开。")]
)
async def test_the_fog_under_no_fencing_marks_achengs_late_page(
    tmp_path: Path, lang: str, said: str
) -> None:
    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("home", *["down"] * list(Mode).index(Mode.NO_FENCING), "enter")
        await pilot.pause()
        await pilot.press("1")
        await _play_to_the_end(pilot, 17)
        note = screen.query_one("#books-note", BooksNote)
        assert note.display and str(note.render()).startswith(said), str(note.render())
        ledger = screen.query_one("#ledger", LedgerTable)
        keys = {str(ledger.get_row_at(i)[1]) for i in range(ledger.row_count)}
        floor = "floor6" if lang == "en" else "第六层"
        assert f"✗ {floor}/3" in keys and f"✗ {floor}/2" not in keys and f"{floor}/4" in keys


async def test_the_ledger_hands_an_unchanged_page_its_row_again_and_a_changed_one_new_cells(
    tmp_path: Path,
) -> None:
    """A refresh that changes no page gives the table back the same rows (so it compares
    nothing); what a page's cells are made of (the language here) makes them again."""
    app = app_for("09_mistake_no_fencing", tmp_path, "en")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await pilot.press("1")
        await _play_to_the_end(pilot, 5)
        ledger = screen.query_one("#ledger", LedgerTable)
        before = dict(zip(ledger.row_keys_shown(), ledger._rows.values(), strict=True))
        assert "floor6/3" in before and before["floor6/3"][1] == "✗ floor6/3"
        screen.refresh_view(force=True)
        await pilot.pause()
        after = dict(zip(ledger.row_keys_shown(), ledger._rows.values(), strict=True))
        assert after.keys() == before.keys()
        assert all(after[k] is before[k] for k in before)
        await pilot.press("l")  # 中文
        await pilot.pause()
        zh = dict(zip(ledger.row_keys_shown(), ledger._rows.values(), strict=True))
        assert zh["floor6/3"][1] == "✗ 第六层/3"
        assert str(zh["floor6/3"][3]) == "1（最新 2）"
