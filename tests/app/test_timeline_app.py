"""The ownership timeline as the app draws it, and as the exported page draws it."""

import re
from pathlib import Path

from rich.console import Console
from textual.widgets import TabbedContent

from core.scenarios.library import open_scenario
from demo.app import BorrowedKeysApp
from demo.export.timeline_svg import timeline_html
from demo.widgets.timeline_view import OwnershipTimeline, render_timeline
from tests.sim.test_timeline import FENCE_STEP, played, view_of


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
