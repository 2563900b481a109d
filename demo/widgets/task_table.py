"""The task table: one row per task, keyed by task_id, cells updated in place."""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from core.engine.durations import format_clock
from core.engine.people import called
from core.engine.vocabulary import TaskStatus
from core.scenarios.glossary import kind_word, result_line, task_name
from core.sim.snapshot import TaskView
from demo.i18n import LANGS, WORDS, status_word, tr
from demo.widgets.keyed_table import KeyedTable, Row
from demo.widgets.worker_pane import short, until_clock

COLUMNS = (
    "task",
    "kind",
    "status",
    "owner",
    "attempt",
    "lease_token",
    "fence_token",
    "expires_in",
    "expires_at",
    "last_heartbeat",
    "checkpoint_step",
    "result",
)
STATUS_STYLES: dict[str, str] = {
    TaskStatus.QUEUED: "cyan",
    TaskStatus.RUNNING: "bold green",
    TaskStatus.WAITING: "bold yellow",
    TaskStatus.DONE: "dim",
    TaskStatus.DEAD: "bold red",
}


def header(column: str, lang: str, narrow: bool = False) -> str:
    """A column's label; the long ones on two lines, shorter ones in the narrow table."""
    if narrow and f"th_narrow_{column}" in WORDS:
        return tr(f"th_narrow_{column}", lang)
    return tr(f"th_{column}", lang) if f"th_{column}" in WORDS else tr(column, lang)


def header_width(column: str, lang: str, narrow: bool = False) -> int:
    """The cells a column's label needs: its longest line."""
    return max(cell_len(line) for line in header(column, lang, narrow).split("\n"))


def _span(ms: int, lang: str, narrow: bool) -> str:
    """A time in the table: as the pane says it, but whole minutes in the narrow Chinese
    table ("59分", where the pane says 59分52秒), which keeps every column in 80 columns."""
    if narrow and lang == "zh" and abs(ms) >= 120_000:
        return f"{'-' if ms < 0 else ''}{abs(ms) // 60_000}分"
    return short(ms, lang)


def _gone(ms: int, lang: str) -> str:
    """How long ago a lease ran out, in the narrow table's "time left" column: "4s ago",
    "12m ago" (a minus sign under "time left" would be no sentence in either language)."""
    if ms >= 120_000:  # whole minutes, which keep the cell in its 7 columns
        return tr("ago", lang, age=f"{ms // 60_000}{'分' if lang == 'zh' else 'm'}")
    return tr("ago", lang, age=short(ms, lang))


def task_row(view: TaskView, now_ms: int, lang: str, narrow: bool = False) -> Row:
    """One task's cells. `narrow` (the table in 80 columns): an expired lease says how long
    ago in red ("4s ago"), beside the status "lendable", where "expired" and "lendable again"
    would need the room of a whole column."""
    row = view.row
    # times as the panes say them, in the run's language (50秒, 59分59秒): a Chinese
    # table shows no unit letter beside a pane that says 55秒
    remaining = view.remaining_ms
    until: str | Text = ""
    if remaining is None:
        expires: str | Text = ""
    elif remaining <= 0:
        expires = Text(_gone(-remaining, lang) if narrow else tr("expired", lang), style="bold red")
        until = Text(until_clock(now_ms + remaining), style="red")
    else:
        expires = _span(remaining, lang, narrow)
        until = until_clock(now_ms + remaining)
    # Only a running task's heartbeat age means anything: a done or parked one would count up
    # for ever ("60m01s").
    running = row.status == TaskStatus.RUNNING
    beat = (
        ""
        if row.last_heartbeat_at is None or not running
        else _span(now_ms - row.last_heartbeat_at, lang, narrow)
    )
    result = result_line(row.result, row.error_code, lang)
    status = Text(status_word(row.status, lang), style=STATUS_STYLES.get(row.status, ""))
    if running and remaining is not None and remaining <= 0:
        # The keeper's word at the instant the sand runs out, until someone claims it.
        status = Text(tr("lendable_short" if narrow else "lendable", lang), style="bold cyan")
    return (
        Text(task_name(row.task_id, lang), style="bold"),
        kind_word(row.kind, lang),
        status,
        called(row.owner_id, lang) if row.owner_id else "",
        str(row.attempt),
        # Token 0 was never issued: a queued task, or mistake one's task with no version.
        str(row.lease_token) if row.lease_token else "",
        str(row.fence_token) if row.fence_token else "",
        expires,
        until,
        beat,
        "" if view.checkpoint_step is None else str(view.checkpoint_step),
        result or "",
    )


# Each column's width (cells, without the 1-cell padding either side); the result column
# takes what is left. Narrower than all of them, the columns a presenter needs least go
# first (dropped in this order), so nothing scrolls sideways or is cut mid-word.
WIDTHS = {
    "task": 9,  # "river-tax", "task-9999"
    "kind": 8,
    "status": 7,  # at least; widened to the longest status word of the language shown
    "owner": 8,
    "attempt": 7,
    "lease_token": 6,  # at most; as narrow as its label in the language shown
    "fence_token": 5,
    "expires_in": 7,
    "expires_at": 7,
    "last_heartbeat": 9,
    "checkpoint_step": 10,
    "result": 12,
}
DROP_ORDER = ("result", "checkpoint_step", "attempt", "kind", "expires_at", "last_heartbeat")
RESULT_MAX = 60
TASK_MAX = 16
RESULT_ROOM = 12  # the narrow table's result, before the gaps between columns widen


