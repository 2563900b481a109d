"""One pane per worker: what it believes it holds, its lease bars, pulse and fault buttons."""

from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.containers import Container
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget

from core.engine.config import LeaseConfig, Mode
from core.engine.durations import format_clock, format_duration
from core.scenarios.glossary import task_name
from core.scenarios.telling import spaced, task_words
from core.sim.heavy import format_size
from core.sim.snapshot import Snapshot, WorkerView
from core.sim.spec import WorkerState
from demo.controls import FAULT_KEY, worker_faults
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


def short(ms: int, lang: str = "en") -> str:
    """A duration for a narrow pane, in one style everywhere: 4s, 42s, 3m20s, -4s; in
    Chinese with Chinese units (4秒, 3分20秒), never "4s前"."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    s, m = ("秒", "分") if lang == "zh" else ("s", "m")
    if ms < 120_000:
        return f"{sign}{ms // 1000}{s}"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 120:
        return f"{sign}{minutes}{m}{seconds:02d}{s}"
    if lang == "zh":
        hours, minutes = divmod(minutes, 60)
        return f"{sign}{hours}小时{minutes:02d}{m}"
    return sign + format_duration(ms - ms % 60_000)


def pad_label(label: str, cells: int = 6) -> str:
    """A row label padded to `cells` terminal cells, so the values line up in both languages
    (存储 is two characters but four cells)."""
    return label + " " * max(1, cells - cell_len(label))


# The ticking lines are made from a few numbers and recur (the same bar every lease period):
# each is made once and shared, so callers must not change the Text they get.
@lru_cache(maxsize=1024)
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
    text.append(short(remaining, lang), style=style)
    return text


@lru_cache(maxsize=1024)
def pulse_line(
    age: int | None, heartbeat_ms: int, deadline_ms: int, lang: str, lands_at: int | None = None
) -> Text:
    """How long ago the last heartbeat was: green on time, yellow late, red past the deadline;
    then when a heavy heartbeat on its way lands, if one is."""
    text = Text()
    text.append(pad_label(tr("pulse", lang)), style="dim")
    if age is None:
        text.append("·", style="dim")
        return text
    style = (
        "bold green"
        if age <= heartbeat_ms * 1.2
        else "bold yellow"
        if age <= deadline_ms
        else "bold red"
    )
    text.append("♥ ", style=style)
    text.append(tr("ago", lang, age=short(age, lang)), style=style)
    if lands_at is not None:
        text.append("  ")
        text.append(tr("lands_at", lang, at=until_clock(lands_at)), style="yellow")
    return text


def until_clock(at_ms: int) -> str:
    """An instant on the header's clock without the milliseconds: 0:01:20."""
    return format_clock(at_ms).rsplit(".", 1)[0]


@lru_cache(maxsize=1024)
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


def pane_tokens(text: Text, v: WorkerView, lang: str) -> None:
    """The lease and fence tokens the worker believes it holds."""
    if not v.lease_token:
        # Mistake one: the claim wrote `running` and an owner, and nothing else.
        text.append(tr("no_version", lang), style="yellow")
        return
    text.append(f"{token_word('lease', lang)} ", style="dim")
    text.append(f"{v.lease_token}", style="bold")
    if v.fence_token is not None:  # none before the fence tag
        text.append("  ")
        text.append(f"{token_word('fence', lang)} ", style="dim")
        text.append(f"{v.fence_token}", style="bold")


def _late_write(v: WorkerView, lang: str, *, short: bool = False) -> tuple[str, str] | None:
    """What the service answered the write the worker kept in hand while stalled, once it
    went late (a real agent worker in the fleet), and its style; None when there is none."""
    late = v.late_write
    if late is None:
        return None
    name = late.key
    if not late.taken:
        if late.error == "stale_token" and late.newest is not None:
            word = "late_write_refused_short" if short else "late_write_refused"
            said = tr(word, lang, name=name, token=late.token, newest=late.newest)
            return said, "green"
        return tr("late_write_refused_other", lang, name=name, error=late.error), "yellow"
    if late.newest is not None and (late.token is None or late.token < late.newest):
        word = "late_write_taken_over_short" if short else "late_write_taken_over"
        return tr(word, lang, name=name, newest=late.newest), "bold red"
    return tr("late_write_taken", lang, name=name), "yellow"


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
    chosen: bool = False  # the worker the fault keys act on: its words show their keys
    # a short screen (80 x 24): the task and its tokens on one line, no blank line in an idle
    # pane, so a pane and the task table's rows fit beside the step's panel without the body
    # scrolling the pane's title (its worker's name) out of sight
    compact: bool = False


