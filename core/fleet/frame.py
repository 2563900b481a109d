"""One frame of a fleet: the store's rows and each process's belief, as the simulations'
`Snapshot`, so the app's panes, task table and panels render real processes unchanged.

Belief against truth: a worker pane's task, step and tokens are what the process last said
it believes; its lease bar is the store's row (the truth), or, when the store no longer
grants the lease the worker believes it holds, that lease's own end, which has passed or
soon will.
"""

import dataclasses
import json
import re
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.downstream.books import Endpoint, Verdict, judge
from core.engine.records import EventRow, LedgerRow, TaskRow
from core.engine.vocabulary import EventKind, Operation, TaskStatus
from core.fleet.history import FleetTimeline, SavedFrame, frame_line, merged, shifted
from core.fleet.process import Belief, WorkerProcess
from core.fleet.supervisor import FaultNote, Fleet
from core.fleet.verdict import Finding
from core.sim.checker import ViolationKind
from core.sim.snapshot import EffectCall, LateWrite, Rejection, Snapshot, TaskView
from core.sim.snapshot import WorkerView as PaneView
from core.sim.spec import WorkerState

# The operation each refusal refused (a refusal's line may say it itself).
_REFUSED = {
    EventKind.CLAIM_REJECTED: Operation.CLAIM,
    EventKind.RENEW_REJECTED: Operation.HEARTBEAT,
    EventKind.CHECKPOINT_REJECTED: Operation.CHECKPOINT,
    EventKind.WRITE_REJECTED: Operation.WRITE,
    EventKind.EFFECT_REJECTED: Operation.EFFECT,
    EventKind.COMPLETE_REJECTED: Operation.COMPLETE,
    EventKind.FAIL_REJECTED: Operation.FAIL,
    EventKind.PARK_REJECTED: Operation.PARK,
}
_BEATS = frozenset({EventKind.CLAIMED, EventKind.RENEWED, EventKind.HEARTBEAT_NOTED})
_VIOLATIONS = frozenset(v.value for v in ViolationKind)


# A frame shows the newest rows of each table, however long the fleet has run: every task
# still to do, and of the rest the newest; the newest pages, effects and refusals. The
# store keeps them all (a save and `--check` read them there); the screen's tables, which
# hold a row for each row they are given, stay this size.
SHOWN_FINISHED = 100  # tasks done or dead, besides every one queued, running or waiting
SHOWN_PAGES = 200
SHOWN_EFFECTS = 200
KEPT_REJECTIONS = 500
# Belief against truth keeps the last two minutes (its axis starts there), looked over
# every ten seconds of the store's clock: with eight busy workers a minute of it is some
# 4 MB of marks (a call, a beat, a lease each), and a lease's story (its expiry, a belief
# that outlives it, the fence that refuses it) is told in seconds.
TIMELINE_KEPT_MS = 120_000
TIMELINE_TRIM_EVERY_MS = 10_000
# The downstream service's books are read whole (a connection of the reader's own, every
# request and charge) and judged by its own judge, at most this often: the light may be
# that late to turn, and a frame (several a second) never waits on a read that grows with
# the run.
SERVICE_READ_EVERY_S = 2.0


# How long a pane says what the service answered a write sent late after a stall: the
# punchline of the stall (refused by the fence, or taken without one), said where the pane
# had said it was stopped with that write in hand.
LATE_WRITE_SHOWN_S = 15.0


