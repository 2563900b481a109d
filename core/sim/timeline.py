"""Who held each task over time, built from the event history (pure and incremental).

The Ownership timeline panel renders this: per task, the spans of each holder (claim to
release, expiry or re-claim) and marks where a lease expired and where a write (or any
holder call) was rejected.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.engine.records import EventRow
from core.engine.vocabulary import REFUSED_OPERATION, REJECTIONS, EventKind

_RELEASES = frozenset(
    {EventKind.COMPLETED, EventKind.PARKED, EventKind.FAILED, EventKind.DEAD_LETTERED}
)


@dataclass(slots=True)
class Span:
    """One holder's time with a task: [start, end), end None while it still holds it."""

    worker_id: str
    lease_token: int
    fence_token: int
    start: int
    end: int | None = None
    ended_by: str | None = None  # completed | parked | failed | expired | reclaimed ...


@dataclass(frozen=True, slots=True)
class Mark:
    """A point on a task's line: `expired` or `rejected` (with the worker and operation)."""

    at: int
    kind: str
    worker_id: str | None
    detail: str = ""


@dataclass(slots=True)
class TaskLine:
    task_id: str
    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    @property
    def open_span(self) -> Span | None:
        if self.spans and self.spans[-1].end is None:
            return self.spans[-1]
        return None

    def holder_at(self, at: int) -> Span | None:
        for span in reversed(self.spans):
            if span.start <= at and (span.end is None or at < span.end):
                return span
        return None


@dataclass(slots=True)
class Timeline:
    """Feed it events in order; read `lines` (in order of first appearance)."""

    lines: dict[str, TaskLine] = field(default_factory=dict)
    last_seq: int = 0

    def _line(self, task_id: str) -> TaskLine:
        line = self.lines.get(task_id)
        if line is None:
            line = self.lines[task_id] = TaskLine(task_id)
        return line

    def _close(self, line: TaskLine, at: int, why: str) -> None:
        span = line.open_span
        if span is not None:
            span.end = max(at, span.start)
            span.ended_by = why

    def feed(self, events: Iterable[EventRow]) -> bool:
        """Take the events after `last_seq`; return whether any changed a line."""
        changed = False
        for ev in events:
            if ev.seq <= self.last_seq:
                continue
            self.last_seq = ev.seq
            if ev.task_id is None:
                continue
            name = ev.event
            if name == EventKind.ENQUEUED:
                self._line(ev.task_id)
                changed = True
            elif name == EventKind.CLAIMED:
                line = self._line(ev.task_id)
                self._close(line, ev.at, "reclaimed")
                line.spans.append(
                    Span(ev.worker_id or "?", ev.lease_token or 0, ev.fence_token or 0, ev.at)
                )
                changed = True
            elif name in _RELEASES:
                self._close(self._line(ev.task_id), ev.at, name)
                changed = True
            elif name == EventKind.LEASE_EXPIRED:
                line = self._line(ev.task_id)
                at = int(ev.detail.get("expired_at", ev.at))
                line.marks.append(Mark(at, "expired", ev.worker_id))
                self._close(line, at, "expired")
                changed = True
            elif name in REJECTIONS and name != EventKind.CLAIM_REJECTED:
                operation = str(ev.detail.get("operation", REFUSED_OPERATION[EventKind(name)]))
                self._line(ev.task_id).marks.append(
                    Mark(ev.at, "rejected", ev.worker_id, operation)
                )
                changed = True
        return changed
