"""Every private part of Textual's DataTable the app relies on, in one place.

DataTable's public `update_cell` and `add_row` bump one counter that is part of every
render cache key, so one changed cell re-renders every visible row on the next paint; with
a live table that changes a few cells ten times a second that is most of a frame. The
functions here do the same updates while forgetting only what changed. Each names the
internals it touches; `tests/app/test_tui_internals.py` checks they are all still there (and
still behave) so a Textual upgrade that renames one fails loudly there, not as a stale
cell on screen.
"""

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import Column, ColumnKey, RowKey

K = TypeVar("K")
V = TypeVar("V")

# The attributes and methods used below: the test checks each exists.
INTERNALS = (
    "_data",
    "_update_count",
    "_offset_cache",
    "_row_locations",
    "_cell_render_cache",
    "_row_render_cache",
    "_row_renderable_cache",
    "_line_cache",
    "_label_column",
    "_update_dimensions",
    "_require_update_dimensions",
    "_new_rows",
    "_get_row_style",
    "_scroll_update",
    "_y_offsets",
    "_show_hover_cursor",
    "_should_render_row_labels",
    "_get_styles_to_render_cell",
    "_pseudo_class_state",
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
    # DataTable's `_refresh_region`, with the window asked for once (not once a row)
    window = table.window_region
    scroll = table.scroll_offset
    shown = [r.translate(-scroll) for r in regions.values() if window.overlaps(r)]
    if shown:
        table.refresh(*shown)


def append_row(table: DataTable[Any], cells: Iterable[Any], key: str) -> None:
    """`add_row` at the end, keeping what the other rows rendered (none of them moved)."""
    count = table._update_count
    table.add_row(*cells, key=key)
    if table.row_count > 1:
        table._update_count = count
        table._offset_cache.clear()


def measure_now(table: DataTable[Any]) -> None:
    """Measure the rows added or removed now, as DataTable would once its messages are
    handled (`_on_idle`): its scrollbars then change in the frame that shows the rows, not
    in a paint of their own after it (a live ledger grows most frames). Touches
    `_require_update_dimensions`, `_new_rows` and `_update_dimensions`, as `_on_idle` does."""
    if table._require_update_dimensions:
        table._require_update_dimensions = False
        new_rows = table._new_rows.copy()
        table._new_rows.clear()
        table._update_dimensions(new_rows)


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


# What a row's painted line was made of: the cell objects themselves (held, so compared by
# identity: a changed cell is always a new object) and everything else that styles it.
_Painted = tuple[tuple[object, ...], tuple[object, ...], Strip]
KEPT_CELLS = 2_000
KEPT_LINES = 400
_PAINTED_MAX = 512


class FastRows(DataTable[Any]):
    """A DataTable whose plain body rows are painted straight from their cells.

    DataTable paints a cell by rendering a Rich `Padding` of it through the console, then
    crops and pads the joined line: ~0.5 ms a row, and a live table changes a dozen rows
    a frame. A row of one line whose cells are plain one-line `Text` (or str) needs none of
    that: each cell is its text cut to the column's width between the padding, in the same
    styles and with the same `{"row", "column"}` meta DataTable gives it (clicks, hover and
    the cursor read that meta), so the line is identical, built in a fraction of the time.
    Anything else (the header, row labels, fixed rows or columns, a scrolled-sideways
    table, a cell or cursor kind this does not know) takes DataTable's own path.
    """

    # A subclass whose rows need DataTable's own painting turns this off.
    PAINT_ROWS = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # DataTable keeps up to 10,000 rendered cells and 1,000 lines a table, keyed with a
        # counter that every update bumps: a live table fills them with renderings no frame
        # asks for again (the fleet app grew by tens of MB in 20 minutes so). A few
        # screenfuls is all a frame re-uses.
        for cache, size in (
            (self._cell_render_cache, KEPT_CELLS),
            (self._row_render_cache, KEPT_LINES),
            (self._row_renderable_cache, KEPT_LINES),
            (self._line_cache, KEPT_LINES),
        ):
            cache.maxsize = size
        self._painted: dict[RowKey, _Painted] = {}
        self._styles_made: dict[tuple[object, ...], list[tuple[Style, Style]]] = {}
        # What every line of one paint shares (the widget's style, its columns, the row
        # styles): asked of Textual once per paint, not once per line (~30-60 us each).
        self._paint_memo: dict[object, Any] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        self._paint_memo = {}
        try:
            return super().render_lines(crop)
        finally:
            self._paint_memo = None

    def _memo(self, key: object, make: Callable[[], V]) -> V:
        memo = self._paint_memo
        if memo is None:
            return make()
        if key not in memo:
            memo[key] = make()
        value: V = memo[key]
        return value

    def _get_row_style(self, row_index: int, base_style: Style) -> Style:
        # DataTable's row style depends on no more than this (the test compares lines).
        kind = (
            "header"
            if row_index == -1
            else "fixed"
            if row_index < self.fixed_rows
            else row_index % 2
            if self.zebra_stripes
            else "plain"
        )
        return self._memo(
            ("row style", kind, base_style),
            lambda: super(FastRows, self)._get_row_style(row_index, base_style),
        )

    def render_line(self, y: int) -> Strip:
        header = self.header_height if self.show_header else 0
        if (
            y < header
            or not self.PAINT_ROWS
            or self.cursor_type != "row"
            or self.fixed_rows
            or self.fixed_columns
            or self._should_render_row_labels
            or self.scroll_offset.x
        ):
            return super().render_line(y)
        line = y - header + self.scroll_offset.y
        offsets = self._y_offsets
        if line >= len(offsets):
            return super().render_line(y)
        row_key, line_in_row = offsets[line]
        strip = self._paint_row(row_key) if line_in_row == 0 else None
        return strip if strip is not None else super().render_line(y)

    def _layout(self) -> tuple[int, list[Column], tuple[int, ...], Style]:
        """The line width, the columns, their widths and the widget's style."""
        columns = self.ordered_columns
        widths = tuple(column.get_render_width(self) for column in columns)
        return (self.size.width, columns, widths, self.rich_style)

    def _paint_row(self, row_key: RowKey) -> Strip | None:
        """The row's line, or None when it is not a plain one-line row."""
        row = self.rows.get(row_key)
        index = self._row_locations.get(row_key)
        if row is None or index is None or row.height != 1:
            return None
        width, columns, widths, base = self._memo("layout", self._layout)
        if sum(widths) > width:
            return None  # cropped at the edge: DataTable's line_crop decides how
        data = self._data.get(row_key, {})
        cells = tuple(data.get(column.key) for column in columns)
        cursor = index == self.cursor_coordinate.row
        hover = index == self.hover_coordinate.row
        shown, hovered = self.show_cursor, self._show_hover_cursor
        row_style = self._get_row_style(index, base)
        cell_style, post = self._get_styles_to_render_cell(
            False,
            False,
            False,
            hover,
            cursor,
            shown,
            hovered,
            self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css",
        )
        fill_style, _ = self._get_styles_to_render_cell(
            False, False, False, hover, cursor, shown, hovered, False, False
        )
        stamp = (
            index,
            width,
            widths,
            self.cell_padding,
            base,
            row_style,
            cell_style,
            post,
            fill_style,
            self._pseudo_class_state,
        )
        painted = self._painted.get(row_key)
        if (
            painted is not None
            and painted[1] == stamp
            and all(a is b for a, b in zip(painted[0], cells, strict=True))
        ):
            return painted[2]
        styles = self._cell_styles(index, len(cells), row_style, cell_style, post, fill_style)
        segments = self._row_segments(cells, widths, styles[:-1], post)
        if segments is None:
            return None
        # DataTable's filler to the widget's edge: the row's style with the cursor's and
        # hover's (not the cells' `post` colours), meta marking it out of bounds.
        segments.append(Segment(" " * (width - sum(widths)), styles[-1][0]))
        strip = Strip(segments, width)
        if len(self._painted) >= _PAINTED_MAX:
            self._painted.clear()
        self._painted[row_key] = (cells, stamp, strip)
        return strip

    def _row_segments(
        self,
        cells: tuple[object, ...],
        widths: tuple[int, ...],
        styles: list[tuple[Style, Style]],
        post: Style,
    ) -> list[Segment] | None:
        """The row's cells as segments, neighbours of one style already joined."""
        pad = self.cell_padding
        get_style = self.app.console.get_style
        texts: list[str] = []
        segments: list[Segment] = []
        last: Style | None = None

        def put(text: str, style: Style) -> None:
            nonlocal last
            if style != last and texts:
                segments.append(Segment("".join(texts), last))
                texts.clear()
            last = style
            texts.append(text)

        padding = " " * pad
        for cell, width, (pre, blank) in zip(cells, widths, styles, strict=True):
            text = _one_line_text(cell)
            inner = width - 2 * pad
            if text is None or inner < 1:
                return None
            length = text.cell_len
            if length > inner:
                text = text.copy()
                text.truncate(inner, overflow=text.overflow or "fold")
                length = text.cell_len
            if pad:
                put(padding, blank)
            if text.spans:
                for segment in Text("\n").join([text]).render(self.app.console):
                    style = pre + segment.style
                    put(segment.text, style + post if post else style)
            elif length:
                style = pre + get_style(text.style) if text.style else pre
                put(text.plain, style + post if post else style)
            put(" " * (inner - length + pad), blank)
        if texts:
            segments.append(Segment("".join(texts), last))
        return segments

    def _cell_styles(
        self,
        index: int,
        count: int,
        row_style: Style,
        cell_style: Style,
        post: Style,
        fill_style: Style,
    ) -> list[tuple[Style, Style]]:
        """Each cell's style under its text, and over its padding, as DataTable's
        Styled(Padding(cell)) gives them: the row's style and the cell's meta, then the
        cursor/hover style (the text's own style goes between that and `post`, the
        cursor's colours). Last, the filler's style (twice)."""
        key = (index, count, row_style, cell_style, post, fill_style)
        styles = self._styles_made.get(key)
        if styles is None:
            styles = []
            for column in range(count):
                meta = Style.from_meta({"row": index, "column": column})
                pre = row_style + meta + cell_style
                styles.append((pre, pre + post if post else pre))
            fill = Style.from_meta({"row": index, "column": 0, "out_of_bounds": True})
            styles.append((row_style + fill_style + fill,) * 2)
            if len(self._styles_made) >= _PAINTED_MAX:
                self._styles_made.clear()
            self._styles_made[key] = styles
        return styles


def _one_line_text(cell: object) -> Text | None:
    """The cell as the one-line Text DataTable would paint, or None if it is not so simple."""
    if cell is None:
        return Text()
    if isinstance(cell, str):
        if "\n" in cell:
            return None
        cell = Text.from_markup(cell, end="")
    if not isinstance(cell, Text):
        return None
    if (
        cell.justify not in (None, "default")
        or cell.overflow not in (None, "fold", "crop", "ellipsis")
        or cell.no_wrap is False
        or "\n" in cell.plain
        or "\t" in cell.plain
    ):
        return None
    return cell
