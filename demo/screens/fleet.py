"""The fleet screen: the app's worker panes, task table and panels on real processes.

Each pane is a `borrowed-keys worker` child process (its pid in the title); its buttons act
on the process (Kill: SIGKILL, Stall / Resume: SIGSTOP / SIGCONT, Freeze: a line on its
control channel, Restart: a new process under the same id). The screen decides nothing and
waits for nothing: a thread worker reads one frame (the events since the last, the store's
rows, each process's belief) and posts it; a fault button's signal is sent on a thread
worker too, and its outcome posted in the past tense. The safety light is the simulations'
checker judging the events table as it is read. Workers started elsewhere against the same
database appear from the store's rows, without fault buttons.
"""

import dataclasses
import time
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from core.engine.config import LeaseConfig
from core.engine.errors import BorrowedKeysError
from core.fleet.command import MAX_WORKERS
from core.fleet.frame import FleetFrame, FrameMaker
from core.fleet.supervisor import Fleet
from core.scenarios.telling import error_sentence
from demo.i18n import tr, worker_name
from demo.widgets.keybar import Hint, KeyBar
from demo.widgets.panels import EffectsTable, EventLog, LedgerTable, RejectedTable
from demo.widgets.status_header import HeaderState, StatusHeader
from demo.widgets.task_table import TaskTable
from demo.widgets.timeline_view import OwnershipTimeline
from demo.widgets.worker_pane import WorkerGrid, WorkerPane, pane_states

REFRESH_S = 0.1  # one frame on the wall clock, ten times a second
ENQUEUE_N = 3  # tasks one press of Enqueue adds
# Belief vs truth is drawn at most this often: drawing it costs the app's thread about 100 ms
# with 24 workers on a busy two-core machine (a cell per glyph, three lanes a worker), and
# past the first minute one cell of its axis is longer than a frame anyway.
TIMELINE_EVERY_S = 0.5
SKEW_MS = 300_000  # how far ahead `k` sets a worker's clock


_PANEL_KEYS = (
    ("1", "tab-ledger"),
    ("3", "tab-rejected"),
    ("4", "tab-effects"),
    ("5", "tab-events"),
    ("6", "tab-timeline"),
)


class FrameRead(Message):
    """A frame was read from the fleet and the store."""

    def __init__(self, frame: FleetFrame) -> None:
        super().__init__()
        self.frame = frame


class FaultApplied(Message):
    """A fault button's signal was sent (or found the process gone)."""

    def __init__(self, text: str, ok: bool) -> None:
        super().__init__()
        self.text = text
        self.ok = ok


