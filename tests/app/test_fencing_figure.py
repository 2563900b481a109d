"""The fencing figure and the harms of mistakes five and six, on screen and on the page.

Kleppmann's figure (DDIA, ch. 8, "fencing tokens") drawn from the run: under the workers'
rows a store lane with the newest fence token as a step line, each write an arrow into it
labelled with its token against the newest. The seed's "存储层或状态机只接受当前最大的 token",
and where a mistake lets a stale page in, the arrow in red. Two live leases at once
(client_clock) drawn over the interval they share; a second charge (no_idempotency) its own
row in Effects, with what it cost.
"""

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, TabbedContent

from core.engine.config import Mode
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.sim.snapshot import WITH_TIMELINE
from core.sim.timeline import TimelineView
from demo.export.frames import record
from demo.export.page import build_page
from demo.export.timeline_svg import timeline_html
from demo.widgets.timeline_view import OwnershipTimeline, render_timeline
from tests.app.apps import scenario_app

FENCE_STEP = 14  # 01_fog: Acheng's late page 3 meets the fence
SEED_23 = "库房里最值钱的不是钥匙"


def played(name: str, steps: int, mode: Mode | None = None) -> Session:
    session = Session(open_scenario(name))
    if mode is not None:
        session.set_mode(mode)
    for _ in range(steps):
        if session.next_step() is None:
            session.reveal()
    return session


def view_of(session: Session) -> TimelineView:
    view = session.snapshot(WITH_TIMELINE).timeline
    assert view is not None
    return view


def lines(text: Text, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None, legacy_windows=False)
    console.print(text)
    return console.export_text().splitlines()


def styled(text: Text, needle: str) -> set[str]:
    """The styles the first `needle` in `text` is drawn in."""
    at = text.plain.index(needle)
    return {str(span.style) for span in text.spans if span.start <= at < span.end and span.style}


def test_the_store_lane_says_each_write_against_the_newest_token() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    text = render_timeline(view, 120, "en", {})
    assert "1 < 2: refused" in text.plain and "1: accepted" in text.plain
    assert "newest" in text.plain and "▼" in text.plain
    zh = render_timeline(view, 120, "zh", {}).plain
    assert "1 < 2：拒收" in zh and "最新令牌" in zh


def test_a_stale_page_accepted_is_drawn_in_red() -> None:
    view = view_of(played("01_fog", FENCE_STEP, Mode.NO_FENCING))
    text = render_timeline(view, 120, "en", {})
    assert "1 < 2: accepted" in text.plain
    assert any("red" in style for style in styled(text, "1 < 2: accepted"))
    assert not any("red" in style for style in styled(text, "1: accepted"))


def test_two_live_leases_are_drawn_over_their_interval_in_red_and_said() -> None:
    view = view_of(played("11_mistake_client_clock", 2))
    text = render_timeline(view, 80, "en", {})
    said = " ".join(text.plain.split())
    assert (
        "Acheng's lease 1 and Linzhou's lease 2 have been live at once since 0:00:15"
        " (2 s so far): the store's clock holds Acheng's lease until 0:01:00" in said
    )
    # both store bars run over the shared seconds, in red; no "replaced by a new claim"
    red_rows = {
        n
        for n, line in enumerate(text.plain.split("\n"))
        if " store " in line
        and any(
            "red" in str(span.style)
            and text.plain[span.start : span.end].strip("█") == ""
            and text.plain.count("\n", 0, span.start) == n
            for span in text.spans
        )
    }
    assert len(red_rows) == 2
    assert "replaced" not in said and "no longer honoured" not in said
    zh = " ".join(render_timeline(view, 80, "zh", {}).plain.split())
    assert "阿澄的租约号 1 和临舟的租约号 2 同时有效" in zh


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("01_fog", None),
        ("01_fog", Mode.NO_FENCING),
        ("09_mistake_no_fencing", None),
        ("11_mistake_client_clock", None),
        ("12_mistake_no_idempotency", None),
    ],
)
def test_the_panel_fits_80_columns_at_every_step(name: str, mode: Mode | None, lang: str) -> None:
    session = played(name, 0, mode)
    while True:
        text = render_timeline(view_of(session), 78, lang, {}, caption=True)
        for line in lines(text, 200):
            assert cell_len(line.rstrip()) <= 78, line
        if session.at_end:
            break
        if session.next_step() is None:
            session.reveal()


