"""The app as a presenter uses it: small screens, refused acts, the palette, questions.

The live clock is off (`live_clock=False`): time moves only by key presses and explicit calls.
"""

import asyncio
import itertools
import re
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from textual.pilot import Pilot
from textual.widgets import OptionList, TabbedContent

from core.engine.config import Mode
from core.engine.people import called
from core.scenarios.glossary import kind_word, task_name
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.sim.spec import Advance, Enqueue, Kill, Partition
from demo.app import BorrowedKeysApp
from demo.commands import main_screen_commands
from demo.i18n import LANGS, tr
from demo.screens.confirm import ConfirmScreen
from demo.screens.help import HelpScreen
from demo.screens.main import MainScreen
from demo.widgets.panels import RejectedTable, group_rejections
from demo.widgets.task_table import (
    COLUMNS,
    TaskTable,
    cell_widths,
    fit_columns,
    header,
    narrow_columns,
    status_words,
    task_row,
)
from tests.app.apps import at_step, scenario_app, settled


def app_for(name: str | None, tmp_path: Path, lang: str = "en") -> BorrowedKeysApp:
    return scenario_app(name, tmp_path, lang)


def screen_of(app: BorrowedKeysApp) -> MainScreen:
    assert isinstance(app.screen, MainScreen)
    return app.screen


def visible(screen: MainScreen, selector: str) -> bool:
    widget = screen.query_one(selector)
    return screen.region.overlaps(widget.region) and widget.region.height > 0


async def until(pilot: Pilot[Any], what: str, found: Callable[[], bool]) -> None:
    """Until the screen shows what `found` looks for: each pause lets the app handle what it
    has queued (a palette's search, a save's toast), so no clock decides; a bound fails a
    screen that never shows it."""

    async def shown() -> None:
        while not found():
            await pilot.pause()

    try:
        await asyncio.wait_for(shown(), 30.0)
    except TimeoutError:
        raise AssertionError(f"never shown: {what}") from None


def first_hit(app: BorrowedKeysApp) -> str:
    """The command palette's first hit, or nothing while it is still searching."""
    hits = app.screen.query_one(OptionList)
    return str(hits.get_option_at_index(0).prompt) if hits.option_count else ""


async def test_a_panel_opened_on_a_small_screen_stays_at_the_top_when_the_panes_grow(
    tmp_path: Path,
) -> None:
    """Keys 1-6 bring the panel's tabs to the body's top. A height above it that changes in a
    layout no draw asked for (a row the task table laid out late) would leave a task row over
    the tabs: the panel is brought back; once the person scrolls, it is theirs."""
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        await at_step(pilot, 14)
        await pilot.press("6")
        await settled(pilot)
        body, panels = screen.query_one("#body"), screen.query_one("#panels")
        assert panels.region.y == body.region.y
        workers = screen.query_one("#workers")
        workers.styles.height = workers.outer_size.height + 2  # the panes grow, no frame drawn
        await settled(pilot)
        assert panels.region.y == body.region.y, "a row of the panes above the tabs"
        # the narration over the body folds shorter: the body grows, and its scroll is held
        # to the old end until the panel's part grows with it (a clamp is not a scroll)
        screen.query_one("#narration-box").styles.max_height = 1
        await settled(pilot)
        assert panels.region.y == body.region.y, "the body grew and the tabs went down"
        body.scroll_relative(y=-1, animate=False, immediate=True)  # the person scrolls up
        await settled(pilot)
        workers.styles.height = workers.outer_size.height + 1
        await settled(pilot)
        assert panels.region.y > body.region.y, "the person's scroll was taken back"


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_small_screen_shows_the_fence_rejection_with_one_key(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = screen_of(app)
        await at_step(pilot, 14)  # step 14: Acheng's stale page is refused
        narration = screen.query_one("#narration-box")
        assert narration.max_scroll_y == 0  # the ✓ lines are in sight, no scrollbar
        await pilot.press("3")  # the Rejected panel
        await pilot.pause()
        rejected = screen.query_one("#rejected", RejectedTable)
        assert visible(screen, "#rejected")
        row = rejected.ordered_rows[0].key
        assert str(rejected.get_cell(row, "worker")) == "Acheng"
        assert str(rejected.get_cell(row, "fence")) == "1 (now 2)"
        await pilot.press("0")  # back to the panes
        await pilot.pause()
        assert visible(screen, "#workers")
        for key, pane in zip(
            "123456",
            ("ledger", "checkpoints", "rejected", "effects", "events", "timeline"),
            strict=True,
        ):
            await pilot.press(key)
            await pilot.pause()
            assert screen.query_one("#panels", TabbedContent).active == f"tab-{pane}"
            assert visible(screen, "#panels"), key


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 60)])
async def test_buttons_and_key_hints_are_never_cut(tmp_path: Path, size: tuple[int, int]) -> None:
    from textual.widgets import Button

    for lang in ("en", "zh"):
        app = app_for("01_fog", tmp_path, lang)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            screen = screen_of(app)
            for button in screen.query_one("#controls").query(Button):
                if button.display:
                    assert screen.region.contains_region(button.region), (lang, button.label)
            keybar = screen.query_one("#keybar")
            line = keybar.render_line(0).text.rstrip()
            assert len(line) <= size[0]


