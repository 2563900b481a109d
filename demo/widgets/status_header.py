"""The header line: title, virtual clock, speed, mode, safety light, forked marker."""

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from core.engine.durations import format_clock
from core.scenarios.glossary import mode_name, service_phrase, violations_phrase
from core.scenarios.report import header_words
from core.sim.rules import Harm
from demo.i18n import tr


@dataclass(frozen=True, slots=True)
class HeaderState:
    title: str
    now_ms: int
    speed: float
    mode: str
    playing: bool
    forked: bool
    dropped_script: bool
    on_their_own: bool  # the fork handed the script's workers over to themselves
    violations: tuple[tuple[str, int], ...]
    lang: str
    # the mode's harm that is not safety, this run's figure and the correct run's, once
    # this run shows more of it than the correct run does
    harm: tuple[Harm, int, int] | None = None
    mode_hidden: bool = False  # a "which mistake is this?" round the room has not guessed
    # a fleet's downstream service: the rules its own books broke, and how often
    service: tuple[tuple[str, int], ...] = ()

    @property
    def unsafe(self) -> bool:
        """A rule broken, the lease store's or the downstream service's."""
        return bool(self.violations) or any(n for _rule, n in self.service)


def speed_text(speed: float, lang: str = "en") -> str:
    """The speed as a multiple of real time: "x2" in English, "2 倍" on a Chinese screen,
    which shows no Latin letter for a unit."""
    return tr("speed_times", lang, n=f"{speed:g}")


def header_fields(state: HeaderState) -> list[Text]:
    """The header's fields, each kept whole on one line: title, clock, speed, mode, play
    state, the safety light, and the fork and recording marks."""
    lang = state.lang
    mode_style = "bold green" if state.mode == "correct" else "bold magenta"
    fields = [
        Text(state.title, style="bold"),
        Text(format_clock(state.now_ms), style="bold cyan"),
        Text(f"{tr('speed', lang)} {speed_text(state.speed, lang)}"),
        Text.assemble(
            f"{tr('mode', lang)} ",
            (tr("guess_hidden", lang), "bold yellow")
            if state.mode_hidden
            else (mode_name(state.mode, lang), mode_style),
        ),
        Text(tr("playing" if state.playing else "paused", lang)),
    ]
    if state.unsafe:
        # what broke, in the run's language: "stale write accepted × 1"; the service's
        # own rules after the store's, said as the service's
        broke = [violations_phrase(dict(state.violations), lang)]
        if served := service_phrase(dict(state.service), lang):
            broke.append(tr("service_broke", lang, what=served))
        spelled = ("，" if lang == "zh" else ", ").join(s for s in broke if s)
        fields.append(Text.assemble((" ● ", "bold white on red"), (f" {spelled}", "bold red")))
    elif state.harm is not None:
        # no rule broken, but the mode's harm happened: never a green "safe" over it
        said = header_words(*state.harm, lang)
        fields.append(Text.assemble((" ● ", "bold black on yellow"), (f" {said}", "bold yellow")))
    else:
        fields.append(
            Text.assemble((" ● ", "bold white on green"), (f" {tr('safe', lang)}", "bold green"))
        )
    if state.forked:
        # a fork and its recording are two facts: both stay in sight. The fork is a word,
        # not a sign: no common monospace font has the fork sign (U+2442), so an SVG render
        # or a browser drew it as an empty box.
        if state.dropped_script:
            fields.append(Text(f" {tr('forked_word', lang)} ", style="bold black on yellow"))
        fields.append(Text(f" ● {tr('recording', lang)} ", style="bold black on red"))
    if state.on_their_own:
        # ↻ (U+21BB), not ⟳ (U+27F3): DejaVu Sans Mono has the one, no monospace font here
        # the other
        fields.append(Text(f"↻ {tr('on_their_own', lang)}", style="bold cyan"))
    return fields


SEPARATOR = " │ "


def lay_out(fields: list[Text], width: int) -> Text:
    """The fields on as few lines as fit `width`, a line breaking only between fields."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    used = 0
    for n, field in enumerate(fields):
        size = field.cell_len
        if n and used + len(SEPARATOR) + size > width:
            text.append("\n ")
            used = 1
        elif n:
            # a run of its own (see WorkerPane: SVG drops leading spaces)
            text.append(SEPARATOR, style="dim")
            used += len(SEPARATOR)
        else:
            text.append(" ")
            used = 1
        text.append_text(field)
        used += size
    return text


class StatusHeader(Static):
    """One or two lines at the top; redrawn only when what it shows (or its width) changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._state: HeaderState | None = None
        self._shown: tuple[HeaderState, int] | None = None
        self._lines = 0

    def show(self, state: HeaderState) -> None:
        self._state = state
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        state = self._state
        width = self.size.width or 80
        if state is None or self._shown == (state, width):
            return
        self._shown = (state, width)
        self.set_class(state.unsafe, "-unsafe")
        text = lay_out(header_fields(state), width)
        lines = text.plain.count("\n") + 1
        # A new height costs a layout: only when the number of lines changed. The height is
        # set, not left to `auto`: a restyle of the screen (its size classes) could keep
        # the height measured at a narrower width, a blank line under a one-line header.
        if lines != self._lines:
            self.styles.height = lines
        self.update(text, layout=lines != self._lines)
        self._lines = lines
