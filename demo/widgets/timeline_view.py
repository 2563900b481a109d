"""Belief against truth: per worker, the lease as the store holds it and as the worker
believes it holds it, its heartbeats and its calls, on one shared time axis.

The seed's first lesson is the gap between the two bars: "是别人能不能相信这把钥匙现在确实在你手里".
Everything drawn here comes from the snapshot's `TimelineView`; this module only lays it out.
The pure parts, the scale (`timeline_scale`) and the sentences and the legend
(`timeline_words`), are shared with the exported page's drawing, so the page and the screen
say the same.
"""

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widgets import Static

from core.engine.vocabulary import Operation
from core.sim.timeline import (
    Call,
    CallOutcome,
    FenceLine,
    LeaseEnd,
    Overlap,
    TickKind,
    TimelineView,
    WorkerRow,
)
from demo.i18n import tr
from demo.widgets.cjk_wrap import wrap
from demo.widgets.timeline_scale import Scale, axis_label
from demo.widgets.timeline_scale import clock as clock
from demo.widgets.timeline_scale import make_scale as make_scale
from demo.widgets.timeline_words import (
    ARROW,
    BEAT,
    BELIEF,
    DEADLINE,
    EXPIRY,
    FENCE,
    FUTURE,
    LOST,
    NOW,
    OK,
    OVERLAP_STYLE,
    REFUSED,
    SHAFT,
    STALE,
    STORE,
    UNDELIVERED,
    lease_of,
    legend_items,
    overlap_sentence,
    task_words,
    who,
    worker_sentence,
    write_style,
)
from demo.widgets.timeline_words import write_words as write_words

PALETTE = ("green", "cyan", "magenta", "blue", "yellow", "bright_green", "bright_cyan")


# -- the cells of one row ---------------------------------------------------------------------

Cell = tuple[str, str]  # glyph, style
_BLANK: Cell = (" ", "")


def _overlaps(scale: Scale, cell: int, start: int, end: int) -> bool:
    """Whether [start, end] (both drawn) meets the cell."""
    low, high = scale.window(cell)
    return start < high and end >= low


def store_cells(
    row: WorkerRow, scale: Scale, now: int, colour: str, overlaps: tuple[Overlap, ...] = ()
) -> list[Cell]:
    cells = [_BLANK] * scale.cells
    for lease in row.leases:
        until = now if lease.end is None else lease.end
        for c in range(scale.cells):
            if _overlaps(scale, c, lease.start, until):
                cells[c] = (STORE, colour)
            elif (
                lease.end is None
                and lease.expires_at is not None
                and _overlaps(scale, c, now + 1, lease.expires_at)
                and cells[c] == _BLANK
            ):
                cells[c] = (FUTURE, colour)
        open_ = lease.end is None
        deadline = lease.renew_deadline
        shown = open_ or lease.ended_by is LeaseEnd.EXPIRED
        if shown and deadline is not None and deadline <= scale.end_ms:
            cells[scale.cell(deadline)] = (DEADLINE, "yellow")
        if open_ and lease.expires_at is not None:
            if lease.expires_at > scale.end_ms:
                cells[-1] = ("▶", colour)
            else:
                cells[scale.cell(lease.expires_at)] = (EXPIRY, "bold yellow")
        elif lease.ended_by is LeaseEnd.EXPIRED and lease.end is not None:
            cells[scale.cell(lease.end)] = (EXPIRY, "bold yellow")
    # Two live leases at once: both bars run, in red, over the interval they share.
    for overlap in overlaps:
        for lease in row.leases:
            ours = (overlap.older_worker, overlap.older_lease_token) == (
                row.worker_id,
                lease.lease_token,
            ) or (overlap.newer_worker, overlap.newer_lease_token) == (
                row.worker_id,
                lease.lease_token,
            )
            if not ours or lease.task_id != overlap.task_id:
                continue
            end = now if overlap.end is None else overlap.end
            for c in range(scale.cells):
                if _overlaps(scale, c, overlap.start, end):
                    cells[c] = (STORE, OVERLAP_STYLE)
    return cells


def belief_cells(row: WorkerRow, scale: Scale, now: int, colour: str) -> list[Cell]:
    cells = [_BLANK] * scale.cells
    for belief in row.beliefs:
        until = now if belief.end is None else belief.end
        lease = lease_of(row, belief)
        for c in range(scale.cells):
            if not _overlaps(scale, c, belief.start, until):
                continue
            middle = sum(scale.window(c)) / 2
            held = lease is not None and (
                lease.end is None
                or middle < lease.end
                # claimed over while live: by the store's clock it still was
                or (
                    lease.ended_by is LeaseEnd.OVERRIDDEN
                    and (lease.expires_at is None or middle < lease.expires_at)
                )
            )
            cells[c] = (BELIEF, colour if held else "bold red")
    return cells


