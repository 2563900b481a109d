"""A DataTable that is kept in sync with rows by key: only changed cells are touched."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from rich.cells import cell_len
from rich.text import Text
from textual.cache import LRUCache
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

Cell = str | Text
Row = tuple[Cell, ...]
K = TypeVar("K")
V = TypeVar("V")


def _as_text(cell: Cell) -> Text:
    """Text cells skip the markup parser DataTable runs on every str cell it paints."""
    return Text(cell) if isinstance(cell, str) else cell


def _drop(cache: LRUCache[K, V], drop: Callable[[K], bool]) -> None:
    for key in [k for k in cache.keys() if drop(k)]:  # noqa: SIM118 - not iterable
        cache.discard(key)


class KeyedTable(DataTable[Cell]):
    """Rows have stable keys; `sync` adds, updates cells in place, and removes."""

    DEFAULT_CSS = """
    KeyedTable { height: 1fr; }
    """

    # Widen a column when a changed cell no longer fits (never re-measure a whole column).
    # The task table turns it off and gives fixed widths.
    AUTO_WIDTH = True
    WIDTHS: dict[str, int] = {}  # noqa: RUF012 - read-only per class

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, zebra_stripes=True, cursor_type="row")
        self._rows: dict[str, Row] = {}  # each row as given (compared before converting)
        self._column_keys: tuple[str, ...] = ()

    def set_columns(self, columns: Sequence[tuple[str, str]]) -> None:
        """(key, label) pairs; re-labelling (a language switch) rebuilds the table once."""
        keys = tuple(k for k, _ in columns)
        if keys == self._column_keys and all(
            str(self.columns[ColumnKey(k)].label) == label for k, label in columns
        ):
            return
        self.clear(columns=True)
        self._rows.clear()
        self._column_keys = keys
        for key, label in columns:
            self.add_column(label, key=key, width=self.WIDTHS.get(key))

    def sync(self, rows: Mapping[str, Row] | Iterable[tuple[str, Row]]) -> int:
        """Make the table show exactly `rows` (in their order for new keys); return changes."""
        items = rows.items() if isinstance(rows, Mapping) else rows
        seen: set[str] = set()
        changes = 0
        dirty: list[tuple[str, list[str]]] = []
        for key, row in items:
            seen.add(key)
            old = self._rows.get(key)
            if old is None:
                self._append(key, row)
                changes += 1
            elif old != row:
                changed_cells = [
                    (column, _as_text(after))
                    for column, before, after in zip(self._column_keys, old, row, strict=True)
                    if before != after
                ]
                data = self._data[RowKey(key)]
                for column, after in changed_cells:
                    if self.AUTO_WIDTH and self._wider(column, after):
                        # A wider column re-renders everything (DataTable's own path); a
                        # column grows but is never re-measured to shrink while shown.
                        self.update_cell(key, column, after, update_width=True)
                    else:
                        data[ColumnKey(column)] = after
                dirty.append((key, [c for c, _ in changed_cells]))
                changes += 1
            else:
                continue
            self._rows[key] = row
        if dirty:
            self._invalidate_cells(dirty)
        for key in [k for k in self._rows if k not in seen]:
            self.remove_row(key)
            del self._rows[key]
            changes += 1
        return changes

    def _append(self, key: str, row: Row) -> None:
        """Add a row at the end, keeping what the other rows rendered.

        DataTable's `add_row` bumps the counter in every render cache key, so one new row
        re-renders all the others. A row appended at the end moves none of them: only the
        cached row offsets are dropped. Should the new row widen a column, everything is
        re-rendered after all (`_update_dimensions`).
        """
        count = self._update_count
        self.add_row(*map(_as_text, row), key=key)
        if self.row_count > 1:
            self._update_count = count
            self._offset_cache.clear()

    def _render_widths(self) -> list[int]:
        return [self._label_column.content_width] + [
            c.get_render_width(self) for c in self.ordered_columns
        ]

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        widths = self._render_widths()
        super()._update_dimensions(new_rows)
        if self._render_widths() != widths:
            self._update_count += 1  # cells are cached without their width: redo them all
            self.refresh()

    def _wider(self, column: str, cell: Cell) -> bool:
        width = cell.cell_len if isinstance(cell, Text) else cell_len(cell)
        return width > self.columns[ColumnKey(column)].content_width

    def _invalidate_cells(self, dirty: list[tuple[str, list[str]]]) -> None:
        """Forget the rendering of just these cells and repaint just their rows.

        DataTable's own `update_cell` bumps one counter that is part of every render cache
        key, so changing one cell re-renders every visible row on the next paint. Here the
        new values are already in `_data`; the cache entries of the changed cells, of their
        rows and of their lines are dropped, and only those rows are refreshed.
        """
        cells = {(RowKey(key), ColumnKey(column)) for key, columns in dirty for column in columns}
        rows = {RowKey(key) for key, _ in dirty}
        indexes = {self._row_locations.get(row) for row in rows}
        lines: set[int] = set()
        regions = []
        for index in indexes:
            if index is None:
                continue
            region = self._get_row_region(index)
            lines.update(range(region.y, region.y + region.height))
            regions.append(index)
        _drop(self._cell_render_cache, lambda k: (k[0], k[1]) in cells)
        _drop(self._row_render_cache, lambda k: k[0] in rows)
        _drop(self._row_renderable_cache, lambda k: k[1] in indexes)
        _drop(self._line_cache, lambda k: k[0] in lines)
        for index in regions:
            self.refresh_row(index)

    def row_keys_shown(self) -> list[str]:
        return list(self._rows)

    def selected_key(self) -> str | None:
        """The key of the row under the cursor."""
        if not self._rows or self.cursor_row < 0 or self.cursor_row >= self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return str(row_key.value) if row_key.value is not None else None
