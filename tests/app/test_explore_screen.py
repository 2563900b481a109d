"""The explorer screen ("Explore this mode…"): opened from the palette, its progress, what it
found, a chosen counterexample played, and Esc, while the search runs and after, leaving no
thread behind and no hang. Bounds are tiny: each test is a second or two of search.

A thread is waited for with a timeout (`_ended`), and so is Esc (`_esc`), so a search that
does not stop, or a screen whose removal never ends, fails the test instead of hanging the
suite.
"""

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import OptionList, ProgressBar, Static

from core.engine.config import Mode
from core.scenarios.library import open_scenario
from core.search.explore.bfs import ExploreParams, explore
from demo.app import BorrowedKeysApp
from demo.screens.explore import APP_DEPTH, ExploreScreen
from demo.screens.main import MainScreen

SMALL = (80, 24)
# Far more than a test waits for (minutes), but finite: a search that does not stop fails
# the test, and its thread still ends before the interpreter waits for it for ever.
DEEP = 9


Test = Callable[..., Coroutine[Any, Any, None]]


def bounded(seconds: float) -> Callable[[Test], Test]:
    """The whole test, the app's shutdown included, within `seconds`: a hang fails it."""

    def wrap(test: Test) -> Test:
        @functools.wraps(test)
        async def run(*args: Any, **kwargs: Any) -> None:
            await asyncio.wait_for(test(*args, **kwargs), seconds)

        return run

    return wrap


def app_in(
    tmp_path: Path, lang: str = "en", scenario: str | None = None, mode: Mode | None = None
) -> BorrowedKeysApp:
    """The app on the sandbox (in `mode`), or on a bundled scenario."""
    return BorrowedKeysApp(
        None if scenario is None else open_scenario(scenario),
        open_directly=True,
        lang=lang,
        live_clock=False,
        save_dir=tmp_path,
        mode=mode,
    )


async def _ended(screen: ExploreScreen, timeout_s: float = 10.0) -> bool:
    """Whether the search's thread ended within the timeout (waited for off the loop)."""
    return await asyncio.to_thread(screen.search_done.wait, timeout_s)


async def _settle(pilot: Pilot[Any], screen: ExploreScreen) -> None:
    """The search ended and the app has shown its result."""
    assert await _ended(screen)
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _running(pilot: Pilot[Any], screen: ExploreScreen, levels: int = 2) -> None:
    """Until the screen has shown `levels` levels of progress (the search is under way):
    woken by each level the screen shows, not by a clock."""
    shown = asyncio.Event()
    show = screen._show_level

    def counted(level: Any) -> None:
        show(level)
        if len(screen.levels) >= levels:
            shown.set()

    screen._show_level = counted  # type: ignore[method-assign]  # the search thread calls it by name
    try:
        if len(screen.levels) < levels:
            await asyncio.wait_for(shown.wait(), 30.0)
    except TimeoutError:
        raise AssertionError(f"no progress: {screen.levels}") from None
    finally:
        del screen._show_level
    await pilot.pause()


async def _palette_offers(pilot: Pilot[Any], title: str) -> None:
    """Until the palette's first hit is `title` (its search runs as messages on the loop, so
    each pause lets it go on; the test's own bound fails a palette that never finds it)."""
    while True:
        hits = pilot.app.screen.query_one(OptionList)
        if hits.option_count and title in str(hits.get_option_at_index(0).prompt):
            return
        await pilot.pause()


async def _esc(pilot: Pilot[Any]) -> None:
    """Esc, failing (not hanging) if the screen's removal never finishes."""
    await asyncio.wait_for(pilot.press("escape"), 10.0)
    await pilot.pause()


def labels(screen: ExploreScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def status(screen: ExploreScreen) -> str:
    return str(screen.query_one("#explore-status", Static).render())


# -- the search's stop flag, below the screen ------------------------------------------------


def test_the_search_stops_between_states_when_asked() -> None:
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        return asked > 30  # after 30 states expanded, well inside depth 4

    report = explore(ExploreParams(mode=Mode.CORRECT, depth=DEEP), stop=stop)
    assert report.stopped and not report.exhausted
    assert asked == 31 and report.depth < 5
    assert "stopped at depth" in report.claim()
    whole = explore(ExploreParams(mode=Mode.CORRECT, depth=report.depth))
    assert not whole.stopped and report.states > whole.states  # it kept what it had found


# -- the screen ---------------------------------------------------------------------------


@bounded(60)
async def test_the_palette_opens_it_and_it_shows_progress_then_no_violation(
    tmp_path: Path,
) -> None:
    app = app_in(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        main = app.screen
        assert isinstance(main, MainScreen) and main.session.mode is Mode.CORRECT
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"explore this mode")
        await _palette_offers(pilot, "Explore this mode")
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExploreScreen)
        assert screen.mode is Mode.CORRECT and screen.out_dir == tmp_path / "explore"
        await _settle(pilot, screen)
        # every level was shown as it finished, and the bar is full
        assert [lv.depth for lv in screen.levels] == list(range(1, APP_DEPTH + 1))
        progress = screen.query_one(ProgressBar)
        assert progress.progress == progress.total == APP_DEPTH
        assert screen.report is not None and screen.report.ok
        assert labels(screen) == [
            f"No rule broken within 5 steps ({screen.report.states:,} states)"
        ]
        assert status(screen) == (
            f"{screen.report.states:,} states, {screen.report.transitions:,} transitions: "
            "bounded at depth 5"
        )
        # Esc after the search: back on the main screen, nothing running
        await _esc(pilot)
        assert app.screen_stack[-1] is main and not list(app.workers)


