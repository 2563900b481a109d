"""Go to a step in one act: the script's steps in a list; type a step's number (or move to
it) and press Enter. The session replays to it from the start, as exact as stepping back."""

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.scenarios.format import Step
from core.scenarios.sentences import action_sentence
from demo.i18n import tr


def step_line(n: int, step: Step, lang: str, width: int = 200) -> Text:
    """A step in the list: its number and the first line of what it says, on one line of
    `width` cells at most, cut with … (a list to pick from, not the narration)."""
    said = (step.narration(lang) or "").strip().splitlines()
    act = f"→ {action_sentence(step.action, lang)}" if step.action is not None else ""
    first = said[0] if said else act
    asks = f"  ({tr('question', lang)})" if step.question is not None else ""
    room = width - 4 - cell_len(asks)
    if cell_len(first) > room:
        first = set_cell_size(first, max(1, room - 1)) + "…"
    text = Text(f"{n:>2}. ", style="bold")
    text.append(first, style="" if said else "dim")
    text.append(asks, style="cyan")
    return text


class JumpScreen(ModalScreen[int | None]):
    """Dismissed with the number of steps to have played (0: before the first), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,g", "cancel", "Cancel", id="jump.cancel"),
    ]

    def __init__(self, steps: tuple[Step, ...], position: int, lang: str) -> None:
        super().__init__()
        self.steps = steps
        self.position = position
        self.lang = lang
        self.typed = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-box"):
            yield Static(tr("jump_title", self.lang, n=len(self.steps)), id="jump-title")
            yield OptionList(id="jump-list")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        # the box (90% of the screen, at most 100) less the borders, padding and scrollbar
        width = max(20, min(100, self.app.size.width * 9 // 10) - 12)
        options.add_option(Option(Text(f" 0. {tr('jump_start', self.lang)}", style="dim")))
        for n, step in enumerate(self.steps, start=1):
            options.add_option(Option(step_line(n, step, self.lang, width)))
        options.highlighted = self.position
        options.focus()

    def on_key(self, event: events.Key) -> None:
        """Digits pick a step by number: 1 then 4 is step 14."""
        if event.character is None or not event.character.isdigit():
            return
        event.stop()
        typed = self.typed + event.character
        if int(typed) > len(self.steps):
            typed = event.character  # a new number starts
        self.typed = typed
        self.query_one(OptionList).highlighted = min(int(typed), len(self.steps))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)

    def action_cancel(self) -> None:
        self.dismiss(None)
