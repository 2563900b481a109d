"""Scenario 20 in the app: it opens, plays to its end as the player plays it (in English and
Chinese), and the events panel says what a heavy heartbeat carries and when it lands."""

from pathlib import Path

import pytest

from core.engine.vocabulary import EventKind
from core.scenarios.format import load_scenario
from core.scenarios.player import event_record, play
from demo.app import BorrowedKeysApp
from demo.screens.main import MainScreen
from demo.widgets.panels import event_line
from demo.widgets.worker_pane import WorkerGrid

SCENARIO = Path(__file__).parents[2] / "scenarios" / "20_heavy_heartbeat.toml"


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_scenario_20_plays_through_the_app_as_in_the_player(
    tmp_path: Path, lang: str
) -> None:
    scenario = load_scenario(SCENARIO)
    app = BorrowedKeysApp(
        scenario, open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )
    asked = 0
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        session = screen.session
        while not session.at_end:
            if session.question is not None:
                asked += 1
                await pilot.press("v")  # only v reveals (and plays) a step that asks
            else:
                await pilot.press("n")
        await pilot.pause()
        events = session.events(0)
        mine = [event_record(e) for e in events]
        snap = session.snapshot()
        assert snap.violations == {}
    assert asked == 1
    assert mine == [r for r in play(scenario) if r["type"] == "event"]
    heavy = [e for e in events if e.event == EventKind.HEARTBEAT_SENT]
    late = next(e for e in heavy if e.detail["lands_at"] == 110_000)
    shown = event_line(late, lang).plain
    # a sentence: what it carries and when it lands, by the store's clock
    assert "2MB" in shown and "0:01:50" in shown
    assert ("夹带 2MB 的心跳" if lang == "zh" else "sends a heartbeat carrying 2MB") in shown
    loaded = next(e for e in events if e.event == EventKind.STORE_LOADED)
    said = "存储的负载变为 100 倍" if lang == "zh" else "The store's load is now 100 times"
    assert said in event_line(loaded, lang).plain


@pytest.mark.parametrize(
    ("lang", "carries", "lands"),
    [("en", "heartbeat carries 2MB", "lands 0:01:50"), ("zh", "心跳夹带 2MB", "0:01:50 送到")],
)
async def test_the_pane_shows_the_payload_and_the_heartbeat_on_its_way(
    tmp_path: Path, lang: str, carries: str, lands: str
) -> None:
    app = BorrowedKeysApp(
        load_scenario(SCENARIO), open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        session = screen.session
        while session.position < 4:  # up to the store getting busy
            await pilot.press("v" if session.question is not None else "n")
            await pilot.pause()
        screen.action_advance(49_000)  # 0:01:30: the 2 MB heartbeat left at 0:01:00
        await pilot.pause()
        pane = screen.query_one("#workers", WorkerGrid).panes["acheng"]
        assert carries in pane.text.plain
        assert lands in pane.live_text.plain
        assert lands not in screen.query_one("#workers", WorkerGrid).panes["linzhou"].text.plain
        screen.action_advance(21_000)  # it has landed (and been refused)
        await pilot.pause()
        assert lands not in pane.text.plain
