"""The timeline's time axis: instants and lengths of time as the panel writes them, and the
scale that maps the run's time to cells (shared with the exported page's drawing)."""

from collections.abc import Iterator
from dataclasses import dataclass

from core.sim.timeline import TimelineView

# Nice spacings of the axis labels, in seconds.
_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400)
# The future beyond now that the axis shows of a lease still held: enough to see its expiry
# without squeezing the past (long_lease's hour would).
_MIN_FUTURE_MS = 30_000


def clock(ms: int) -> str:
    """An instant as the header writes it, without the milliseconds when they are 0."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    text = f"{sign}{hours}:{minutes:02d}:{seconds:02d}"
    return f"{text}.{millis:03d}" if millis else text


def axis_label(ms: int) -> str:
    """A compact axis label: 0:30, 1:30, 1:00:00."""
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def span_words(ms: int, lang: str) -> str:
    """A length of time in words: 15 s, 1 min 5 s / 15 秒, 1 分 5 秒."""
    seconds = round(ms / 1000)
    minutes, secs = divmod(seconds, 60)
    if lang == "zh":
        return (
            f"{minutes} 分 {secs} 秒"
            if minutes and secs
            else f"{minutes} 分"
            if minutes
            else f"{secs} 秒"
        )
    if minutes and secs:
        return f"{minutes} min {secs} s"
    return f"{minutes} min" if minutes else f"{secs} s"


def axis_end(view: TimelineView) -> int:
    """Where the axis ends: now, or the expiry of a lease still held if it is near."""
    now = view.now_ms
    future = now
    for row in view.rows:
        for lease in row.leases:
            if lease.end is None and lease.expires_at is not None:
                future = max(future, lease.expires_at)
    shown = now - view.first_ms
    return max(now, min(future, now + max(shown * 3 // 4, _MIN_FUTURE_MS)), view.first_ms + 1000)


@dataclass(frozen=True, slots=True)
class Scale:
    """Time to cells: `cells` cells from `start_ms` (the run's first instant, or the first
    one a long live run still keeps) to `end_ms`; labels every `step_ms`."""

    cells: int
    end_ms: int
    step_ms: int
    start_ms: int = 0

    @property
    def per_cell(self) -> float:
        return (self.end_ms - self.start_ms) / self.cells

    def cell(self, at: int) -> int:
        return max(0, min(self.cells - 1, int((at - self.start_ms) / self.per_cell)))

    def window(self, cell: int) -> tuple[float, float]:
        start = self.start_ms
        return start + cell * self.per_cell, start + (cell + 1) * self.per_cell

    def labels(self) -> Iterator[tuple[int, int]]:
        """(cell, ms) of each axis label."""
        at = -(-self.start_ms // self.step_ms) * self.step_ms
        while at <= self.end_ms:
            yield self.cell(at), at
            at += self.step_ms


def make_scale(view: TimelineView, cells: int, label_cells: int = 7) -> Scale:
    """A scale for `cells` cells whose labels stand `label_cells` apart at least."""
    cells = max(10, cells)
    end = axis_end(view)
    per_cell = (end - view.first_ms) / cells
    step_s = next((s for s in _STEPS_S if s * 1000 / per_cell >= label_cells), _STEPS_S[-1])
    return Scale(cells, end, step_s * 1000, view.first_ms)
