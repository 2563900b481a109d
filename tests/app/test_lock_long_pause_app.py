"""Scenario 23 in the app: m turns the lock's accepted page into the lease's fenced one."""

from pathlib import Path
from typing import Any

import pytest

from core.engine.config import Mode
from core.engine.vocabulary import EventKind
from core.scenarios.format import load_scenario
from core.scenarios.session import Session
from demo.app import BorrowedKeysApp
from demo.screens.main import MainScreen
from tests.sim.test_lock_long_pause import SCENARIO, writes_of_page_3


async def _play_to_the_end(pilot: Any, session: Session) -> None:
    while not session.at_end:
        await pilot.press("v" if session.question is not None else "n")
    await pilot.pause()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_in_the_app_m_turns_the_accepted_page_into_a_fenced_one(
    tmp_path: Path, lang: str
) -> None:
    app = BorrowedKeysApp(
        load_scenario(SCENARIO), open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        session = screen.session
        await _play_to_the_end(pilot, session)
        assert writes_of_page_3(session) == [(EventKind.WRITE_ACCEPTED, "acheng")]
        at = session.position
        await pilot.press("m", "enter")  # the list opens on the twin: Enter chooses it
        await pilot.pause()
        # replayed under the correct mode to the step the run stood at
        assert session.mode is Mode.CORRECT and session.position == at
        assert writes_of_page_3(session) == [
            (EventKind.WRITE_ACCEPTED, "linzhou"),
            (EventKind.WRITE_REJECTED, "acheng"),
        ]
