"""The tabbed panels: Ledger, Checkpoints, Rejected, Effects and the Event log."""

from collections import Counter

from rich.text import Text
from textual.widgets import RichLog

from core.engine.durations import format_clock
from core.engine.records import EventRow
from core.scenarios.player import event_style
from core.sim.snapshot import Snapshot
from demo.i18n import event_word, operation_word, reason_word, tr
from demo.widgets.keyed_table import KeyedTable, Row

HIGHLIGHT_REFRESHES = 30  # a new rejection stays highlighted this many refreshes


class LedgerTable(KeyedTable):
    def show(self, snap: Snapshot, lang: str) -> None:
        self.set_columns(
            [
                ("key", tr("key", lang)),
                ("value", tr("value", lang)),
                ("fence", tr("fence_token", lang)),
                ("writer", tr("writer", lang)),
                ("at", tr("time", lang)),
            ]
        )
        self.sync(
            (p.key, (p.key, p.value, str(p.fence_token), p.writer, format_clock(p.updated_at)))
            for p in snap.ledger
        )


class CheckpointTable(KeyedTable):
    """Per task, newest first (the store's own order)."""

    def show(self, snap: Snapshot, lang: str) -> None:
        self.set_columns(
            [
                ("task", tr("task", lang)),
                ("seq", "#"),
                ("step", tr("step", lang)),
                ("fence", tr("fence_token", lang)),
                ("by", tr("writer", lang)),
                ("at", tr("time", lang)),
            ]
        )
        ordered = sorted(snap.checkpoints, key=lambda c: (c.task_id, -c.seq))
        rows = [
            (
                f"{c.task_id}#{c.seq}",
                (
                    c.task_id,
                    str(c.seq),
                    str(c.step),
                    str(c.fence_token),
                    str(c.state.get("by", "")),
                    format_clock(c.created_at),
                ),
            )
            for c in ordered
        ]
        new_keys = [k for k, _ in rows if k not in self._rows]
        self.sync(rows)
        if new_keys and self.row_keys_shown() != [k for k, _ in rows]:
            self.sort("task", "seq", key=lambda r: (str(r[0]), -int(str(r[1]))))
            self._rows = dict(rows)


def tokens(lease: int | None, fence: int | None) -> str:
    """ "L1 F2", leaving out a token that is not known (a call that never reached the store)."""
    return " ".join(f"{p}{v}" for p, v in (("L", lease), ("F", fence)) if v is not None)


class RejectedTable(KeyedTable):
    """Refused operations; each new one is highlighted for a while."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._fresh: dict[int, int] = {}
        self._known: set[int] = set()
        self.new_count = 0

    def reset(self) -> None:
        self._fresh.clear()
        self._known.clear()

    def show(self, snap: Snapshot, lang: str, *, time_moved: bool) -> None:
        self.set_columns(
            [
                ("at", tr("time", lang)),
                ("worker", tr("worker", lang)),
                ("task", tr("task", lang)),
                ("op", tr("operation", lang)),
                ("its", tr("its_token", lang)),
                ("current", tr("current_token", lang)),
                ("reason", tr("reason", lang)),
            ]
        )
        self.new_count = 0
        for r in snap.rejections:
            if r.seq not in self._known:
                self._known.add(r.seq)
                self._fresh[r.seq] = HIGHLIGHT_REFRESHES
                self.new_count += 1
        if time_moved:
            for seq in list(self._fresh):
                self._fresh[seq] -= 1
                if self._fresh[seq] <= 0:
                    del self._fresh[seq]
        rows: list[tuple[str, Row]] = []
        for r in snap.rejections:
            style = "bold black on yellow" if r.seq in self._fresh else ""
            its = tokens(r.lease_token, r.fence_token)
            current = tokens(r.current_lease_token, r.current_fence_token)
            if r.key:
                its += f" {r.key}"
            cells = (
                format_clock(r.at),
                r.worker_id or "",
                r.task_id or "",
                operation_word(r.operation, lang),
                its,
                current,
                reason_word(r.reason, lang),
            )
            rows.append((str(r.seq), tuple(Text(c, style=style) for c in cells)))
        self.sync(rows)
        if self.new_count:
            self.move_cursor(row=self.row_count - 1)


class EffectsTable(KeyedTable):
    """Side effects: how often applied, how often a repeat was deduplicated."""

    def show(self, snap: Snapshot, dedup: Counter[str], lang: str) -> None:
        self.set_columns(
            [
                ("key", tr("key", lang)),
                ("task", tr("task", lang)),
                ("effect", tr("effect", lang)),
                ("fence", tr("fence_token", lang)),
                ("applied", tr("effect_applied", lang)),
                ("dedup", tr("effect_deduplicated", lang)),
            ]
        )
        rows = []
        for e in snap.effects:
            applied = Text(
                str(e.applied_count), style="bold red" if e.applied_count > 1 else "green"
            )
            rows.append(
                (
                    e.idempotency_key,
                    (
                        e.idempotency_key,
                        e.task_id,
                        e.effect,
                        str(e.fence_token),
                        applied,
                        str(dedup.get(e.idempotency_key, 0)),
                    ),
                )
            )
        self.sync(rows)


def event_line(ev: EventRow, lang: str) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{format_clock(ev.at)} ", style="dim")
    text.append(event_word(ev.event, lang), style=event_style(ev.event))
    rest = []
    if ev.task_id:
        rest.append(ev.task_id)
    if ev.worker_id:
        rest.append(ev.worker_id)
    if ev.lease_token is not None:
        rest.append(f"L{ev.lease_token}")
    if ev.fence_token is not None:
        rest.append(f"F{ev.fence_token}")
    for key in ("key", "step"):
        if ev.detail.get(key) is not None:
            rest.append(f"{key}={ev.detail[key]}")
    if ev.reason:
        rest.append(reason_word(ev.reason, lang))
    if rest:
        text.append("  " + " ".join(rest))
    return text


class EventLog(RichLog):
    """The loan register: new events are appended, never redrawn."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, max_lines=2000, wrap=False, markup=False, auto_scroll=True)

    def append(self, events: list[EventRow], lang: str) -> None:
        for ev in events:
            self.write(event_line(ev, lang))
