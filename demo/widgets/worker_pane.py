"""One pane per worker: what it believes it holds, its lease bars, pulse and fault buttons."""

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from core.engine.durations import format_clock, format_duration
from core.sim.snapshot import WorkerView
from demo.i18n import state_word, token_word, tr, worker_name

BAR_WIDTH = 14
STATE_STYLES = {
    "idle": "dim",
    "working": "bold green",
    "frozen": "bold cyan",
    "stalled": "bold yellow",
    "dead": "bold red",
    "partitioned": "bold magenta",
}


def short(ms: int) -> str:
    """A duration for a narrow pane: 42s, 1.5s, 3m20s, -4s."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    if ms < 10_000:
        return f"{sign}{ms / 1000:.1f}s"
    if ms < 120_000:
        return f"{sign}{ms // 1000}s"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 120:
        return f"{sign}{minutes}m{seconds:02d}s"
    return sign + format_duration(ms - ms % 60_000)


def pad_label(label: str, cells: int = 6) -> str:
    """A row label padded to `cells` terminal cells, so the values line up in both languages
    (存储 is two characters but four cells)."""
    return label + " " * max(1, cells - cell_len(label))


def lease_bar(label: str, remaining: int | None, ttl_ms: int, lang: str) -> Text:
    text = Text()
    text.append(pad_label(label), style="dim")
    if remaining is None:
        text.append("·" * BAR_WIDTH, style="dim")
        return text
    if remaining <= 0:
        text.append("░" * BAR_WIDTH, style="red")
        text.append(" ")
        text.append(tr("expired", lang), style="bold red")
        return text
    fraction = min(1.0, remaining / ttl_ms) if ttl_ms > 0 else 1.0
    filled = max(1, round(fraction * BAR_WIDTH))
    style = "green" if fraction > 0.5 else "yellow" if fraction > 0.2 else "red"
    text.append("█" * filled, style=style)
    text.append("░" * (BAR_WIDTH - filled), style="dim")
    text.append(" ")
    text.append(short(remaining), style=style)
    return text


def until_clock(at_ms: int) -> str:
    """An instant on the header's clock without the milliseconds: 0:01:20."""
    return format_clock(at_ms).rsplit(".", 1)[0]


def until_line(expires_at: int | None, remaining: int | None, lang: str) -> Text:
    """When the lease ends by the store's clock, as an instant ("until 0:01:20"), so a
    renewal can be seen moving it; red once it has passed."""
    text = Text()
    text.append(pad_label(tr("expires_at", lang)), style="dim")
    if expires_at is None:
        text.append("·", style="dim")
    else:
        passed = remaining is not None and remaining <= 0
        text.append(until_clock(expires_at), style="red" if passed else "")
    return text


@dataclass(frozen=True, slots=True)
class PaneState:
    view: WorkerView
    expires_at_ms: int | None  # the instant its lease ends by the store's clock
    ttl_ms: int
    heartbeat_ms: int
    deadline_ms: int
    total_steps: int | None
    client_clock: bool
    lang: str


