"""One pane per worker: what it believes it holds, its lease bars, pulse and fault buttons."""

from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.containers import Container, Vertical
from textual.message import Message
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widgets import Static

from core.engine.durations import format_clock, format_duration
from core.sim.snapshot import WorkerView
from core.sim.spec import WorkerState
from demo.i18n import state_word, token_word, tr, worker_name

BAR_WIDTH = 14
STATE_STYLES = {
    WorkerState.IDLE: "dim",
    WorkerState.WORKING: "bold green",
    WorkerState.FROZEN: "bold cyan",
    WorkerState.STALLED: "bold yellow",
    WorkerState.DEAD: "bold red",
    WorkerState.PARTITIONED: "bold magenta",
}


def short(ms: int) -> str:
    """A duration for a narrow pane, in one style everywhere: 4s, 42s, 3m20s, -4s."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
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


def until_line(
    expires_at: int | None,
    remaining: int | None,
    lang: str,
    renew_deadline: int | None = None,
    self_fencing: bool = False,
) -> Text:
    """When the lease ends by the store's clock, as an instant ("until 0:01:20"), so a
    renewal can be seen moving it; red once it has passed. Then the instant the holder must
    renew by, which a self-fencing holder keeps by stopping itself."""
    text = Text()
    text.append(pad_label(tr("expires_at", lang)), style="dim")
    if expires_at is None:
        text.append("·", style="dim")
    else:
        passed = remaining is not None and remaining <= 0
        text.append(until_clock(expires_at), style="red" if passed else "")
    if renew_deadline is not None:
        text.append("  ")
        text.append(
            tr("renew_by", lang, at=until_clock(renew_deadline)),
            style="bold magenta" if self_fencing else "dim",
        )
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
    faults: bool = True  # the fault words (left out on a short screen: the palette has them)


FAULT_STYLE = Style(bold=True, bgcolor="grey23")
FAULT_DANGER = Style(bold=True, color="red", bgcolor="grey23")
FAULT_OFF = Style(dim=True, bgcolor="grey15")


LINE_MEMO = 256  # rendered lines kept per pane part (a few dozen distinct ones recur)


class Part(Static):
    """One part of a pane; repainted only when its text changed.

    With `by_line`, each line is rendered on its own and kept: the ticking lines of a pane
    (bar, lease end, pulse) cycle through the same few texts between heartbeats, and
    Textual's rendering of a changed widget (text to strips) was most of a frame's cost with
    a dozen panes. A line is the same strip the whole text gives it, as long as no line is
    wider than the part (else it would wrap, and the whole text is rendered as before).
    """

    def __init__(self, classes: str, *, by_line: bool = False) -> None:
        super().__init__("", classes=classes)
        self.text: Text = Text()
        self._lines = -1
        self._by_line = by_line
        self._split: list[Text] | None = None
        self._memo: dict[tuple[object, ...], Strip] = {}

    def show_text(self, text: Text) -> None:
        if self._lines >= 0 and text == self.text:
            return
        lines = text.plain.count("\n")
        self.update(text, layout=lines != self._lines)
        self.text, self._lines = text, lines
        self._split = None

    def notify_style_update(self) -> None:
        self._memo.clear()
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if not self._by_line or self.text_selection is not None:
            return super().render_line(y)
        if self._split is None:
            self._split = list(self.text.split("\n", allow_blank=True))
        split = self._split
        if y >= len(split) or any(line.cell_len > width for line in split):
            return super().render_line(y)
        line = split[y]
        style = self.visual_style
        key = (y, line.plain, tuple(line.spans), line.style, width, style)
        strip = self._memo.get(key)
        if strip is None:
            # blank lines above it: each segment's meta holds its (x, y) in the widget
            placed = line
            if y:
                placed = Text(
                    "\n" * y, justify=line.justify, overflow=line.overflow, no_wrap=line.no_wrap
                ).append_text(line)
            visual: Visual = visualize(self, placed, markup=False)
            strip = Visual.to_strips(self, visual, width, y + 1, style)[y]
            if len(self._memo) >= LINE_MEMO:
                self._memo.clear()
            self._memo[key] = strip
        return strip


class FaultWords(Part):
    """The pane's fault acts as clickable words (one widget, not two rows of five buttons)."""

    def action_fault(self, action: str) -> None:
        pane = self.parent
        if isinstance(pane, WorkerPane):
            pane.post_message(WorkerPane.FaultRequested(pane.worker_id, action))


