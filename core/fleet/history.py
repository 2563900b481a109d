"""Belief against truth for a fleet of real processes, live and from a saved run.

The simulations' `Timeline` draws it; here it is fed what a fleet has: the events table (the
truth: claims, renewals, expiries, refusals, in the register's order), the supervisor's own
signals (a kill, a stall, a frozen heartbeat, which are not rows of the store), and what each
worker process says it believes. A real worker's memory is not the register's to end: when a
process stops saying it holds a lease (it let go at its own renew deadline, it finished, it
died), its belief in that lease ends at the frame that read it. The same feeding replays a
saved history (`s` in the fleet, `--save` headless), so the page `export` makes of it and
`fleet --check` read the run as the screen did.
"""

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.fleet.verdict import HistoryCheck, check_history
from core.sim.timeline import Timeline, TimelineView

Held = tuple[str, int] | None  # the task and lease token a worker says it holds, or nothing


@dataclass(frozen=True, slots=True)
class Believed:
    """A worker process changed what it says it holds (store clock, ms)."""

    at: int
    worker_id: str
    held: Held


@dataclass(frozen=True, slots=True)
class Signal:
    """A fault the supervisor caused (wall clock, ms): not a row of the store."""

    at: int
    event: EventKind
    worker_id: str
    pid: int | None = None

    def row(self, shift: int = 0) -> EventRow:
        return EventRow(0, self.at - shift, self.event, None, self.worker_id, None, None, None, {})


def merged(events: Sequence[EventRow], others: Iterable[EventRow]) -> Iterator[EventRow]:
    """The register's lines in their own order (`seq`), each line from elsewhere put before
    the first register line later than it. Sorting everything by time could reorder the
    register where two processes' clocks disagree, and the timeline takes it in order."""
    rest = sorted(others, key=lambda ev: ev.at)
    n = 0
    for ev in events:
        while n < len(rest) and rest[n].at <= ev.at:
            yield rest[n]
            n += 1
        yield ev
    yield from rest[n:]


class FleetTimeline:
    """The simulations' timeline, fed a fleet's register, signals and beliefs."""

    def __init__(self, heartbeat_ms: int, ttl_ms: int, deadline_ms: int) -> None:
        self.timeline = Timeline(heartbeat_ms, ttl_ms, deadline_ms)
        self.held: dict[str, Held] = {}  # what each process last said it holds

    def take(self, lines: Iterable[EventRow]) -> None:
        """Register lines (seq > 0) and signals (seq 0), in the order `merged` gives."""
        for ev in lines:
            if ev.seq:
                self.timeline.feed([ev])
            else:
                self.timeline.note(ev)

    def believe(self, at: int, memory: Mapping[str, Held]) -> None:
        """What each process says it holds now: a lease it stopped naming ends its belief."""
        for worker_id, held in memory.items():
            before = self.held.get(worker_id)
            if worker_id in self.held and before == held:
                continue
            self.held[worker_id] = held
            if before is not None:
                self.timeline.let_go(at, worker_id, *before)

    def view(self, now_ms: int) -> TimelineView:
        return self.timeline.view(now_ms)


# -- a saved run ----------------------------------------------------------------------------


class HistoryError(Exception):
    """A saved history that cannot be read: `FILE:LINE: what is wrong`."""


