"""The task table: one row per task, keyed by task_id, cells updated in place."""

from rich.text import Text

from core.engine.durations import format_clock
from core.sim.snapshot import TaskView
from demo.i18n import WORDS, status_word, tr
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
STATUS_STYLES = {
    "queued": "cyan",
    "running": "bold green",
    "waiting": "bold yellow",
    "done": "dim",
    "dead": "bold red",
}


def header(column: str, lang: str) -> str:
    """A column's label; the long ones on two lines."""
    return tr(f"th_{column}", lang) if f"th_{column}" in WORDS else tr(column, lang)


def task_row(view: TaskView, now_ms: int, lang: str) -> Row:
    row = view.row
    remaining = view.remaining_ms
    until: str | Text = ""
    if remaining is None:
        expires: str | Text = ""
    elif remaining <= 0:
        expires = Text(tr("expired", lang), style="bold red")
        until = Text(until_clock(now_ms + remaining), style="red")
    else:
        expires = short(remaining)
        until = until_clock(now_ms + remaining)
    beat = "" if row.last_heartbeat_at is None else short(now_ms - row.last_heartbeat_at)
    result = row.result if row.result not in (None, "null") else (row.error_code or "")
    return (
        Text(row.task_id, style="bold"),
        row.kind,
        Text(status_word(row.status, lang), style=STATUS_STYLES.get(row.status, "")),
        row.owner_id or "",
        str(row.attempt),
        str(row.lease_token),
        str(row.fence_token),
        expires,
        until,
        beat,
        "" if view.checkpoint_step is None else str(view.checkpoint_step),
        (result or "")[:40],
    )


class TaskTable(KeyedTable):
    """Live task table; `show` touches only the cells that changed."""

    AUTO_WIDTH = False
    # Compact: the twelve columns fit in 120 columns, with room for a short result (a
    # ledger's {"pages": 6, "total": 612}); narrower, it scrolls.
    WIDTHS = {  # noqa: RUF012
        "task": 11,
        "kind": 7,
        "status": 7,
        "owner": 7,
        "attempt": 7,
        "lease_token": 6,
        "fence_token": 5,
        "expires_in": 7,
        "expires_at": 7,
        "last_heartbeat": 9,
        "checkpoint_step": 10,
        "result": 20,
    }

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.header_height = 2

    def show(self, tasks: tuple[TaskView, ...], now_ms: int, lang: str) -> None:
        self.set_columns([(c, header(c, lang)) for c in COLUMNS])
        self.sync((t.task_id, task_row(t, now_ms, lang)) for t in tasks)

    def waiting_selected(self, tasks: tuple[TaskView, ...]) -> str | None:
        """The selected task if it waits for approval, else the first waiting one."""
        waiting = [t.task_id for t in tasks if t.row.status == "waiting"]
        chosen = self.selected_key()
        if chosen in waiting:
            return chosen
        return waiting[0] if waiting else None


__all__ = ["TaskTable", "format_clock", "task_row"]
