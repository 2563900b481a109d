"""The app as its tests drive it: one way to open a scenario, so that every test opens it alike."""

from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen

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


SETTLE_REFRESHES = 16  # far more than any chain of after-refresh work on these screens
SETTLE_SAME = 3  # shots alike in a row: a pause on a starved process may see no work done


async def settled(pilot: Any) -> None:
    """Refresh until the screen stops changing: a refresh can ask for work after itself
    (the log beside measures its rows, then scrolls to its end), and that work for another
    refresh; how many of them are done when a key's messages are handled depends on the
    machine's load, not on the run. Pilot's pause ends when the process used no CPU for a
    moment, which on a loaded machine can be a moment it was given none: so the screen must
    come out the same several pauses running."""
    before = None
    same = 0
    for _ in range(SETTLE_REFRESHES):
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        now = pilot.app.export_screenshot()
        same = same + 1 if now == before else 0
        if same >= SETTLE_SAME - 1:
            return
        before = now
    raise AssertionError(f"the screen still changed after {SETTLE_REFRESHES} refreshes")


class FleetHost(App[int]):
    """An app that shows one fleet screen as the fleet app does (its stylesheet), for tests
    that drive the screen with a stand-in fleet and no processes."""

    CSS_PATH = str(Path(__file__).resolve().parents[2] / "demo" / "app.tcss")

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self._screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._screen)
