"""A one-line bar of key hints that shows whole items only: what fits, by priority.

Textual's Footer cuts its last item mid-word when the terminal is narrow ("l ▏^p palette");
this bar drops the least important items instead, and keeps the others in their order.
"""

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static


@dataclass(frozen=True, slots=True)
class Hint:
    key: str  # as shown: "n", "←", "^p"
    label: str
    priority: int  # lower is kept first


def fit(items: list[Hint], width: int, gap: int = 2) -> list[Hint]:
    """The items that fit in `width` cells, chosen by priority, shown in their own order."""
    chosen: set[int] = set()
    used = 0
    for index in sorted(range(len(items)), key=lambda i: items[i].priority):
        item = items[index]
        size = cell_len(item.key) + 1 + cell_len(item.label) + (gap if chosen else 0)
        if used + size > width:
            continue
        chosen.add(index)
        used += size
    return [item for i, item in enumerate(items) if i in chosen]


class KeyBar(Static):
    """The key hints at the bottom of a screen."""

    DEFAULT_CSS = """
    KeyBar { height: 1; background: $footer-background; color: $footer-foreground; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._items: list[Hint] = []
        self._shown: tuple[list[Hint], int] | None = None

    @property
    def items(self) -> list[Hint]:
        """The hints it is given, before the width drops the least needed."""
        return list(self._items)

    def set_items(self, items: list[Hint]) -> None:
        self._items = items
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width = self.size.width or 80
        if self._shown == (self._items, width):
            return
        self._shown = (list(self._items), width)
        text = Text(no_wrap=True, overflow="crop")
        for n, item in enumerate(fit(self._items, width - 1)):
            text.append("  " if n else " ")
            # the space ends the key's run: SVG renderers drop a run's leading spaces
            text.append(item.key + " ", style="bold yellow")
            text.append(item.label)
        self.update(text)
