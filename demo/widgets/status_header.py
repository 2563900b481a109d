"""The header line: title, virtual clock, speed, mode, safety light, forked marker."""

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from core.engine.durations import format_clock
from core.scenarios.glossary import violation_word
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
    violations: tuple[tuple[str, int], ...]
    lang: str


def speed_text(speed: float) -> str:
    return f"x{speed:g}"


class StatusHeader(Static):
    """One or two lines at the top; redrawn only when what it shows has changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._shown: HeaderState | None = None
        self._plain = ""

    def show(self, state: HeaderState) -> None:
        if state == self._shown:
            return
        self._shown = state
        lang = state.lang
        text = Text(no_wrap=False, overflow="fold")
        text.append(" ")
        text.append(state.title, style="bold")
        text.append("  ")  # a run of its own (see WorkerPane: SVG drops leading spaces)
        text.append("│ ", style="dim")
        text.append(format_clock(state.now_ms), style="bold cyan")
        text.append(" ")
        text.append("│ ", style="dim")
        text.append(f"{tr('speed', lang)} {speed_text(state.speed)}")
        text.append(" ")
        text.append("│ ", style="dim")
        mode_style = "bold green" if state.mode == "correct" else "bold magenta"
        text.append(f"{tr('mode', lang)} ", style="")
        text.append(state.mode, style=mode_style)
        text.append(" ")
        text.append("│ ", style="dim")
        text.append(tr("playing" if state.playing else "paused", lang))
        text.append(" ")
        text.append("│ ", style="dim")
        if state.violations:
            spelled = " ".join(f"{violation_word(name, lang)}×{n}" for name, n in state.violations)
            text.append(" ● ", style="bold white on red")
            text.append(f" {spelled}", style="bold red")
        else:
            text.append(" ● ", style="bold white on green")
            text.append(f" {tr('safe', lang)}", style="bold green")
        if state.forked:
            text.append("  ")
            if state.dropped_script:
                text.append(f" ⑂ {tr('forked', lang)} ", style="bold black on yellow")
            else:
                text.append(f" ● {tr('recording', lang)} ", style="bold black on yellow")
        self.set_class(bool(state.violations), "-unsafe")
        self.update(text, layout=len(text.plain) // 60 != len(self._plain) // 60)
        self._plain = text.plain
