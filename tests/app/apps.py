"""The app as its tests drive it: one way to open a scenario, so that every test opens it alike."""

from pathlib import Path
from typing import Any

from core.scenarios.library import open_scenario
from demo.app import BorrowedKeysApp


def scenario_app(
    name: str | None, tmp_path: Path, lang: str = "en", **options: Any
) -> BorrowedKeysApp:
    """A bundled scenario (None: the sandbox) opened at once, in `lang`, with the live clock
    off (time moves only by keys) and its saves kept under `tmp_path`; `options` are the
    app's other arguments (mode, interview, database)."""
    scenario = open_scenario(name) if name else None
    return BorrowedKeysApp(
        scenario, open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path, **options
    )


async def at_step(pilot: Any, k: int) -> None:
    """Bring the main screen to just after step k by the presenter's own jump (the step
    list, `g`): one replay and one frame, not a frame a step. Tests of what each step shows
    on the way press `n` instead."""
    screen = pilot.app.screen
    screen._jump(k)
    await pilot.pause()
    assert screen.session.position == k