class WorkerPane(Vertical):
    """A worker's pane: what it believes (head), its ticking lease and pulse, fault words.

    Four widgets, not ten: with a dozen panes each widget costs Textual time on every
    paint. The head and the words change at steps and faults; only the two ticking lines
    repaint on every refresh. A click on a fault word posts `FaultRequested`; the screen
    applies the action.
    """

    class FaultRequested(Message):
        """A fault was clicked: apply `action` to `worker_id` now."""

        def __init__(self, worker_id: str, action: str) -> None:
            super().__init__()
            self.worker_id = worker_id
            self.action = action

    def __init__(self, worker_id: str) -> None:
        self._head_part = Part("pane-head")
        self._live_part = Part("pane-live", by_line=True)
        self._fault_part = FaultWords("pane-faults")
        super().__init__(self._head_part, self._live_part, self._fault_part, classes="worker-pane")
        self.worker_id = worker_id
        self.border_title = worker_id
        self._shown: PaneState | None = None
        self._subtitle = ""
        # where each fault word is, (x, y) in the pane's text: for tests and tooltips
        self.fault_at: dict[str, tuple[int, int]] = {}
        self._head_key: tuple[str, str] | None = None
        # (what it was made from, the text) for the head and the fault words
        self._parts: list[tuple[tuple[object, ...], Text] | None] = [None, None]

    @property
    def text(self) -> Text:
        """All the pane says, its parts one after the other (for tests)."""
        out = self._head_part.text.copy()
        out.append_text(self._live_part.text)
        if self._fault_part.text.plain:
            out.append("\n")
            out.append_text(self._fault_part.text)
        return out

    def show(self, state: PaneState) -> None:
        if state == self._shown:
            return
        self._shown = state
        v, lang = state.view, state.lang
        if self._head_key != (v.state, lang):
            self._head_key = (v.state, lang)
            title = worker_name(self.worker_id, lang)
            if self.border_title != title:
                self.border_title = title
            subtitle = state_word(v.state, lang)
            if self._subtitle != subtitle:  # setting it, even unchanged, repaints the pane
                self._subtitle = subtitle
                self.border_subtitle = subtitle
            for name in STATE_STYLES:
                self.set_class(v.state == name, f"-{name}")
        # What changes at steps (the head) and with faults (the words) is made once and
        # reused; only the ticking lines (bars, pulse) are made on every refresh.
        head_key = (
            v.state,
            v.skew_ms,
            v.slow_factor,
            v.autopilot,
            v.task_id,
            v.step,
            state.total_steps,
            v.lease_token,
            v.fence_token,
            lang,
        )
        head = self._parts[0]
        if head is None or head[0] != head_key:
            head = self._parts[0] = (head_key, self._head(v, state))
        fault_key = (v.state == WorkerState.DEAD, v.partitioned, lang, state.faults)
        faults = self._parts[1]
        if faults is None or faults[0] != fault_key:
            words = Text()
            if state.faults:
                self._append_faults(words, v, lang)
            faults = self._parts[1] = (fault_key, words)
        self._head_part.show_text(head[1])
        self._live_part.show_text(self._live(v, state))
        self._fault_part.show_text(faults[1])
        self._fault_part.display = state.faults

    def _head(self, v: WorkerView, state: PaneState) -> Text:
        """Who it is and what it believes it holds: state, flags, task and step, tokens."""
        lang = state.lang
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{state_word(v.state, lang)}", style=STATE_STYLES.get(v.state, ""))
        flags = []
        if v.skew_ms:
            flags.append(tr("skew", lang, amount=short(v.skew_ms)))
        if v.slow_factor != 1.0:
            flags.append(tr("slow", lang, factor=f"{v.slow_factor:g}"))
        if not v.autopilot:
            flags.append(tr("manual", lang))
        if v.self_fencing:
            flags.append(tr("self_fencing", lang))
        if flags:
            # the gaps are runs of their own: SVG renderers (librsvg) drop the leading
            # spaces of a styled run, which glued "frozen" to "manual" in screenshots
            text.append("  ")
            text.append(" ".join(flags), style="yellow")
        text.append("\n")
        if v.task_id is None:
            text.append(tr("no_lease", lang), style="dim")
            text.append("\n ")  # three lines, like a pane that holds a lease
        else:
            text.append(v.task_id, style="bold")
            if v.step is not None:
                total = f"/{state.total_steps}" if state.total_steps else ""
                text.append(" ", style="bold")  # not leading the next run (see flags)
                text.append(f"· {tr('step', lang)} {v.step}{total}")
            text.append("\n")
            if not v.lease_token:
                # Mistake one: the claim wrote `running` and an owner, and nothing else.
                text.append(tr("no_version", lang), style="yellow")
            else:
                text.append(f"{token_word('lease', lang)} ", style="dim")
                text.append(f"{v.lease_token}", style="bold")
                text.append("  ")
                text.append(f"{token_word('fence', lang)} ", style="dim")
                text.append(f"{v.fence_token}", style="bold")
        return text

    def _live(self, v: WorkerView, state: PaneState) -> Text:
        """The lines that tick: the lease bar(s), the lease's end, the heartbeat pulse."""
        lang = state.lang
        text = lease_bar(tr("by_store", lang), v.store_remaining_ms, state.ttl_ms, lang)
        if state.client_clock:
            text.append("\n")
            text.append_text(
                lease_bar(tr("own_clock", lang), v.believed_remaining_ms, state.ttl_ms, lang)
            )
        text.append("\n")
        text.append_text(
            until_line(
                state.expires_at_ms,
                v.store_remaining_ms,
                lang,
                renew_deadline=v.renew_deadline,
                self_fencing=v.self_fencing,
            )
        )
        text.append("\n")
        text.append(pad_label(tr("pulse", lang)), style="dim")
        age = v.heartbeat_age_ms
        if age is None:
            text.append("·", style="dim")
        else:
            style = (
                "bold green"
                if age <= state.heartbeat_ms * 1.2
                else "bold yellow"
                if age <= state.deadline_ms
                else "bold red"
            )
            text.append("♥ ", style=style)
            text.append(tr("ago", lang, age=short(age)), style=style)
        return text

    def _append_faults(self, text: Text, v: WorkerView, lang: str) -> None:
        """Two lines of fault words; a dead worker's are dim and do nothing but Restart."""
        dead = v.state == WorkerState.DEAD
        rows = (
            (("freeze_heartbeat", "freeze_heartbeat"), ("stall", "stall")),
            (
                ("kill", "kill"),
                ("restart", "restart_worker") if dead else ("resume", "resume"),
                ("heal", "heal") if v.partitioned else ("partition", "partition"),
            ),
        )
        self.fault_at = {}
        for y, row in enumerate(rows):
            if y:
                text.append("\n")
            x = 0
            for n, (action, word) in enumerate(row):
                if n:
                    text.append(" ")
                    x += 1
                enabled = not dead or action == "restart"
                style = FAULT_DANGER if action == "kill" else FAULT_STYLE
                if not enabled:
                    style = FAULT_OFF
                else:
                    style = style + Style(meta={"@click": f"fault({action!r})"})
                # padded with no-break spaces: SVG renderers drop a styled run's leading spaces
                label = f"\u00a0{tr(word, lang)}\u00a0"
                self.fault_at[action] = (x + 1, y)  # in the words' own widget
                text.append(label, style=style)
                x += cell_len(label)


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
        if self.size.width and self.styles.grid_size_columns != self.columns():
            self.styles.grid_size_columns = self.columns()
        self._draw()

    def _draw(self) -> None:
        columns = self.columns()
        top, bottom = self.scroll_y, self.scroll_y + self.size.height
        for index, (worker_id, state) in enumerate(self._latest.items()):
            pane = self.panes[worker_id]
            height = pane.outer_size.height
            row = index // columns
            # Drawn while its ticking lines (below the border and the three-line head) are in
            # sight: repainting a widget out of sight makes Textual map the whole screen again.
            live_y = row * height + 4
            if self.size.height and height and not (top <= live_y < bottom):
                continue  # drawn when it scrolls into view
            pane.show(state)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._draw()

    def columns(self) -> int:
        """As many columns as panes (at least three), each at least 36 cells wide: on a wide
        screen three panes share the width instead of leaving columns empty."""
        return max(1, min(self.size.width // 36, max(len(self.panes), 3)))

    def on_resize(self) -> None:
        self.styles.grid_size_columns = self.columns()
        self.call_after_refresh(self._draw)