def status_words(lang: str, narrow: bool = False) -> tuple[str, ...]:
    """Every word the status column can show in `lang`: the statuses and the keeper's
    "lendable again" of an expired lease nobody has claimed yet ("lendable" when narrow)."""
    lendable = tr("lendable_short" if narrow else "lendable", lang)
    return (*(status_word(s, lang) for s in TaskStatus), lendable)


STATUS_WIDTH = {
    lang: max(WIDTHS["status"], *(cell_len(w) for w in status_words(lang))) for lang in LANGS
}


def fit_columns(width: int, lang: str = "en", task_cells: int = 0) -> dict[str, int]:
    """The columns (and widths) that fit in `width` cells, in table order; `task_cells`:
    the widest task name shown, which its column is widened to (up to TASK_MAX), so that
    "Agent 任务" is never cut to "Agent 任"."""
    shown = dict(WIDTHS)
    shown["task"] = max(WIDTHS["task"], min(TASK_MAX, task_cells))
    shown["status"] = STATUS_WIDTH.get(lang, STATUS_WIDTH["en"])
    if lang == "zh":
        shown["expires_in"] += 1  # "59分59秒" is a cell wider than "59m59s" and its padding
    shown["lease_token"] = min(
        WIDTHS["lease_token"], max(3, *(cell_len(p) for p in header("lease_token", lang).split()))
    )

    def needed() -> int:
        return sum(w + 2 for w in shown.values())

    for column in DROP_ORDER:
        if needed() <= width:
            break
        del shown[column]
    if "result" in shown:
        shown["result"] = min(
            RESULT_MAX, max(WIDTHS["result"], width - needed() + WIDTHS["result"])
        )
    return shown


# The narrow table: every column as wide as its label or its widest cell shown, two cells
# apart where that fits (as the roomy table's padding) and one where not (DataTable's padding
# 0, the gap inside each column's width), so all of them fit in 80 columns for every bundled
# scenario's ids. Only if they still do not fit does a column go, in DROP_ORDER.
GAPS = (2, 1)
NARROW_STATUS_WIDTH = {
    lang: max(header_width("status", lang, True), *(cell_len(w) for w in status_words(lang, True)))
    for lang in LANGS
}


@dataclass(frozen=True)
class Layout:
    """The task table at one width: the columns shown with their widths, the padding either
    side of each, and whether it is the narrow table (short headers and words)."""

    widths: dict[str, int]
    padding: int
    narrow: bool


def narrow_columns(
    width: int, lang: str, measured: Mapping[str, int], fenced: bool = True
) -> dict[str, int]:
    """The narrow table's columns and widths (the gap included) in `width` cells;
    `measured`: the widest cell each column shows now."""
    for gap in GAPS:
        shown = {
            # the result takes what is left, its text cut to fit: only its label must fit
            c: max(header_width(c, lang, True), measured.get(c, 0) if c != "result" else 0) + gap
            for c in COLUMNS
            if fenced or c != "fence_token"
        }
        # Fixed, so the columns do not move when a task's status changes.
        shown["status"] = NARROW_STATUS_WIDTH.get(lang, NARROW_STATUS_WIDTH["en"]) + gap
        shown["result"] -= gap  # the last column: nothing after it to keep apart from
        # the wider gaps only where they leave the result room to say something ("页数 6")
        wanted = min(measured.get("result", 0), RESULT_ROOM) - shown["result"]
        if sum(shown.values()) + max(0, wanted) <= width:
            break
    for column in DROP_ORDER:
        if sum(shown.values()) <= width:
            break
        del shown[column]
    if "result" in shown:
        rest = width - sum(w for c, w in shown.items() if c != "result")
        shown["result"] = min(RESULT_MAX, max(shown["result"], rest))
    return shown


def layout(
    width: int, lang: str, measured: Mapping[str, int] | None = None, fenced: bool = True
) -> Layout:
    """The roomy table (`fit_columns`) where it keeps every column, else the narrow one."""
    roomy = fit_columns(width, lang, (measured or {}).get("task", 0))
    if len(roomy) == len(COLUMNS):
        if not fenced:
            roomy.pop("fence_token")
        return Layout(roomy, 1, narrow=False)
    return Layout(narrow_columns(width, lang, measured or {}, fenced), 0, narrow=True)


def cell_widths(row: Row) -> tuple[int, ...]:
    return tuple(c.cell_len if isinstance(c, Text) else cell_len(c) for c in row)


