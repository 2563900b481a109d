"""Pilot tests of the app: every control, the takeover story, and playback equal to the player.

The live clock is off (`live_clock=False`): time moves only by key presses and explicit
`action_advance` calls, never by waiting on the wall clock.
"""

from pathlib import Path

from textual.widgets import Button, OptionList

from core.engine.config import Mode
from core.engine.people import called
from core.scenarios.format import load_scenario
from core.scenarios.player import event_record, play
from demo.app import BorrowedKeysApp
from demo.commands import main_screen_commands
from demo.screens.help import HelpScreen
from demo.screens.main import MainScreen
from demo.screens.picker import PickerScreen, bundled_scenarios
from demo.widgets.panels import RejectedTable
from demo.widgets.task_table import TaskTable
from demo.widgets.worker_pane import WorkerGrid

HERE = Path(__file__).parents[1]
FOG = HERE / "tui_scenarios" / "fog.toml"
BUNDLED = HERE.parent / "scenarios"
SIZE = (160, 48)


def app_for(path: Path | None, tmp_path: Path, lang: str = "en") -> BorrowedKeysApp:
    scenario = load_scenario(path) if path is not None else None
    return BorrowedKeysApp(
        scenario, open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )


def main_screen(app: BorrowedKeysApp) -> MainScreen:
    screen = app.screen
    assert isinstance(screen, MainScreen)
    return screen