def test_task_table_columns_fit_every_width() -> None:
    for lang in LANGS:
        for width in (78, 98, 118, 158, 198):
            widths = fit_columns(width, lang)
            assert sum(w + 2 for w in widths.values()) <= width
            assert widths.get("kind", 8) >= 8  # "approval" whole
        assert fit_columns(198, lang)["result"] > fit_columns(158, lang).get("result", 0) >= 12


def test_every_status_word_fits_the_status_column() -> None:
    """ "可再借出" / "lendable again" whole, at 80 columns too, in both languages."""
    for lang in LANGS:
        for width in (78, 98, 118, 158, 198):
            status = fit_columns(width, lang)["status"]
            for word in (*status_words(lang), header("status", lang)):
                assert cell_len(word) <= status, (lang, width, word)
        narrow = narrow_columns(79, lang, {"task": 9, "kind": 8, "owner": 8})["status"]
        for word in (*status_words(lang, narrow=True), header("status", lang, narrow=True)):
            assert cell_len(word) < narrow, (lang, word)  # and a cell to the next column


def test_the_narrow_table_keeps_two_cells_between_columns_where_they_fit() -> None:
    fog = {"task": 6, "kind": 6, "owner": 7, "expires_in": 3, "expires_at": 7}
    for lang in LANGS:
        at_100, at_80 = narrow_columns(99, lang, fog), narrow_columns(79, lang, fog)
        assert list(at_100) == list(at_80) == list(COLUMNS)
        assert at_100["expires_at"] == 9 and at_80["expires_at"] == 8  # "0:01:00" and a gap
    assert "lendable again" in status_words("en") and "可再借出" in status_words("zh")


def test_every_worker_and_task_id_of_a_bundled_scenario_fits_its_column() -> None:
    text = "".join(p.read_text("utf-8") for p in Path(str(files("scenarios"))).glob("*.toml"))
    for column, key in (("owner", "worker"), ("task", "task")):
        names = set(re.findall(rf'\b{key} = "([^"]+)"', text))
        assert names, key
        for lang in LANGS:
            width = fit_columns(78, lang)[column]
            assert all(cell_len(n) <= width for n in names), (column, names)


