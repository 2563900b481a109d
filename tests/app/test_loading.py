"""The app's first frame: painted from the scenario file's head before the engine loads, while
the session is built on a thread; the run's own frame replaces it when `SessionOpened` says
the session is there. What the loading frame says, what a key does meanwhile, what is loaded
when it is painted (in a fresh interpreter: this one has the engine loaded already)."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Static

from demo.app import BorrowedKeysApp
from demo.loading import LoadingScreen, Opening
from demo.screens.main import MainScreen

ROOT = Path(__file__).parents[2]

# Runs `tui 01_fog` as the command line does (headless), and at the moment the loading frame
# is painted prints what screen is up and every module loaded; the session is never built.
PROBE = """
import json, sys
from textual.app import App
import demo.app
seen = {}
def painted(self, message):
    message.prevent_default()
    seen["screen"] = type(self.screen).__name__
    seen["modules"] = sorted(sys.modules)
    self.exit()
demo.app.BorrowedKeysApp.on_loading_screen_painted = painted
demo.app.BorrowedKeysApp.run = lambda self: App.run(self, headless=True)
from demo.cli import main
main(["tui", "01_fog", "--lang", "en"])
print(json.dumps(seen))
"""

# What the first frame must not wait for: the file format, the engine's store and tables,
# the simulation, the main screen's widgets (and PostgreSQL's driver, ever).
NOT_YET = (
    "sqlalchemy",
    "sqlmodel",
    "pydantic",
    "psycopg",
    "core.engine.store",
    "core.engine.models",
    "core.sim",
    "core.scenarios.format",
    "core.scenarios.session",
    "demo.screens.main",  # main_part too, by its prefix
    "demo.screens.playback",
    "demo.screens.interview",
    "demo.screens.acts",
    "demo.screens.views",
    "demo.screens.runs",
)


def test_the_first_frame_is_painted_before_the_engine_loads() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["screen"] == "LoadingScreen"
    loaded = [m for m in seen["modules"] if m.startswith(NOT_YET)]
    assert loaded == []


class HeldApp(BorrowedKeysApp):
    """The app with its first session held back until the test lets it be built."""

    CSS_PATH = str(ROOT / "demo" / "app.tcss")  # relative paths are the subclass's module's

    def on_loading_screen_painted(self, message: LoadingScreen.Painted) -> None:
        message.prevent_default()
        self.painted = True


def held(lang: str = "en") -> HeldApp:
    return HeldApp("01_fog", lang=lang, live_clock=False)


def said(app: BorrowedKeysApp) -> str:
    lines = []
    for static in app.screen.query(Static):
        content: Any = static.content
        lines.append(getattr(content, "plain", str(content)))
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ["The fog: a frozen heartbeat", "mode correct", "Step 0 of 17", "Opening this run"]),
        ("zh", ["起雾：心跳冻结", "第 0 步 / 共 17 步", "正在打开这一局"]),
    ],
)
async def test_the_loading_frame_says_the_scenario_and_nothing_of_the_run(
    lang: str, words: list[str]
) -> None:
    app = held(lang)
    async with App.run_test(app, size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, LoadingScreen)
        text = said(app)
        for word in words:
            assert word in text, text
        # no clock, no worker, no task, no safety light: none of it exists yet
        for made_up in ("0:00:00", "floor6", "Acheng", "阿澄", "safe", "安全"):
            assert made_up not in text, text


async def test_a_key_before_the_session_is_refused_then_the_run_opens_at_step_0() -> None:
    app = held()
    async with App.run_test(app, size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n", "space", "e")
        assert isinstance(app.screen, LoadingScreen)
        toasts = [n.message for n in app._notifications]
        assert toasts == ["Still opening this run: keys work once it is on screen (q quits)."]
        app._build_first_session()
        await app.opened.wait()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        # the keys pressed while it opened did nothing to the run
        assert screen.session.position == 0
        assert screen.session.acts_count == 0
        assert not screen.playing
        await pilot.press("n")
        assert screen.session.position == 1


async def test_q_quits_while_the_run_opens() -> None:
    app = held()
    async with App.run_test(app, size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0  # it is ending: q was not refused like the others
        assert not app._notifications
    # a session its thread would still build is closed by that thread, not left open
    assert app._opening.take() is None
    late: Any = Closes()
    assert not app._opening.built(late) and late.closed == 1


class Closes:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_a_session_built_after_the_app_stopped_waiting_is_closed_not_left() -> None:
    taken, late = Opening(), Opening()
    session: Any = Closes()
    assert taken.built(session)
    assert taken.take() is session and taken.take() is None
    taken.abandon()
    assert session.closed == 0  # taken: its screen closes it
    late.abandon()
    other: Any = Closes()
    assert not late.built(other)
    assert other.closed == 1
    built_then_abandoned, third = Opening(), Closes()
    built_then_abandoned.built(third)  # type: ignore[arg-type]
    built_then_abandoned.abandon()
    assert third.closed == 1


async def test_a_pilot_gets_the_app_once_its_run_is_on_screen() -> None:
    # what every Pilot test of a run relies on: no timer, the session's own message
    app = BorrowedKeysApp("01_fog", lang="en", live_clock=False)
    async with app.run_test(size=(80, 24)):
        assert isinstance(app.screen, MainScreen)
        assert app.screen.session.step_count == 17


async def test_what_started_is_frozen_once_before_the_first_run_exists_and_never_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The garbage collector stops walking the modules: frozen once a process, when the run's
    modules are loaded and before any of the run's objects exists (frozen, they would
    outlive the run: a screen and a session replaced by the next run's)."""
    import demo.app

    happened: list[str] = []
    made = BorrowedKeysApp._new_session

    def new_session(self: BorrowedKeysApp, *args: Any, **kwargs: Any) -> Any:
        happened.append("a session made")
        return made(self, *args, **kwargs)

    monkeypatch.setattr(demo.app, "_started", [False])
    monkeypatch.setattr(demo.app.gc, "freeze", lambda: happened.append("frozen"))
    monkeypatch.setattr(BorrowedKeysApp, "_new_session", new_session)
    app = BorrowedKeysApp("01_fog", lang="en", live_clock=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
    again = BorrowedKeysApp("01_fog", lang="en", live_clock=False)
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
    assert happened == ["frozen", "a session made", "a session made"]
