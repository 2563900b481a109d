"""Which mistake is this? The seed's five by number; the room's number, then the answer."""

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from core.scenarios.glossary import mode_name
from core.scenarios.guess import SEED_MISTAKES, GuessRound
from demo.i18n import mode_word, tr


def guess_text(round_: GuessRound, lang: str) -> Text:
    """The five, numbered; once guessed, the room's choice and the right one marked, and the
    sentence that says which it was."""
    text = Text()
    text.append(tr("guess_title", lang) + "\n\n", style="bold")
    for n, mode in enumerate(SEED_MISTAKES, 1):
        style = ""
        mark = "  "
        if round_.revealed:
            if n == round_.number:
                style, mark = "bold green", "✓ "
            elif n == round_.guessed:
                style, mark = "bold red", "✗ "
        text.append(f"{mark}{n}  ", style=style)
        text.append(mode_word(mode.value, lang).replace("`", "") + "\n", style=style)
    if round_.revealed and round_.guessed is not None:
        name = mode_name(round_.mode.value, lang)
        if round_.right:
            said = tr("guess_right", lang, mode=name)
        else:
            chosen = mode_name(SEED_MISTAKES[round_.guessed - 1].value, lang)
            said = tr("guess_wrong", lang, chosen=chosen, mode=name)
        text.append("\n" + said + "\n", style="bold green" if round_.right else "bold red")
        text.append(tr("guess_close", lang), style="dim")
    return text


class GuessScreen(ModalScreen[None]):
    """1 to 5 guess; Esc (or G again) closes, the guess kept."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,G", "close", "Close", id="guess.close"),
        *(
            Binding(str(n), f"guess({n})", str(n), show=False, id=f"guess.{n}")
            for n in range(1, len(SEED_MISTAKES) + 1)
        ),
    ]

    def __init__(self, round_: GuessRound, lang: str) -> None:
        super().__init__()
        self.round = round_
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(id="guess-box"):
            yield Static(guess_text(self.round, self.lang), id="guess-text")

    def action_guess(self, chosen: int) -> None:
        if self.round.guess(chosen) is not None:
            self.query_one("#guess-text", Static).update(guess_text(self.round, self.lang))

    def action_close(self) -> None:
        self.dismiss(None)
