"""When a mistake bites, the step opens the panel where its harm is, and on a small screen the
harm's own lines are in sight: "两套互相覆盖的世界" seen, not told."""

from pathlib import Path

import pytest

from core.engine.modes import Mode
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from demo.widgets.body import Body
from demo.widgets.panels import EventLog, RefusedNote
from tests.app.apps import scenario_app


def panel_at_last_step(name: str) -> str | None:
    session = Session(open_scenario(name))
    outcome = None
    while not session.at_end:
        outcome = session.next_step() or session.reveal()
    assert outcome is not None
    return None if outcome.panel is None else outcome.panel.tab


@pytest.mark.parametrize(
    ("name", "tab"),
    [
        # the step's script is about the takeover and its box; the harm is the second charge
        ("12_mistake_no_idempotency", "tab-effects"),
        # a finished task lent out and completed again: the register says it in order
        ("15_seed_sql", "tab-events"),
    ],
)
def test_the_step_that_breaks_a_rule_opens_where_the_harm_is(name: str, tab: str) -> None:
    assert panel_at_last_step(name) == tab


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_on_a_small_screen_the_log_opened_at_a_step_shows_its_newest_lines(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = scenario_app("15_seed_sql", tmp_path, "en")
    async with app.run_test(size=size) as pilot:
        session = app.screen.session  # type: ignore[attr-defined]
        while not session.at_end:
            await pilot.press("v" if session.question is not None else "n")
        await pilot.pause()
        log = app.screen.query_one("#events", EventLog)
        body = app.screen.query_one("#body", Body)

        def newest_in_sight() -> bool:
            # the log ends inside the body's rows, scrolled to its end
            return (
                log.region.height > 0
                and log.region.bottom <= body.region.bottom
                and log.scroll_y == log.max_scroll_y
            )

        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert "task completed twice" in log.lines[-1].text
        assert newest_in_sight(), (log.region, body.region, log.scroll_y, log.max_scroll_y)
        small = log.region.height
        await pilot.press("5")  # the panel brought into view: more of the log, still its end
        await pilot.pause()
        await pilot.pause()
        assert newest_in_sight() and log.region.height > small
        await pilot.press("0")  # back to the panes: the newest lines stay in sight
        await pilot.pause()
        await pilot.pause()
        assert newest_in_sight()


@pytest.mark.parametrize(
    ("mode", "step", "lang", "said"),
    [
        (None, 1, "en", "Nothing has been refused yet."),
        (None, 1, "zh", "还没有调用被拒收。"),
        ("no_fencing", 14, "en", "Nothing was refused, yet a page from a lease"),
        ("no_fencing", 14, "zh", "什么都没被拒收，可一页来自已不属于这项任务的租约的写入进了总册"),
    ],
)
async def test_an_empty_rejected_panel_says_so_and_under_a_mistake_what_got_in(
    tmp_path: Path, mode: str | None, step: int, lang: str, said: str
) -> None:
    app = scenario_app("01_fog", tmp_path, lang, mode=None if mode is None else Mode(mode))
    async with app.run_test(size=(120, 40)) as pilot:
        session = app.screen.session  # type: ignore[attr-defined]
        while session.position < step:
            await pilot.press("v" if session.question is not None else "n")
        await pilot.press("3")
        await pilot.pause()
        note = app.screen.query_one("#refused-note", RefusedNote)
        shown = "".join(str(note.render()).split())
        assert "".join(said.split()) in shown, shown