def natural_key(task_id: str) -> tuple[tuple[int, int | str], ...]:
    """The order a person reads ids in: task-7 before task-10 (not byte order)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(task_id) if part
    )


_DIGITS = re.compile(r"(\d+)")


class TaskTable(KeyedTable):
    """Live task table in natural order of the ids; `show` touches only the cells that
    changed, and brings a task that starts running into view."""

    AUTO_WIDTH = False
    ORDERED = True  # natural order, the same wherever a row came from (a rebuild, a resize)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.header_height = 2
        # task id -> (the view, language, narrowness and clock its row was made from, the
        # row, its cells' widths): most of 200 tasks wait in the queue unchanged, and building
        # their cells again each refresh is most of the cost. The snapshot hands back the
        # same view object for an unchanged task, so most checks are one `is`.
        self._made: dict[
            str, tuple[TaskView, tuple[str, bool], int | None, Row, tuple[int, ...]]
        ] = {}
        self._running_ids: set[str] = set()  # the running tasks at the last refresh
        self._order: tuple[tuple[str, ...], tuple[int, ...]] = ((), ())  # ids -> natural order

    def _row(
        self, view: TaskView, now_ms: int, lang: str, narrow: bool
    ) -> tuple[Row, tuple[int, ...]]:
        row = view.row
        # Only a running task's cells follow the clock ("expires in", "last heartbeat").
        tick = now_ms if row.status == TaskStatus.RUNNING else None
        made = self._made.get(row.task_id)
        how = (lang, narrow)
        if made is not None and made[1] == how and made[2] == tick:
            if made[0] is view:
                return made[3], made[4]
            if made[0] == view:
                self._made[row.task_id] = (view, how, tick, made[3], made[4])
                return made[3], made[4]
        cells = task_row(view, now_ms, lang, narrow)
        widths = cell_widths(cells)
        self._made[row.task_id] = (view, how, tick, cells, widths)
        return cells, widths

    def show(
        self, tasks: tuple[TaskView, ...], now_ms: int, lang: str, *, fenced: bool = True
    ) -> None:
        """`fenced=False`: a run that issues no fence token has no fence column."""
        width = self.scrollable_content_region.width or self.size.width or 160
        narrow = layout(width, lang).narrow
        if len(self._made) > 2 * len(tasks) + 64:
            self._made.clear()
        ids = tuple(t.task_id for t in tasks)
        if ids != self._order[0]:  # the same ids as last time: the same order (most refreshes)
            perm = sorted(range(len(ids)), key=lambda i: natural_key(ids[i]))
            self._order = (ids, tuple(perm))
        tasks = tuple(tasks[i] for i in self._order[1])
        made = [self._row(t, now_ms, lang, narrow) for t in tasks]
        measured: dict[str, int] = {}
        if made:  # the roomy table reads the task names' width, the narrow one every column
            columns_of = zip(*(w for _, w in made), strict=True)  # each column's cell widths
            measured = dict(zip(COLUMNS, map(max, columns_of), strict=True))
        fit = layout(width, lang, measured, fenced)
        columns = [c for c in COLUMNS if c in fit.widths]
        if self.cell_padding != fit.padding:
            self.cell_padding = fit.padding
        self.set_columns([(c, header(c, lang, fit.narrow)) for c in columns], fit.widths)
        self._sync_rows(tasks, columns, [cells for cells, _ in made])
        self._keep_running_in_view(tasks)

    def _sync_rows(self, tasks: tuple[TaskView, ...], columns: list[str], rows: list[Row]) -> None:
        index = [COLUMNS.index(c) for c in columns]
        if len(index) == len(COLUMNS):
            self.sync((t.task_id, cells) for t, cells in zip(tasks, rows, strict=True))
            return
        self.sync(
            (t.task_id, tuple(cells[i] for i in index))
            for t, cells in zip(tasks, rows, strict=True)
        )

    def _keep_running_in_view(self, tasks: tuple[TaskView, ...]) -> None:
        """A task that starts running while out of sight is scrolled into view (once: the
        presenter may scroll away again); one already in sight is left where it is."""
        running = {t.task_id for t in tasks if t.row.status == TaskStatus.RUNNING}
        started = running - self._running_ids
        self._running_ids = running
        if not started or self.max_scroll_y == 0:
            return
        row_of = {t.task_id: n for n, t in enumerate(tasks)}
        first = self.scroll_y
        last = first + self.scrollable_content_region.height - self.header_height
        if any(first <= row_of[k] < last for k in running):
            return
        target = min(row_of[k] for k in started)
        self.scroll_to(y=max(0, target - 1), animate=False)

    def waiting_selected(self, tasks: tuple[TaskView, ...]) -> str | None:
        """The selected task if it waits for approval, else the first waiting one."""
        waiting = [t.task_id for t in tasks if t.row.status == TaskStatus.WAITING]
        chosen = self.selected_key()
        if chosen in waiting:
            return chosen
        return waiting[0] if waiting else None


__all__ = [
    "Layout",
    "TaskTable",
    "cell_widths",
    "fit_columns",
    "format_clock",
    "layout",
    "narrow_columns",
    "status_words",
    "task_row",
]