@dataclass
class SavedRun:
    """A fleet run as `save_history` wrote it."""

    path: Path
    events: list[EventRow] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)
    beliefs: list[Believed] = field(default_factory=list)
    verdict: dict[str, Any] = field(default_factory=dict)

    @property
    def ttl_ms(self) -> int:
        return int(self.verdict.get("ttl_ms", 6_000))

    @property
    def heartbeat_ms(self) -> int:
        return int(self.verdict.get("heartbeat_ms", self.ttl_ms // 3))

    @property
    def deadline_ms(self) -> int:
        return int(self.verdict.get("deadline_ms", self.ttl_ms * 2 // 3))

    @property
    def origin(self) -> int:
        """The run's first instant, to the whole second: the screen's clock counts from it."""
        starts = [x.at for x in self.events[:1]] + [s.at for s in self.signals[:1]]
        starts += [b.at for b in self.beliefs[:1]]
        start = min(starts, default=0)
        return start - start % 1000

    @property
    def end(self) -> int:
        """The run's last instant, on the screen's clock."""
        ends = [x.at for x in self.events] + [s.at for s in self.signals]
        ends += [b.at for b in self.beliefs]
        return max(ends, default=self.origin) - self.origin

    def check(self) -> HistoryCheck:
        """The whole history judged again (the store's final rows are not saved: the rules
        that read the events alone)."""
        return check_history(self.events, ttl_ms=self.ttl_ms)

    def shifted_events(self) -> list[EventRow]:
        o = self.origin
        return [shifted(ev, o) for ev in self.events]

    def timeline_at(self, now_ms: int) -> TimelineView:
        """Belief against truth as the screen drew it at `now_ms` (the screen's clock)."""
        o = self.origin
        tl = FleetTimeline(self.heartbeat_ms, self.ttl_ms, self.deadline_ms)
        events = [ev for ev in self.shifted_events() if ev.at <= now_ms]
        signals = [s.row(o) for s in self.signals if s.at - o <= now_ms]
        beliefs = [b for b in self.beliefs if b.at - o <= now_ms]
        # the beliefs join in time order, between the register's lines
        n = 0
        for ev in merged(events, signals):
            while n < len(beliefs) and beliefs[n].at - o < ev.at:
                b = beliefs[n]
                tl.believe(b.at - o, {b.worker_id: b.held})
                n += 1
            tl.take([ev])
        for b in beliefs[n:]:
            tl.believe(b.at - o, {b.worker_id: b.held})
        if now_ms >= self.end:
            # the run ended by stopping every process: what one still believed ends with it
            # (a process stopped before it printed its last word leaves no line saying so)
            tl.believe(self.end, {w: None for w, held in tl.held.items() if held is not None})
        return tl.view(now_ms)


def shifted(ev: EventRow, origin: int) -> EventRow:
    """An event on the screen's clock (from `origin`): its instant and the lease ends it names."""
    detail = dict(ev.detail)
    for key in ("expires_at", "renew_deadline", "expired_at"):
        if isinstance(detail.get(key), int):
            detail[key] -= origin
    return EventRow(
        ev.seq,
        ev.at - origin,
        ev.event,
        ev.task_id,
        ev.worker_id,
        ev.lease_token,
        ev.fence_token,
        ev.reason,
        detail,
    )


def extra_lines(signals: Iterable[Any], beliefs: Iterable[Believed]) -> list[dict[str, Any]]:
    """The lines a saved history keeps beside the register: the supervisor's signals (a
    `FaultNote` or `Signal`: at, event, worker_id, pid) and what each process said it held."""
    out: list[dict[str, Any]] = [
        {"t": "signal", "at": s.at, "event": str(s.event), "worker": s.worker_id, "pid": s.pid}
        for s in signals
    ]
    out += [{"t": "belief", "at": b.at, "worker": b.worker_id, "held": b.held} for b in beliefs]
    return out


def _held(value: Any) -> Held:
    if value is None:
        return None
    return (str(value[0]), int(value[1]))


def load_history(path: Path) -> SavedRun:
    """Read a saved fleet history; HistoryError names the first bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: cannot be read: {exc}") from None
    run = SavedRun(path)
    n = 1
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            if not isinstance(line, dict):
                raise ValueError("not a JSON object")
            kind = line.get("t", "verdict" if "verdict" in line else "event")
            if kind == "event":
                run.events.append(
                    EventRow(
                        int(line["seq"]),
                        int(line["at"]),
                        EventKind(line["event"]),
                        line.get("task"),
                        line.get("worker"),
                        line.get("lease_token"),
                        line.get("fence_token"),
                        line.get("reason"),
                        dict(line.get("detail") or {}),
                    )
                )
            elif kind == "signal":
                run.signals.append(
                    Signal(
                        int(line["at"]), EventKind(line["event"]), line["worker"], line.get("pid")
                    )
                )
            elif kind == "belief":
                run.beliefs.append(Believed(int(line["at"]), line["worker"], _held(line["held"])))
            elif kind == "verdict":
                run.verdict = line
            else:
                raise ValueError(f"a line of an unknown kind {kind!r}")
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            what = str(exc) if not isinstance(exc, KeyError) else f"no {exc} in the line"
            raise HistoryError(f"{path}:{n}: not a line of a saved fleet history: {what}") from None
    if not run.verdict:
        raise HistoryError(f"{path}:{n}: no verdict line: not a saved fleet history")
    return run


def is_saved_fleet_run(path: Path) -> bool:
    """Whether `path` looks like a saved fleet history (JSON lines), not a scenario."""
    return path.suffix in (".jsonl", ".json") and path.is_file()
