"""One pane per worker: what it believes it holds, its lease bars, pulse and fault buttons."""

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from core.durations import format_duration
from core.sim.snapshot import WorkerView
from demo.i18n import state_word, tr

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


def lease_bar(label: str, remaining: int | None, ttl_ms: int, lang: str) -> Text:
    text = Text()
    text.append(f"{label:<6}", style="dim")
    if remaining is None:
        text.append("·" * BAR_WIDTH, style="dim")
        return text
    if remaining <= 0:
        text.append("░" * BAR_WIDTH, style="red")
        text.append(f" {tr('expired', lang)}", style="bold red")
        return text
    fraction = min(1.0, remaining / ttl_ms) if ttl_ms > 0 else 1.0
    filled = max(1, round(fraction * BAR_WIDTH))
    style = "green" if fraction > 0.5 else "yellow" if fraction > 0.2 else "red"
    text.append("█" * filled, style=style)
    text.append("░" * (BAR_WIDTH - filled), style="dim")
    text.append(f" {short(remaining)}", style=style)
    return text


@dataclass(frozen=True, slots=True)
class PaneState:
    view: WorkerView
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
        self._line_count = -1
        self._labels: tuple[str, ...] = ()
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
        if self._pending is not None:
            state, self._pending = self._pending, None
            self.show(state)

    def show(self, state: PaneState) -> None:
        if state == self._shown:
            return
        if not self.is_mounted or not self.query(".pane-body"):
            self._pending = state
            return
        self._shown = state
        v, lang = state.view, state.lang
        self.border_subtitle = state_word(v.state, lang)
        for name in STATE_STYLES:
            self.set_class(v.state == name, f"-{name}")
        body = Text(no_wrap=True, overflow="ellipsis")
        body.append(f"{state_word(v.state, lang)}", style=STATE_STYLES.get(v.state, ""))
        flags = []
        if v.skew_ms:
            flags.append(f"skew {short(v.skew_ms)}")
        if v.slow_factor != 1.0:
            flags.append(f"slow x{v.slow_factor:g}")
        if not v.autopilot:
            flags.append("manual")
        if flags:
            body.append("  " + " ".join(flags), style="yellow")
        body.append("\n")
        if v.task_id is None:
            body.append(tr("no_lease", lang), style="dim")
            body.append("\n\n")
        else:
            body.append(v.task_id, style="bold")
            if v.step is not None:
                total = f"/{state.total_steps}" if state.total_steps else ""
                body.append(f" · {tr('step', lang)} {v.step}{total}")
            body.append("\n")
            body.append(f"{tr('lease', lang)} ", style="dim")
            body.append(f"{v.lease_token}", style="bold")
            body.append(f"  {tr('fence', lang)} ", style="dim")
            body.append(f"{v.fence_token}", style="bold")
            body.append("\n")
        body.append_text(lease_bar(tr("by_store", lang), v.store_remaining_ms, state.ttl_ms, lang))
        if state.client_clock:
            body.append("\n")
            body.append_text(
                lease_bar(tr("own_clock", lang), v.believed_remaining_ms, state.ttl_ms, lang)
            )
        body.append("\n")
        body.append(f"{tr('pulse', lang):<6}", style="dim")
        age = v.heartbeat_age_ms
        if age is None:
            body.append("·", style="dim")
        else:
            style = (
                "bold green"
                if age <= state.heartbeat_ms * 1.2
                else "bold yellow"
                if age <= state.deadline_ms
                else "bold red"
            )
            body.append("♥ ", style=style)
            body.append(tr("ago", lang, age=short(age)), style=style)
        self.query_one(".pane-body", Static).update(body, layout=self._lines_changed(body))
        self._set_labels(v, lang)

    def _lines_changed(self, body: Text) -> bool:
        """Only a change in the number of lines needs a new layout (it is expensive)."""
        lines = body.plain.count("\n")
        changed = lines != self._line_count
        self._line_count = lines
        return changed

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
    """The panes in a grid; panes are added and removed by worker id, never rebuilt."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.panes: dict[str, WorkerPane] = {}

    def sync(self, states: list[PaneState]) -> None:
        wanted = [s.view.id for s in states]
        for gone in [w for w in self.panes if w not in wanted]:
            self.panes.pop(gone).remove()
        new = [WorkerPane(w) for w in wanted if w not in self.panes]
        if new:
            for pane in new:
                self.panes[pane.worker_id] = pane
            before = self.query_one("#add-worker", Button) if self.query("#add-worker") else None
            self.mount_all(new, before=before)
        for state in states:
            self.panes[state.view.id].show(state)

    def on_resize(self) -> None:
        self.styles.grid_size_columns = max(1, self.size.width // 36)
