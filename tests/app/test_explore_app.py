"""The app's "Explore this mode…": the search in a worker thread, its counterexamples listed,
and a chosen one played as a scenario, at 80x24."""

from pathlib import Path

from textual.widgets import OptionList, ProgressBar

from core.engine.config import Mode
from demo.app import BorrowedKeysApp
from demo.screens.explore import ExploreScreen
from demo.screens.main import MainScreen

SMALL = (80, 24)


async def test_exploring_a_mistake_lists_its_counterexamples_and_plays_one(
    tmp_path: Path,
) -> None:
    app = BorrowedKeysApp(open_directly=True, lang="en", live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        screen = ExploreScreen(Mode.NO_FENCING, "en", tmp_path / "explore", depth=4)
        app.push_screen(screen)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.report is not None and not screen.report.ok
        options = screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == [
            "page without a live lease · 3 steps",
            "stale write accepted · 4 steps",
        ]
        progress = screen.query_one(ProgressBar)
        assert progress.progress == progress.total == 4
        options.highlighted = 1  # the stale write
        await pilot.press("enter")
        await pilot.pause()
        main = app.screen
        assert isinstance(main, MainScreen)
        assert "stale write accepted" in main.session.title("en")
        assert len(main.session.steps) == 4


async def test_exploring_the_correct_mode_says_no_rule_was_broken(tmp_path: Path) -> None:
    app = BorrowedKeysApp(open_directly=True, lang="zh", live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        screen = ExploreScreen(Mode.CORRECT, "zh", tmp_path / "explore", depth=3)
        app.push_screen(screen)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        options = screen.query_one(OptionList)
        assert options.option_count == 1
        assert "3 步之内没有违反任何规则" in str(options.get_option_at_index(0).prompt)


async def test_the_palette_offers_explore_this_mode(tmp_path: Path) -> None:
    from demo.commands import main_screen_commands

    app = BorrowedKeysApp(open_directly=True, lang="en", live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        main = app.screen
        assert isinstance(main, MainScreen)
        entry = next(c for c in main_screen_commands(main, "en") if c.title == "Explore this mode…")
        entry.callback()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExploreScreen)
        assert screen.mode is main.session.mode and screen.out_dir == tmp_path / "explore"
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.report is not None and screen.report.ok