class FleetScreen(Screen[None]):
    """Real worker processes, the store's rows as the truth, the checker's light."""

    DEFAULT_CSS = """
    FleetScreen { layout: vertical; }
    FleetScreen #fleet-note { height: auto; color: $text-muted; padding: 0 1; }
    FleetScreen #fleet-left { height: auto; }
    FleetScreen #fleet-lower { height: 1fr; min-height: 6; }
    FleetScreen #tasks { max-height: 10; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus,a", "add_worker", "+ worker"),
        Binding("e", "enqueue", "enqueue"),
        Binding("s", "save", "save"),
        Binding("k", "skew", "skew a clock"),
        Binding("q", "quit_fleet", "quit"),
        # the simulated app's panel keys, for the panels a fleet has (no checkpoints tab)
        *(Binding(key, f"panel('{tab}')", show=False) for key, tab in _PANEL_KEYS),
    ]

    def __init__(
        self,
        fleet: Fleet | None,
        lang: str,
        save_dir: Path,
        live: bool = True,
        *,
        config: LeaseConfig | None = None,
        on_postgresql: bool = False,
    ) -> None:
        """The screen of `fleet`; without one (`config` and `on_postgresql` say what it ran
        with), the screen of a saved run, drawn from its saved frames by `show_frame`."""
        super().__init__()
        self.fleet = fleet
        self.lang = lang
        self.save_dir = save_dir
        self.live = live and fleet is not None
        if fleet is not None:
            config = fleet.settings.config
            on_postgresql = fleet.settings.db.startswith("postgresql")
        assert config is not None, "a saved run's screen is told its lease timing"
        self.config = config
        self.on_postgresql = on_postgresql
        # `s` saves the frames too, so that `export` can draw this screen as it was
        self.maker = FrameMaker(fleet, record=True) if fleet is not None else None
        self.frame: FleetFrame | None = None
        self._reading = False
        self.frames_shown = 0
        self._told: dict[str, str] = {}  # the last line of each worker's said on screen
        self._timeline_drawn = 0.0  # when Belief vs truth was last drawn (monotonic)

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="status")
        yield Static(id="fleet-note")
        with Vertical(id="fleet-left"):
            yield WorkerGrid(id="workers")
            yield TaskTable(id="tasks")
        with Horizontal(id="fleet-lower"), TabbedContent(id="panels"):
            with TabPane(tr("ledger", self.lang), id="tab-ledger"):
                yield LedgerTable(id="ledger")
            with TabPane(tr("rejected", self.lang), id="tab-rejected"):
                yield RejectedTable(id="rejected")
            with TabPane(tr("effects", self.lang), id="tab-effects"):
                yield EffectsTable(id="effects")
            with TabPane(tr("event_log", self.lang), id="tab-events"):
                yield EventLog(id="events")
            with TabPane(tr("timeline", self.lang), id="tab-timeline"), VerticalScroll():
                yield OwnershipTimeline(id="timeline")
        yield KeyBar(id="keybar")

    def on_mount(self) -> None:
        lang = self.lang
        note = "fleet_note_pg" if self.on_postgresql else "fleet_note_sqlite"
        self.query_one("#fleet-note", Static).update(tr(note, lang))
        self.query_one("#keybar", KeyBar).set_items(
            [
                Hint("+", tr("fleet_add", lang), 0),
                Hint("e", tr("fleet_enqueue", lang), 1),
                Hint("s", tr("fleet_save", lang), 2),
                Hint("k", tr("fleet_skew_key", lang), 3),
                Hint("1-6", tr("panels", lang), 4),
                Hint("q", tr("fleet_quit", lang), 0),
            ]
        )
        if self.live:
            self.set_interval(REFRESH_S, self.read_frame)
        if self.maker is not None:
            self.read_frame()

    # -- one frame --------------------------------------------------------------------------

    def read_frame(self) -> None:
        if self._reading or self.maker is None:
            return  # the last read is still under way: a frame is skipped, not queued
        self._reading = True
        self._read()

    @work(thread=True, group="fleet-read")
    def _read(self) -> None:
        assert self.maker is not None
        try:
            frame = self.maker.frame()
        except BorrowedKeysError as exc:  # a store that cannot be read is said, not raised
            why = error_sentence(exc, self.lang)
            self.post_message(FaultApplied(tr("fleet_read_failed", self.lang, why=why), False))
            self._reading = False
            return
        self.post_message(FrameRead(frame))

    def on_frame_read(self, message: FrameRead) -> None:
        self._reading = False
        self.frame = frame = message.frame
        self.show_frame(frame)
        # What a worker said on its standard error is said once on screen: on SQLite each
        # process's clock judges, so a clock that is not the machine's is a warning the room
        # must see, and so is the line a worker stopped with.
        for wid, words in frame.said.items():
            if self._told.get(wid) != words:
                self._told[wid] = words
                self.notify(
                    words, title=worker_name(wid, self.lang), severity="warning", timeout=12
                )

    def show_frame(self, frame: FleetFrame) -> None:
        lang = self.lang
        snap = frame.snap
        cfg = self.config
        self.query_one("#status", StatusHeader).show(
            HeaderState(
                title=tr("fleet_title", lang, n=len(frame.ours)),
                now_ms=snap.now_ms,
                speed=1.0,
                mode=snap.mode,
                playing=True,
                forked=False,
                dropped_script=False,
                on_their_own=False,
                violations=tuple(sorted(snap.violations.items())),
                lang=lang,
            )
        )
        states = [
            s if s.view.id in frame.ours else dataclasses.replace(s, faults=False)
            for s in pane_states(snap, cfg, lang, True)
        ]
        grid = self.query_one("#workers", WorkerGrid)
        grid.sync(states)
        for wid, pane in grid.panes.items():
            title = self._pane_title(frame, wid)
            if pane.border_title != title:
                pane.border_title = title
        self.query_one("#tasks", TaskTable).show(snap.tasks, snap.now_ms, lang)
        self.query_one("#ledger", LedgerTable).show(snap, lang)
        self.query_one("#rejected", RejectedTable).show(snap, lang, time_moved=True)
        self.query_one("#effects", EffectsTable).show(snap, lang)
        if frame.fresh:
            self.query_one("#events", EventLog).append(list(frame.fresh), lang)
        # Belief against truth, the simulated app's panel: drawn while its tab is open, and
        # read from the store (the maker's timeline) only then.
        tab = self.query_one("#panels", TabbedContent).active
        if self.maker is not None:
            self.maker.with_timeline = tab == "tab-timeline"
        if snap.timeline is not None and time.monotonic() - self._timeline_drawn >= (
            TIMELINE_EVERY_S
        ):
            self._timeline_drawn = time.monotonic()
            self.query_one("#timeline", OwnershipTimeline).show(snap.timeline, lang)
        self.frames_shown += 1

    def _pane_title(self, frame: FleetFrame, wid: str) -> str:
        lang = self.lang
        name = worker_name(wid, lang)
        if wid not in frame.ours:
            return f"{name} · {tr('fleet_elsewhere', lang)}"
        if wid in frame.exit_status:
            return f"{name} · {tr('fleet_exited', lang, status=frame.exit_status[wid])}"
        return f"{name} · {tr('fleet_pid', lang, pid=frame.pids.get(wid))}"

    # -- the buttons ------------------------------------------------------------------------

    def on_worker_pane_fault_requested(self, message: WorkerPane.FaultRequested) -> None:
        message.stop()
        if self.fleet is None:  # a saved run: its processes are gone
            return
        if message.worker_id not in self.fleet.workers:
            self.notify(tr("fleet_not_ours", self.lang, worker=message.worker_id))
            return
        self.apply_fault(message.worker_id, message.action)

    @work(thread=True, group="fleet-faults")
    def apply_fault(self, wid: str, action: str) -> None:
        fleet, lang = self.fleet, self.lang
        assert fleet is not None
        w = fleet.workers[wid]
        pid = w.pid
        if action == "kill":
            ok, key = fleet.kill(wid), "fleet_killed"
        elif action == "stall":
            ok, key = fleet.stall(wid), "fleet_stalled"
        elif action == "resume":
            if w.stalled:
                ok, key = fleet.resume(wid), "fleet_resumed"
            else:
                ok, key = fleet.thaw(wid), "fleet_thawed"
        elif action == "freeze_heartbeat":
            if w.frozen:
                ok, key = fleet.thaw(wid), "fleet_thawed"
            else:
                ok, key = fleet.freeze(wid), "fleet_frozen"
        elif action == "restart":
            fleet.restart(wid)
            ok, key = True, "fleet_restarted"
        elif action == "partition":
            if fleet.relays is None:  # SQLite: no road to a server to cut
                self.post_message(FaultApplied(tr("fleet_no_partition", lang), False))
                return
            ok, key = fleet.partition(wid), "fleet_partitioned"
        elif action == "heal":
            ok, key = fleet.heal(wid), "fleet_healed"
        else:
            return
        if not ok:
            key = "fleet_gone"
        text = tr(key, lang, worker=wid, pid=pid, new=w.pid)
        self.post_message(FaultApplied(text, ok))

    def on_fault_applied(self, message: FaultApplied) -> None:
        self.notify(message.text, severity="information" if message.ok else "warning")
        self.read_frame()

    def action_panel(self, tab: str) -> None:
        self.query_one("#panels", TabbedContent).active = tab
        if self.maker is not None:
            self.maker.with_timeline = tab == "tab-timeline"
        self._timeline_drawn = 0.0  # drawn on the next frame, not half a second later
        self.read_frame()

    def action_add_worker(self) -> None:
        if self.fleet is not None:  # a saved run's screen only shows
            self._add_worker()

    @work(thread=True, group="fleet-faults")
    def _add_worker(self) -> None:
        assert self.fleet is not None
        w = self.fleet.add_worker_within(MAX_WORKERS)
        if w is None:
            self.post_message(FaultApplied(tr("fleet_too_many", self.lang, n=MAX_WORKERS), False))
            return
        text = tr("fleet_started", self.lang, worker=w.worker_id, pid=w.pid)
        self.post_message(FaultApplied(text, True))

    def action_enqueue(self) -> None:
        if self.fleet is not None:  # a saved run's screen only shows
            self._enqueue()

    @work(thread=True, group="fleet-writes")
    def _enqueue(self) -> None:
        assert self.fleet is not None
        made = self.fleet.enqueue(ENQUEUE_N)
        self.post_message(FaultApplied(tr("fleet_enqueued", self.lang, tasks=" ".join(made)), True))

    def action_skew(self) -> None:
        if self.fleet is not None:  # a saved run's screen only shows
            self._skew()

    @work(thread=True, group="fleet-faults")
    def _skew(self) -> None:
        """Restart one worker with its clock five minutes ahead: an idle one if there is one
        (on SQLite it may take a lease that is still live; on PostgreSQL nothing changes)."""
        fleet, lang = self.fleet, self.lang
        assert fleet is not None
        choices = [
            w for w in fleet.workers.values() if w.alive and not fleet.skews.get(w.worker_id)
        ]
        choices.sort(key=lambda w: w.belief.task is not None)
        if not choices:
            self.post_message(FaultApplied(tr("fleet_nobody_to_skew", lang), False))
            return
        w = choices[0]
        old = w.pid
        if not fleet.skew(w.worker_id, SKEW_MS):
            self.post_message(FaultApplied(tr("fleet_no_faketime", lang), False))
            return
        text = tr("fleet_skewed", lang, worker=w.worker_id, pid=old, new=w.pid)
        self.post_message(FaultApplied(text, True))

    def action_save(self) -> None:
        if self.fleet is not None:  # a saved run's screen only shows
            self._save()

    @work(thread=True, group="fleet-writes")
    def _save(self) -> None:
        self.save_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = self.save_dir / f"fleet-{stamp}.jsonl"
        assert self.fleet is not None and self.maker is not None
        log = self.maker.log
        check = self.fleet.save(path, log.saved() if log is not None else [])
        verdict = tr(
            "fleet_verdict_held" if not check.findings else "fleet_verdict_broken",
            self.lang,
            n=len(check.findings),
        )
        text = tr("fleet_saved", self.lang, path=str(path), verdict=verdict)
        self.post_message(FaultApplied(text, not check.findings))

    def action_quit_fleet(self) -> None:
        self.app.exit(0)