# Which mark wins a cell shared with another: harm first, then refusals, then the rest.
_RANK = {STALE: 6, REFUSED: 5, LOST: 4, UNDELIVERED: 3, OK: 2, BEAT: 1}


def mark_cells(row: WorkerRow, scale: Scale) -> list[Cell]:
    cells = [_BLANK] * scale.cells
    marks: list[tuple[int, Cell]] = []
    for tick in row.ticks:
        if tick.kind is TickKind.DELIVERED:
            marks.append((tick.at, (BEAT, "green")))
        else:
            marks.append((tick.at, (LOST, "bold yellow")))
    for call in row.calls:
        if call.outcome is CallOutcome.ACCEPTED:
            marks.append((call.at, (OK, "green")))
        elif call.outcome is CallOutcome.REFUSED:
            marks.append((call.at, (REFUSED, "bold yellow")))
        elif call.outcome is CallOutcome.STALE:
            marks.append((call.at, (STALE, "bold white on red")))
        else:
            marks.append((call.at, (UNDELIVERED, "dim")))
    for at, mark in marks:
        c = scale.cell(at)
        if _RANK.get(mark[0], 0) >= _RANK.get(cells[c][0], 0):
            cells[c] = mark
    return cells


# -- the store lane: Kleppmann's fencing figure (DDIA, ch. 8) ----------------------------------


def writes_of(view: TimelineView) -> list[tuple[str, Call]]:
    """Every write that reached the books, with its writer, in time order (one lost on the
    way never met the store's token)."""
    out = [
        (row.worker_id, call)
        for row in view.rows
        for call in row.calls
        if call.operation is Operation.WRITE and call.outcome is not CallOutcome.LOST
    ]
    out.sort(key=lambda wc: wc[1].at)
    return out


def fence_cells(line: FenceLine, scale: Scale, now: int) -> list[Cell]:
    """The newest fence token as a step line: the token where it rises, a bar after it."""
    cells = [_BLANK] * scale.cells
    if not line.steps:
        return cells
    for c in range(scale.cell(line.steps[0][0]), scale.cell(now) + 1):
        cells[c] = (FENCE, "bold")
    for start, token in line.steps:
        c = scale.cell(start)
        for n, ch in enumerate(str(token)):
            if c + n < scale.cells:
                cells[c + n] = (ch, "bold cyan")
    return cells


_WRITE_RANK = {CallOutcome.STALE: 3, CallOutcome.REFUSED: 2, CallOutcome.ACCEPTED: 1}


def arrow_cells(writes: list[tuple[str, Call]], scale: Scale) -> list[Cell]:
    cells = [_BLANK] * scale.cells
    ranks = [0] * scale.cells
    for _, call in writes:
        c = scale.cell(call.at)
        rank = _WRITE_RANK.get(call.outcome, 0)
        if rank >= ranks[c]:
            ranks[c] = rank
            cells[c] = (ARROW, write_style(call))
    return cells


def label_cells(
    writes: list[tuple[str, Call]], scale: Scale, lang: str
) -> tuple[list[Cell], list[tuple[str, Call]]]:
    """Each write's label under its arrow where it fits (the harms first); the rest back."""
    cells = [_BLANK] * scale.cells
    taken = [False] * scale.cells
    left: list[tuple[str, Call]] = []
    order = sorted(writes, key=lambda wc: -_WRITE_RANK.get(wc[1].outcome, 0))
    for writer, call in order:
        words = write_words(call, lang)
        size = cell_len(words)
        c = scale.cell(call.at)
        # under its arrow, reading on from it; near the right edge, ending at it
        for at in (c, c + 1 - size):
            # one cell free on each side, so two labels never read as one
            span = range(max(0, at - 1), min(scale.cells, at + size + 1))
            if at >= 0 and at + size <= scale.cells and not any(taken[i] for i in span):
                break
        else:
            left.append((writer, call))
            continue
        for ch in words:
            w = cell_len(ch)
            cells[at] = (ch, write_style(call).replace(" on red", "").replace("white", "red"))
            for extra in range(1, w):
                cells[at + extra] = ("", "")
            at += w
        for i in span:
            taken[i] = True
    left.sort(key=lambda wc: wc[1].at)
    return cells, left


