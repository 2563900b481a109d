"""Every private part of Textual's DataTable the app relies on, in one place.

DataTable's public `update_cell` and `add_row` bump one counter that is part of every
render cache key, so one changed cell re-renders every visible row on the next paint; with
a live table that changes a few cells ten times a second that is most of a frame. The
functions here do the same updates while forgetting only what changed. Each names the
internals it touches; `tests/test_tui_internals.py` checks they are all still there (and
still behave) so a Textual upgrade that renames one fails loudly there, not as a stale
cell on screen.
"""

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

K = TypeVar("K")
V = TypeVar("V")

# The attributes and methods used below: the test checks each exists.
INTERNALS = (
    "_data",
    "_update_count",
    "_offset_cache",
    "_row_locations",
    "_refresh_region",
    "_cell_render_cache",
    "_row_render_cache",
    "_row_renderable_cache",
    "_line_cache",
    "_label_column",
    "_update_dimensions",
    "_get_row_style",
    "_scroll_update",
)


def _drop(cache: LRUCache[K, V], drop: Callable[[K], bool]) -> None:
    for key in [k for k in cache.keys() if drop(k)]:  # noqa: SIM118 - not iterable
        cache.discard(key)


def set_cells(table: DataTable[Any], dirty: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Put new values in cells and repaint just their rows (not every visible row)."""
    cells: set[tuple[RowKey, ColumnKey]] = set()
    rows: set[RowKey] = set()
    for key, values in dirty:
        row_key = RowKey(key)
        data = table._data[row_key]
        for column, value in values.items():
            data[ColumnKey(column)] = value
            cells.add((row_key, ColumnKey(column)))
        rows.add(row_key)
    forget_rows(table, rows, cells)


def forget_rows(
    table: DataTable[Any], rows: set[RowKey], cells: set[tuple[RowKey, ColumnKey]] | None = None
) -> None:
    """Drop the cached rendering of these rows (or just these cells) and repaint them.

    The rows' regions are found in one pass (DataTable's `_get_row_region` sums the heights
    of all the rows above, once per call: with 200 rows that was most of this).
    """
    indexes = {i for i in (table._row_locations.get(row) for row in rows) if i is not None}
    regions: dict[int, Region] = {}
    if indexes:
        last = max(indexes)
        y = table.header_height if table.show_header else 0
        width = max(table.size.width, table.virtual_size.width)
        for index, row in enumerate(table.ordered_rows[: last + 1]):
            if index in indexes:
                regions[index] = Region(0, y, width, row.height)
            y += row.height
    lines: set[int] = set()
    for region in regions.values():
        lines.update(range(region.y, region.y + region.height))
    if cells is None:
        _drop(table._cell_render_cache, lambda k: k[0] in rows)
    else:
        _drop(table._cell_render_cache, lambda k: (k[0], k[1]) in cells)
    _drop(table._row_render_cache, lambda k: k[0] in rows)
    _drop(table._row_renderable_cache, lambda k: k[1] in indexes)
    _drop(table._line_cache, lambda k: k[0] in lines)
    for region in regions.values():
        table._refresh_region(region)  # repaints it if it is in the window


def append_row(table: DataTable[Any], cells: Iterable[Any], key: str) -> None:
    """`add_row` at the end, keeping what the other rows rendered (none of them moved)."""
    count = table._update_count
    table.add_row(*cells, key=key)
    if table.row_count > 1:
        table._update_count = count
        table._offset_cache.clear()


def render_widths(table: DataTable[Any]) -> list[int]:
    return [table._label_column.content_width] + [
        c.get_render_width(table) for c in table.ordered_columns
    ]


def redo_all_cells(table: DataTable[Any]) -> None:
    """Cells are cached without their width: after a column resize, render them all again."""
    table._update_count += 1
    table.refresh()


class RowStyled(DataTable[Any]):
    """A DataTable whose `row_style(index)` can paint a whole row (cells and the gaps)."""

    def row_style(self, row_index: int) -> Style | None:
        return None

    def _get_row_style(self, row_index: int, base_style: Style) -> Style:
        style = super()._get_row_style(row_index, base_style)
        extra = self.row_style(row_index) if row_index >= 0 else None
        return style + extra if extra is not None else style


class QuietGrowth(DataTable[Any]):
    """A DataTable whose new rows do not re-arrange the whole screen.

    `virtual_size` is a layout reactive on every widget: one appended row makes Textual lay
    out and repaint every widget on the screen (most of a frame with 12 panes). A table
    whose own size does not follow its rows (a fixed or `1fr` height) needs only its
    scrollbars told; a layout is asked for when the size may follow (height `auto`) or a
    scrollbar appears or goes.
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def _update_dimensions(self, new_rows: Iterable[Any]) -> None:
        before = self.virtual_size
        super()._update_dimensions(new_rows)
        after = self.virtual_size
        if after == before:
            return
        size = self.size

        def bars(v: Size) -> tuple[bool, bool]:
            return (v.width > size.width, v.height > size.height)

        height = self.styles.height
        if height is None or height.is_auto or bars(before) != bars(after):
            self.refresh(layout=True)
        else:
            self._scroll_update(after)
            self.refresh()
