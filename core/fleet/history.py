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

import dataclasses
import functools
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine.config import LeaseConfig
from core.engine.ids import shown_text_problem
from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.fleet.service_books import KINDS as SERVICE_KINDS
from core.fleet.service_books import SavedBooks
from core.fleet.untrusted import (
    MAX_DURATION_MS,
    MAX_INSTANT_MS,
    MAX_WHOLE,
    Unreadable,
    json_lines,
    maybe_text,
    maybe_whole,
    regular_file_text,
    text,
    version,
    whole,
)
from core.fleet.verdict import (
    ROW_RULES,
    ROW_TABLES,
    ROWS_VERSION,
    FinalRows,
    Finding,
    FleetRule,
    HistoryCheck,
    check_history,
    unexplained,
)
from core.sim.snapshot import Snapshot
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

    def keep_last(self, now_ms: int, span_ms: int) -> None:
        """Keep the last `span_ms` before `now_ms` (a live fleet runs as long as it likes)."""
        self.timeline.forget_before(now_ms - span_ms)


# -- the screen's frames, saved ------------------------------------------------------------

# A saved run keeps frames of the fleet screen as `{"t": "frame", "v": FRAMES_VERSION, ...}`
# lines: what the screen read (the snapshot its panes and panels draw, without the timeline,
# which the history rebuilds), so that `export` draws the real screen at the moments that
# matter. A frame keeps the first FRAME_ROWS rows of each table in the order the screen
# shows them from the top (the refusals: the last ones, which the Rejected panel adds up),
# and no checkpoints: a fleet's screen has no checkpoints tab (a task's step is on its row).
FRAMES_VERSION = 1
FRAME_ROWS = 50


@functools.cache
def _snapshots() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(Snapshot)


@dataclass(frozen=True, slots=True)
class SavedFrame:
    """One frame of the fleet screen as saved: the screen's clock counts from `origin`
    (the store's clock, ms)."""

    origin: int
    snap: Snapshot  # without its timeline
    pids: dict[str, int | None]
    ours: frozenset[str]
    exit_status: dict[str, int | None]
    # the line each ended worker stopped with (its reason, as its pane said it)
    said: dict[str, str] = field(default_factory=dict)

    @property
    def at(self) -> int:
        """Its instant on the screen's clock."""
        return self.snap.now_ms


def frame_line(frame: SavedFrame) -> dict[str, Any]:
    """A frame as a saved run keeps it: one JSON line, its lists bounded."""
    snap = frame.snap
    pages = sorted(snap.ledger, key=lambda p: (p.updated_at, p.key))  # as the ledger shows
    snap = dataclasses.replace(
        snap,
        tasks=snap.tasks[:FRAME_ROWS],
        ledger=tuple(pages[:FRAME_ROWS]),
        checkpoints=(),
        effects=snap.effects[:FRAME_ROWS],
        rejections=snap.rejections[-FRAME_ROWS:],
        timeline=None,
    )
    return {
        "t": "frame",
        "v": FRAMES_VERSION,
        "origin": frame.origin,
        "snap": _snapshots().dump_python(snap, mode="json", exclude={"timeline"}),
        "pids": frame.pids,
        "ours": sorted(frame.ours),
        "exits": frame.exit_status,
        **({"said": frame.said} if frame.said else {}),
    }


def _frame(line: dict[str, Any]) -> SavedFrame:
    from pydantic import ValidationError

    version(line, FRAMES_VERSION, "a frame")
    try:
        snap = _snapshots().validate_python(line["snap"])
        pids = dict(line["pids"])
        exits = dict(line["exits"])
        ours = list(line["ours"])
    except ValidationError as exc:
        raise Unreadable(f"a frame that is not the screen's: {exc.errors()[0]['msg']}") from None
    return SavedFrame(
        whole(line, "origin", high=MAX_INSTANT_MS),
        snap,
        {str(k): maybe_whole(pids, k) for k in pids},
        frozenset(str(w) for w in ours),
        {str(k): maybe_whole(exits, k, low=-255, high=255) for k in exits},
        _said(line.get("said")),
    )


