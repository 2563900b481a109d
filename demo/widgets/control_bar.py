"""The button bar: one button per control that has one (`demo.controls`), the ones that
fit shown whole, what the moment needs first."""

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button

from demo.controls import Control, Moment, button_order, buttons
from demo.i18n import tr


class ControlBar(Horizontal):
    """Buttons that run the screen's actions; those that do not fit stay keys and palette
    entries."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._moments: frozenset[Moment] = frozenset()
        self._fitted: tuple[int, frozenset[Moment]] | None = None

    def compose(self) -> ComposeResult:
        for c in buttons():
            yield Button(c.word, id=button_id(c), action=f"screen.{c.action}", compact=True)

    def relabel(self, lang: str) -> None:
        for c in buttons():
            button = self.query_one(f"#{button_id(c)}", Button)
            button.label = tr(c.word, lang)
            button.tooltip = tr(c.tip, lang)
            # a new label does not resize the button: size it from the label's cells
            # (a CJK character is two), or 下一步 shows as 下一 and English as Engl
            button.styles.width = cell_len(str(button.label)) + 2
        self._fitted = None
        self.fit(self.size.width, self._moments)

    def say(self, control_id: str, word: str, lang: str) -> None:
        """Another word on one button ("Undo" on Previous in a sandbox), sized to it."""
        for c in buttons():
            if c.id != control_id:
                continue
            button = self.query_one(f"#{button_id(c)}", Button)
            label = tr(word, lang)
            if str(button.label) != label:
                button.label = label
                button.styles.width = cell_len(label) + 2
                self._fitted = None
                self.fit(self.size.width, self._moments)

    def fit(self, width: int, moments: frozenset[Moment]) -> None:
        """Show the buttons that fit whole, those that answer `moments` first and leftmost."""
        if self._fitted == (width, moments):
            return
        self._fitted = (width, moments)
        self._moments = moments
        order = button_order(moments)
        used = 0
        shown: list[Button] = []
        for c in order:
            button = self.query_one(f"#{button_id(c)}", Button)
            size = cell_len(str(button.label)) + 2 + 1
            fits = used + size <= width
            if fits:
                used += size
                shown.append(button)
        urgent = [self.query_one(f"#{button_id(c)}", Button) for c in order if c.moment in moments]
        for c in buttons():
            button = self.query_one(f"#{button_id(c)}", Button)
            button.display = button in shown
        # the buttons the moment needs lead the bar, the rest keep the table's order
        rest = [self.query_one(f"#{button_id(c)}", Button) for c in buttons()]
        wanted = [b for b in urgent] + [b for b in rest if b not in urgent]
        if list(self.children) != wanted:
            for n, button in enumerate(wanted):
                if self.children[n] is not button:
                    self.move_child(button, before=n)


def button_id(control: Control) -> str:
    """Kept as the buttons were first named (tests and docs click `#btn-next`)."""
    return "add-worker" if control.id == "add_worker" else control.button_id
