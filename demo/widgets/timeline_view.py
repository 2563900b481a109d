"""The Ownership timeline: per task, who held it over time, expiry and rejection marks."""

from rich.text import Text
from textual.widgets import Static

from core.sim.timeline import Timeline
from demo.i18n import tr

PALETTE = ("green", "cyan", "magenta", "blue", "yellow", "bright_green", "bright_cyan")


def render_timeline(
    timeline: Timeline, now_ms: int, width: int, lang: str, colours: dict[str, str]
) -> Text:
    label_w = max((len(t) for t in timeline.lines), default=4)
    label_w = min(label_w, 16)
    cells = max(10, width - label_w - 2)
    span_ms = max(now_ms, 1)
    per_cell = span_ms / cells
    text = Text(no_wrap=True, overflow="crop")
    text.append(tr("timeline_legend", lang) + "\n", style="dim")
    for task_id, line in timeline.lines.items():
        text.append(f"{task_id[:label_w]:<{label_w}} ", style="bold")
        marks: dict[int, str] = {}
        for mark in line.marks:
            cell = min(cells - 1, int(mark.at / per_cell))
            # a rejection is worth more ink than an expiry on the same cell
            if marks.get(cell) != "!":
                marks[cell] = "!" if mark.kind == "rejected" else "✕"
        for cell in range(cells):
            at = int(cell * per_cell + per_cell / 2)
            if cell in marks:
                text.append(marks[cell], style="bold red" if marks[cell] == "!" else "bold yellow")
                continue
            span = line.holder_at(at)
            if span is None or at > now_ms:
                text.append("·", style="dim")
                continue
            colour = colours.setdefault(span.worker_id, PALETTE[len(colours) % len(PALETTE)])
            text.append(span.worker_id[:1], style=f"bold black on {colour}")
        text.append("\n")
    if colours:
        text.append("  ".join(f"{w[:1]}={w}" for w in colours), style="dim")
    return text


class OwnershipTimeline(Static):
    """Rendered only when visible and changed (it is the most expensive panel)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.colours: dict[str, str] = {}
        self._key: tuple[int, int, int, str] | None = None

    def show(self, timeline: Timeline, now_ms: int, lang: str) -> None:
        width = max(20, self.size.width or 80)
        key = (timeline.last_seq, now_ms // 1000, width, lang)
        if key == self._key:
            return
        self._key = key
        self.update(render_timeline(timeline, now_ms, width, lang, self.colours))

    def reset(self) -> None:
        self._key = None
        self.colours.clear()
