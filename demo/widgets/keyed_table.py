"""A DataTable kept in sync with rows by key: only changed cells are touched.

The few private DataTable parts this needs live in `datatable_internals`, with a test.
"""

from collections.abc import Iterable, Mapping, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets.data_table import ColumnKey, RowKey

from demo.widgets import datatable_internals as dti

Cell = str | Text
Row = tuple[Cell, ...]


def _as_text(cell: Cell) -> Text:
    """Text cells skip the markup parser DataTable runs on every str cell it paints."""
    return Text(cell) if isinstance(cell, str) else cell


def column_label(label: str) -> str:
    """Column headers in one case: the first letter up ("lease token" -> "Lease token")."""
    return label[:1].upper() + label[1:]


class KeyedTable(dti.RowStyled, dti.FastRows, dti.QuietGrowth):
    """Rows have stable keys; `sync` adds, updates cells in place, and removes."""

    DEFAULT_CSS = """
    KeyedTable { height: 1fr; }
    """

    # Widen a column when a changed cell no longer fits (never re-measure a whole column).
    # The task table turns it off and gives fixed widths.
    AUTO_WIDTH = True
    # Keep the rows in the order given (moving a row rebuilds the table once); otherwise a
    # new key goes at the end and a known one stays where it is.
    ORDERED = False
    WIDTHS: dict[str, int] = {}  # noqa: RUF012 - read-only per class

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, zebra_stripes=True, cursor_type="row")
        self._rows: dict[str, Row] = {}  # each row as given, in the order shown
        self._column_keys: tuple[str, ...] = ()
        self._widths: dict[str, int] = dict(self.WIDTHS)

    def set_columns(
        self, columns: Sequence[tuple[str, str]], widths: Mapping[str, int] | None = None
    ) -> None:
        """(key, label) pairs; new labels or widths (a language switch, a resize) rebuild once."""
        keys = tuple(k for k, _ in columns)
        labels = [column_label(label) for _, label in columns]
        wanted = dict(widths) if widths is not None else dict(self.WIDTHS)
        if (
            keys == self._column_keys
            and wanted == self._widths
            and all(
                str(self.columns[ColumnKey(k)].label) == label
                for k, label in zip(keys, labels, strict=True)
            )
        ):
            return
        self.clear(columns=True)
        self._rows.clear()
        self._column_keys = keys
        self._widths = wanted
        for key, label in zip(keys, labels, strict=True):
            self.add_column(label, key=key, width=wanted.get(key))

    def sync(self, rows: Mapping[str, Row] | Iterable[tuple[str, Row]]) -> int:
        """Make the table show exactly `rows`; return how many rows changed."""
        items = list(rows.items() if isinstance(rows, Mapping) else rows)
        if self.ORDERED:
            desired = [k for k, _ in items]
            wanted = set(desired)
            would_be = [k for k in self._rows if k in wanted]
            would_be += [k for k in desired if k not in self._rows]
            if would_be != desired:
                return self._rebuild(items)
        seen: set[str] = set()
        changes = 0
        dirty: list[tuple[str, dict[str, Text]]] = []
        for key, row in items:
            seen.add(key)
            old = self._rows.get(key)
            if old is row:
                continue  # the same tuple handed back: nothing to compare
            if old is None:
                self._append(key, row)
                changes += 1
            elif old != row:
                changed = {
                    column: _as_text(after)
                    for column, before, after in zip(self._column_keys, old, row, strict=True)
                    if before != after
                }
                wider = [
                    c for c, cell in changed.items() if self.AUTO_WIDTH and self._wider(c, cell)
                ]
                for column in wider:
                    # A wider column re-renders everything (DataTable's own path); a
                    # column grows but is never re-measured to shrink while shown.
                    self.update_cell(key, column, changed.pop(column), update_width=True)
                if changed:
                    dirty.append((key, changed))
                changes += 1
            else:
                continue
            self._rows[key] = row
        if dirty:
            dti.set_cells(self, dirty)
        for key in [k for k in self._rows if k not in seen]:
            self.remove_row(key)
            del self._rows[key]
            changes += 1
        dti.measure_now(self)
        return changes

    def _rebuild(self, items: list[tuple[str, Row]]) -> int:
        """Rows moved: clear and add them again in order (rare: not on every tick)."""
        cursor = self.cursor_row
        self.clear()
        self._rows.clear()
        for key, row in items:
            self.add_row(*map(_as_text, row), key=key)
            self._rows[key] = row
        dti.measure_now(self)
        if items:
            self.move_cursor(row=min(cursor, len(items) - 1), animate=False)
        return len(items)

    def _append(self, key: str, row: Row) -> None:
        dti.append_row(self, map(_as_text, row), key)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        widths = dti.render_widths(self)
        super()._update_dimensions(new_rows)
        if dti.render_widths(self) != widths:
            dti.redo_all_cells(self)

    def _wider(self, column: str, cell: Cell) -> bool:
        width = cell.cell_len if isinstance(cell, Text) else cell_len(cell)
        return width > self.columns[ColumnKey(column)].content_width

    def restyle_rows(self, keys: Iterable[str]) -> None:
        """Repaint these rows (their `row_style` changed)."""
        rows = {RowKey(k) for k in keys if k in self._rows}
        if rows:
            dti.forget_rows(self, rows)

    def row_keys_shown(self) -> list[str]:
        return list(self._rows)

    def selected_key(self) -> str | None:
        """The key of the row under the cursor."""
        if not self._rows or self.cursor_row < 0 or self.cursor_row >= self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return str(row_key.value) if row_key.value is not None else None