FAULT_STYLE = Style(bold=True, bgcolor="grey23")
FAULT_DANGER = Style(bold=True, color="red", bgcolor="grey23")
FAULT_OFF = Style(dim=True, bgcolor="grey15")


STRIP_MEMO = 2048  # painted lines kept for all panes (a few hundred distinct ones recur)
_strips: dict[tuple[object, ...], Strip] = {}


def split_lines(text: Text) -> list[Text]:
    return list(text.split("\n", allow_blank=True))


def line_key(line: Text) -> tuple[object, ...]:
    """What a line's painting depends on (Text compares its spans, not just its letters)."""
    return (line.plain, tuple(line.spans), line.style)


class WorkerPane(Widget):
    """A worker's pane: what it believes (head), its ticking lease and pulse, fault words.

    One widget drawing its lines itself, and repainting only the lines that changed: with a
    dozen panes, every widget and every repainted line costs Textual time on every frame
    (four widgets a pane, each repainted whole, was a third of a frame). Between heartbeats
    only the lease bar and the pulse change, so a refresh repaints two lines a pane. The
    fault words are clickable (`@click` on their style); a click posts `FaultRequested` and
    the screen applies the action.
    """

    class FaultRequested(Message):
        """A fault was clicked: apply `action` to `worker_id` now."""

        def __init__(self, worker_id: str, action: str) -> None:
            super().__init__()
            self.worker_id = worker_id
            self.action = action

    def __init__(self, worker_id: str) -> None:
        super().__init__(classes="worker-pane")
        self.worker_id = worker_id
        self.border_title = worker_id
        self._shown: PaneState | None = None
        self._subtitle = ""
        # where each fault word is, (x, y) from the pane's top-left corner (its border
        # included), as `pilot.click(pane, offset=...)` takes it: for tests
        self.fault_at: dict[str, tuple[int, int]] = {}
        self._words_at: dict[str, tuple[int, int]] = {}
        self._head_key: tuple[str, str] | None = None
        # (what it was made from, its lines) for the head and the fault words
        self._parts: list[tuple[tuple[object, ...], list[Text]] | None] = [None, None]
        self._lines: list[Text] = []
        self._keys: list[tuple[object, ...]] = []
        self._live_lines = (0, 0)  # the ticking lines' range in `_lines`

    @property
    def text(self) -> Text:
        """All the pane says, a line each (for tests)."""
        return Text("\n").join(self._lines)

    @property
    def lines(self) -> list[Text]:
        """The lines the pane shows now."""
        return self._lines

    @property
    def live_text(self) -> Text:
        """The lines that tick: lease bar(s), the lease's end, the pulse (for tests)."""
        start, end = self._live_lines
        return Text("\n").join(self._lines[start:end])

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.visual_style
        if y >= len(self._lines):
            return Strip.blank(width, style.rich_style)
        line = self._lines[y]
        key = (*self._keys[y], width, style)
        strip = _strips.get(key)
        if strip is None:
            if line.cell_len > width:
                line = line.copy()
                line.truncate(width, overflow="ellipsis")
            visual: Visual = visualize(self, line, markup=False)
            strip = Visual.to_strips(self, visual, width, 1, style)[0]
            if len(_strips) >= STRIP_MEMO:
                _strips.clear()
            _strips[key] = strip
        return strip

    def _set_lines(self, lines: list[Text]) -> None:
        """Show these lines, repainting only the ones that changed."""
        keys = [line_key(line) for line in lines]
        if len(keys) != len(self._keys):
            self._lines, self._keys = lines, keys
            self.refresh(layout=True)
            return
        width = self.size.width
        changed = [
            Region(0, y, width, 1)
            for y, (old, new) in enumerate(zip(self._keys, keys, strict=True))
            if old != new
        ]
        self._lines, self._keys = lines, keys
        if changed and width:
            self.refresh(*changed)
        elif changed:
            self.refresh()

    def action_fault(self, action: str) -> None:
        self.post_message(WorkerPane.FaultRequested(self.worker_id, action))

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
            v.self_fencing,
            v.heartbeat_payload_bytes,
            v.write_held,
            v.stopping_at_write,
            v.late_write,
            v.task_id,
            v.store_task_id,
            v.step,
            state.total_steps,
            v.lease_token,
            v.fence_token,
            lang,
            state.compact,
        )
        head = self._parts[0]
        if head is None or head[0] != head_key:
            head = self._parts[0] = (head_key, split_lines(self._head(v, state)))
        self.set_class(state.chosen, "-chosen")
        fault_key = (v.state == WorkerState.DEAD, v.partitioned, lang, state.faults, state.chosen)
        faults = self._parts[1]
        if faults is None or faults[0] != fault_key:
            words = Text()
            if state.faults:
                self._append_faults(words, v, lang, keys=state.chosen)
            faults = self._parts[1] = (fault_key, split_lines(words) if words.plain else [])
        lines = [*head[1], *self._live(v, state)]
        self._live_lines = (len(head[1]), len(lines))
        # from the pane's corner: right of the border and padding, below the lines above
        self.fault_at = {a: (2 + x, 1 + len(lines) + y) for a, (x, y) in self._words_at.items()}
        lines.extend(faults[1])
        self._set_lines(lines)

    def _head(self, v: WorkerView, state: PaneState) -> Text:
        """Who it is and what it believes it holds: state, flags, task and step, tokens."""
        lang = state.lang
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{state_word(v.state, lang)}", style=STATE_STYLES.get(v.state, ""))
        flags = []
        if v.skew_ms:
            flags.append(tr("skew", lang, amount=short(v.skew_ms, lang)))
        if v.slow_factor != 1.0:
            flags.append(tr("slow", lang, factor=f"{v.slow_factor:g}"))
        if not v.autopilot:
            flags.append(tr("manual", lang))
        if v.self_fencing:
            flags.append(tr("self_fencing", lang))
        if v.write_held:
            flags.append(tr("write_in_hand", lang))
        elif v.stopping_at_write:
            flags.append(tr("stopping_at_write", lang))
        late = _late_write(v, lang, short=state.compact)
        if v.heartbeat_payload_bytes:
            flags.append(tr("heavy_heartbeat", lang, size=format_size(v.heartbeat_payload_bytes)))
        if flags:
            # the gaps are runs of their own: SVG renderers (librsvg) drop the leading
            # spaces of a styled run, which glued "frozen" to "manual" in screenshots
            text.append("  ")
            text.append(" ".join(flags), style="yellow")
        if state.compact and v.task_id is not None:
            # beside the state: the task's line keeps room for its name and step in a
            # half-width pane ("港口账 · 步骤 1/4  租约号 1  围栏…" was cut)
            text.append("  ")
            pane_tokens(text, v, lang)
        text.append("\n")
        if v.task_id is None and v.store_task_id is not None:
            # its memory is empty, the keeper's book is not: both said, so the pane never
            # contradicts the task table's owner
            text.append(tr("no_lease_known", lang), style="dim")
            text.append("\n")
            lent = spaced(tr("still_lent", lang, task=task_words(v.store_task_id, lang)), lang)
            text.append(lent, style="yellow")
        elif v.task_id is None:
            text.append(tr("no_lease", lang), style="dim")
            if not state.compact:
                text.append("\n ")  # three lines, like a pane that holds a lease
        else:
            text.append(task_name(v.task_id, lang), style="bold")
            if v.step is not None:
                total = f"/{state.total_steps}" if state.total_steps else ""
                text.append(" ", style="bold")  # not leading the next run (see flags)
                text.append(f"· {tr('step', lang)} {v.step}{total}")
            if not state.compact:
                text.append("\n")
                pane_tokens(text, v, lang)
        if late is not None:
            # the stall's punchline on a line of its own: red when the service took a write
            # older than the newest it had seen
            text.append("\n")
            text.append(late[0], style=late[1])
        return text

    def _live(self, v: WorkerView, state: PaneState) -> list[Text]:
        """The lines that tick: the lease bar(s), the lease's end, the heartbeat pulse."""
        lang = state.lang
        lines = [lease_bar(tr("by_store", lang), v.store_remaining_ms, state.ttl_ms, lang)]
        if state.client_clock:
            lines.append(
                lease_bar(tr("own_clock", lang), v.believed_remaining_ms, state.ttl_ms, lang)
            )
        lines.append(
            until_line(
                state.expires_at_ms,
                v.store_remaining_ms,
                lang,
                renew_deadline=v.renew_deadline,
                self_fencing=v.self_fencing,
            )
        )
        lines.append(
            pulse_line(
                v.heartbeat_age_ms,
                state.heartbeat_ms,
                state.deadline_ms,
                lang,
                lands_at=v.heartbeat_lands_at,
            )
        )
        return lines

    def _append_faults(self, text: Text, v: WorkerView, lang: str, *, keys: bool) -> None:
        """Two lines of fault words; a dead worker's are dim and do nothing but Restart.
        `keys`: the chosen worker's words begin with the key that does them."""
        shown = worker_faults(dead=v.state == WorkerState.DEAD, partitioned=v.partitioned)
        self._words_at = {}
        lines = sorted({f.line for f, _acts in shown})
        for y in lines:
            if y:
                text.append("\n")
            x = 0
            for n, (fault, enabled) in enumerate((f, a) for f, a in shown if f.line == y):
                if n:
                    text.append(" ")
                    x += 1
                style = FAULT_DANGER if fault.danger else FAULT_STYLE
                if not enabled:
                    style = FAULT_OFF
                else:
                    style = style + Style(meta={"@click": f"fault({fault.action!r})"})
                # padded with no-break spaces: SVG renderers drop a styled run's leading spaces
                key = f"{FAULT_KEY[fault.action]}\u00a0" if keys and enabled else ""
                label = f"\u00a0{key}{tr(fault.word, lang)}\u00a0"
                self._words_at[fault.action] = (x + 1, y)  # in the words' own lines
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
        # A short screen shows one row of panes and scrolls the rest, the chosen worker's in
        # sight: two rows of three workers' panes left the task table no rows at 80 x 24.
        self.one_row = False
        self._chosen: str | None = None
        self._cap: int | None = None  # the rows it is held to, set here (None: not held)

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
        self._fit_one_row(next((s.view.id for s in states if s.chosen), None))

    def _fit_one_row(self, chosen: str | None) -> None:
        """Held to the tallest pane of a row when `one_row`; the chosen pane scrolled to."""
        if not self.one_row and self._cap is None:
            return  # the height another owner gave it (the fleet's 45vh) is left alone
        columns = self.columns()
        panes = list(self.panes.values())
        rows = (len(panes) + columns - 1) // columns
        # a pane is its lines and its two border rows
        cap = max(len(p.lines) + 2 for p in panes[:columns]) if self.one_row and rows > 1 else None
        if cap != self._cap:
            self._cap = cap
            if cap is None:  # back to the stylesheet's
                self.styles.clear_rule("max_height")
                self.styles.clear_rule("overflow_y")
            else:
                self.styles.max_height = cap
                self.styles.overflow_y = "auto"
        if cap is not None and chosen != self._chosen and chosen in self.panes:
            self.scroll_to_widget(self.panes[chosen], animate=False, immediate=True)
        self._chosen = chosen

    def _draw(self) -> None:
        columns = self.columns()
        top, bottom = self.scroll_y, self.scroll_y + self.size.height
        for index, (worker_id, state) in enumerate(self._latest.items()):
            pane = self.panes[worker_id]
            height = pane.outer_size.height
            row = index // columns
            # Drawn while any line of it is in sight, its head too: repainting a widget out of
            # sight makes Textual map the whole screen again, but a pane cut by the grid's
            # edge that kept its old head would say "idle" of a worker the table shows at work.
            y = row * height
            # (one row in sight: every pane drawn, a few at most, so a pane scrolled to by
            # choosing its worker never shows the lines it had before the screen was short)
            if (
                not self.one_row
                and self.size.height
                and height
                and not (top < y + height and y < bottom)
            ):
                continue  # drawn when it scrolls into view
            pane.show(state)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._draw()

    def columns(self) -> int:
        """As many columns as panes, each at least 36 cells wide: the panes share the
        screen's width (two workers on a wide screen take half each, not two thirds)."""
        return max(1, min(self.size.width // 36, len(self.panes)))

    def on_resize(self) -> None:
        self.styles.grid_size_columns = self.columns()
        self.call_after_refresh(self._draw)


def pane_states(
    snap: Snapshot,
    cfg: LeaseConfig,
    lang: str,
    faults: bool,
    chosen: str | None = None,
    *,
    compact: bool = False,
) -> list[PaneState]:
    """Every worker's pane state in one snapshot; `faults`: the panes show fault buttons;
    `chosen`: the worker the fault keys act on; `compact`: the short screen's panes."""
    held = {w.task_id for w in snap.workers if w.task_id is not None}
    steps = {t.task_id: t.total_steps for t in snap.tasks if t.task_id in held}
    client_clock = snap.mode == Mode.CLIENT_CLOCK.value
    return [
        PaneState(
            view=w,
            expires_at_ms=(
                None if w.store_remaining_ms is None else snap.now_ms + w.store_remaining_ms
            ),
            ttl_ms=cfg.ttl_ms,
            heartbeat_ms=cfg.heartbeat_ms,
            deadline_ms=cfg.deadline_ms,
            total_steps=steps.get(w.task_id or ""),
            client_clock=client_clock,
            lang=lang,
            faults=faults,
            chosen=w.id == chosen,
            compact=compact,
        )
        for w in snap.workers
    ]