def late_write(w: WorkerProcess, now: float | None = None) -> LateWrite | None:
    """The service's answer to the worker's last held write, while it is fresh."""
    answered = w.late_write
    if answered is None:
        return None
    line, at = answered
    if (time.monotonic() if now is None else now) - at > LATE_WRITE_SHOWN_S:
        return None

    def token(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return LateWrite(
        key=str(line.get("key") or ""),
        token=token(line.get("token")),
        newest=token(line.get("newest")),
        taken=line.get("status") == 200,
        error=None if line.get("error") is None else str(line.get("error")),
    )


def service_pages(books: dict[str, Any]) -> tuple[list[LedgerRow], dict[str, str]]:
    """The service's artifacts as the ledger's pages (on the store's clock: both read the
    machine's), and those whose standing value a stale write put there: taken with a
    fence token older than the newest the service had seen for its key, or with none
    ("存储层或状态机只接受当前最大的 token"). A stale write since written over by a newer
    one leaves a sound page; the service's judge still counts the breach."""
    last: dict[str, dict[str, Any]] = {}
    for entry in books["history"]:
        if entry["endpoint"] == Endpoint.ARTIFACT and entry["verdict"] == Verdict.ACCEPTED:
            last[str(entry["key"])] = entry
    stale: dict[str, str] = {}
    for key, entry in last.items():
        token, newest = entry["token"], entry["newest"]
        if token is None or (newest is not None and token < newest):
            stale[key] = ViolationKind.STALE_WRITE_ACCEPTED.value
    pages = [
        LedgerRow(
            str(a["key"]),
            str(a["value"]),
            int(a["token"] or 0),
            str(a["writer"] or ""),
            int(a["at_ms"]),
            str(a["key"]).rpartition("/")[0],
        )
        for a in books.get("artifacts", ())
    ]
    return pages, stale


_CALL_STEP = re.compile(r"call-(\d+)")


def service_calls(books: dict[str, Any]) -> list[EffectCall]:
    """The service's charges as the Effects panel's calls, in the order asked: each charge
    made, and each answered from its idempotency key's first reply; `applied_times` counts
    the charges made for the same task and memo so far (a second is the harm the key
    prevents: "Idempotency Key 让重放调用不炸副作用"). On the store's clock, as its pages."""
    made: Counter[tuple[str, str]] = Counter()
    calls: list[EffectCall] = []
    for entry in books["history"]:
        verdict = entry["verdict"]
        if entry["endpoint"] != Endpoint.CHARGE or verdict not in (
            Verdict.CHARGED,
            Verdict.REPLAYED,
        ):
            continue
        detail = entry["detail"]
        task, memo = str(detail.get("task") or ""), str(detail.get("memo") or "")
        if verdict == Verdict.CHARGED:
            made[task, memo] += 1
        step = _CALL_STEP.fullmatch(memo)
        amount = detail.get("amount")
        calls.append(
            EffectCall(
                at=int(entry["at_ms"]),
                worker_id=str(detail.get("caller") or ""),
                task_id=task,
                key=str(entry["idempotency_key"] or f"{task}/{memo}"),
                effect="charge",
                step=int(step[1]) if step is not None else None,
                fence_token=None,
                deduplicated=verdict == Verdict.REPLAYED,
                applied_times=max(1, made[task, memo]),
                amount=amount if isinstance(amount, int) else None,
            )
        )
    return calls


def _since(at: int | None, origin: int) -> int | None:
    return None if at is None else at - origin


@dataclass(frozen=True, slots=True)
class FleetFrame:
    """What one frame of the fleet screen shows."""

    snap: Snapshot
    pids: dict[str, int | None]
    ours: frozenset[str]  # children of this fleet: the others were started elsewhere
    exit_status: dict[str, int | None]  # workers whose process ended, and how
    # each worker's last line on its standard error: a clock that is not the machine's, or
    # why it stopped (on SQLite, a clock behind an instant another process wrote)
    said: dict[str, str]
    findings: tuple[Finding, ...]
    fresh: tuple[EventRow, ...]  # events read for this frame, in order
    faults: tuple[FaultNote, ...]  # the newest the fleet keeps
    findings_seen: int | None = None  # how many findings in all (None: `findings` are all)
    # The downstream service's broken rules (`ServiceRule` values) and how often, as its own
    # judge found them in its books at the last read: the service's harm, not the store's.
    service: tuple[tuple[str, int], ...] = ()


# The moments a saved run keeps the screen at as soon as they are read: what the supervisor
# did, and a refused or stale write (a finding). Between them, a frame whose contents
# changed is kept at most once a second, and a run keeps at most MAX_SAVED_FRAMES frames
# and MAX_SAVED_BYTES of them (a frame of 12 tasks and 50 pages is about 15 kB).
_KEY_EVENTS = frozenset(_REFUSED)
SAVE_EVERY_MS = 1000
MAX_SAVED_FRAMES = 600
MAX_SAVED_BYTES = 8_000_000


class FrameLog:
    """The frames a saved run keeps (JSON lines), bounded in number and size. Each is kept
    as its JSON text, compressed: as Python objects a frame takes several times its bytes,
    and one frame is much like the next (the bound is on the bytes the file will hold)."""

    def saved(self) -> list[dict[str, object]]:
        """The frames to save now: those kept, and the last one read if it shows more (the
        end of a run is a moment that matters)."""
        latest = self._latest
        return [*self.lines, latest] if latest is not None else self.lines

    @property
    def lines(self) -> list[dict[str, object]]:
        """The frames kept, in order."""
        return [json.loads(zlib.decompress(packed)) for packed in self._texts]

    def __len__(self) -> int:
        return len(self._texts)

    def __init__(self) -> None:
        self._texts: list[bytes] = []  # each kept frame's JSON, compressed
        self._key: list[bool] = []  # which kept frames are moments that matter
        self._size: list[int] = []  # each kept frame's bytes, as JSON
        self._last_at: int | None = None
        self._last_look: object = None
        self._findings = 0
        self._latest: dict[str, object] | None = None  # the last frame read, when not kept

    def take(self, frame: "FleetFrame", origin: int) -> None:
        snap = frame.snap
        key = any(ev.seq == 0 or ev.event in _KEY_EVENTS for ev in frame.fresh)
        seen = len(frame.findings) if frame.findings_seen is None else frame.findings_seen
        key = key or seen > self._findings
        self._findings = seen
        look = (
            snap.last_event_seq,
            tuple((w.id, w.state, w.task_id, w.step, w.lease_token) for w in snap.workers),
            tuple(sorted(frame.exit_status.items())),
            len(snap.ledger),
        )
        due = self._last_at is None or snap.now_ms - self._last_at >= SAVE_EVERY_MS
        last = {w: words for w, words in frame.said.items() if w in frame.exit_status}
        saved = SavedFrame(origin, snap, frame.pids, frame.ours, frame.exit_status, last)
        if not key and not (due and look != self._last_look):
            self._latest = frame_line(saved) if look != self._last_look else None
            return
        self._last_at, self._last_look, self._latest = snap.now_ms, look, None
        text = json.dumps(frame_line(saved)).encode()
        self._texts.append(zlib.compress(text, 1))
        self._key.append(key)
        self._size.append(len(text))
        while len(self._texts) > 1 and (
            len(self._texts) > MAX_SAVED_FRAMES or sum(self._size) > MAX_SAVED_BYTES
        ):
            self._thin()

    def _thin(self) -> None:
        """Every other frame between the moments that matter goes (the last one stays);
        when there are only moments that matter, the older half of them."""
        last = len(self._texts) - 1
        others = [n for n, k in enumerate(self._key) if not k and n != last]
        gone = set(others[1::2] if len(others) > 1 else others)
        if not gone:
            gone = set(range(len(self._texts) // 2))
        kept = [n for n in range(len(self._texts)) if n not in gone]
        self._texts = [self._texts[n] for n in kept]
        self._key = [self._key[n] for n in kept]
        self._size = [self._size[n] for n in kept]


class FrameMaker:
    """Reads a fleet once per frame and keeps what later frames need (beats, refusals)."""

    def __init__(
        self, fleet: Fleet, record: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fleet = fleet
        self._clock = clock  # paces the reads of the service's books (seconds)
        self._service_read_at: float | None = None
        self._service: tuple[tuple[str, int], ...] = ()
        self._service_pages: list[LedgerRow] = []
        self._service_stale: dict[str, str] = {}
        self._service_calls: list[EffectCall] = []
        # the frames a save keeps, so that `export` can draw the screen as it was
        self.log: FrameLog | None = FrameLog() if record else None
        self._beat: dict[str, int] = {}  # worker -> its last claim or renewal (store clock)
        self._rejections: deque[Rejection] = deque(maxlen=KEPT_REJECTIONS)
        self._seen_workers: dict[str, None] = {}  # every worker the events name, in order
        self._frames = 0
        self._notes_shown = 0  # the fleet's fault notes already put in a frame
        self._beliefs_shown = 0  # the fleet's belief changes already on the timeline
        # The store's clock counts from 1970; the screen's clock words, sized for the
        # simulations' clock, count from the run's start: the first event in the store (or
        # now, if there is none), to the whole second. Every instant of a frame moves by
        # the same amount, so every difference stays as it was.
        self.origin: int | None = None
        cfg = fleet.settings.config
        # Belief against truth: the simulations' timeline, fed the store's register, the
        # supervisor's signals and what each process says it holds. Drawn (`view`) only
        # while a screen asks for it: the panel is one tab of several.
        self.timeline = FleetTimeline(cfg.heartbeat_ms, cfg.ttl_ms, cfg.deadline_ms)
        self.with_timeline = True
        self._trimmed_at = 0  # when the timeline was last trimmed (the screen's clock)

    def frame(self) -> FleetFrame:
        fleet = self.fleet
        now = fleet.now_ms()
        read = fleet.poll()
        if self.origin is None:
            start = min([now, *(ev.at for ev in read[:1])])
            self.origin = start - start % 1000
        o = self.origin
        now -= o
        fresh = [shifted(ev, o) for ev in read]
        for ev in fresh:
            self._take(ev)
        # What the supervisor did (Kill, Stall...) joins the register on screen, beside
        # the store's own lines, in time order; it is not a row of the events table.
        self._notes_shown, notes = fleet.faults.read(self._notes_shown)
        signals = [
            EventRow(0, n.at - o, n.event, None, n.worker_id, None, None, None, {}) for n in notes
        ]
        fresh = list(merged(fresh, signals))
        self.timeline.take(fresh)
        if now - self._trimmed_at >= TIMELINE_TRIM_EVERY_MS:
            self._trimmed_at = now
            self.timeline.keep_last(now, TIMELINE_KEPT_MS)
        tasks_read, ledger_read, effects_read, steps = fleet.newest(
            SHOWN_FINISHED, SHOWN_PAGES, SHOWN_EFFECTS
        )
        tasks = [
            dataclasses.replace(
                r,
                lease_expires_at=_since(r.lease_expires_at, o),
                renew_deadline=_since(r.renew_deadline, o),
                last_heartbeat_at=_since(r.last_heartbeat_at, o),
                approved_at=_since(r.approved_at, o),
                updated_at=r.updated_at - o,
            )
            for r in tasks_read
        ]
        # Agent work writes to the downstream service, not the store's ledger: its
        # artifacts are the pages, each on the screen's clock, the newest SHOWN_PAGES.
        self._read_service()
        pages = sorted([*ledger_read, *self._service_pages], key=lambda p: p.updated_at)
        ledger = [dataclasses.replace(p, updated_at=p.updated_at - o) for p in pages]
        ledger = ledger[-SHOWN_PAGES:]
        effects = [dataclasses.replace(e, applied_at=e.applied_at - o) for e in effects_read]
        rows = {r.task_id: r for r in tasks}
        holders = {r.owner_id: r for r in tasks if r.status == TaskStatus.RUNNING}
        views = []
        pids: dict[str, int | None] = {}
        exits: dict[str, int | None] = {}
        ours = dict.fromkeys(fleet.workers)
        said: dict[str, str] = {}
        for wid, w in list(fleet.workers.items()):
            pids[wid] = w.pid
            words = w.last_words()
            if words is not None:
                said[wid] = words
            cut = fleet.partitioned(wid)
            state = _state(w.belief, w.alive, w.stalled, w.frozen, cut)
            if not w.alive:
                exits[wid] = w.exit_status
            # a dead process remembers nothing ("旧 worker 即使复活，也只能成为'过期知识的携带
            # 者'"): its pane says so beside the lease the store may still lend it, never the
            # task and tokens it last printed, as a simulated worker's pane does
            belief = w.belief if w.alive else Belief()
            if belief.expires_at is not None:
                belief = dataclasses.replace(belief, expires_at=belief.expires_at - o)
            view = self._pane(wid, state, belief, w.frozen, w.stalled, rows, now, cut)
            if w.stalled and w.write_held is not None:
                view = dataclasses.replace(view, write_held=True)
            elif fleet.stopping_at_write(wid):
                view = dataclasses.replace(view, stopping_at_write=True)
            elif (late := late_write(w)) is not None:
                view = dataclasses.replace(view, late_write=late)
            lent = holders.get(wid) if not w.alive else None
            if lent is not None and lent.lease_expires_at is not None:
                view = dataclasses.replace(
                    view, store_task_id=lent.task_id, store_remaining_ms=lent.lease_expires_at - now
                )
            skew = fleet.skews.get(wid, 0)
            views.append(dataclasses.replace(view, skew_ms=skew) if skew else view)
        # What each of our processes said it holds (noted by the fleet one read late, so
        # that the event that made it let go is in first), on the screen's clock.
        self._beliefs_shown, believed = fleet.beliefs.read(self._beliefs_shown)
        for b in believed:
            self.timeline.believe(b.at - o, {b.worker_id: b.held})
        for wid in self._seen_workers:
            if wid in ours:
                continue
            row = holders.get(wid)
            belief = Belief(state="working" if row is not None else "idle")
            if row is not None:  # read from the store: its belief is the row
                belief = Belief(
                    state="working",
                    task=row.task_id,
                    lease_token=row.lease_token,
                    fence_token=row.fence_token,
                    expires_at=row.lease_expires_at,
                )
            views.append(
                self._pane(wid, _state(belief, True, False, False), belief, False, False, rows, now)
            )
        violations = Counter(
            {rule: n for rule, n in fleet.violations.items() if rule in _VIOLATIONS}
        )
        self._frames += 1
        snap = Snapshot(
            now_ms=now,
            mode=fleet.settings.mode.value,
            tasks=tuple(
                TaskView(
                    r,
                    None
                    if r.lease_expires_at is None or r.status != TaskStatus.RUNNING
                    else r.lease_expires_at - now,
                    steps.get(r.task_id),
                )
                for r in tasks
            ),
            workers=tuple(views),
            ledger=tuple(ledger),
            checkpoints=(),  # a fleet's screen has no checkpoints tab: its steps are in `tasks`
            effects=tuple(effects),
            rejections=tuple(self._rejections),
            violations=dict(violations),
            stale_pages=dict(self._service_stale),
            effect_calls=tuple(dataclasses.replace(c, at=c.at - o) for c in self._service_calls),
            last_event_seq=last.seq if (last := fleet.events.last) is not None else 0,
            generation=0,
            timeline=self.timeline.view(now) if self.with_timeline else None,
        )
        made = FleetFrame(
            snap=snap,
            pids=pids,
            ours=frozenset(ours),
            exit_status=exits,
            said=said,
            findings=tuple(fleet.found),
            fresh=tuple(fresh),
            faults=tuple(fleet.faults),
            findings_seen=fleet.found.count,
            service=self._service,
        )
        if self.log is not None:
            self.log.take(made, o)
        return made

    def _read_service(self) -> None:
        """The service's books read again once SERVICE_READ_EVERY_S has passed since the
        last read, else kept as that read found them: its broken rules, and its artifacts
        as the ledger's pages. A service's books only grow, so a count once found stays
        until a read finds it larger."""
        now = self._clock()
        if self._service_read_at is not None and now - self._service_read_at < SERVICE_READ_EVERY_S:
            return
        books = self.fleet.service_books()
        if books is None:
            return
        self._service_read_at = now
        counts = Counter(str(f.rule.value) for f in judge(books["history"], books["charges"]))
        self._service = tuple(sorted(counts.items()))
        self._service_pages, self._service_stale = service_pages(books)
        self._service_calls = service_calls(books)[-SHOWN_EFFECTS:]

    def _take(self, ev: EventRow) -> None:
        if ev.worker_id:
            self._seen_workers.setdefault(ev.worker_id, None)
        if ev.event in _BEATS and ev.worker_id:
            self._beat[ev.worker_id] = ev.at
        refused = _REFUSED.get(EventKind(ev.event)) if ev.event in _REFUSED else None
        if refused is not None and ev.reason is not None:
            operation = ev.detail.get("operation")
            self._rejections.append(
                Rejection(
                    seq=ev.seq,
                    at=ev.at,
                    worker_id=ev.worker_id,
                    task_id=ev.task_id,
                    operation=Operation(operation) if operation else refused,
                    reason=ev.reason,
                    lease_token=ev.lease_token,
                    fence_token=ev.fence_token,
                    current_lease_token=ev.detail.get("current_lease_token"),
                    current_fence_token=ev.detail.get("current_fence_token"),
                    key=ev.detail.get("key"),
                )
            )

    def _pane(
        self,
        wid: str,
        state: WorkerState,
        belief: Belief,
        frozen: bool,
        stalled: bool,
        rows: dict[str, TaskRow],
        now: int,
        cut: bool = False,
    ) -> PaneView:
        row = rows.get(belief.task or "")
        granted = (
            row is not None
            and row.status == TaskStatus.RUNNING
            and row.owner_id == wid
            and row.lease_token == belief.lease_token
            and row.lease_expires_at is not None
        )
        if granted and row is not None and row.lease_expires_at is not None:
            store_left: int | None = row.lease_expires_at - now
        elif belief.expires_at is not None:
            # The store no longer grants it: the lease it believes in ends (or ended) then.
            store_left = min(belief.expires_at - now, -1) if row is not None else None
        else:
            store_left = None
        beat = self._beat.get(wid)
        return PaneView(
            id=wid,
            state=state,
            autopilot=True,
            task_id=belief.task,
            step=belief.step,
            lease_token=belief.lease_token,
            fence_token=belief.fence_token,
            believed_remaining_ms=(None if belief.expires_at is None else belief.expires_at - now),
            store_remaining_ms=store_left if belief.task is not None else None,
            heartbeat_age_ms=None if beat is None or belief.task is None else now - beat,
            heartbeat_frozen=frozen,
            stalled=stalled,
            partitioned=cut,
            renew_deadline=row.renew_deadline if granted and row is not None else None,
        )


def _state(
    belief: Belief, alive: bool, stalled: bool, frozen: bool, cut: bool = False
) -> WorkerState:
    if not alive:
        return WorkerState.DEAD
    if stalled:
        return WorkerState.STALLED
    if cut:
        return WorkerState.PARTITIONED
    if frozen:
        return WorkerState.FROZEN
    try:
        return WorkerState(belief.state)
    except ValueError:
        return WorkerState.IDLE
