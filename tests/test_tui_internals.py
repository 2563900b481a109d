"""The private DataTable parts the app relies on (demo/widgets/datatable_internals.py).

A Textual upgrade that renames or changes one of them fails here, by name, instead of
leaving a stale cell on screen.
"""

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import DataTable

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
