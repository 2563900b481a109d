"""The step's point on screen at every size: on a small screen the narration folds to its
first lines (`d` opens and closes it), and the panel the step is about keeps at least five
rows in sight.

The live clock is off (`live_clock=False`): time moves only by key presses.
"""

from pathlib import Path

import pytest
from textual.pilot import Pilot

from core.engine.modes import Mode
from core.scenarios.library import open_scenario
from demo.app import BorrowedKeysApp
from demo.screens.drawing import PANEL_ROWS
from demo.screens.main import MainScreen
from demo.widgets.narration import NarrationPanel
from tests.app.apps import at_step


def app_for(lang: str, tmp_path: Path) -> BorrowedKeysApp:
    return BorrowedKeysApp(
        open_scenario("01_fog"), open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )


async def to_step(pilot: Pilot[int], screen: MainScreen, k: int) -> None:
    """To just after step k, by the step list's jump."""
    await at_step(pilot, k)


def rows_in_sight(screen: MainScreen, selector: str) -> int:
    """The rows of a part of the body that are on screen (the body may scroll)."""
    body = screen.query_one("#body").region
    return body.intersection(screen.query_one(selector).region).height


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("step", [12, 17])
async def test_at_100x30_the_ledger_keeps_its_rows_below_a_long_step(
    tmp_path: Path, lang: str, step: int
) -> None:
    app = app_for(lang, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await to_step(pilot, screen, step)
        assert rows_in_sight(screen, "#panels") >= 2 + PANEL_ROWS  # the tabs, then its rows
        assert rows_in_sight(screen, "#workers") > 0  # the panes stay too


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_d_opens_the_folded_narration_and_closes_it(tmp_path: Path, lang: str) -> None:
    app = app_for(lang, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await to_step(pilot, screen, 17)
        narration = screen.query_one("#narration", NarrationPanel)
        assert narration.hidden_lines > 0  # folded: the rest is a key away
        assert "d" in str(narration.render()).splitlines()[-1]  # and its last line says so
        await pilot.press("d")  # the whole step
        await pilot.pause()
        assert narration.hidden_lines == 0
        await pilot.press("d")  # folded again
        await pilot.pause()
        assert narration.hidden_lines > 0
        await pilot.press("d", "p", "n")  # opened; another step comes folded again
        await pilot.pause()
        assert screen.session.position == 17 and narration.hidden_lines > 0


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_80x24_a_panel_brought_into_view_keeps_five_rows(
    tmp_path: Path, lang: str
) -> None:
    app = app_for(lang, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await to_step(pilot, screen, 14)
        await pilot.press("3")  # the Rejected panel, where the step's refusal is
        await pilot.pause()
        assert rows_in_sight(screen, "#rejected") >= PANEL_ROWS
        assert screen.query_one("#narration", NarrationPanel).hidden_lines > 0


async def test_a_question_is_never_folded(tmp_path: Path) -> None:
    app = app_for("en", tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        s = screen.session
        while s.question is None:
            await pilot.press("n")
        await pilot.pause()
        narration = screen.query_one("#narration", NarrationPanel)
        assert narration.hidden_lines == 0
        for n, choice in enumerate(s.question.choices_in("en"), start=1):
            assert f"{n}. {choice[:20]}" in str(narration.render())


async def test_a_large_screen_shows_the_step_whole(tmp_path: Path) -> None:
    app = app_for("en", tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await to_step(pilot, screen, 17)
        assert screen.query_one("#narration", NarrationPanel).hidden_lines == 0


@pytest.mark.parametrize(
    ("name", "mode", "step", "lang", "said"),
    [
        # the fence's refusal, whole, where the story's first lines would have stood
        ("01_fog", None, 14, "en", "is refused: fence token 1 is behind the current 2"),
        ("01_fog", None, 14, "zh", "被拒收：围栏令牌 1 落后于当前的 2"),
        # a step this mode cannot play is said, not folded away behind d
        ("00_story_2_fog", "no_expiry", 14, "en", "step 14 cannot run"),
        ("00_story_2_fog", "no_expiry", 14, "zh", "第 14 步无法执行"),
    ],
)
async def test_at_80x24_the_folded_narration_keeps_what_went_wrong(
    tmp_path: Path, name: str, mode: str | None, step: int, lang: str, said: str
) -> None:
    app = BorrowedKeysApp(
        open_scenario(name),
        open_directly=True,
        lang=lang,
        live_clock=False,
        save_dir=tmp_path,
        mode=None if mode is None else Mode(mode),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await to_step(pilot, screen, step)
        narration = screen.query_one("#narration", NarrationPanel)
        assert narration.hidden_lines > 0  # folded
        shown = "".join(str(narration.render()).split())
        assert "".join(said.split()) in shown, shown


async def test_what_a_failed_check_found_is_kept_with_its_check() -> None:
    """The fold keeps the first red sentence; when it is what a ✗ check found, the check's
    own line (here wrapped over two) comes with it: "found: 1" alone says nothing."""
    from rich.text import Text
    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield NarrationPanel(id="narration")

    text = Text()
    for n in range(1, 6):
        text.append(f"The story's line {n}.\n", style="italic")
    text.append(" ✓ ", style="bold green")
    text.append("Page 1 is written by Acheng.\n")
    text.append(" ✗ ", style="bold red")
    text.append("Acheng was refused once: fenced, and the rest of this check wraps " * 2 + "\n")
    text.append("   found: 0 refusals", style="red")
    async with One().run_test(size=(60, 20)) as pilot:
        panel = pilot.app.query_one(NarrationPanel)
        panel.show(text, fold=5)
        await pilot.pause()
        shown = str(panel.render())
        assert panel.hidden_lines > 0
        assert "found: 0 refusals" in shown
        assert "✗ Acheng was refused once" in shown
