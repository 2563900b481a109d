"""A yes/no question over the main screen (before losing acts that were not saved)."""

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from demo.i18n import tr

if TYPE_CHECKING:
    from textual.app import App


class ConfirmScreen(ModalScreen[bool]):
    """y / Enter says yes; n / Esc says no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, lang: str) -> None:
        super().__init__()
        self.question = question
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(tr("yes", self.lang), id="confirm-yes", variant="error", compact=True)
                yield Button(tr("no", self.lang), id="confirm-no", variant="primary", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def ask_then(
    app: "App[object]", unsaved: bool, acts: int, what: str, lang: str, then: Callable[[], None]
) -> None:
    """Run `then`, after asking when it would lose `acts` recorded and not yet saved."""
    if not unsaved:
        then()
        return

    def answered(yes: bool | None) -> None:
        if yes:
            then()

    question = tr("discard_question", lang, n=acts, what=what)
    app.push_screen(ConfirmScreen(question, lang), answered)
