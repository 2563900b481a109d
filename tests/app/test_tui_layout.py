"""How the main screen uses its size: at 200 x 60 the event log stays beside the chosen
panel; below that the panels keep the whole width; the header is as tall as its lines.

The live clock is off (`live_clock=False`): time moves only by key presses.
"""

from pathlib import Path

import pytest
from textual.widgets import DataTable

from core.engine.records import EventRow
from core.scenarios.library import open_scenario
from core.scenarios.telling import event_sentence
from demo.app import BorrowedKeysApp
from demo.i18n import tr
from demo.screens.layout import ROOMY_HEIGHT, ROOMY_WIDTH, fit
from demo.screens.main import MainScreen
from demo.widgets.panels import EventLog
from tests.app.apps import at_step


def fog(tmp_path: Path, lang: str = "en") -> BorrowedKeysApp:
    return BorrowedKeysApp(
        open_scenario("01_fog"), open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )


def screen_of(app: BorrowedKeysApp) -> MainScreen:
    assert isinstance(app.screen, MainScreen)
    return app.screen


def whole(table: DataTable[object]) -> bool:
    """Every column of the table in sight, none cut or scrolled to."""
    return table.virtual_size.width <= table.scrollable_content_region.width


def shows_every_event(side: EventLog, events: list[EventRow], lang: str) -> bool:
    """Every event's sentence in the log whole, in order: a long one wraps onto a second
    line rather than hiding its worker and key behind a sideways scroll."""
    shown = "".join(line.text for line in side.lines).replace(" ", "")
    at = 0
    for ev in events:
        found = shown.find(event_sentence(ev, lang).replace(" ", ""), at)
        if found < 0:
            return False
        at = found
    return side.max_scroll_x == 0 and len(side.lines) >= len(events)


@pytest.mark.parametrize("size", [(160, 40), (173, 47), (200, 60)], ids=str)
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_from_160x40_the_event_log_is_beside_the_chosen_panel(
    tmp_path: Path, lang: str, size: tuple[int, int]
) -> None:
    app = fog(tmp_path, lang)
    async with app.run_test(size=size) as pilot:
        screen = screen_of(app)
        await at_step(pilot, 14)  # Acheng's refused page
        await pilot.press("3")  # the Rejected panel
        await pilot.pause()
        panels, side = screen.query_one("#panels"), screen.query_one("#side-events", EventLog)
        column = screen.query_one("#side")
        assert screen.has_class("-roomy") and column.display
        assert side.region.x >= panels.region.right  # beside, not over
        assert side.region.y == panels.region.y
        # down to the button bar: the rows under a one-row panel are the log's (on a tall
        # screen the log's and a second panel's)
        assert column.region.bottom == screen.query_one("#controls").region.y
        if not screen.has_class("-tall"):
            assert side.region.bottom == column.region.bottom
        events = screen.session.events(0)
        # every event is there whole: a long one wraps onto a second line rather than
        # hiding its worker and key behind a sideways scroll
        assert shows_every_event(side, events, lang)
        assert side.border_title == ("Event log" if lang == "en" else "登记簿")
        assert whole(screen.query_one("#rejected", DataTable))  # the panel's columns all fit
        await pilot.press("5")  # the event log as the panel: not twice on screen
        await pilot.pause()
        assert not column.display
        assert panels.region.width == screen.region.width
        await pilot.press("n")  # the run goes on while the log beside is hidden
        await pilot.press("1")  # the ledger: the log beside is back, with what it missed
        await pilot.pause()
        assert column.display and whole(screen.query_one("#ledger", DataTable))
        await pilot.press("2")  # the widest panel: what each checkpoint box holds
        await pilot.pause()
        assert column.display and whole(screen.query_one("#checkpoints", DataTable))
        assert side.region.width >= 44  # the log beside is worth its room
        assert len(screen.session.events(0)) > len(events)
        assert shows_every_event(side, screen.session.events(0), lang)
        await pilot.press("l")  # a new language: the log beside is written again in it
        await pilot.pause()
        other = "zh" if lang == "en" else "en"
        assert shows_every_event(side, screen.session.events(0), other)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (159, 48), (160, 39)], ids=str)
async def test_below_160x40_the_panels_keep_the_whole_width(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    assert not fit(*size).roomy and fit(ROOMY_WIDTH, ROOMY_HEIGHT).roomy
    app = fog(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = screen_of(app)
        await pilot.press(*["n"] * 3)
        await pilot.pause()
        assert not screen.query_one("#side").display
        body = screen.query_one("#body").scrollable_content_region  # a scrollbar aside
        assert screen.query_one("#panels").region.width == body.width


@pytest.mark.parametrize("size", [(200, 60), (120, 40)], ids=str)
async def test_a_one_line_header_is_one_row(tmp_path: Path, size: tuple[int, int]) -> None:
    app = fog(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        header = screen_of(app).query_one("#status")
        assert "\n" not in str(header.render())
        assert header.region.height == 1  # no blank row under it


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_200x60_the_log_beside_has_a_sensible_height_and_a_second_panel_the_rest(
    tmp_path: Path, lang: str
) -> None:
    app = fog(tmp_path, lang)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = screen_of(app)
        await pilot.press(*["n"] * 14, "v")  # Acheng's page refused: the step opens the refusals
        await pilot.pause()
        log, second = screen.query_one("#side-events"), screen.query_one("#side-second")
        assert screen.has_class("-tall") and second.display
        assert log.region.height <= 18  # not half the screen of empty border
        assert second.region.y == log.region.bottom  # under the log, to the button bar
        assert second.region.bottom == screen.query_one("#controls").region.y
        # the ledger that kept Linzhou's page beside the refused write
        ledger = screen.query_one("#side-ledger", DataTable)
        rejected = screen.query_one("#side-rejected", DataTable)
        assert ledger.display and not rejected.display and ledger.row_count == 3
        assert second.border_title == tr("ledger", lang)
        await pilot.press("1")  # the ledger chosen: the refused writes go beside it
        await pilot.pause()
        assert rejected.display and not ledger.display and rejected.row_count == 1
        assert "fenced" in str(rejected.get_row_at(0)) or "围栏" in str(rejected.get_row_at(0))
        assert second.border_title == tr("rejected", lang)
