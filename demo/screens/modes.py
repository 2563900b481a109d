"""Choose the run's mode from a list: every mode by what it shows, the run's own marked.

The one `m` would have switched to (a mistake's correct twin, or the next mode) is
highlighted, so `m` then Enter does what `m` alone did before; any other is one move away.
"""

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.engine.config import Mode
from demo.i18n import mode_word, tr


def mode_line(mode: Mode, lang: str, *, current: Mode, own: Mode | None) -> Text:
    """A mode in the list: what it shows, then whether the run is in it or it is the
    scenario's own."""
    text = Text(mode_word(mode.value, lang).replace("`", ""))
    # the gaps are runs of their own: SVG renderers drop a styled run's leading spaces
    if mode is current:
        text.append("  ")
        text.append(tr("mode_current", lang), style="bold")
    if mode is own and own is not current:
        text.append("  ")
        text.append(tr("mode_own", lang), style="dim")
    return text


class ModeScreen(ModalScreen[Mode | None]):
    """Dismissed with the chosen mode, or None (Esc, or `m` again)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,m", "cancel", "Cancel", id="modes.cancel"),
    ]

    def __init__(self, current: Mode, suggested: Mode, own: Mode | None, lang: str) -> None:
        super().__init__()
        self.current = current
        self.suggested = suggested
        self.own = own
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(id="mode-box"):
            yield Static(tr("mode_title", self.lang), id="mode-title")
            yield OptionList(id="mode-list")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        for mode in Mode:
            line = mode_line(mode, self.lang, current=self.current, own=self.own)
            options.add_option(Option(line, id=mode.value))
        options.highlighted = list(Mode).index(self.suggested)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(Mode(event.option.id))

    def action_cancel(self) -> None:
        self.dismiss(None)