NARROW_SCENARIOS = ("01_fog", "00_story_1_keeper", "14_sandbox")  # the last: the longest ids


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NARROW_SCENARIOS)
async def test_every_task_column_and_its_header_is_on_screen_at_80x24(
    tmp_path: Path, name: str, lang: str
) -> None:
    """The until column (the lease's end, the lesson's key number) and every other one."""
    app = app_for(name, tmp_path, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        screen = screen_of(app)
        if name == "01_fog":  # at the end, with a long result to cut, not only at the start
            while not screen.session.at_end:
                await pilot.press("v" if screen.session.question is not None else "n")
        await pilot.pause()
        table = screen.query_one("#tasks", TaskTable)
        # a run that issues no fence token (the keeper's chapter) has no fence column
        fenced = Mode(screen.session.snapshot().mode).issues_fence_tokens
        wanted = [c for c in COLUMNS if fenced or c != "fence_token"]
        assert [c.value for c in table.columns] == wanted, (name, lang)
        assert table.max_scroll_x == 0  # nothing behind a sideways scroll
        assert table.region.right <= 80
        lines = ["".join(s.text for s in table.render_line(y)) for y in (0, 1)]
        for column in wanted:
            label = header(column, lang, narrow=True)
            for n, line in enumerate(label.split("\n")):
                shown = line[:1].upper() + line[1:] if n == 0 else line
                assert shown in lines[n], (name, lang, column, lines)
        if name == "01_fog":  # the task's row is on screen, its result cut to fit
            result = str(table._rows["floor6"][-1])
            assert result and result[:4] in "".join(s.text for s in table.render_line(2))


def test_the_narrow_table_fits_the_bundled_lessons_ids() -> None:
    """Every bundled scenario's tasks, kinds and workers: all twelve columns in 79 cells."""
    for path in sorted(Path(str(files("scenarios"))).glob("*.toml")):
        settings = open_scenario(path.stem).settings
        for lang in LANGS:
            # the task, its kind and its owner as the table shows them: names and a word
            measured = {
                "task": max(cell_len(task_name(t.id, lang)) for t in settings.tasks),
                "kind": max(cell_len(kind_word(t.kind, lang)) for t in settings.tasks),
                "owner": max(cell_len(called(w.id, lang)) for w in settings.workers),
                "expires_in": 3,  # 60s
                "expires_at": 7,  # 0:01:00
                "last_heartbeat": 3,  # 20s
            }
            widths = narrow_columns(79, lang, measured)
            assert sum(widths.values()) <= 79
            assert list(widths) == list(COLUMNS), (path.stem, lang)
            assert all(widths[c] > measured[c] for c in measured), (path.stem, lang)


def test_the_narrow_table_keeps_every_column_at_every_step_of_every_bundled_scenario() -> None:
    """What the cells hold as each script plays (results, expired leases, late heartbeats),
    not only the ids: at 80 columns no column of the run ever goes."""
    for path in sorted(Path(str(files("scenarios"))).glob("*.toml")):
        for lang in LANGS:
            s = Session(open_scenario(path.stem))
            while True:
                snap = s.snapshot()
                cells = [cell_widths(task_row(t, snap.now_ms, lang, True)) for t in snap.tasks]
                measured = dict(zip(COLUMNS, map(max, zip(*cells, strict=True)), strict=True))
                fenced = Mode(snap.mode).issues_fence_tokens
                wanted = [c for c in COLUMNS if fenced or c != "fence_token"]
                assert list(narrow_columns(79, lang, measured, fenced)) == wanted, (
                    path.stem,
                    lang,
                    s.position,
                )
                if s.at_end:
                    break
                s.next_step()  # at a question: asks first, then plays it


def test_the_narrow_table_says_an_expired_lease_in_few_cells() -> None:
    s = Session(open_scenario("00_story_2_fog"))  # the sand runs out before anyone claims it
    while True:
        assert s.next_step() is not None
        snap = s.snapshot()
        task = snap.task("floor6")
        assert task is not None
        if task.remaining_ms is not None and task.remaining_ms < 0:
            break
    for lang in LANGS:
        roomy = task_row(task, snap.now_ms, lang)
        narrow = task_row(task, snap.now_ms, lang, narrow=True)
        assert str(roomy[2]) == tr("lendable", lang) and str(roomy[7]) == tr("expired", lang)
        assert str(narrow[2]) == tr("lendable_short", lang)
        ago = -task.remaining_ms // 1000
        # how long ago, said as a time, never a minus sign under "time left"
        assert str(narrow[7]) == (f"{ago}秒前" if lang == "zh" else f"{ago}s ago")
        assert narrow[7].style == "bold red"  # type: ignore[union-attr]
        assert roomy[8] == narrow[8]  # the lease's end, the same in both


async def test_wide_screen_uses_the_width(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        screen = screen_of(app)
        pane = screen.query(".worker-pane").first()
        assert pane.region.width > 60  # a third of the width, not 36 cells and the rest empty
        table = screen.query_one("#tasks", TaskTable)
        assert table.columns[next(k for k in table.columns if k.value == "result")].width > 30


def test_refused_act_does_not_fork_the_playback() -> None:
    s = Session(open_scenario("01_fog"))
    s.next_step()
    result = s.act(Kill(worker="nobody"))
    assert not result.ok and "nobody" in result.message
    assert not s.forked and s.recorded == []
    assert s.next_step() is not None  # the script is still there


def test_acts_recorded_count_only_acts_and_ids_come_from_the_session() -> None:
    s = Session()
    s.tick(5_000)
    assert s.acts_count == 0 and not s.has_unsaved_acts
    s.act(Enqueue(task=s.new_task_id(), kind="ledger"))
    s.tick(5_000)
    assert s.acts_count == 1 and s.has_unsaved_acts
    assert s.new_task_id() == "task-4" and s.new_worker_id() == "w4"
    generation = s.generation
    s.restart()
    assert s.generation == generation + 1


def test_refusal_carries_its_rejection() -> None:
    s = Session(open_scenario("01_fog"))
    for _ in range(14):
        s.next_step()
    assert s.question is not None  # step 14 asks before it plays
    out = s.reveal()
    assert out is not None and out.result is not None and not out.result.ok
    r = out.result.rejection
    assert r is not None and r.reason == "fenced" and r.fence_token == 1
    assert r.current_fence_token == 2


def test_rejections_are_grouped() -> None:
    s = Session(open_scenario("01_fog"))
    while s.next_step() is not None:
        pass
    groups = group_rejections(s.snapshot().rejections)
    assert sum(g.count for g in groups.values()) == len(s.snapshot().rejections)


async def test_quit_and_restart_ask_before_losing_recorded_acts(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        await pilot.press("e")  # enqueue: an act, not yet saved
        await pilot.press("r")  # restart asks first
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # no: nothing lost
        await pilot.pause()
        assert screen.session.acts_count == 1
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("s")  # saved: now restart does not ask
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is screen and screen.session.acts_count == 0


async def test_palette_offers_every_act(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        screen = screen_of(app)
        titles = [c.title for c in main_screen_commands(screen, "en")]
        # each with the key that does it to the chosen worker
        for expected in (
            "Kill: Acheng  [k]",
            "Partition: Acheng  [c]",
            "Freeze heartbeat: Acheng  [h]",
        ):
            assert expected in titles
        assert any(t == "Mode: mistake three" for t in titles)
        assert "New task: work that waits for a person's approval" in titles
        kill = next(c for c in main_screen_commands(screen, "en") if c.title == "Kill: Acheng  [k]")
        kill.callback()
        await pilot.pause()
        assert screen.session.forked
        assert screen.session.snapshot().worker("acheng").state == "dead"  # type: ignore[union-attr]


async def test_l_switches_language_while_help_is_open(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("l")
        await pilot.pause()
        assert app.lang == "zh" and app.screen.lang == "zh"


async def test_after_a_fork_the_first_step_hint_is_gone(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        await pilot.press("e")  # an act before the first step
        await pilot.pause()
        text = str(screen.query_one("#narration").content)
        assert "first step" not in text and "1 act of yours recorded" in text.replace("\n", " ")


def test_last_heartbeat_stops_on_a_finished_task() -> None:
    from demo.widgets.task_table import task_row

    s = Session(open_scenario("01_fog"))
    while s.next_step() is not None:
        pass
    s.act(Advance(by_ms=3_600_000))
    snap = s.snapshot()
    task = snap.task("floor6")
    assert task is not None and task.row.status == "done"
    assert str(task_row(task, snap.now_ms, "en")[8]) == ""


async def test_ledger_rows_are_in_time_order(tmp_path: Path) -> None:
    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        await at_step(pilot, screen.session.step_count)
        await pilot.press("1")
        await pilot.pause()
        ledger = screen.query_one("#ledger")
        times = [str(ledger.get_row_at(i)[0]) for i in range(ledger.row_count)]  # type: ignore[attr-defined]
        assert times == sorted(times) and len(times) >= 3
        table = screen.query_one("#tasks", TaskTable)
        assert table.row_count == 1


@pytest.mark.parametrize("width", [30, 41, 57, 70, 100])
def test_chinese_help_wraps_without_a_lone_full_stop_or_a_split_word(width: int) -> None:
    from demo.screens.help import IDEAS, help_renderable
    from demo.widgets.cjk_wrap import NO_LINE_START, wrap

    for _idea, story, meaning, where in IDEAS:
        for value in (story[1], meaning[1], where[1]):
            lines = wrap(value, width - 12)
            assert "".join(lines).replace(" ", "") == value.replace(" ", "")  # nothing lost
            assert not any(line[:1] in NO_LINE_START for line in lines), lines
            joints = [a[-2:] + b[:2] for a, b in itertools.pairwise(lines)]
            assert not any("租约令牌" in j or "围栏令牌" in j for j in joints), joints
    assert "。" not in {
        line.strip()[:1] for line in help_renderable("zh", width).plain.splitlines()
    }


async def test_rejected_panel_folds_repeats_and_filters_by_reason(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = screen_of(app)
        screen.act(Partition(worker="elder"))  # idle: every claim it tries is refused
        for _ in range(12):
            screen.action_advance(10_000)
        await pilot.press("3")
        await pilot.pause()
        table = screen.query_one("#rejected", RejectedTable)
        refused = screen.session.snapshot().rejections
        assert len(refused) > table.row_count >= 1
        counts = [str(table.get_row_at(i)[7]) for i in range(table.row_count)]
        assert any(c.isdigit() and int(c) > 5 for c in counts), counts
        newest = table.get_row_index(table.selected_key() or "")
        assert table.row_style(newest) is not None  # the new repeat is highlighted, whole row
        await pilot.press("f")  # only the first reason refused so far
        await pilot.pause()
        assert table.reason_filter == refused[0].reason
        label = str(screen.query_one("#panels", TabbedContent).get_tab("tab-rejected").label)
        assert f"· {refused[0].reason}" in label
        while table.reason_filter is not None:
            await pilot.press("f")  # on to the next reason, then all again
        await pilot.pause()
        assert table.row_count == len(group_rejections(refused))


async def test_previous_in_the_sandbox_names_what_it_undoes(tmp_path: Path) -> None:
    app = app_for(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        screen.act(Kill(worker="linzhou"))
        screen.action_advance(5_000)
        await pilot.press("p")  # undo: the kill, and the time after it
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        # by the name and the narration's words, never the ids ("kill linzhou")
        assert any("Linzhou's process is killed" in m for m in messages), messages
        assert screen.session.snapshot().worker("linzhou").state != "dead"  # type: ignore[union-attr]


def test_saved_scenario_summary_is_as_informative_in_chinese() -> None:
    s = Session(open_scenario("01_fog"))
    s.next_step()
    s.act(Kill(worker="acheng"))
    text = s.scenario_text()
    assert "第 1 步" in text and "1 个动作" in text and "1 act(s)" in text


@pytest.mark.parametrize("width", [140, 200])
async def test_result_and_kind_are_whole_at_140_and_200_columns(tmp_path: Path, width: int) -> None:
    from rich.cells import cell_len

    app = app_for("04_human_approval", tmp_path)
    async with app.run_test(size=(width, 50)) as pilot:
        screen = screen_of(app)
        await at_step(pilot, screen.session.step_count)
        table = screen.query_one("#tasks", TaskTable)
        widths = {c.key.value: c.width for c in table.columns.values()}
        for key in table.row_keys_shown():
            kind = str(table.get_cell(key, "kind"))
            result = str(table.get_cell(key, "result"))
            assert cell_len(kind) <= widths["kind"], kind
            assert cell_len(result) <= widths["result"], result


async def test_the_palette_provider_finds_an_act_and_runs_it(tmp_path: Path) -> None:
    from textual.command import CommandPalette

    app = app_for("01_fog", tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")  # the claim: Acheng holds the task
        await pilot.press("ctrl+p")  # the palette, with the main screen's provider
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"kill acheng")  # typed: the provider's search
        await until(pilot, "Kill: Acheng", lambda: "Kill: Acheng" in first_hit(app))
        await pilot.press("enter")  # the best hit: Kill: Acheng
        await pilot.pause()
        screen = screen_of(app)
        assert screen.session.forked
        assert screen.session.snapshot().worker("acheng").state == "dead"  # type: ignore[union-attr]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_g_and_a_number_go_to_that_step_as_exactly_as_stepping(
    tmp_path: Path, lang: str
) -> None:
    from core.scenarios.player import event_record
    from demo.screens.jump import JumpScreen

    stepped = Session(open_scenario("01_fog"))
    for _ in range(4):
        stepped.next_step()
    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        for _ in range(9):
            await pilot.press("n")  # well past the fog
        await pilot.press("g")  # the step list
        await pilot.pause()
        assert isinstance(app.screen, JumpScreen)
        await pilot.press("4", "enter")  # step 4, where the fog starts
        await pilot.pause()
        assert app.screen is screen and screen.session.position == 4
        mine = [event_record(e) for e in screen.session.events(0)]
        assert mine == [event_record(e) for e in stepped.events(0)]
        assert screen.session.now_ms == stepped.now_ms
        await pilot.press("g", "1", "4", "enter")  # two digits: step 14
        await pilot.pause()
        assert screen.session.position == 14
        await pilot.press("g", "escape")  # cancelled: nothing moves
        await pilot.pause()
        assert app.screen is screen and screen.session.position == 14
    stepped.close()


async def test_s_on_the_picker_says_why_nothing_is_saved(tmp_path: Path) -> None:
    app = BorrowedKeysApp(live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")  # s on the picker: there is no run to save yet
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any("Nothing to save here" in m for m in said), said
        assert not any(tmp_path.iterdir())  # and nothing half-written


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_save_toast_keeps_each_file_name_on_one_line(tmp_path: Path, lang: str) -> None:
    from textual.widgets._toast import Toast

    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("n")  # the claim
        await pilot.press("s")  # save: transcript, screenshot, scenario
        await until(
            pilot,
            "the save's toast",
            lambda: len(list(tmp_path.iterdir())) == 3 and bool(app.screen.query(Toast)),
        )
        await pilot.pause()  # laid out before it is read
        toast = app.screen.query(Toast).last()
        lines = [toast.render_line(y).text for y in range(toast.size.height)]
        names = sorted(p.name for p in tmp_path.iterdir())
        assert len(names) == 3
        for name in names:
            assert any(name in line for line in lines), (name, lines)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 60)])
async def test_the_header_never_wraps_inside_a_field_and_shows_fork_and_recording(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    from demo.widgets.status_header import StatusHeader

    for lang in ("en", "zh"):
        app = app_for("01_fog", tmp_path, lang)
        async with app.run_test(size=size) as pilot:
            await pilot.press("n", "n", "n")  # three steps of the script
            await pilot.press("e")  # an act: the playback forks and records
            await pilot.pause()
            header = screen_of(app).query_one("#status", StatusHeader)
            lines = [header.render_line(y).text.rstrip() for y in range(header.size.height)]
            shown = "\n".join(lines)
            assert ("FORKED" if lang == "en" else "已分叉") in shown, shown
            assert ("recording" if lang == "en" else "录制中") in shown, shown
            for line in lines:  # every line is whole fields, no field cut in two
                assert not line.rstrip().endswith("│"), lines
                assert not line.lstrip().startswith("│"), lines


async def test_the_task_table_reads_in_natural_order_and_keeps_running_tasks_in_view(
    tmp_path: Path,
) -> None:
    from core.sim.spec import SimSettings, TaskSpec, WorkerSpec

    settings = SimSettings(
        workers=(WorkerSpec("w1"), WorkerSpec("w2")),
        tasks=tuple(
            TaskSpec(f"task-{i}", steps=1, step_time_ms=1_000) for i in (*range(1, 61), 7000)
        ),
    )
    app = BorrowedKeysApp(open_directly=True, live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = screen_of(app)
        screen.session.close()  # the run it opened with ends here, not when collected
        screen.session = Session(settings=settings)
        screen.refresh_view(force=True)
        await pilot.pause()
        table = screen.query_one("#tasks", TaskTable)
        keys = table.row_keys_shown()
        assert keys[:11] == [f"task-{i}" for i in range(1, 12)]  # task-7 before task-10
        assert keys[-1] == "task-7000"
        assert table.size.height >= 18  # a third of a tall screen, not a fixed dozen rows
        scrolled = 0
        for _ in range(40):
            screen.action_advance(1_000)  # tasks finish two by two; later ones start
            await pilot.pause()
            running = [
                n
                for n, k in enumerate(table.row_keys_shown())
                if str(table.get_cell(k, "status")) == "running"
            ]
            top = table.scroll_y
            bottom = top + table.scrollable_content_region.height - table.header_height
            assert not running or any(top <= n < bottom for n in running), (top, running)
            scrolled = max(scrolled, top)
        assert scrolled > 0  # the table followed the work down


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_ledger_writers_whole_and_checkpoints_say_who_saved_them(
    tmp_path: Path, lang: str
) -> None:
    from demo.widgets.panels import CheckpointTable, LedgerTable

    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        await at_step(pilot, 13)  # step 13: pages by Acheng and by Linzhou
        await pilot.press("1")  # the Ledger
        await pilot.pause()
        ledger = screen.query_one("#ledger", LedgerTable)
        lines = [ledger.render_line(y).text for y in range(ledger.size.height)]
        # the story's names in the run's language, never the ids
        acheng, linzhou = ("阿澄", "临舟") if lang == "zh" else ("Acheng", "Linzhou")
        assert sum(acheng in line for line in lines) == 2, lines
        assert any(linzhou in line for line in lines), lines
        assert all(line.rstrip() == line.rstrip()[: ledger.size.width] for line in lines)
        await pilot.press("2")  # the Checkpoints
        await pilot.pause()
        table = screen.query_one("#checkpoints", CheckpointTable)
        writers = [str(table.get_row_at(i)[4]) for i in range(table.row_count)]
        assert writers == [linzhou, acheng, acheng]  # newest first
        await pilot.press("l")  # the other language: the writers are named again in it
        await pilot.pause()
        acheng, linzhou = ("Acheng", "Linzhou") if lang == "zh" else ("阿澄", "临舟")
        writers = [str(table.get_row_at(i)[4]) for i in range(table.row_count)]
        assert writers == [linzhou, acheng, acheng]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_after_a_fork_a_mark_is_rechecked_or_dated_never_stale(
    tmp_path: Path, lang: str
) -> None:
    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = screen_of(app)
        await at_step(pilot, 8)  # step 8: Linzhou arrives, idle
        said = str(screen.query_one("#narration").content).replace("\n", " ")
        idle = "Linzhou is idle" if lang == "en" else "临舟空闲"
        assert f"✓ {idle}" in said
        await pilot.press("e")  # an act: the playback forks, the workers go on alone
        for _ in range(6):
            await pilot.press("n")  # in a fork, n lets 5 s pass
        await pilot.pause()
        assert screen.session.snapshot().worker("linzhou").state == "working"  # type: ignore[union-attr]
        await pilot.press("d")  # the narration whole (at 100 x 30 it is folded)
        await pilot.pause()
        said = str(screen.query_one("#narration").content).replace("\n", " ")
        assert f"✓ {idle}" not in said.replace("○ ✓", "")  # no stale ✓ beside his pane
        assert "○" in said and ("at step 8" if lang == "en" else "第 8 步时") in said
        header = str(screen.query_one("#status").content)
        assert ("workers on their own" if lang == "en" else "执行者自己接着干") in header


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_mark_this_run_broke_stays_a_cross_once_time_goes_on(
    tmp_path: Path, lang: str
) -> None:
    """01 under the unread box: at its last step Acheng's pages 1 and 2 are not in the
    ledger (Linzhou wrote them again). Time going on after the script changes nothing of
    that: the ✗ stays a ✗ with what is found, never dimmed as if it were history."""
    app = scenario_app("01_fog", tmp_path, lang, mode=Mode.UNREAD_CHECKPOINT)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = screen_of(app)
        await at_step(pilot, screen.session.step_count)
        await pilot.press("n")  # past the script: 5 s of the run's time
        await pilot.press("d")  # the narration whole
        await pilot.pause()
        said = str(screen.query_one("#narration").content)
        page = "floor6/1: written by Acheng" if lang == "en" else "第六层第 1 页：由阿澄写下"
        line = next(x for x in said.split("\n") if page in x)
        assert line.lstrip().startswith("✗"), line
        found = "found" if lang == "en" else "实际"
        assert found in said.split(line, 1)[1].split("\n")[1]  # what it is now, under it


async def test_at_a_question_n_does_not_reveal_and_after_v_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    app = app_for(str(Path(__file__).parents[1] / "scenarios_ok" / "interview.toml"), tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = screen_of(app)
        s = screen.session
        await pilot.press("n")  # step 1 plays
        await pilot.press("space")  # auto-play
        assert screen.playing
        screen._autoplay_wall = -1e9  # the next beat is due (the live clock is off here)
        screen.on_tick()  # step 2 asks first: auto-play stops on the question
        await pilot.pause()
        assert s.question is not None and not screen.playing and s.position == 1
        assert any("v reveals" in str(n.message) for n in app._notifications)
        said = str(screen.query_one("#narration").content)
        assert said.startswith("Step 2 of")  # the question sits under the step it asks about
        await pilot.press("n", "n")  # by habit: it must not give the answer away
        await pilot.pause()
        assert s.question is not None and s.position == 1
        # the hint once while it is on screen, not a stack of copies over the panes
        assert sum("v reveals" in str(n.message) for n in app._notifications) == 1
        app.clear_notifications()
        await pilot.press("space")  # nor does Space: auto-play waits on the question
        screen._autoplay_wall = -1e9
        screen.on_tick()
        await pilot.pause()
        assert s.question is not None and s.position == 1
        assert any("nothing moves until v" in str(n.message) for n in app._notifications)
        screen.playing = True  # however the run was started, a beat does not play the step
        screen._autoplay_wall = -1e9
        screen.on_tick()
        await pilot.pause()
        assert s.question is not None and s.position == 1 and not screen.playing
        await pilot.press("v")  # reveal: the step plays, and the run stays paused
        await pilot.pause()
        assert s.question is None and s.position == 2 and not screen.playing
        assert not any("v reveals" in str(n.message) for n in app._notifications)
        said = str(screen.query_one("#narration").content)
        why = s.steps[1].question.why_in("en")  # type: ignore[union-attr]
        assert why and why.split()[0] in said  # the why is shown with the answer


async def test_p_undoes_in_every_sandbox_and_the_key_bar_says_so(tmp_path: Path) -> None:
    from textual.widgets import Button

    for name in (None, "14_sandbox"):
        app = app_for(name, tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = screen_of(app)
            if name is not None:
                await pilot.press("n")  # the bundled sandbox's one narrated step
            await pilot.press("e")  # an act
            await pilot.pause()
            bar = screen.query_one("#keybar").render_line(0).text
            assert "p Undo" in bar, (name, bar)
            assert str(screen.query_one("#btn-previous", Button).label) == "Undo"
            await pilot.press("p")  # undo it: no question about losing recorded acts
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmScreen)
            assert screen.session.acts_count == 0


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_while_a_task_waits_approve_reject_and_enqueue_lead_the_buttons(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    from textual.widgets import Button

    for lang in ("en", "zh"):
        app = app_for("04_human_approval", tmp_path, lang)
        async with app.run_test(size=size) as pilot:
            screen = screen_of(app)
            await pilot.press("n")  # step 1: the grant parks, waiting for a person
            await pilot.pause()
            shown = [b.id for b in screen.query_one("#controls").query(Button) if b.display]
            assert shown[:3] == ["btn-approve", "btn-reject", "btn-enqueue"], shown
            await pilot.press("a")  # approved: nothing waits any more
            await pilot.pause()
            shown = [b.id for b in screen.query_one("#controls").query(Button) if b.display]
            assert shown[0] != "btn-approve", shown


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_80x24_every_step_is_whole_and_chinese_wraps_by_its_rules(
    tmp_path: Path, lang: str
) -> None:
    from demo.widgets.cjk_wrap import NO_LINE_START
    from demo.widgets.narration import NarrationPanel

    app = app_for("01_fog", tmp_path, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        while not screen.session.at_end:
            # n steps; at a question only v reveals (and plays) the step
            await pilot.press("v" if screen.session.question is not None else "n")
            await pilot.pause()
            box = screen.query_one("#narration-box")
            assert box.max_scroll_y == 0, screen.session.position  # the whole step in sight
            panel = screen.query_one("#narration", NarrationPanel)
            lines = [panel.render_line(y).text for y in range(panel.size.height)]  # as drawn
            for line in lines:
                assert line.strip()[:1] not in NO_LINE_START, line
                assert not line.rstrip().endswith(("围栏令牌", "租约令牌", "第")), line
        assert screen.session.position == 17