class WorkerPane(Vertical):
    """A worker's pane. Its buttons post `FaultRequested`; the screen applies the action."""

    class FaultRequested(Message):
        """A fault button was pressed: apply `action` to `worker_id` now."""

        def __init__(self, worker_id: str, action: str) -> None:
            super().__init__()
            self.worker_id = worker_id
            self.action = action

    def __init__(self, worker_id: str) -> None:
        super().__init__(classes="worker-pane")
        self.worker_id = worker_id
        self.border_title = worker_id
        self._shown: PaneState | None = None
        self._pending: PaneState | None = None
        self._texts: list[Text | None] = [None, None]  # what the two parts show
        self._labels: tuple[str, ...] = ()
        self._subtitle = ""
        self._body: Static | None = None  # set once composed and mounted
        self._live: Static | None = None
        # what each button does now (Resume becomes Restart when dead, Partition -> Heal)
        self._actions = {
            "b-freeze": "freeze_heartbeat",
            "b-stall": "stall",
            "b-kill": "kill",
            "b-resume": "resume",
            "b-partition": "partition",
        }

    def compose(self) -> ComposeResult:
        yield Static("", classes="pane-body")
        yield Static("", classes="pane-live")
        with Horizontal(classes="fault-row"):
            yield Button("", compact=True, classes="fault b-freeze")
            yield Button("", compact=True, classes="fault b-stall")
        with Horizontal(classes="fault-row"):
            yield Button("", compact=True, classes="fault b-kill -danger")
            yield Button("", compact=True, classes="fault b-resume")
            yield Button("", compact=True, classes="fault b-partition")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        for cls, action in self._actions.items():
            if event.button.has_class(cls):
                self.post_message(self.FaultRequested(self.worker_id, action))

    def on_mount(self) -> None:
        self._body = self.query_one(".pane-body", Static)
        self._live = self.query_one(".pane-live", Static)
        if self._pending is not None:
            state, self._pending = self._pending, None
            self.show(state)

    def show(self, state: PaneState) -> None:
        if state == self._shown:
            return
        if self._body is None:
            self._pending = state
            return
        self._shown = state
        v, lang = state.view, state.lang
        title = worker_name(self.worker_id, lang)
        if self.border_title != title:
            self.border_title = title
        subtitle = state_word(v.state, lang)
        if self._subtitle != subtitle:  # setting it, even unchanged, repaints the whole pane
            self._subtitle = subtitle
            self.border_subtitle = subtitle
        for name in STATE_STYLES:
            self.set_class(v.state == name, f"-{name}")
        body = Text(no_wrap=True, overflow="ellipsis")
        body.append(f"{state_word(v.state, lang)}", style=STATE_STYLES.get(v.state, ""))
        flags = []
        if v.skew_ms:
            flags.append(tr("skew", lang, amount=short(v.skew_ms)))
        if v.slow_factor != 1.0:
            flags.append(tr("slow", lang, factor=f"{v.slow_factor:g}"))
        if not v.autopilot:
            flags.append(tr("manual", lang))
        if flags:
            # the gaps are runs of their own: SVG renderers (librsvg) drop the leading
            # spaces of a styled run, which glued "frozen" to "manual" in screenshots
            body.append("  ")
            body.append(" ".join(flags), style="yellow")
        body.append("\n")
        if v.task_id is None:
            body.append(tr("no_lease", lang), style="dim")
            body.append("\n ")  # three lines, like a pane that holds a lease
        else:
            body.append(v.task_id, style="bold")
            if v.step is not None:
                total = f"/{state.total_steps}" if state.total_steps else ""
                body.append(" ", style="bold")  # not leading the next run (see flags)
                body.append(f"· {tr('step', lang)} {v.step}{total}")
            body.append("\n")
            body.append(f"{token_word('lease', lang)} ", style="dim")
            body.append(f"{v.lease_token}", style="bold")
            body.append("  ")
            body.append(f"{token_word('fence', lang)} ", style="dim")
            body.append(f"{v.fence_token}", style="bold")
        # the top part (above): who it is and what it believes it holds
        live = lease_bar(tr("by_store", lang), v.store_remaining_ms, state.ttl_ms, lang)
        if state.client_clock:
            live.append("\n")
            live.append_text(
                lease_bar(tr("own_clock", lang), v.believed_remaining_ms, state.ttl_ms, lang)
            )
        live.append("\n")
        live.append_text(until_line(state.expires_at_ms, v.store_remaining_ms, lang))
        live.append("\n")
        live.append(pad_label(tr("pulse", lang)), style="dim")
        age = v.heartbeat_age_ms
        if age is None:
            live.append("·", style="dim")
        else:
            style = (
                "bold green"
                if age <= state.heartbeat_ms * 1.2
                else "bold yellow"
                if age <= state.deadline_ms
                else "bold red"
            )
            live.append("♥ ", style=style)
            live.append(tr("ago", lang, age=short(age)), style=style)
        # Two parts, so the lines that tick (bars, pulse) repaint without the rest.
        self._update(self._body, body, 0)
        self._update(self._live, live, 1)
        self._set_labels(v, lang)

    def _update(self, static: Static | None, text: Text, part: int) -> None:
        """Show `text` if it changed; a new layout only if its number of lines changed."""
        before = self._texts[part]
        if static is None or text == before:
            return
        relayout = before is None or text.plain.count("\n") != before.plain.count("\n")
        self._texts[part] = text
        static.update(text, layout=relayout)

    def _set_labels(self, v: WorkerView, lang: str) -> None:
        dead = v.state == "dead"
        revive = "restart_worker" if dead else "resume"
        cut = "heal" if v.partitioned else "partition"
        labels = (
            tr("freeze_heartbeat", lang),
            tr("stall", lang),
            tr("kill", lang),
            tr(revive, lang),
            tr(cut, lang),
            str(dead),
        )
        if labels == self._labels:
            return
        self._labels = labels
        buttons = list(self.query(Button))
        freeze, stall, kill, resume, part = buttons
        freeze.label, stall.label, kill.label = labels[0], labels[1], labels[2]
        resume.label, part.label = labels[3], labels[4]
        self._actions["b-resume"] = "restart" if dead else "resume"
        self._actions["b-partition"] = "heal" if v.partitioned else "partition"
        for b in (freeze, stall, kill, part):
            b.disabled = dead
        for b in buttons:
            # the width is set from the label's cells: CJK labels are two cells a character
            b.styles.width = cell_len(str(b.label)) + 2
        freeze.tooltip = tr("freeze_heartbeat", lang)


class WorkerGrid(Container):
    """The panes in a grid; panes are added and removed by worker id, never rebuilt.

    Only the panes inside the grid's scrolled window are redrawn; a pane scrolled out of
    sight keeps its newest state and draws it when it scrolls back in (repainting a widget
    that is off screen makes Textual re-arrange the whole screen).
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.panes: dict[str, WorkerPane] = {}
        self._latest: dict[str, PaneState] = {}

    def sync(self, states: list[PaneState]) -> None:
        wanted = [s.view.id for s in states]
        for gone in [w for w in self.panes if w not in wanted]:
            self.panes.pop(gone).remove()
            self._latest.pop(gone, None)
        new = [WorkerPane(w) for w in wanted if w not in self.panes]
        if new:
            for pane in new:
                self.panes[pane.worker_id] = pane
            self.mount_all(new)
        self._latest = {s.view.id: s for s in states}
        self._draw()

    def _draw(self) -> None:
        columns = max(1, self.size.width // 36)
        top, bottom = self.scroll_y, self.scroll_y + self.size.height
        for index, (worker_id, state) in enumerate(self._latest.items()):
            pane = self.panes[worker_id]
            height = pane.outer_size.height
            row = index // columns
            if self.size.height and height and not (top - height < row * height < bottom):
                continue  # out of sight: drawn when it scrolls into view
            pane.show(state)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._draw()

    def on_resize(self) -> None:
        self.styles.grid_size_columns = max(1, self.size.width // 36)
        self.call_after_refresh(self._draw)