def fit(word: str, w: int) -> str:
    """`word` in exactly `w` cells: padded, or cut with "…" so it never runs into the next
    column (a name longer than its column would push its row off the time axis)."""
    size = cell_len(word)
    if size <= w:
        return word + " " * (w - size)
    out, used = "", 0
    for ch in word:
        if used + cell_len(ch) > w - 1:
            break
        out += ch
        used += cell_len(ch)
    return out + "…" + " " * (w - 1 - used)


def store_lanes(view: TimelineView) -> list[tuple[FenceLine, list[tuple[str, Call]]]]:
    """One store lane for each task written to that has fence tokens, with that task's writes
    only (the fence is per task: one task's token line never judges another's write), in the
    order of each lane's first write."""
    writes = writes_of(view)
    lanes = [
        (line, mine)
        for line in view.fences
        if line.steps and (mine := [(w, c) for w, c in writes if c.task_id == line.task_id])
    ]
    lanes.sort(key=lambda lane: lane[1][0][1].at)
    return lanes


Shaft = tuple[int, int, str]  # the line it leaves below, the line it ends above, its style


def shaft_cells(
    rows: list[WorkerRow], lanes: list[tuple[FenceLine, list[tuple[str, Call]]]], scale: Scale
) -> dict[int, list[Shaft]]:
    """Each write's shaft: from below its writer's calls line down to its own lane's arrow."""
    index = {row.worker_id: n for n, row in enumerate(rows)}
    shafts: dict[int, list[Shaft]] = {}
    for k, (_fence, writes) in enumerate(lanes):
        arrow_line = 3 * len(rows) + 3 * k + 1
        for writer, call in writes:
            start = 3 * index[writer] + 2 if writer in index else arrow_line - 1
            style = write_style(call).replace(" on red", "").replace("white", "red")
            shafts.setdefault(scale.cell(call.at), []).append((start, arrow_line, style))
    return shafts


def shaft_at(shafts: dict[int, list[Shaft]], cell: int, line: int) -> str | None:
    """The style of a shaft that passes `line` at `cell`, or None."""
    return next((style for start, end, style in shafts.get(cell, ()) if start < line < end), None)


# -- the whole panel --------------------------------------------------------------------------