async def test_picker_lists_bundled_scenarios_and_the_sandbox(tmp_path: Path) -> None:
    app = BorrowedKeysApp(lang="en", live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        options = app.screen.query_one(OptionList)
        scenarios = bundled_scenarios()
        assert options.option_count == len(scenarios) + 1
        first = str(options.get_option_at_index(0).prompt)
        assert scenarios[0].title in first
        await pilot.press("l")  # switch the picker to Chinese
        await pilot.pause()
        assert app.lang == "zh"
        first = str(options.get_option_at_index(0).prompt)
        assert scenarios[0].title_in("zh") in first
        await pilot.press("end")  # highlight the last option: the sandbox
        await pilot.press("enter")  # open it
        await pilot.pause()
        screen = main_screen(app)
        assert screen.session.is_sandbox
        assert not screen.playing  # the live clock is off in tests, so nothing runs


async def test_playback_controls(tmp_path: Path) -> None:
    app = app_for(FOG, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        s = screen.session
        await pilot.press("n")  # next step
        assert s.position == 1
        await pilot.press("right")  # next step (arrow)
        assert s.position == 2
        await pilot.press("p")  # previous step
        assert s.position == 1
        await pilot.press("left")  # previous step (arrow)
        assert s.position == 0
        await pilot.press("pagedown")  # presentation remote: forward
        assert s.position == 1
        await pilot.press("pageup")  # presentation remote: back
        assert s.position == 0
        await pilot.press("n", "n")  # two steps on
        await pilot.press("r")  # restart
        assert s.position == 0 and s.now_ms == 0
        await pilot.press("space")  # play
        assert screen.playing
        await pilot.press("full_stop")  # presentation remote: pause
        assert not screen.playing
        await pilot.press("space", "space")  # play, then pause again
        assert not screen.playing
        await pilot.press("plus")  # faster
        assert screen.pacer.speed == 2.0
        await pilot.press("minus", "minus")  # slower, twice
        assert screen.pacer.speed == 0.5
        await pilot.press("l")  # language: Chinese
        assert app.lang == "zh"
        assert "总册" in str(screen.query_one("#panels").get_tab("tab-ledger").label)  # type: ignore[attr-defined]
        await pilot.press("l")  # language: back to English
        assert app.lang == "en"
        await pilot.press("m", "enter")  # mode: the list, the next one highlighted
        assert s.mode is Mode.NO_EXPIRY and s.position == 0  # restarted above: still 0
        await pilot.press("question_mark")  # help
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")  # close help
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("e")  # enqueue: an act, so the playback forks
        assert s.forked
        assert screen.session.snapshot().task("task-2") is not None
        await pilot.press("s")  # save transcript, screenshot and scenario
        await pilot.pause()
        saved = sorted(p.suffix for p in tmp_path.iterdir())
        assert saved == [".jsonl", ".svg", ".toml"]
        assert app.return_code is None  # still running: nothing has quit it yet
        await pilot.press("q")  # quit
        await pilot.pause()
        assert app.return_code == 0  # q ended the app (None would mean it never did)


async def test_buttons_click(tmp_path: Path) -> None:
    app = app_for(FOG, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        await pilot.click("#btn-next")  # the Next button
        await pilot.press("n")  # and the key (two quick clicks would be a double click)
        assert screen.session.position == 2
        await pilot.click("#btn-previous")  # the Previous button
        assert screen.session.position == 1
        await pilot.click("#btn-faster")  # the Faster button
        assert screen.pacer.speed == 2.0
        await pilot.click("#btn-play")  # the Play/Pause button
        assert screen.playing
        screen.query_one("#add-worker", Button).press()  # the + Worker button: it forks
        await pilot.pause()
        assert screen.session.forked
        assert screen.session.snapshot().worker("w3") is not None
        assert "w3" in screen.query_one("#workers", WorkerGrid).panes


async def test_approve_and_reject_waiting_tasks(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        await pilot.press("a")  # approve with nothing waiting: a warning, nothing else
        assert [r.action.name for r in screen.session.recorded] == []
        screen.action_enqueue("approval")
        screen.action_enqueue("approval")
        for _ in range(60):
            snap = screen.session.snapshot()
            if sum(t.row.status == "waiting" for t in snap.tasks) == 2:
                break
            screen.action_advance(10_000)
        await pilot.pause()
        waiting = [t.task_id for t in screen.session.snapshot().tasks if t.row.status == "waiting"]
        assert len(waiting) == 2
        table = screen.query_one("#tasks", TaskTable)
        table.focus()
        await pilot.press("a")  # approve the selected (else first) waiting task
        await pilot.press("x")  # reject the next waiting one
        names = [r.action.name for r in screen.session.recorded]
        assert "approve" in names and "reject" in names
        statuses = {t.task_id: t.row.status for t in screen.session.snapshot().tasks}
        assert all(statuses[t] != "waiting" for t in waiting)


async def test_freeze_then_takeover_then_rejected_write(tmp_path: Path) -> None:
    app = app_for(FOG, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        await pilot.press("n")  # step 1: Acheng claims the sixth floor
        grid = screen.query_one("#workers", WorkerGrid)
        pane = grid.panes["acheng"]
        await pilot.click(pane, offset=pane.fault_at["freeze_heartbeat"])
        await pilot.pause()
        s = screen.session
        assert s.forked
        assert s.snapshot().worker("acheng").heartbeat_frozen  # type: ignore[union-attr]
        screen.action_advance(70_000)  # past the 60 s ttl
        await pilot.pause()
        task = s.snapshot().task("sixth-floor")
        assert task is not None
        assert task.row.owner_id == "linzhou" and task.row.fence_token == 2
        screen.action_advance(20_000)  # Acheng's next page arrives with fence token 1
        await pilot.pause()
        assert "●" in str(screen.query_one("#panels").get_tab("tab-rejected").label)  # type: ignore[attr-defined]
        await pilot.click("#--content-tab-tab-rejected")  # open the Rejected tab
        await pilot.pause()
        rejected = screen.query_one("#rejected", RejectedTable)
        assert rejected.row_count >= 1
        row = rejected.get_row_at(0)
        assert str(row[1]) == "Acheng"  # the story's name, not the id
        fence = rejected.get_cell(rejected.ordered_rows[0].key, "fence")
        assert str(fence) == "1 (now 2)"  # its fence token, the current one beside, in words
        assert "(" in str(screen.query_one("#panels").get_tab("tab-rejected").label)  # type: ignore[attr-defined]
        # the recorded run replays exactly: save it and play it headless
        screen.action_save()
        toml = next(tmp_path.glob("*.toml"))
        replay = [r for r in play(load_scenario(toml)) if r["type"] == "event"]
        assert replay == [event_record(e) for e in s.events(0)]


async def test_whole_bundled_scenario_through_the_app_equals_the_player(tmp_path: Path) -> None:
    path = BUNDLED / "01_fog.toml"
    app = app_for(path, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        while not screen.session.at_end:
            # n steps; at a question only v reveals (and plays) the step
            await pilot.press("v" if screen.session.question is not None else "n")
        mine = [event_record(e) for e in screen.session.events(0)]
    headless = [r for r in play(load_scenario(path)) if r["type"] == "event"]
    assert mine == headless


async def test_command_palette_has_every_control(tmp_path: Path) -> None:
    app = app_for(FOG, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = [c.title for c in main_screen_commands(main_screen(app), "en")]
        for word in ("Play/Pause", "Next", "Previous", "Restart", "Slower", "Faster", "中文"):
            assert any(t.startswith(word) for t in titles), word
        for word in ("Mode", "Approve", "Reject", "Enqueue", "Help", "Save", "Quit"):
            assert any(t.startswith(word) for t in titles), word
        assert any("Mode: mistake three" in t for t in titles)


async def test_narrow_terminal_stays_usable(tmp_path: Path) -> None:
    app = app_for(FOG, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        await pilot.pause()
        assert screen.has_class("-narrow")
        await pilot.press("n")  # still steps
        assert screen.session.position == 1


async def test_twelve_workers_two_hundred_tasks(tmp_path: Path) -> None:
    from bench.tui import big_settings

    app = BorrowedKeysApp(open_directly=True, live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        from core.scenarios.session import Session

        screen.session.close()  # the run it opened with ends here, not when collected
        screen.session = Session(settings=big_settings())
        screen.refresh_view(force=True)
        await pilot.pause()
        for _ in range(5):
            screen.action_advance(1_000)
        await pilot.pause()
        table = screen.query_one("#tasks", TaskTable)
        assert table.row_count == 200
        assert len(screen.query_one("#workers", WorkerGrid).panes) == 12
        # Five seconds on, every worker holds a task, and the table and each pane say so.
        assert screen.session.now_ms == 5_000
        running = [t.row for t in screen.session.snapshot().tasks if t.row.status == "running"]
        owners = sorted(row.owner_id or "" for row in running)
        assert owners == [f"w{i:02d}" for i in range(1, 13)]
        grid = screen.query_one("#workers", WorkerGrid)
        for row in running:
            # the owner by name, as the pane's title says it ("worker 10", not "w10")
            assert str(table.get_cell(row.task_id, "owner")) == called(row.owner_id or "", "en")
            # a pane out of sight draws its newest state when it scrolls into view
            grid.scroll_to_widget(grid.panes[row.owner_id or ""], animate=False)
            await pilot.pause()
            assert row.task_id in pane_text(screen, row.owner_id or "")


def pane_text(screen: MainScreen, worker_id: str) -> str:
    pane = screen.query_one("#workers", WorkerGrid).panes[worker_id]
    return pane.text.plain


async def test_an_added_idle_worker_pane_shows_its_content(tmp_path: Path) -> None:
    app = app_for(BUNDLED / "01_fog.toml", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        for _ in range(8):  # step 8 adds linzhou, who stays idle
            await pilot.press("n")
        await pilot.pause()
        pane = screen.query_one("#workers", WorkerGrid).panes["linzhou"]
        assert pane.border_title == "Linzhou"
        assert pane.border_subtitle == "idle"
        body = pane_text(screen, "linzhou")
        assert body.startswith("idle") and "holds no lease" in body
        lines = pane_text(screen, "linzhou").splitlines()
        assert lines[-2].replace("\u00a0", " ").split() == ["Freeze", "heartbeat", "Stall"]


async def test_add_worker_button_stays_in_sight_with_many_panes(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main_screen(app)
        button = screen.query_one("#add-worker", Button)
        for _ in range(8):
            screen.action_add_worker()
        await pilot.pause()
        assert await pilot.click("#add-worker")  # still on screen, and it still works
        await pilot.pause()
        assert len(screen.query_one("#workers", WorkerGrid).panes) == 12
        assert button.region.area > 0
        assert screen.region.contains_region(button.region)


async def test_pane_words_are_translated_and_spaced(tmp_path: Path) -> None:
    app = app_for(BUNDLED / "01_fog.toml", tmp_path, lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        for _ in range(8):  # acheng: heartbeat frozen, driven by hand
            await pilot.press("n")
        await pilot.pause()
        body = pane_text(screen, "acheng")
        assert "手动" in body and "manual" not in body
        assert "租约号 1  围栏令牌 1" in body
        pane = screen.query_one("#workers", WorkerGrid).panes["acheng"]
        content = pane.text
        from rich.text import Text

        assert isinstance(content, Text)
        for span in content.spans:  # no styled run starts with a space (SVG drops them)
            assert not content.plain[span.start : span.end].startswith(" ")
        statuses = {str(r[2]) for r in screen.query_one("#tasks", TaskTable)._rows.values()}
        assert statuses <= {"运行中", "排队中", "待审批", "已完成", "已放弃"}


async def test_task_table_columns_fit_at_160_columns(tmp_path: Path) -> None:
    for lang in ("en", "zh"):
        app = app_for(FOG, tmp_path, lang=lang)
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            table = main_screen(app).query_one("#tasks", TaskTable)
            assert len(table.columns) == 12
            needed = sum(c.get_render_width(table) for c in table.columns.values())
            assert needed <= table.scrollable_content_region.width, lang


async def test_save_writes_into_borrowed_keys_out(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    app = BorrowedKeysApp(load_scenario(FOG), open_directly=True, lang="en", live_clock=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.press("s")
        await pilot.pause()
        folder = tmp_path / "borrowed-keys-out"
        saved = sorted(p.name for p in folder.iterdir())
        assert [Path(n).suffix for n in saved] == [".jsonl", ".svg", ".toml"]
        assert not [p for p in tmp_path.iterdir() if p.is_file()]
        message = next(iter(app._notifications)).message
        assert str(folder.resolve()) in message
        assert all(n in message for n in saved)


async def test_every_widget_shows_the_same_instant(tmp_path: Path) -> None:
    """One truth per frame: after each timer refresh the panes and the task table agree."""

    from demo.widgets.worker_pane import short

    app = app_for(BUNDLED / "14_sandbox.toml", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        await pilot.press("n")  # the narrated step; then the run is live
        for _ in range(5):
            await pilot.press("plus")  # faster, five times (what the presenter did)
        table = screen.query_one("#tasks", TaskTable)
        grid = screen.query_one("#workers", WorkerGrid)
        for _ in range(12):  # what the timer does: time passes, then one refresh
            screen.session.tick(1_700)
            screen.refresh_view()
            await pilot.pause()
            snap = screen.session.snapshot()
            for w in snap.workers:
                if w.task_id is None or w.store_remaining_ms is None:
                    continue
                live = grid.panes[w.id].text.plain
                assert short(w.store_remaining_ms) in live, (w.id, live)
                task = snap.task(w.task_id)
                if task is not None and task.row.owner_id == w.id and task.remaining_ms:
                    assert str(table._rows[w.task_id][7]) == short(task.remaining_ms)


async def test_a_changed_cell_is_painted_with_its_new_value(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        table = screen.query_one("#tasks", TaskTable)
        await pilot.press("n")  # 5 s pass: a worker holds a lease
        await pilot.pause()
        key = next(k for k, r in table._rows.items() if str(r[7]))
        index = table.get_row_index(key)
        before = table.render_line(table.header_height + index).text
        screen.action_advance(2_000)
        await pilot.pause()
        after = table.render_line(table.header_height + index).text
        assert after != before
        assert str(table._rows[key][7]) in after


def test_rejected_tokens_leave_out_what_is_unknown() -> None:
    """A token not known (a call that never reached the store) is an empty cell, never
    "None"; the current one stands beside only where it differs."""
    from demo.widgets.panels import page_cell, token_cell

    assert token_cell(None, 2, "en") == ""
    assert token_cell(1, None, "en") == "1"
    assert token_cell(2, 2, "en") == "2"
    assert token_cell(1, 2, "en") == "1 (now 2)"
    assert token_cell(1, 2, "zh") == "1（当前 2）"
    assert page_cell("floor6/3", "floor6") == "3"
    assert page_cell(None, "floor6") == ""


def test_refusal_words_in_chinese() -> None:
    """A refused step reads in Chinese in zh, not as the core's English sentence."""
    from core.scenarios.library import open_scenario
    from core.scenarios.session import Session
    from demo.widgets.narration import narration_text

    session = Session(open_scenario("01_fog"))
    for _ in range(14):
        session.next_step()
    session.reveal()  # step 14 asks the audience before it plays
    zh = narration_text(session, "zh").plain
    assert "refused" not in zh and "LNone" not in zh
    assert "阿澄写第 3 页（第六层）被拒收：围栏令牌 1 落后于当前的 2" in zh
    en = narration_text(session, "en").plain
    said = "Acheng's page floor6/3 for floor6 is refused: fence token 1 is behind the current 2"
    assert said in en


async def test_number_keys_open_the_panels_and_panes_carry_the_storys_names(
    tmp_path: Path,
) -> None:
    from textual.widgets import TabbedContent

    app = app_for(BUNDLED / "01_fog.toml", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = main_screen(app)
        tabs = screen.query_one("#panels", TabbedContent)
        await pilot.press("3")  # 3: the Rejected panel, no mouse needed in a walkthrough
        await pilot.pause()
        assert tabs.active == "tab-rejected"
        await pilot.press("5")  # 5: the event log
        await pilot.pause()
        assert tabs.active == "tab-events"
        pane = screen.query(".worker-pane").first()
        assert pane.border_title == "Acheng"
        await pilot.press("l")  # l: Chinese, the pane says 阿澄
        await pilot.pause()
        assert pane.border_title == "阿澄"


def live_text(screen: MainScreen, worker_id: str) -> str:
    return screen.query_one("#workers", WorkerGrid).panes[worker_id].live_text.plain


async def test_a_heartbeat_visibly_moves_the_return_time(tmp_path: Path) -> None:
    # Scenario 1, steps 5-6: "the keeper pushes the return time out to 80 s" must be seen.
    app = app_for(BUNDLED / "01_fog.toml", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        for _ in range(5):  # the claim at 0 s, ..., 20 s pass, no heartbeat yet
            await pilot.press("n")
        await pilot.pause()
        assert "until 0:01:00" in live_text(screen, "acheng")
        row = screen.query_one("#tasks", TaskTable)._rows["floor6"]
        assert str(row[8]) == "0:01:00"
        await pilot.press("n")  # step 6: her heartbeat at 20 s
        await pilot.pause()
        assert "until 0:01:20" in live_text(screen, "acheng")
        assert str(screen.query_one("#tasks", TaskTable)._rows["floor6"][8]) == "0:01:20"


async def test_the_narration_says_it_describes_the_scenarios_own_mode(tmp_path: Path) -> None:
    from demo.widgets.narration import NarrationPanel

    app = app_for(BUNDLED / "02_fire_midnight_return.toml", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        await pilot.press("n")
        await pilot.pause()
        panel = screen.query_one("#narration", NarrationPanel)
        assert "This run is" not in str(panel.content)
        screen.set_mode(Mode.NO_FENCING)
        await pilot.press("n")
        await pilot.pause()
        said = str(panel.content)
        assert "This run is mistake three: heartbeats but no fence." in said
        assert "The text describes the correct run;" in said
        app.lang = "zh"
        await pilot.pause()
        assert "这一局是误区三：只有心跳，没有围栏。" in str(panel.content)


async def test_interview_step_pauses_on_its_question_until_v_reveals_it(tmp_path: Path) -> None:
    app = app_for(HERE / "scenarios_ok" / "interview.toml", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        s = screen.session
        narration = screen.query_one("#narration")
        await pilot.press("n")  # step 1: no question, plays at once
        await pilot.press("n")  # step 2 asks first
        await pilot.pause()
        assert s.position == 1 and s.question is not None
        shown = str(narration.render())
        assert "Question: Her heartbeats stop." in shown
        assert "2. Linzhou, with a higher fence token" in shown
        assert "(v: reveal)" in shown
        assert "✓" not in shown  # the right choice is not marked yet
        binding = next(b for _k, b in screen.active_bindings.items() if b.binding.id == "reveal")
        assert binding.binding.key == "v" and binding.binding.show
        assert binding.binding.tooltip
        keybar = screen.query_one("#keybar")
        assert str(keybar.render()).lstrip().startswith("v Reveal")  # leads the key bar
        await pilot.press("v")
        await pilot.pause()
        assert s.position == 2 and s.question is None
        assert "v Reveal" not in str(keybar.render())  # gone once nothing waits
        shown = str(narration.render())
        # one line after the ✓ lines: the right choice; the step's own narration says why
        assert "Answer: 2. Linzhou, with a higher fence token" in shown
        assert "1. Acheng" not in shown and "Question:" not in shown
        assert s.snapshot().worker("acheng").state == "frozen"  # type: ignore[union-attr]
        await pilot.press("v")  # nothing waits now: a note, no step played
        assert s.position == 2