@bounded(60)
async def test_esc_while_the_search_runs_stops_it_and_writes_nothing(tmp_path: Path) -> None:
    app = app_in(tmp_path, scenario="01_fog")
    async with app.run_test(size=SMALL) as pilot:
        main = app.screen
        screen = ExploreScreen(Mode.NO_FENCING, "en", tmp_path / "explore", depth=DEEP)
        app.push_screen(screen)
        await _running(pilot, screen)
        assert not screen.search_done.is_set()
        await _esc(pilot)
        assert app.screen is main
        assert await _ended(screen, 5.0), "the search went on after Esc"
        await pilot.pause()
        assert screen.stopped and screen.report is None and not (tmp_path / "explore").exists()
        assert not list(app.workers)
        await pilot.press("n")  # the app is not waiting on anything: the session steps on
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.screen.session.position == 1


@bounded(60)
async def test_quitting_the_app_while_the_search_runs_ends_its_thread(tmp_path: Path) -> None:
    app = app_in(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        screen = ExploreScreen(Mode.CORRECT, "en", tmp_path / "explore", depth=DEEP)
        app.push_screen(screen)
        await _running(pilot, screen, levels=1)
    assert await _ended(screen, 5.0), "the search outlived the app"
    assert screen.stopped
    assert not (tmp_path / "explore").exists()


@pytest.mark.parametrize("lang", ["en", "zh"])
@bounded(60)
async def test_it_lists_what_it_found_and_plays_the_chosen_one(tmp_path: Path, lang: str) -> None:
    app = app_in(tmp_path, lang)
    async with app.run_test(size=SMALL) as pilot:
        screen = ExploreScreen(Mode.SEED_SQL, lang, tmp_path / "explore", depth=5)
        app.push_screen(screen)
        await _settle(pilot, screen)
        expected = {
            "en": [
                "finished task lent out again · 4 steps",
                "task completed twice · 5 steps",
            ],
            "zh": ["已结束的任务又被借出 · 4 步", "任务完成了两次 · 5 步"],
        }
        assert labels(screen) == expected[lang]
        assert sorted(p.name for p in (tmp_path / "explore").iterdir()) == [
            "explore-seed_sql-completed_twice.toml",
            "explore-seed_sql-reclaimed_after_end.toml",
        ]
        options = screen.query_one(OptionList)
        assert options.has_focus and options.highlighted == 0  # the shortest, ready for Enter
        await pilot.press("end", "enter")  # the last: completed twice
        await pilot.pause()
        main = app.screen
        assert isinstance(main, MainScreen) and main.session.mode is Mode.SEED_SQL
        assert len(main.session.steps) == 5
        for _ in range(5):
            await pilot.press("n")
        await pilot.pause()
        assert main.session.position == 5
        # lent out again at its 4th step, completed twice at its 5th
        assert main.session.snapshot().violations == {
            "reclaimed_after_end": 1,
            "completed_twice": 1,
        }


@bounded(60)
async def test_a_folder_it_cannot_write_is_one_line_and_the_app_goes_on(tmp_path: Path) -> None:
    blocked = tmp_path / "explore"
    blocked.write_text("a file where the folder should be", encoding="utf-8")
    app = app_in(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        screen = ExploreScreen(Mode.SEED_SQL, "en", blocked, depth=4)
        app.push_screen(screen)
        await _settle(pilot, screen)
        assert app.is_running and app.screen is screen
        assert status(screen) == f"Cannot write the traces to {blocked}: File exists"
        assert screen.report is None and labels(screen) == []
        await _esc(pilot)
        assert isinstance(app.screen, MainScreen)


# -- at 80x24, with results ---------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_screen_with_results_at_80x24(snap_compare: Any, lang: str, tmp_path: Path) -> None:
    app = app_in(tmp_path, lang, mode=Mode.NO_FENCING)

    async def found(pilot: Pilot[Any]) -> None:
        screen = ExploreScreen(Mode.NO_FENCING, lang, tmp_path / "explore", depth=4)
        app.push_screen(screen)
        await _settle(pilot, screen)

    assert snap_compare(app, run_before=found, terminal_size=SMALL)


@bounded(60)
async def test_a_trace_file_that_went_bad_is_said_in_the_language_on_screen(
    tmp_path: Path,
) -> None:
    app = app_in(tmp_path, "zh")
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        screen = ExploreScreen(Mode.SEED_SQL, "zh", tmp_path / "explore", depth=4)
        app.push_screen(screen)
        await _settle(pilot, screen)
        (trace,) = (tmp_path / "explore").iterdir()
        trace.write_text('title = "t"\nmode = "corect"\n', encoding="utf-8")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen  # not opened
        toasts = [str(n.message) for n in app._notifications]
        assert len(toasts) == 1
        assert toasts[0].startswith(f"{trace}:2: 没有 “corect” 这个模式（是不是想写 “correct”？）")