def render_timeline(
    view: TimelineView | None,
    width: int,
    lang: str,
    colours: dict[str, str],
    caption: bool = False,
) -> Text:
    """The panel: an axis, three lines a worker (store, belief, marks), the store lane (the
    newest fence token, each write as an arrow into it), the now cursor, one sentence a
    worker and the legend; `width` cells wide. `caption`: the seed's sentence above it."""
    text = Text(no_wrap=False, overflow="fold")
    if caption:
        for line in wrap(tr("tl_caption", lang), width):
            text.append(line + "\n", style="italic")
    if view is None or not any(row.leases for row in view.rows):
        text.append(tr("tl_empty", lang), style="dim")
        return text
    rows = [row for row in view.rows if row.leases or row.calls]
    lanes = store_lanes(view)
    store_names = [task_words(fence.task_id, lang) for fence, _ in lanes]
    names = [who(r.worker_id, lang) for r in rows] + store_names
    name_w = min(12, max(cell_len(n) for n in names))
    row_lanes = [tr("tl_store", lang), tr("tl_believes", lang), tr("tl_calls", lang)]
    store_lane_words = [tr("tl_fence_lane", lang), tr("tl_writes_lane", lang)]
    lane_w = max(cell_len(lane) for lane in row_lanes + (store_lane_words if lanes else []))
    label_w = name_w + 1 + lane_w + 1
    scale = make_scale(view, width - label_w - 1)
    now = view.now_ms
    now_cell = scale.cell(now)

    axis = [" "] * scale.cells
    for c, at in scale.labels():
        label = axis_label(at)
        if c + len(label) <= scale.cells and all(
            ch == " " for ch in axis[max(0, c - 1) : c + len(label) + 1]
        ):
            axis[c : c + len(label)] = list(label)
    text.append(" " * label_w, style="")
    text.append("".join(axis) + "\n", style="dim")
    # Each write's way down from its writer's calls line to its own task's store lane, and
    # no further: lines are counted from the first worker's store line, three a worker, then
    # three a store lane (its token line, its arrows, their labels).
    shafts = shaft_cells(rows, lanes, scale)

    def emit(cells: list[Cell], line: int | None, cursor: bool = True) -> None:
        for c, (glyph, style) in enumerate(cells):
            shaft = None if line is None else shaft_at(shafts, c, line)
            if glyph == " " and shaft is not None:
                text.append(SHAFT, style=shaft)
                continue
            # a label's own spaces are words, not room for the cursor
            if c == now_cell and glyph == " " and cursor:
                text.append(NOW, style="bold")
            else:
                text.append(glyph, style=style)
        text.append("\n")

    for r, row in enumerate(rows):
        colour = colours.setdefault(row.worker_id, PALETTE[len(colours) % len(PALETTE)])
        lines = (
            store_cells(row, scale, now, colour, view.overlaps),
            belief_cells(row, scale, now, colour),
            mark_cells(row, scale),
        )
        for n, (lane, cells) in enumerate(zip(row_lanes, lines, strict=True)):
            name = fit(who(row.worker_id, lang), name_w) if n == 0 else " " * name_w
            text.append(name, style=f"bold {colour}")
            text.append(" " + fit(lane, lane_w) + " ", style="dim")
            emit(cells, 3 * r + n)
    left: list[tuple[str, Call]] = []
    for k, (fence, writes) in enumerate(lanes):
        labels, untold = label_cells(writes, scale, lang)
        left += untold
        store_lines = (fence_cells(fence, scale, now), arrow_cells(writes, scale), labels)
        for n, cells in enumerate(store_lines):
            name = fit(store_names[k], name_w) if n == 0 else " " * name_w
            lane = store_lane_words[n] if n < len(store_lane_words) else ""
            text.append(name, style="bold reverse" if n == 0 else "bold")
            text.append(" " + fit(lane, lane_w) + " ", style="dim")
            emit(cells, 3 * len(rows) + 3 * k + n, cursor=n < 2)
    left.sort(key=lambda wc: wc[1].at)
    cursor = tr("tl_now", lang, at=clock(now))
    start = label_w + now_cell
    if now_cell + 2 + cell_len(cursor) <= scale.cells:
        text.append(" " * start + "↑ " + cursor + "\n", style="bold")
    else:
        text.append(" " * max(0, start - cell_len(cursor) - 1) + cursor + " ↑\n", style="bold")
    # the harms whose labels found no room under their arrows, said in full
    wide = width >= 120
    told = [
        (writer, call)
        for writer, call in left
        if wide or call.outcome in (CallOutcome.STALE, CallOutcome.REFUSED)
    ]
    if told:
        said_writes = tr("tl_join", lang).join(
            f"{clock(call.at)} {who(writer, lang)} {write_words(call, lang)}"
            for writer, call in told
        )
        for line in wrap(said_writes, width):
            text.append(line + "\n", style="dim")
    for overlap in view.overlaps:
        for line in wrap(overlap_sentence(overlap, now, lang), width):
            text.append(line + "\n", style=OVERLAP_STYLE)
    for row in rows:
        said = worker_sentence(row, now, lang)
        if said is not None:
            # Chinese rules: a number stays with its word, no line starts with "，"
            for line in wrap(said, width):
                text.append(line + "\n")
    used = 0
    for glyph, style, words in legend_items(lang):
        if glyph == ARROW and not lanes:
            continue
        if glyph == STORE and style == OVERLAP_STYLE and not view.overlaps:
            continue
        # an item is never split over two lines: a glyph stays beside its words
        size = 1 + 1 + cell_len(words)
        if used and used + 2 + size > width:
            text.append("\n")
            used = 0
        elif used:
            text.append("  ")
            used += 2
        text.append(glyph, style=style)
        text.append(" " + words, style="dim")
        used += size
    return text


class OwnershipTimeline(Static):
    """Belief against truth; drawn only when it is on screen and something changed. The
    first time it opens in a run it carries the seed's sentence as its caption."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.colours: dict[str, str] = {}
        self._view: TimelineView | None = None
        self._key: tuple[int, str] | None = None
        self._lang = "en"
        # None: not opened yet in this run; True: open for the first time; False: after
        self.caption: bool | None = None

    def _width(self) -> int:
        # two cells spare for the scroll bar, which comes only once the panel overflows
        return max(30, (self.size.width or 80) - 2)

    def show(self, view: TimelineView | None, lang: str) -> None:
        # The simulation hands back the same view while nothing changed.
        width = self._width()
        self._lang = lang
        if self.caption is None:
            self.caption = True
            self._key = None
        if view is self._view and (width, lang) == self._key and view is not None:
            return
        self._view, self._key = view, (width, lang)
        self.update(render_timeline(view, width, lang, self.colours, caption=self.caption))

    def reset(self) -> None:
        self._view = self._key = None
        self.colours.clear()

    def on_hide(self) -> None:
        # the caption belongs to the first opening: closed once, the panel opens without it
        if self.caption:
            self.caption = False
            self._key = None

    def on_resize(self, event: events.Resize) -> None:
        # drawn while its tab was hidden (no width yet) or before a resize: fit it again
        if self._key is not None and self._key[0] != self._width():
            self._key = None
            self.show(self._view, self._lang)
