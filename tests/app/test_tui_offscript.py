"""Leaving the script and coming back, in the app: redo after undo, another scenario
without quitting, a mode chosen from a list at the same step, a key for every fault.

The live clock is off (`live_clock=False`): time moves only by key presses.
"""

from pathlib import Path

import pytest

from core.engine.config import Mode
from core.engine.errors import StoreClosed
from core.sim.spec import WorkerState
from demo.app import BorrowedKeysApp
from demo.commands import main_screen_commands
from demo.controls import CONTROLS, FAULT_KEYS, help_lines
from demo.i18n import tr
from demo.screens.confirm import ConfirmScreen
from demo.screens.main import MainScreen
from demo.screens.modes import ModeScreen
from demo.screens.picker import PickerScreen
from tests.app.apps import scenario_app


def app_for(name: str | None, tmp_path: Path, lang: str = "en") -> BorrowedKeysApp:
    return scenario_app(name, tmp_path, lang)


def main(app: BorrowedKeysApp) -> MainScreen:
    assert isinstance(app.screen, MainScreen)
    return app.screen


async def test_y_redoes_what_p_undid_after_a_fork(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        s = main(app).session
        await pilot.press("n", "n", "n")
        await pilot.press("e")  # enqueue: the playback forks
        await pilot.press("n", "n")  # 10 s of the fork's time
        await pilot.press("e")
        await pilot.press("n")
        end, events = s.now_ms, [e.seq for e in s.events(0)]
        await pilot.press("p")  # undo: the second enqueue and the 5 s after it
        assert s.now_ms < end and s.snapshot().task("task-3") is None
        assert "y" in str(main(app).query_one("#keybar").render())  # the bar offers redo
        await pilot.press("y")  # redo: both back
        await pilot.pause()
        assert s.now_ms == end and [e.seq for e in s.events(0)] == events
        assert s.snapshot().task("task-3") is not None
        await pilot.press("y")  # nothing more to redo: the run stays
        await pilot.pause()
        assert s.now_ms == end


async def test_o_opens_another_scenario_and_esc_comes_back(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        first = main(app)
        await pilot.press("n", "n")
        await pilot.press("o")
        await pilot.pause()
        assert type(app.screen) is PickerScreen
        await pilot.press("escape")  # back to the same run, untouched
        await pilot.pause()
        assert main(app) is first and first.session.position == 2
        await pilot.press("e")  # an act not saved: leaving asks first
        await pilot.press("o")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        titles = [sc.title for sc in picker.scenarios]
        target = "The fire and the midnight return"
        await pilot.press(*["down"] * titles.index(target), "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        second = main(app)
        assert second is not first and second.session.scenario is not None
        assert second.session.scenario.title == target and second.session.position == 0
        with pytest.raises(StoreClosed):  # the run left behind is closed, not leaked
            first.session.events(0)
        assert len(app.screen_stack) == 2  # no pile of screens under the new run


async def test_the_palette_opens_another_scenario(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)  # the sandbox
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main(app)
        entry = next(
            c
            for c in main_screen_commands(screen, "en")
            if c.title.startswith(tr("open_scenario", "en"))
        )
        entry.callback()
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("enter")  # the first bundled scenario
        await pilot.pause()
        assert main(app) is not screen and main(app).session.scenario is not None


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_m_chooses_a_mode_from_a_list_and_stays_at_the_step(
    tmp_path: Path, lang: str
) -> None:
    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(120, 40)) as pilot:
        s = main(app).session
        for _ in range(6):
            await pilot.press("n")
        at, clock = s.position, s.now_ms
        assert at > 0
        await pilot.press("m")
        await pilot.pause()
        modes = app.screen
        assert isinstance(modes, ModeScreen)
        # any mode, not only the next one: no_fencing is three moves down from correct
        target = list(Mode).index(Mode.NO_FENCING) - list(Mode).index(modes.suggested)
        await pilot.press(*(["down"] * target if target > 0 else ["up"] * -target), "enter")
        await pilot.pause()
        assert s.mode is Mode.NO_FENCING
        assert s.position == at and s.now_ms == clock  # the same step, not step 0
        await pilot.press("m", "escape")  # Esc: nothing changes
        await pilot.pause()
        assert s.mode is Mode.NO_FENCING and s.position == at


async def test_a_mode_that_cannot_reach_the_step_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main(app)
        s = screen.session
        for _ in range(6):
            await pilot.press("n")
        at = s.position
        said: list[str] = []
        monkeypatch.setattr(screen, "notify", lambda text, **_kw: said.append(str(text)))
        # a mode in which the step before this one cannot be played
        monkeypatch.setattr(s, "set_mode", lambda mode, keep_step=False: at - 2)
        screen.set_mode(Mode.NO_FENCING)
        await pilot.pause()
        cut = f"step {at - 1} cannot be played"
        assert any(cut in t.lower() and f"step {at - 2}, not {at}" in t for t in said), said


@pytest.mark.parametrize(("fault", "key"), [(f, k) for f, k, _w in FAULT_KEYS])
async def test_every_fault_has_a_key_on_the_chosen_worker(
    tmp_path: Path, fault: str, key: str
) -> None:
    app = app_for(None, tmp_path)  # the sandbox: acheng, linzhou, elder
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main(app)
        s = screen.session
        assert screen.chosen_worker == "acheng"  # the first, until w chooses another
        await pilot.press("w")  # the next worker
        assert screen.chosen_worker == "linzhou"
        await pilot.press(key)
        await pilot.pause()
        linzhou, acheng = s.snapshot().worker("linzhou"), s.snapshot().worker("acheng")
        assert linzhou is not None and acheng is not None
        state = {
            "freeze_heartbeat": linzhou.heartbeat_frozen,
            "stall": linzhou.state == WorkerState.STALLED,
            "kill": linzhou.state == WorkerState.DEAD,
            "partition": linzhou.partitioned,
            "resume": True,  # below: resume undoes a stall
        }
        assert state[fault], fault
        assert acheng.state != WorkerState.DEAD and not acheng.partitioned
        assert not acheng.heartbeat_frozen


async def test_u_and_c_do_the_opposite_when_that_is_what_the_worker_needs(
    tmp_path: Path,
) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        s = main(app).session

        def acheng() -> object:
            w = s.snapshot().worker("acheng")
            assert w is not None
            return w

        await pilot.press("z")  # stall
        assert acheng().state == WorkerState.STALLED  # type: ignore[attr-defined]
        await pilot.press("u")  # resume
        assert acheng().state != WorkerState.STALLED  # type: ignore[attr-defined]
        await pilot.press("k", "u")  # kill, then u restarts the dead worker
        assert acheng().state != WorkerState.DEAD  # type: ignore[attr-defined]
        await pilot.press("c")  # partition
        assert acheng().partitioned  # type: ignore[attr-defined]
        await pilot.press("c")  # heal
        assert not acheng().partitioned  # type: ignore[attr-defined]


def test_help_lists_every_fault_key_and_the_new_keys() -> None:
    keys = " ".join(line.keys for line in help_lines())
    for _fault, key, _word in FAULT_KEYS:
        assert key in keys.split()
    for key in ("y", "o", "w", "d", "m"):
        assert key in keys.split()
    bound = {k for c in CONTROLS for k in c.keys.split(",") if k}
    assert {"h", "z", "k", "u", "c", "w", "y", "o", "d"} <= bound


async def test_the_chosen_panes_fault_words_show_their_keys(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main(app)
        await pilot.pause()
        panes = screen.query_one("#workers").panes  # type: ignore[attr-defined]
        assert "k\u00a0Kill" in panes["acheng"].text.plain
        assert "k\u00a0Kill" not in panes["linzhou"].text.plain
        assert panes["acheng"].has_class("-chosen")
        await pilot.press("w")
        await pilot.pause()
        assert "k\u00a0Kill" in panes["linzhou"].text.plain
        assert not panes["acheng"].has_class("-chosen")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_killed_holders_pane_says_the_keeper_still_lends_it_the_task(
    tmp_path: Path, lang: str
) -> None:
    """01 at step 8, Acheng killed: her memory is gone, the store's lease is not. Her pane
    says both (the task table says she owns floor6 for 60 s more), never a bare "holds no
    lease" beside that table; once the lease ends and Linzhou claims, it says nothing lent."""
    from demo.widgets.worker_pane import WorkerGrid
    from tests.app.apps import at_step

    app = scenario_app("01_fog", tmp_path, lang)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await at_step(pilot, 8)
        await pilot.press("k")  # Acheng is the chosen worker
        await pilot.pause()
        pane = screen.query_one("#workers", WorkerGrid).panes["acheng"]
        said = pane.text.plain
        floor = "floor6" if lang == "en" else "第六层"
        assert tr("still_lent", lang, task=floor) in said
        assert tr("no_lease_known", lang) in said and tr("no_lease", lang) not in said
        assert ("60s" if lang == "en" else "60秒") in said  # the keeper's bar: its lease's time
        for _ in range(14):  # 70 s: past its end at 0:01:20 and Linzhou's claim
            await pilot.press("n")
        await pilot.pause()
        said = pane.text.plain
        assert tr("no_lease", lang) in said and "still lends" not in said and "借在" not in said


@pytest.mark.parametrize(
    ("lang", "said"),
    [("en", "Acheng is dead: restart it first (u)"), ("zh", "被拒绝：阿澄已死：先重启它（u）")],
)
def test_a_fault_on_a_dead_worker_is_refused_by_name_in_the_runs_language(
    lang: str, said: str
) -> None:
    from core.scenarios.library import open_scenario
    from core.scenarios.session import Session
    from core.sim.spec import FreezeHeartbeat, Kill
    from demo.widgets.narration import refusal_text

    session = Session(open_scenario("01_fog"))
    for _ in range(8):
        session.next_step()
    assert session.act(Kill("acheng")).ok
    refused = session.act(FreezeHeartbeat("acheng"))
    assert not refused.ok and refusal_text(refused, lang) == said


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_palettes_own_words_are_the_runs_language(tmp_path: Path, lang: str) -> None:
    """Textual's own commands in the palette (quit, keys, a screenshot) and its search box
    speak the app's language; its theme and maximize entries are not offered."""
    from textual.command import CommandInput, CommandPalette

    app = scenario_app("01_fog", tmp_path, lang)
    async with app.run_test(size=(100, 30)) as pilot:
        names = [c.title for c in app.get_system_commands(app.screen)]
        assert names == [tr("sys_quit", lang), tr("sys_keys", lang), tr("sys_screenshot", lang)]
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        box = app.screen.query_one(CommandInput)
        assert box.placeholder == tr("palette_search", lang)
        if lang == "zh":
            assert not any(c.isascii() and c.isalpha() for c in "".join(names))
