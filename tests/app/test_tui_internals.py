"""The private DataTable parts the app relies on (demo/widgets/datatable_internals.py).

A Textual upgrade that renames or changes one of them fails here, by name, instead of
leaving a stale cell on screen.
"""

from pathlib import Path

from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widgets import Button, DataTable
from textual.widgets.data_table import RowKey

from demo.widgets import datatable_internals as dti
from demo.widgets.keyed_table import KeyedTable


def test_every_internal_the_app_uses_is_still_there() -> None:
    table: DataTable[str] = DataTable()
    missing = [name for name in dti.INTERNALS if not hasattr(table, name)]
    assert missing == [], f"Textual's DataTable no longer has {missing}"
    assert isinstance(table._update_count, int)


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(id="t")


async def test_changed_cells_appended_rows_and_row_styles_paint(tmp_path: Path) -> None:
    from rich.style import Style

    app = OneTable()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(KeyedTable)
        table.set_columns([("a", "a"), ("b", "b")])
        table.sync([("k1", ("one", "1")), ("k2", ("two", "2"))])
        await pilot.pause()
        assert "one" in table.render_line(1).text
        table.sync([("k1", ("uno", "1")), ("k2", ("two", "2")), ("k3", ("three", "3"))])
        await pilot.pause()
        assert "uno" in table.render_line(1).text  # a cell changed in place is repainted
        assert "three" in table.render_line(3).text  # an appended row is painted
        table.row_style = lambda i: Style(bgcolor="red") if i == 1 else None  # type: ignore[method-assign]
        table.restyle_rows(["k2"])
        await pilot.pause()
        styles = {s.style.bgcolor.name for s in table.render_line(2) if s.style and s.style.bgcolor}
        assert "red" in styles  # the whole row takes the row style


def _cells(strip: Strip) -> list[tuple[str, object]]:
    """A line as (character, style) pairs: what the screen shows and what a click reads."""
    return [(char, segment.style) for segment in strip for char in segment.text]


class TwoTables(App[None]):
    CSS = "KeyedTable { height: 8; }"

    def compose(self) -> ComposeResult:
        yield KeyedTable(id="t")
        yield Button("elsewhere")


