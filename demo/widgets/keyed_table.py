"""A DataTable that is kept in sync with rows by key: only changed cells are touched."""

from collections.abc import Iterable, Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

Cell = str | Text
Row = tuple[Cell, ...]


class KeyedTable(DataTable[Cell]):
    """Rows have stable keys; `sync` adds, updates cells in place, and removes."""

    DEFAULT_CSS = """
    KeyedTable { height: 1fr; }
    """

    # Re-measure a column when a cell changes. Cheap for small tables; the task table turns
    # it off and gives fixed widths, since measuring 200 rows per tick is what costs.
    AUTO_WIDTH = True
    WIDTHS: dict[str, int] = {}  # noqa: RUF012 - read-only per class

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, zebra_stripes=True, cursor_type="row")
        self._rows: dict[str, Row] = {}
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
        for key, cells in items:
            seen.add(key)
            # Text cells skip the markup parser DataTable runs on every str cell it paints.
            row = tuple(Text(c) if isinstance(c, str) else c for c in cells)
            old = self._rows.get(key)
            if old is None:
                self.add_row(*row, key=key)
                changes += 1
            elif old != row:
                for column, (before, after) in zip(
                    self._column_keys, zip(old, row, strict=True), strict=True
                ):
                    if before != after:
                        self.update_cell(key, column, after, update_width=self.AUTO_WIDTH)
                changes += 1
            else:
                continue
            self._rows[key] = row
        for key in [k for k in self._rows if k not in seen]:
            self.remove_row(key)
            del self._rows[key]
            changes += 1
        return changes

    def row_keys_shown(self) -> list[str]:
        return list(self._rows)

    def selected_key(self) -> str | None:
        """The key of the row under the cursor."""
        if not self._rows or self.cursor_row < 0 or self.cursor_row >= self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return str(row_key.value) if row_key.value is not None else None
