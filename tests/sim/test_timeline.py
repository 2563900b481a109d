"""Belief against truth: the timeline below the app, the panel that draws it, the step's panel.

The seed's first lesson is the gap between what a holder believes and what the store knows
("是别人能不能相信这把钥匙现在确实在你手里"); these tests pin where the bars part and meet.
"""

import re
from pathlib import Path

from rich.console import Console
from textual.widgets import TabbedContent

from core.engine.errors import RejectReason
from core.engine.vocabulary import Operation
from core.scenarios.format import Panel, parse_scenario
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.scenarios.writer import dump
from core.sim.snapshot import SNAPSHOT_PARTS, WITH_TIMELINE
from core.sim.timeline import (
    BeliefEnd,
    CallOutcome,
    LeaseEnd,
    TickKind,
    Timeline,
    TimelineView,
)
from demo.app import BorrowedKeysApp
from demo.export.timeline_svg import timeline_html
from demo.widgets.timeline_view import OwnershipTimeline, render_timeline

FENCE_STEP = 14  # 01_fog: Acheng's stale page 3 meets the fence


def played(name: str, steps: int, mode: str | None = None) -> Session:
    session = Session(open_scenario(name))
    if mode is not None:
        from core.engine.config import Mode

        session.set_mode(Mode(mode))
    for _ in range(steps):
        if session.next_step() is None:
            session.reveal()  # the step asked its question first
    return session


def view_of(session: Session) -> TimelineView:
    view = session.snapshot(WITH_TIMELINE).timeline
    assert view is not None
    return view


def test_at_the_fence_achengs_belief_runs_past_her_expiry() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    assert view.now_ms == 95_000
    acheng = view.row("acheng")
    assert acheng is not None
    (lease,) = acheng.leases
    # the store's lease: from the claim, renewed once at 0:00:20, ended by its expiry
    assert (lease.start, lease.renewals, lease.end) == (0, (20_000,), 80_000)
    assert lease.ended_by is LeaseEnd.EXPIRED
    (belief,) = acheng.beliefs
    # what she believes runs on past 0:01:20, until the fence refuses her page at 0:01:35
    assert belief.start == 0 and belief.end == 95_000
    assert belief.ended_by is BeliefEnd.REFUSED and belief.reason is RejectReason.FENCED
    assert lease.end is not None and belief.end > lease.end
    # her heartbeats: one delivered, then lost in the fog every 20 s
    assert [(t.at, t.kind) for t in acheng.ticks] == [
        (20_000, TickKind.DELIVERED),
        (40_000, TickKind.FROZEN),
        (60_000, TickKind.FROZEN),
        (80_000, TickKind.FROZEN),
    ]
    refused = [c for c in acheng.calls if c.outcome is CallOutcome.REFUSED]
    assert [(c.at, c.operation, c.reason) for c in refused] == [
        (95_000, Operation.WRITE, RejectReason.FENCED)
    ]
    assert (refused[0].fence_token, refused[0].current_fence_token) == (1, 2)
    linzhou = view.row("linzhou")
    assert linzhou is not None
    (his,) = linzhou.leases
    # Linzhou's lease from 0:01:25, held now, to 0:02:25
    assert (his.start, his.end, his.expires_at, his.fence_token) == (85_000, None, 145_000, 2)
    assert linzhou.believes_at(95_000) is not None and acheng.holds_at(90_000) is None
    # the correct mode takes no call from a lease that is not the current live one
    assert not any(c.outcome is CallOutcome.STALE for r in view.rows for c in r.calls)


def test_a_stale_page_accepted_without_the_fence_is_marked() -> None:
    view = view_of(played("09_mistake_no_fencing", 5))
    linzhou = view.row("linzhou")
    assert linzhou is not None
    stale = [c for c in linzhou.calls if c.outcome is CallOutcome.STALE]
    assert [(c.operation, c.key) for c in stale] == [(Operation.WRITE, "floor6/3")]
    # the elder's pages, from the lease the store holds, are plain accepted calls
    elder = view.row("elder")
    assert elder is not None and elder.calls
    assert all(c.outcome is CallOutcome.ACCEPTED for c in elder.calls)


