"""A write to the event log asks Textual to lay the screen out only when the log's scrollbar
must come or go: its growing height changes nothing outside it. Each write made a layout of
every widget on the main screen, and those refreshes were the slowest by two to three
times. After a write the newest line is in sight at once, and the scrollbar's thumb follows
the log's new height."""

from typing import Any

from textual.app import App, ComposeResult

from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from demo.widgets.panels import EventLog

ROWS = 6  # the log's height: a few events overflow it


class _LogHost(App[None]):
    # the log beside the panels: a scrollbar only once it is longer than its rows; the
    # Events tab's log keeps RichLog's, always there
    CSS = f"#log {{ height: {ROWS}; overflow-y: auto; }} #tab {{ height: {ROWS}; }}"

    def compose(self) -> ComposeResult:
        yield EventLog(id="log", wrap=True)
        yield EventLog(id="tab")


def _events(first: int, n: int) -> list[EventRow]:
    return [
        EventRow(seq=i, at=i * 1000, event=EventKind.CLAIMED, task_id="t1", worker_id="w1")
        for i in range(first, first + n)
    ]


def _layouts_asked(log: EventLog) -> list[bool]:
    asked: list[bool] = []
    refresh = log.refresh

    def spy(*regions: Any, **options: Any) -> Any:
        asked.append(bool(options.get("layout")))
        return refresh(*regions, **options)

    log.refresh = spy  # type: ignore[method-assign]
    return asked


async def test_a_write_to_a_log_past_its_height_asks_for_no_layout_and_shows_its_newest_line() -> (
    None
):
    app = _LogHost()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one("#log", EventLog)
        asked = _layouts_asked(log)
        log.append(_events(1, 2), "en")  # within its height: no scrollbar yet
        await pilot.pause()
        assert not log.show_vertical_scrollbar
        log.append(_events(3, 3 * ROWS), "en")  # past it: the scrollbar comes, by a layout
        await pilot.pause()
        assert any(asked) and log.show_vertical_scrollbar
        asked.clear()
        for first in range(100, 160, 6):
            log.append(_events(first, 6), "en")
            # in sight at once, not after the next paint
            assert log.scroll_y == log.max_scroll_y > 0
            assert log.vertical_scrollbar.window_virtual_size == len(log.lines)
            await pilot.pause()
        assert not any(asked), "a write with the scrollbar already there asked for a layout"
        shown = " ".join(line.text for line in log.lines[-ROWS:])
        assert "0:02:39" in shown  # the newest event's time (159 s) is among the last lines


async def test_a_log_whose_scrollbar_is_always_there_asks_for_no_layout_once_it_has_width() -> None:
    app = _LogHost()
    async with app.run_test(size=(100, 20)) as pilot:
        log = app.query_one("#tab", EventLog)
        log.append(_events(1, 1), "en")  # its first line sets its width: one layout
        await pilot.pause()
        asked = _layouts_asked(log)
        for first in range(2, 40, 4):
            log.append(_events(first, 4), "en")
            assert log.scroll_y == log.max_scroll_y
            await pilot.pause()
        assert log.show_vertical_scrollbar and not any(asked)