def _said(said: Any) -> dict[str, str]:
    """A frame's last words of ended workers (none in a file saved before frames kept them)."""
    if said is None:
        return {}
    if not isinstance(said, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in said.items()
    ):
        raise Unreadable("a frame whose workers' last words are not words")
    for words in said.values():
        problem = shown_text_problem(words)
        if problem is not None:
            raise Unreadable(f"a frame whose workers' last words {problem}")
    return dict(said)


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
    # the store's final rows; None in a file saved before runs kept them
    rows: FinalRows | None = None
    frames: list[SavedFrame] = field(default_factory=list)  # the screen's, in order
    # what the file's own lines fail to explain: a line after its verdict, a second verdict
    problems: list[Finding] = field(default_factory=list)
    # the downstream service's books (`--work`), as its export; None if the run had none
    service: dict[str, Any] | None = None

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
    def on_postgresql(self) -> bool:
        return self.verdict.get("database") == "postgresql"

    def config(self) -> LeaseConfig:
        """The lease timing the run's screen drew with."""
        return LeaseConfig(
            ttl_ms=self.ttl_ms,
            heartbeat_every_ms=self.heartbeat_ms,
            renew_deadline_ms=self.deadline_ms,
        ).validated()

    def frame_at(self, at: int) -> SavedFrame | None:
        """The screen as it was at `at` (the screen's clock): the first saved frame read then
        or later (a moment that matters was saved as soon as it was read), else the last."""
        for frame in self.frames:
            if frame.at >= at:
                return frame
        return self.frames[-1] if self.frames else None

    @property
    def origin(self) -> int:
        """The run's first instant, to the whole second: the screen's clock counts from it
        (the saved screen's own, when it was saved)."""
        if self.frames:
            return self.frames[0].origin
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
        """The whole history judged again with the store's final rows, as the live check
        judged it; a file saved before runs kept their rows is judged by the events alone
        (`skipped` names the rules left out)."""
        rows = self.rows or FinalRows()
        check = check_history(
            self.events, ttl_ms=self.ttl_ms, tasks=rows.tasks, effects=rows.effects
        )
        # A file is not a store: it can be edited. The history must explain itself (every
        # seq once, in order) and the rows it ends with, or it is not held.
        check.findings[:0] = [
            *self.problems,
            *unexplained(
                self.events,
                self.rows,
                said_events=int(self.verdict.get("events", len(self.events))),
                gaps_allowed=self.on_postgresql,
            ),
        ]
        return check

    @property
    def skipped(self) -> tuple[FleetRule, ...]:
        """The rules a check of this file cannot apply: those that compare the events with
        the store's final rows, when the file does not hold them."""
        return () if self.rows is not None else ROW_RULES

    def shifted_events(self) -> list[EventRow]:
        o = self.origin
        return [shifted(ev, o) for ev in self.events]

    def timeline_at(self, now_ms: int) -> TimelineView:
        """Belief against truth as the screen drew it at `now_ms` (the screen's clock)."""
        o = self.origin
        tl = FleetTimeline(self.heartbeat_ms, self.ttl_ms, self.deadline_ms)
        events = [ev for ev in self.shifted_events() if ev.at <= now_ms]
        signals = [s.row(o) for s in self.signals if s.at - o <= now_ms]
        beliefs = sorted((b for b in self.beliefs if b.at - o <= now_ms), key=lambda b: b.at)
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
    if not isinstance(value, list) or len(value) != 2:
        raise Unreadable(f"its 'held' is not a task and a lease token: {ascii(value)[:30]}")
    return (text({"task": value[0]}, "task"), whole({"lease": value[1]}, "lease"))


def _fields_typed(make: type[Any], row: dict[str, Any]) -> None:
    """Each field of a saved row of the type its record declares (a whole number is not a
    boolean, a text is not a number): the check compares them with the events as they are."""
    names = {f.name: f.type for f in dataclasses.fields(make)}
    for key in row:
        if key not in names:
            raise Unreadable(f"a row of {make.__name__} with an unknown field {key!r}")
    for name, kind in names.items():
        if name not in row:
            raise Unreadable(f"a row of {make.__name__} without its {name!r}")
        value = row[name]
        union = typing.get_origin(kind) in (typing.Union, types.UnionType)
        allowed = typing.get_args(kind) if union else (kind,)
        if value is None and type(None) in allowed:
            continue
        plain = tuple(typing.get_origin(a) or a for a in allowed if a is not type(None))
        if isinstance(value, bool) or not isinstance(value, plain):
            raise Unreadable(f"its {name!r} is not of the row's type: {ascii(value)[:30]}")
        if isinstance(value, int):
            whole(row, name, low=-MAX_WHOLE if name != "applied_count" else 0, high=MAX_INSTANT_MS)


def _row(line: dict[str, Any]) -> tuple[str, Any]:
    """The table and the row of a line `FinalRows.lines` wrote."""
    version(line, ROWS_VERSION, "a row")
    table = text(line, "table")
    make = ROW_TABLES.get(table)
    if make is None:
        raise Unreadable(f"a row of an unknown table {table!r}")
    row = line.get("row")
    if not isinstance(row, dict):
        raise Unreadable("a row line without its row")
    _fields_typed(make, row)
    return table, make(**row)


def _event(line: dict[str, Any]) -> EventRow:
    kind = text(line, "event")
    try:
        event = EventKind(kind)
    except ValueError:
        raise Unreadable(f"an event of an unknown kind {kind!r}") from None
    detail = line.get("detail") or {}
    if not isinstance(detail, dict):
        raise Unreadable("its 'detail' is not an object")
    return EventRow(
        whole(line, "seq", low=1),
        whole(line, "at", high=MAX_INSTANT_MS),
        event,
        maybe_text(line, "task"),
        maybe_text(line, "worker"),
        maybe_whole(line, "lease_token"),
        maybe_whole(line, "fence_token"),
        maybe_text(line, "reason"),
        detail,
    )