def test_self_fencing_ends_the_belief_before_the_store_lease() -> None:
    view = view_of(played("17_self_fencing", 4))
    acheng, linzhou = view.row("acheng"), view.row("linzhou")
    assert acheng is not None and linzhou is not None
    (belief,) = acheng.beliefs
    assert (belief.end, belief.ended_by) == (60_000, BeliefEnd.SELF_FENCED)
    assert acheng.leases[0].end is None and acheng.leases[0].expires_at == 80_000
    # the bridge is down: Linzhou's heartbeats never reach the store, and he believes on
    assert any(t.kind is TickKind.PARTITIONED for t in linzhou.ticks)
    assert linzhou.beliefs[0].end is None


def test_only_a_reader_who_asks_pays_for_the_timeline() -> None:
    session = played("01_fog", 3)
    assert session.snapshot(SNAPSHOT_PARTS).timeline is None
    assert session.snapshot(WITH_TIMELINE).timeline is not None


def test_fed_in_pieces_it_is_the_same_as_fed_at_once() -> None:
    session = played("01_fog", 17)
    events = session.events(0)
    whole, pieces = Timeline(20_000, 60_000, 40_000), Timeline(20_000, 60_000, 40_000)
    whole.feed(events)
    for n in range(0, len(events), 3):
        pieces.feed(events[: n + 3])  # overlapping batches: a line is taken once
    assert whole.view(session.now_ms) == pieces.view(session.now_ms)
    # nothing new, the same instant: the same picture, not a new one
    assert whole.view(session.now_ms) is whole.view(session.now_ms)
    assert not whole.feed(events)


def test_the_drawing_at_80_columns_and_at_200() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    for lang in ("en", "zh"):
        for width in (78, 198):
            text = render_timeline(view, width, lang, {})
            console = Console(width=width, color_system=None, record=True)
            console.print(text)
            lines = console.export_text().splitlines()
            # the bars fit whole: no row of the drawing is wider than the panel
            assert max(len(line) for line in lines) <= width
            store, believes = lines[1], lines[2]
            # Acheng's store bar stops at the expiry; her belief runs further
            assert store.rstrip(" │").endswith("┃")
            assert believes.rstrip().rfind("▒") > store.rfind("┃")
    # the sentences are wrapped to the panel: read them as one line again
    words = " ".join(render_timeline(view, 120, "en", {}).plain.split())
    assert "the store's lease 1 ended at 0:01:20 (it expired)" in words
    assert "held until 0:01:35, when the store refused a write (fence token 1 behind 2)" in words
    assert "for 15 s Acheng held a key the store no longer honoured" in words
    zh = render_timeline(view, 120, "zh", {}).plain.replace("\n", "")
    assert "有 15 秒，阿澄握着一把守库人已不认的钥匙" in zh
    assert "snake" not in words and "_" not in words and "_" not in zh  # no ids on screen


def test_the_gap_is_red_and_a_stale_call_is_red() -> None:
    text = render_timeline(view_of(played("01_fog", FENCE_STEP)), 100, "en", {})
    gap = [s for s in text.spans if "red" in str(s.style) and text.plain[s.start] == "▒"]
    assert gap, "the belief past the expiry is drawn red"
    stale = render_timeline(view_of(played("09_mistake_no_fencing", 5)), 100, "en", {})
    assert any(
        str(s.style) == "bold white on red" and stale.plain[s.start] == "!" for s in stale.spans
    )


def test_the_panel_key_loads_writes_back_and_is_optional(tmp_path: Path) -> None:
    scenario = open_scenario("17_self_fencing")
    named = [n for n, step in enumerate(scenario.steps, start=1) if step.panel is not None]
    assert named == [4, 7]
    assert scenario.steps[3].panel is Panel.TIMELINE
    again = parse_scenario(dump(scenario), "again.toml")
    assert [s.panel for s in again.steps] == [s.panel for s in scenario.steps]