async def test_rows_painted_directly_look_and_click_as_datatable_paints_them() -> None:
    """Every body line the fast path paints equals DataTable's own, character and style.

    Compared in each state that styles a row: zebra stripes, a row style, the cursor, the
    hover, focus and no focus, cells cut at their width (with and without an ellipsis, wide
    characters), styled and spanned text, empty cells, and after a cell changes.
    """
    from rich.style import Style
    from rich.text import Text

    app = TwoTables()
    async with app.run_test(size=(70, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.AUTO_WIDTH = False
        table.set_columns([("a", "a"), ("b", "b"), ("c", "c")], {"a": 6, "b": 4, "c": 8})
        spanned = Text.assemble(("lea", "bold red"), "se ", ("7", "underline"))
        expired = Text("expired", style="bold red", overflow="ellipsis")
        table.sync(
            [
                ("k1", (Text("task-001", style="bold"), "ok", spanned)),
                ("k2", ("", expired, "租约令牌超时")),
                ("k3", (Text("x"), Text(""), Text("cut here please", style="dim"))),
                ("k4", ("plain", "[b]no markup[/b]", "")),
            ]
        )
        table.row_style = lambda i: Style(bgcolor="red") if i == 2 else None  # type: ignore[method-assign]
        await pilot.pause()
        header = table.header_height

        def compare(label: str) -> None:
            table._painted.clear()
            for y in range(header, header + table.row_count + 1):
                fast = table.render_line(y)
                slow = DataTable.render_line(table, y)
                assert _cells(fast) == _cells(slow), f"{label}: line {y} differs"
            # and the fast path did paint every row (not handing them all to DataTable)
            assert sorted(str(k.value) for k in table._painted) == ["k1", "k2", "k3", "k4"]

        table.focus()
        await pilot.pause()
        compare("focused, cursor on row 0")
        table.move_cursor(row=2)
        await pilot.pause()
        compare("cursor on the styled row")
        await pilot.hover(KeyedTable, offset=(3, header + 1))
        await pilot.pause()
        assert table.hover_coordinate.row == 1
        compare("hovering row 1")
        app.query_one(Button).focus()
        await pilot.pause()
        assert not table.has_focus
        compare("not focused")
        table.sync(
            [
                ("k1", (Text("task-001", style="bold"), "done", spanned)),
                ("k2", ("", expired, "")),
                ("k3", (Text("x"), Text("y"), Text("cut here please", style="dim"))),
                ("k4", ("plain", "[b]no markup[/b]", "")),
            ]
        )
        await pilot.pause()
        compare("after cells changed")
        assert "done" in table.render_line(header).text
        table.cursor_foreground_priority = "renderable"
        table.cursor_background_priority = "renderable"
        table.move_cursor(row=1)
        await pilot.pause()
        compare("the cells' own colours over the cursor's")


async def test_a_directly_painted_row_clicks_shows_the_cursor_and_repaints() -> None:
    """On the fast path: a click lands on its row (the cells' meta), the cursor row wears
    the cursor's style focused and unfocused (they differ), and a changed cell is painted."""
    app = TwoTables()
    async with app.run_test(size=(70, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.set_columns([("a", "a"), ("b", "b")])
        table.sync([(f"k{i}", (f"row{i}", str(i))) for i in range(5)])
        table.focus()
        await pilot.pause()
        header = table.header_height

        def cursor_background(focused: bool) -> object:
            style = table.get_component_rich_style("datatable--cursor")
            assert table.has_focus == focused
            return style.bgcolor

        await pilot.click(KeyedTable, offset=(2, header + 3))
        await pilot.pause()
        assert table.cursor_row == 3
        line = table.render_line(header + 3)
        assert "row3" in line.text
        assert {s.style.meta.get("row") for s in line if s.style and s.style.meta} == {3}
        focused = cursor_background(True)
        assert all(s.style and s.style.bgcolor == focused for s in line)
        assert table.render_line(header + 2).text != line.text
        assert all(s.style and s.style.bgcolor != focused for s in table.render_line(header + 2))

        app.query_one(Button).focus()
        await pilot.pause()
        blurred = cursor_background(False)
        assert blurred != focused
        line = table.render_line(header + 3)
        assert all(s.style and s.style.bgcolor == blurred for s in line)

        # a same-width change (a wider one re-measures the column and repaints it all)
        table.sync([(f"k{i}", (f"row{i}", "9" if i == 3 else str(i))) for i in range(5)])
        await pilot.pause()
        assert table.render_line(header + 3).text.split() == ["row3", "9"]
        assert table.render_line(header + 2).text.split() == ["row2", "2"]
        painted_cells = table._painted[RowKey("k3")][0]  # painted by the fast path
        assert [str(c) for c in painted_cells] == ["row3", "9"]


# -- the private binding parts (demo/widgets/binding_internals.py) ---------------------------


def test_every_binding_internal_the_app_uses_is_still_there() -> None:
    from textual.binding import BindingsMap
    from textual.widget import Widget

    from demo.widgets import binding_internals as bi

    widget = Widget()
    missing = [name for name in bi.INTERNALS if not hasattr(widget, name)]
    assert missing == [], f"Textual's DOMNode no longer has {missing}"
    assert isinstance(widget._bindings, BindingsMap)


async def test_relabelled_bindings_show_their_new_words(tmp_path: Path) -> None:
    from typing import ClassVar

    from textual.binding import Binding, BindingType

    from demo.widgets.binding_internals import relabel_bindings

    class Keyed(App[None]):
        BINDINGS: ClassVar[list[BindingType]] = [
            Binding("k", "bell", "Ring", tooltip="Ring once", id="ring")
        ]

    app = Keyed()
    async with app.run_test(size=(40, 5)) as pilot:
        relabel_bindings(app, lambda b: ("响铃", "响一下") if b.id == "ring" else None)
        await pilot.pause()
        active = {b.binding.id: b for b in app.screen.active_bindings.values()}
        assert active["ring"].binding.description == "响铃"
        assert active["ring"].tooltip == "响一下"
        await pilot.press("k")  # the binding still runs its action


class PlainPainted(KeyedTable):
    PAINT_ROWS = False  # every row through DataTable's own cell cache


class LiveTable(App[None]):
    def compose(self) -> ComposeResult:
        yield PlainPainted(id="t")


async def test_a_live_table_keeps_a_few_screenfuls_of_renderings_not_ten_thousand() -> None:
    """Every change re-keys what DataTable cached: a table that changes each frame must not
    keep the renderings of every frame before (the fleet app grew by tens of MB so)."""
    app = LiveTable()
    async with app.run_test(size=(60, 24)) as pilot:
        table = app.query_one(PlainPainted)
        table.set_columns([("a", "a"), ("b", "b"), ("c", "c")])
        for frame in range(60):
            # the newest rows, as the fleet's panels show them: one comes, the oldest goes
            rows = range(frame, frame + 22)
            table.sync([(f"k{i}", (f"{frame}", f"{i}", f"r{i}")) for i in rows])
            await pilot.pause()
            assert f"r{frame} " in table.render_line(1).text  # it is painted, frame by frame
        kept = {
            "cells": len(table._cell_render_cache),
            "lines": max(len(table._row_render_cache), len(table._line_cache)),
        }
        assert kept["cells"] <= dti.KEPT_CELLS, kept
        assert kept["lines"] <= dti.KEPT_LINES, kept
        assert kept["cells"] == dti.KEPT_CELLS  # the bound was reached, so it was tested


async def test_rows_added_are_measured_in_the_frame_that_adds_them() -> None:
    """The table's height and its scrollbar follow the rows `sync` added before the screen
    paints again, not once DataTable's messages are handled (a paint of their own after)."""
    app = TwoTables()
    async with app.run_test(size=(70, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.set_columns([("a", "a")])
        table.sync([(f"k{i}", (f"row {i}",)) for i in range(10)])  # more than its 8 rows
        await pilot.pause()
        bar = table.vertical_scrollbar
        assert bar.window_virtual_size == table.header_height + 10
        table.sync([(f"k{i}", (f"row {i}",)) for i in range(20)])
        # no pause: nothing has run between the sync and these reads
        assert table.virtual_size.height == table.header_height + 20
        assert bar.window_virtual_size == table.header_height + 20
        table.sync([(f"k{i}", (f"row {i}",)) for i in range(12)])
        assert bar.window_virtual_size == table.header_height + 12
