"""While a run plays on the live clock, the event log takes its new lines at most every
LOG_EVERY_S: each write grows the log, and Textual lays the whole screen out for it. Nothing
is lost: a pause writes what waited."""

from pathlib import Path

from demo.screens.main import MainScreen
from demo.widgets.panels import EventLog, event_line
from tests.app.apps import scenario_app


async def test_the_log_beside_waits_while_playing_and_a_pause_writes_what_waited(
    tmp_path: Path,
) -> None:
    app = scenario_app("01_fog", tmp_path, "en")
    async with app.run_test(size=(200, 60)) as pilot:  # roomy: the log is beside the panels
        screen = app.screen
        assert isinstance(screen, MainScreen)
        log = screen.query_one("#side-events", EventLog)
        screen.log_every_s = 3600.0  # longer than the test: only the first write may happen
        screen.playing = True
        await pilot.pause()
        for _ in range(6):
            screen.session.next_step()
            screen.refresh_view()
            await pilot.pause()
        last = event_line(screen.session.events(0)[-1], "en").plain

        def shown() -> str:
            return " ".join(" ".join(line.text.split()) for line in log.lines)

        assert log.lines and " ".join(last.split()) not in shown()  # the later lines waited
        screen.playing = False
        await pilot.pause()
        await pilot.pause()
        assert " ".join(last.split()) in shown()  # the pause wrote every line that waited