async def test_a_step_opens_the_panel_the_file_names(tmp_path: Path) -> None:
    app = BorrowedKeysApp(
        open_scenario("17_self_fencing"),
        open_directly=True,
        lang="en",
        live_clock=False,
        save_dir=tmp_path,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        panels = app.screen.query_one("#panels", TabbedContent)
        await pilot.press("n", "n", "n")
        assert panels.active == "tab-checkpoints"  # step 1 checks a checkpoint
        await pilot.press("n", "v")  # step 4 asks first; its file names Belief vs truth
        await pilot.pause()
        assert panels.active == "tab-timeline"
        drawn = str(app.screen.query_one("#timeline", OwnershipTimeline).render()).replace("\n", "")
        assert "let go by itself" in drawn
        # the presenter may open another panel; the same step does not take it back
        await pilot.press("1")
        await pilot.pause()
        assert panels.active == "tab-ledger"


async def test_where_belief_and_truth_part_the_app_opens_the_timeline(tmp_path: Path) -> None:
    app = BorrowedKeysApp(
        open_scenario("01_fog"), open_directly=True, lang="zh", live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        panels = app.screen.query_one("#panels", TabbedContent)
        await pilot.press(*["n"] * 11)
        assert panels.active == "tab-checkpoints"
        await pilot.press("n")  # 0:01:20 her lease expires; at 0:01:25 Linzhou claims
        await pilot.pause()
        assert panels.active == "tab-timeline"
        drawn = str(app.screen.query_one("#timeline", OwnershipTimeline).render()).replace("\n", "")
        assert "在阿澄心里，钥匙仍在手" in drawn


def test_the_exported_page_draws_the_same_data_as_svg() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    drawn = timeline_html(view, "en", "t14")
    svg = drawn[drawn.index("<svg") : drawn.index("</svg>")]
    # no terminal screenshot: shapes, with the store's lease, the belief and the gap apart
    assert "<rect" in svg and "rich-terminal" not in svg
    bars = re.findall(r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)"[^>]*fill="([^"]+)"', svg)
    acheng_store = next(b for b in bars if b[2] == "#4ebf71")
    belief = next(b for b in bars if b[2] == "url(#t14-b-acheng)")
    gap = next(b for b in bars if b[2] == "url(#t14-g-acheng)")
    end_of_lease = float(acheng_store[0]) + float(acheng_store[1])
    # the hatched belief stops where the store's lease does, and the red gap runs on from there
    assert abs(float(belief[0]) + float(belief[1]) - end_of_lease) < 0.2
    assert abs(float(gap[0]) - end_of_lease) < 0.2 and float(gap[1]) > 0
    assert "0:01:35 write: call refused (fence token 1 behind 2)" in svg
    assert "for 15 s Acheng held a key the store no longer honoured" in drawn
    zh = timeline_html(view, "zh", "z14")
    # in Chinese a number keeps its unit on the page ("15 秒" unbroken)
    assert '<span class="nb">有 15 秒，</span>阿澄握着一把守库人已不认的钥匙' in zh
    assert "守库人登记的租约" in zh
    assert timeline_html(view_of(played("01_fog", 0)), "en", "t0") == ""  # no lease yet


async def test_the_drawing_fills_the_panel_once_its_tab_is_shown(tmp_path: Path) -> None:
    app = BorrowedKeysApp(
        open_scenario("01_fog"), open_directly=True, lang="en", live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        await pilot.press(*["n"] * 14, "v", "6")
        await pilot.pause()
        await pilot.pause()
        panel = app.screen.query_one("#timeline", OwnershipTimeline)

        def fits() -> bool:
            axis = str(panel.render()).splitlines()[0]
            return panel.size.width - 2 - len(axis) in range(0, 12)

        # drawn for the width it has on screen, not for the hidden tab's (none) or 80
        assert panel.size.width > 100 and fits()
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert panel.size.width < 80 and fits()