def test_the_exported_drawing_has_the_store_lane_and_the_caption_once() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    first = timeline_html(view, "zh", "t1", caption=True)
    assert SEED_23 in first and "1 &lt; 2：拒收" in first and "最新令牌" in first
    assert SEED_23 not in timeline_html(view, "zh", "t2")
    stale = timeline_html(view_of(played("01_fog", FENCE_STEP, Mode.NO_FENCING)), "en", "t3")
    assert "1 &lt; 2: accepted" in stale
    both = timeline_html(view_of(played("11_mistake_client_clock", 2)), "en", "t4")
    assert "have been live at once" in both


def test_the_exported_page_quotes_the_seed_over_its_first_drawing_only() -> None:
    fog = open_scenario("01_fog")
    recordings = [asyncio.run(record(fog, lang, (80, 24), steps=3)) for lang in ("en", "zh")]
    page = build_page(fog, recordings, command="borrowed-keys export 01_fog")
    assert page.count('<p class="quote">') == 2  # once a language
    assert SEED_23 in page and "The most valuable thing in the vault" in page
    assert page.index('<p class="quote">') > page.index('class="belief"')


async def test_the_caption_is_there_the_first_time_the_panel_opens_only(tmp_path: Path) -> None:
    app = scenario_app("01_fog", tmp_path, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(3):
            await pilot.press("n")
        await pilot.press("6")
        await pilot.pause()
        panel = app.screen.query_one("#timeline", OwnershipTimeline)
        assert SEED_23 in str(panel.render())
        await pilot.press("1")
        await pilot.pause()
        await pilot.press("6")
        await pilot.pause()
        assert SEED_23 not in str(panel.render())
        assert "最新令牌" in str(panel.render())


async def test_a_second_charge_is_its_own_row_in_words(tmp_path: Path) -> None:
    app = scenario_app("12_mistake_no_idempotency", tmp_path, lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "n", "n", "v")
        await pilot.pause()
        await pilot.press("4")
        await pilot.pause()
        assert app.screen.query_one("#panels", TabbedContent).active == "tab-effects"
        table = app.screen.query_one("#effects", DataTable)
        cells = [" ".join(str(c) for c in table.get_row_at(n)) for n in range(table.row_count)]
        assert len(cells) == 2
        assert "阿澄" in cells[0] and "已执行" in cells[0]
        assert "临舟" in cells[1] and "扣了两次：2 × 120" in cells[1]
        assert not any("api_call" in c or "agent/" in c for c in cells)


SIZES = [(80, 24), (200, 60)]
SIZE_IDS = ["80x24", "200x60"]


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_live_leases_on_screen(
    snap_compare: Any, tmp_path: Path, lang: str, size: tuple[int, int]
) -> None:
    # n, n, v, 6: scenario 11 to Linzhou's claim over Acheng's live lease (the step asks
    # first); the step opens Belief vs truth itself, and 6 lets its scroll settle there
    app = scenario_app("11_mistake_client_clock", tmp_path, lang=lang)
    assert snap_compare(app, press=["n", "n", "v", "6"], terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stale_page_let_in_on_the_fencing_figure(
    snap_compare: Any, tmp_path: Path, lang: str, size: tuple[int, int]
) -> None:
    # n x 14, v, 6: scenario 1 under no_fencing to Acheng's late page, accepted against a
    # newer token, with Belief vs truth open
    app = scenario_app("01_fog", tmp_path, lang=lang, mode=Mode.NO_FENCING)
    assert snap_compare(app, press=["n"] * 14 + ["v", "6"], terminal_size=size)


# -- a store lane a task: 17 has two tasks written, floor6 (tokens 1, 3) and floor7 (2, 4) --


@pytest.fixture(scope="module")
def two_tasks() -> TimelineView:
    session = played("17_self_fencing", 9)
    view = view_of(session)
    session.close()
    return view


def _lane_lines(plain: str, name: str) -> list[str]:
    """The three lines of the store lane named `name`: its tokens, its arrows, its labels."""
    all_lines = plain.split("\n")
    at = next(n for n, line in enumerate(all_lines) if line.startswith(name + " "))
    return all_lines[at : at + 3]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_task_written_has_its_own_store_lane(two_tasks: TimelineView, lang: str) -> None:
    plain = render_timeline(two_tasks, 120, lang, {}).plain
    names = ("floor6", "floor7") if lang == "en" else ("第六层", "第七层")
    tokens = {names[0]: {"1", "3"}, names[1]: {"2", "4"}}
    for name in names:
        line, arrows, labels = _lane_lines(plain, name)
        # the task's own token line, and only its own writes' tokens under its arrows
        assert set(re.findall(r"\d", line.split(" ", 1)[1].lstrip())) <= tokens[name], line
        assert set(re.findall(r"\d", labels)) <= tokens[name], labels
        assert "▼" in arrows
    # Linzhou's late write to floor7 is judged against floor7's newest, 4, not floor6's
    said = " ".join(plain.split())
    assert ("2 < 4: refused" if lang == "en" else "2 < 4：拒收") in said
    assert "2 < 3" not in said


def test_a_write_is_drawn_into_its_own_lane_only(two_tasks: TimelineView) -> None:
    # the shaft of a write to floor7 passes floor6's lane and ends at floor7's arrow; one to
    # floor6 ends at floor6's: no shaft runs on below the lane its write is for
    plain = render_timeline(two_tasks, 120, "en", {}).plain.split("\n")
    floor7 = next(n for n, line in enumerate(plain) if line.startswith("floor7 "))
    below = plain[floor7 + 3 :]
    assert not any("┆" in line for line in below)
    writes6 = [c for row in two_tasks.rows for c in row.calls if c.task_id == "floor6"]
    assert writes6


def test_the_exported_drawing_has_a_lane_per_task(two_tasks: TimelineView) -> None:
    page = timeline_html(two_tasks, "zh", "t5")
    assert "第六层" in page and "第七层" in page and "floor" not in page
    assert "2 &lt; 4：拒收" in page
    assert page.count(">最新令牌<") == 2


LATE_LABELS = [(80, "en"), (100, "en"), (200, "en"), (80, "zh"), (100, "zh"), (200, "zh")]


@pytest.mark.parametrize(("width", "lang"), LATE_LABELS)
@pytest.mark.parametrize(
    ("name", "steps", "mode"),
    [
        ("17_self_fencing", 9, None),
        ("13_portfolio_demo", 6, None),
        ("01_fog", FENCE_STEP, Mode.NO_FENCING),
    ],
)
def test_no_two_labels_run_together(
    name: str, steps: int, mode: Mode | None, width: int, lang: str
) -> None:
    from demo.i18n import tr
    from demo.widgets.timeline_view import write_words, writes_of

    session = played(name, steps, mode)
    view = view_of(session)
    session.close()
    lane_words = [tr(k, lang) for k in ("tl_store", "tl_believes", "tl_calls", "tl_fence_lane")]
    lane_words.append(tr("tl_writes_lane", lang))
    words = {write_words(call, lang) for _writer, call in writes_of(view)}
    drawn = lines(render_timeline(view, width - 2, lang, {}), width - 2)
    # the drawing, down to the now cursor's line (the sentences under it are prose)
    drawn = drawn[: next(n for n, line in enumerate(drawn) if "↑" in line)]
    for line in drawn:
        # a row's name, then a space, then its lane's word, then a space: never "Linzhoustore"
        for lane in lane_words:
            at = line.find(lane)
            if 0 < at < 20:
                assert line[at - 1] == " ", line
                assert line[at + len(lane)] == " ", line
        found = [w for w in words if w in line]
        if found:
            # each label has a space (or a shaft) on each side, never another label
            marked = line
            for w in sorted(found, key=len, reverse=True):
                marked = marked.replace(w, "\1" + "\0" * (len(w) - 2) + "\2")
            assert "\2\1" not in marked, line
            for n, ch in enumerate(marked):
                if ch == "\1" and n:
                    assert marked[n - 1] in " ┆│", line
                if ch == "\2" and n + 1 < len(marked):
                    assert marked[n + 1] in " ┆│", line


def test_a_name_longer_than_its_column_is_cut_not_run_into_its_lane(
    two_tasks: TimelineView,
) -> None:
    import dataclasses

    long = "worker-with-a-very-long-name"
    rows = tuple(
        dataclasses.replace(row, worker_id=long) if row.worker_id == "linzhou" else row
        for row in two_tasks.rows
    )
    view = dataclasses.replace(two_tasks, rows=rows)
    drawn = render_timeline(view, 78, "en", {}).plain.split("\n")
    row = next(line for line in drawn if line.startswith("worker-with"))
    first = next(line for line in drawn if line.startswith("Acheng"))
    assert "…" in row and row.index("store") == first.index("store")
    assert row[row.index("store") - 1] == " "
    # and on the page: the name cut short where it would meet its lane's word
    from demo.export.timeline_svg import LABEL_W, lane_labels, text_px

    name_svg, _lane = lane_labels(long, "store", 0, "#fff")
    shown = re.search(r">([^<]*)</text>", name_svg)
    assert shown is not None and shown[1].endswith("…")
    assert 4 + text_px(shown[1]) + 8 <= LABEL_W - 6 - text_px("store")