def _verdict(line: dict[str, Any]) -> dict[str, Any]:
    """The verdict line, each value the check or the screen reads of it checked."""
    said = line.get("verdict")
    if said not in ("held", "broken"):
        raise Unreadable(f"its verdict is {ascii(said)[:20]}, neither held nor broken")
    for key in ("ttl_ms", "heartbeat_ms", "deadline_ms"):
        if key in line:
            whole(line, key, low=1, high=MAX_DURATION_MS)
    whole(line, "events")
    if "rows" in line:
        version({"v": line["rows"]}, ROWS_VERSION, "rows")
    if line.get("database", "sqlite") not in ("sqlite", "postgresql"):
        raise Unreadable(f"its database is {ascii(line.get('database'))[:20]}, not one it knows")
    findings = line.get("findings", [])
    if not isinstance(findings, list):
        raise Unreadable("its 'findings' is not a list")
    return line


def load_history(path: Path) -> SavedRun:
    """Read a saved fleet history as untrusted input; HistoryError names the first bad line
    (`FILE:LINE: what is wrong`). A line after the verdict, or a second verdict, is not
    refused: the check says it (`SavedRun.problems`), for the file no longer explains its
    own end."""
    try:
        data = regular_file_text(path)
    except Unreadable as exc:
        raise HistoryError(f"{_shown(path)}: {exc}") from None
    run = SavedRun(path)
    tables: dict[str, list[Any]] | None = None
    n = 1
    verdict_line = 0
    books = SavedBooks()
    try:
        for n, line in json_lines(data):
            kind = line.get("t", "verdict" if "verdict" in line else "event")
            if verdict_line and kind != "verdict":
                run.problems.append(
                    Finding(
                        FleetRule.AFTER_THE_END,
                        None,
                        None,
                        0,
                        f"line {n} comes after the verdict line {verdict_line}",
                    )
                )
            if kind == "event":
                run.events.append(_event(line))
            elif kind == "signal":
                try:
                    event = EventKind(text(line, "event"))
                except ValueError:
                    raise Unreadable(f"a signal of an unknown kind {line['event']!r}") from None
                run.signals.append(
                    Signal(
                        whole(line, "at", high=MAX_INSTANT_MS),
                        event,
                        text(line, "worker"),
                        maybe_whole(line, "pid"),
                    )
                )
            elif kind == "belief":
                run.beliefs.append(
                    Believed(
                        whole(line, "at", high=MAX_INSTANT_MS),
                        text(line, "worker"),
                        _held(line.get("held")),
                    )
                )
            elif kind == "row":
                table, row = _row(line)
                tables = {} if tables is None else tables
                tables.setdefault(table, []).append(row)
            elif kind == "frame":
                run.frames.append(_frame(line))
            elif kind in SERVICE_KINDS:
                books.take(kind, line)
            elif kind == "verdict":
                if verdict_line:
                    run.problems.append(
                        Finding(
                            FleetRule.AFTER_THE_END,
                            None,
                            None,
                            0,
                            f"line {n} is a second verdict line (the first is line {verdict_line})",
                        )
                    )
                else:
                    run.verdict = _verdict(line)
                    verdict_line = n
            else:
                raise Unreadable(f"a line of an unknown kind {kind!r}")
    except Unreadable as exc:
        where = exc.args[1] if len(exc.args) > 1 else n
        raise HistoryError(
            f"{_shown(path)}:{where}: not a line of a saved fleet history: {exc.args[0]}"
        ) from None
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        what = str(exc) if not isinstance(exc, KeyError) else f"no {exc} in the line"
        raise HistoryError(
            f"{_shown(path)}:{n}: not a line of a saved fleet history: {what}"
        ) from None
    if not run.verdict:
        raise HistoryError(f"{_shown(path)}:{n}: no verdict line: not a saved fleet history")
    try:
        run.service = books.export()
    except Unreadable as exc:
        raise HistoryError(
            f"{_shown(path)}:{n}: not a saved fleet history: {exc.args[0]}"
        ) from None
    if tables is not None or "rows" in run.verdict:
        tables = tables or {}
        run.rows = FinalRows(
            tuple(tables.get("agent_tasks", ())),
            tuple(tables.get("ledger", ())),
            tuple(tables.get("effects", ())),
        )
    return run


def _shown(path: Path) -> str:
    """A file's name as a terminal may print it: its own name can hold an escape."""
    name = str(path)
    return name if shown_text_problem(name) is None else ascii(name)


def is_saved_fleet_run(path: Path) -> bool:
    """Whether `path` looks like a saved fleet history (JSON lines), not a scenario."""
    return path.suffix in (".jsonl", ".json") and path.is_file()
