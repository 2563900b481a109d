"""The fleet screen: the app's worker panes, task table and panels on real processes.

Each pane is a `borrowed-keys worker NAME` child process (its pid in the title). Its fault
words and keys are the simulated app's, from the one table in demo/controls.py: `w` chooses
the worker, `h` freezes its heartbeat (a line on its control channel), `z` stalls it
(SIGSTOP), `k` kills it (SIGKILL), `u` resumes it (SIGCONT, its heartbeat back) or restarts
a dead one under the same name, `c` cuts its road to the server (PostgreSQL) or heals it;
`t` restarts it with a skewed clock; `a` / `x` approve or reject the selected task parked
for a person, as `borrowed-keys approve TASK --db ...` does. The screen decides nothing and
waits for nothing: a thread worker reads one frame (the events since the last, the store's
rows, each process's belief) and posts it; a fault button's signal is sent on a thread
worker too, and its outcome posted in the past tense. The safety light is the simulations'
checker judging the events table as it is read. Workers started elsewhere against the same
database appear from the store's rows, without fault buttons.
"""

import contextlib
import dataclasses
import signal
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import ClassVar

from rich.markup import escape
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.scroll_view import ScrollView
from textual.widgets import Static, TabbedContent, TabPane

from core.engine.config import LeaseConfig
from core.engine.errors import BorrowedKeysError
from core.engine.people import called
from core.engine.vocabulary import TaskStatus
from core.fleet.arrivals import Arrivals
from core.fleet.command import MAX_WORKERS
from core.fleet.frame import FleetFrame, FrameMaker
from core.fleet.supervisor import Fleet
from core.scenarios.telling import error_sentence, spaced, task_words
from demo.controls import (
    FAULT_BY_ACTION,
    FAULT_HELP,
    fault_bindings,
    fault_now,
)
from demo.controls import worker_faults as faults_of
from demo.i18n import label, tr
from demo.screens.fleet_keys import ADD_KEY as ADD_KEY
from demo.screens.fleet_keys import DECISIONS as _DECISIONS
from demo.screens.fleet_keys import fleet_key_hints
from demo.screens.layout import SHORT_HEIGHT
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
SKEW_MS = 300_000  # how far ahead `t` sets a worker's clock
FEED_S = 0.5  # how often the steady queue looks whether new tasks are due


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


def fleet_title(n: int, lang: str) -> str:
    """The header's title, which reads right for one worker as for many."""
    return tr("fleet_title_one", lang) if n == 1 else tr("fleet_title", lang, n=n)


def ended(status: int | None, said: str | None, lang: str) -> str:
    """How a worker's process ended, in words: the signal that killed it, or what it said
    as it stopped, never a bare exit status."""
    if status is not None and status < 0:
        with contextlib.suppress(ValueError):
            sig = signal.Signals(-status).name
            return tr("fleet_killed_by", lang, signal=sig)
    if status and said:
        return tr("fleet_stopped_saying", lang, words=said)
    return tr("fleet_exited", lang, status=status)


class _Follow:
    """Whether a panel follows its newest rows: it does until the presenter scrolls it up,
    and again once they scroll back to its end. Rows come faster than the panel learns its
    new height, so "at the end" is not asked of one frame alone: a panel that was
    following and was not moved up by hand goes on following."""

    def __init__(self) -> None:
        self.on = True
        self._seen_y = 0.0  # where the panel stood at the last frame

    @contextlib.contextmanager
    def around(self, view: ScrollView) -> Iterator[bool]:
        y = view.scroll_y
        if y >= view.max_scroll_y:
            self.on = True
        elif y < self._seen_y:
            self.on = False  # scrolled up to read
        self._seen_y = y
        yield self.on
        if self.on:
            view.call_after_refresh(view.scroll_end, animate=False)


class FleetCommands(Provider):
    """The fleet's palette: every fault on every worker, from the one fault table, and the
    fleet's own acts (skew a clock, the queue's rate, one more worker, save)."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        screen = self.screen
        if not isinstance(screen, FleetScreen) or screen.fleet is None:
            return []
        fleet, lang = screen.fleet, screen.lang
        out: list[tuple[str, str, Callable[[], object]]] = []
        for wid, w in list(fleet.workers.items()):
            name = called(wid, lang)
            for fault, acts in faults_of(dead=not w.alive, partitioned=fleet.partitioned(wid)):
                if acts:
                    out.append(
                        (
                            f"{label(tr(fault.word, lang), lang)}{name}  [{fault.key}]",
                            tr("fleet_fault_help", lang, press=fault.key),
                            partial(screen.fault_on, wid, fault.action),
                        )
                    )
        for key, word, action in (
            *((c.first_key, c.word, c.action) for c in _DECISIONS),
            ("t", "fleet_skew_key", "skew"),
            ("+", "fleet_palette_faster", "faster"),
            ("-", "fleet_palette_slower", "slower"),
            (ADD_KEY, "fleet_add", "add_worker"),
            ("e", "fleet_enqueue", "enqueue"),
            ("s", "fleet_save", "save"),
        ):
            run = partial(screen.call_later, screen.run_action, action)
            out.append((f"{tr(word, lang)}  [{key}]", tr(f"tip_{word}", lang), run))
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            # as Text: a title's "[k]" is the key, not markup
            yield DiscoveryHit(Text(title), callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)


class FleetHelp(ModalScreen[None]):
    """The fleet's keys, from the same tables as the key bar; any key closes it."""

    DEFAULT_CSS = """
    FleetHelp { align: center middle; }
    FleetHelp > VerticalScroll { width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: round $accent; padding: 0 1; background: $panel; }
    FleetHelp Static { width: 100%; }
    """

    def __init__(self, lang: str, on_postgresql: bool) -> None:
        super().__init__()
        self.lang = lang
        self.on_postgresql = on_postgresql

    def compose(self) -> ComposeResult:
        lang = self.lang
        zh = lang == "zh"
        rows = [
            ("w", tr("tip_choose_worker", lang)),
            (FAULT_HELP.keys, FAULT_HELP.zh if zh else FAULT_HELP.en),
            *((h.keys, h.zh if zh else h.en) for h in (_DECISIONS[0].help,) if h is not None),
            ("t", tr("tip_fleet_skew_key", lang)),
            ("-  +", tr("tip_fleet_rate_key", lang)),
            (ADD_KEY, tr("tip_fleet_add", lang)),
            ("e", tr("tip_fleet_enqueue", lang)),
            ("s", tr("tip_fleet_save", lang)),
            ("1 … 6", tr("panels", lang)),
            ("ctrl+p", tr("palette", lang)),
            ("q", tr("fleet_quit", lang)),
        ]
        width = max(len(k) for k, _ in rows)
        lines = [f"[b]{tr('fleet_help_title', lang)}[/b]"]
        lines += [f"[b]{escape(k.ljust(width))}[/b]  {escape(v)}" for k, v in rows]
        db_note = tr("fleet_help_pg" if self.on_postgresql else "fleet_help_sqlite", lang)
        # the note under the header, which a short screen leaves out to keep its panels
        clock_note = tr("fleet_note_pg" if self.on_postgresql else "fleet_note_sqlite", lang)
        lines += ["", escape(clock_note), "", escape(db_note)]
        lines += ["", f"[dim]{tr('fleet_help_close', lang)}[/dim]"]
        with VerticalScroll():  # a short terminal scrolls it (the wheel)
            yield Static("\n".join(lines))

    def on_key(self) -> None:
        self.dismiss()

    def on_click(self) -> None:
        self.dismiss()


class FleetScreen(Screen[None]):
    """Real worker processes, the store's rows as the truth, the checker's light."""

    DEFAULT_CSS = """
    FleetScreen { layout: vertical; overflow: hidden; }
    FleetScreen #fleet-note { height: auto; color: $text-muted; padding: 0 1; }
    FleetScreen.-short #fleet-note { display: none; }
    FleetScreen #fleet-left { height: auto; }
    FleetScreen #fleet-lower { height: 1fr; min-height: 6; }
    FleetScreen #tasks { max-height: 20vh; }
    FleetScreen #keybar { dock: bottom; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *fault_bindings("en"),
        Binding("t", "skew", "skew a clock", id="fleet.skew"),
        *(
            Binding(c.keys, c.action, tr(c.word, "en"), tooltip=tr(c.tip, "en"), id=f"fleet.{c.id}")
            for c in _DECISIONS
        ),
        Binding(ADD_KEY, "add_worker", "+ worker", id="fleet.add"),
        # the simulated app's next step, pressed by habit: a fleet has no steps, it says so
        Binding("n,right", "no_steps", show=False),
        Binding("plus,equals_sign", "faster", "more tasks", id="fleet.faster"),
        Binding("minus", "slower", "fewer tasks", id="fleet.slower"),
        Binding("e", "enqueue", "enqueue", id="fleet.enqueue"),
        Binding("s", "save", "save", id="fleet.save"),
        Binding("question_mark", "help", "help", id="fleet.help"),
        Binding("q", "quit_fleet", "quit", id="fleet.quit"),
        # the simulated app's panel keys, for the panels a fleet has (no checkpoints tab)
        *(Binding(key, f"panel('{tab}')", show=False) for key, tab in _PANEL_KEYS),
    ]
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {FleetCommands}

    def __init__(
        self,
        fleet: Fleet | None,
        lang: str,
        save_dir: Path,
        live: bool = True,
        *,
        config: LeaseConfig | None = None,
        on_postgresql: bool = False,
        arrivals: Arrivals | None = None,
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
        self._task_waits = False  # a task waits for a person: the bar leads with a / x
        self.frames_shown = 0
        self._told: dict[str, str] = {}  # the last line of each worker's said on screen
        self.chosen: str | None = None  # the worker the fault keys act on (`w`)
        self.arrivals = arrivals if self.live else None  # the steady queue, if there is one
        self._feeding = False
        # The steady queue's pace (monotonic seconds): a test drives it instead of waiting.
        self.clock: Callable[[], float] = time.monotonic
        self._timeline_drawn = 0.0  # when Belief vs truth was last drawn (monotonic)
        self._follow = {k: _Follow() for k in ("ledger", "rejected", "effects", "events")}

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

    def on_resize(self, event: events.Resize) -> None:
        # a short screen leaves the note under the header to the help page (`?`): with it,
        # the panels pushed the screen past its height and its scrollbar covered the key bar
        self.set_class(event.size.height < SHORT_HEIGHT, "-short")

    def on_mount(self) -> None:
        lang = self.lang
        note = "fleet_note_pg" if self.on_postgresql else "fleet_note_sqlite"
        self.query_one("#fleet-note", Static).update(tr(note, lang))
        self.query_one("#keybar", KeyBar).set_items(self.key_hints())
        # Under the app's two rows of panes, the lower panels and the key bar keep their
        # place on a short terminal: the panes scroll instead (an inline style outranks
        # the app's sheet, which the simulated app's screen keeps).
        self.query_one("#workers", WorkerGrid).styles.max_height = "45vh"
        if self.fleet is not None and self.fleet.workers:
            self.chosen = next(iter(self.fleet.workers))
        if self.live:
            self.set_interval(REFRESH_S, self.read_frame)
            if self.arrivals is not None:
                self.set_interval(FEED_S, self.feed)
        if self.maker is not None:
            self.read_frame()

    def key_hints(self, task_waits: bool = False) -> list[Hint]:
        return fleet_key_hints(self.lang, task_waits)

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
                self.notify(words, title=called(wid, self.lang), severity="warning", timeout=12)

    def show_frame(self, frame: FleetFrame) -> None:
        lang = self.lang
        snap = frame.snap
        cfg = self.config
        self.query_one("#status", StatusHeader).show(
            HeaderState(
                title=fleet_title(len(frame.ours), lang),
                now_ms=snap.now_ms,
                speed=1.0,
                mode=snap.mode,
                playing=True,
                forked=False,
                dropped_script=False,
                on_their_own=False,
                violations=tuple(sorted(snap.violations.items())),
                lang=lang,
                service=frame.service,
            )
        )
        states = [
            s if s.view.id in frame.ours else dataclasses.replace(s, faults=False)
            for s in pane_states(snap, cfg, lang, True, chosen=self.chosen)
        ]
        waits = any(t.row.status == TaskStatus.WAITING for t in snap.tasks)
        if waits != self._task_waits:
            self._task_waits = waits
            self.query_one("#keybar", KeyBar).set_items(self.key_hints(waits))
        grid = self.query_one("#workers", WorkerGrid)
        grid.sync(states)
        for wid, pane in grid.panes.items():
            title = self._pane_title(frame, wid)
            if pane.border_title != title:
                pane.border_title = title
        self.query_one("#tasks", TaskTable).show(snap.tasks, snap.now_ms, lang)
        # The tables follow the newest rows as they come, unless scrolled up to read.
        ledger = self.query_one("#ledger", LedgerTable)
        with self._follow["ledger"].around(ledger):
            ledger.show(snap, lang)
        rejected = self.query_one("#rejected", RejectedTable)
        with self._follow["rejected"].around(rejected) as following:
            rejected.scroll_to_new = following  # its newest row's cursor would scroll it
            rejected.show(snap, lang, time_moved=True)
        effects = self.query_one("#effects", EffectsTable)
        with self._follow["effects"].around(effects):
            effects.show(snap, lang)
        log = self.query_one("#events", EventLog)
        with self._follow["events"].around(log) as following:
            log.auto_scroll = following
            if frame.fresh:
                log.append(list(frame.fresh), lang)
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
        name = called(wid, lang)
        if wid not in frame.ours:
            return f"{name} · {tr('fleet_elsewhere', lang)}"
        if wid in frame.exit_status:
            return f"{name} · {ended(frame.exit_status[wid], frame.said.get(wid), lang)}"
        return f"{name} · {tr('fleet_pid', lang, pid=frame.pids.get(wid))}"

    # -- the faults: keys, words in the panes, the palette -----------------------------------

    def on_worker_pane_fault_requested(self, message: WorkerPane.FaultRequested) -> None:
        message.stop()
        self.fault_on(message.worker_id, message.action)

    def fault_on(self, wid: str, action: str) -> None:
        """Do `action` (a row of the fault table) to the worker `wid`, on a thread."""
        if self.fleet is None:  # a saved run: its processes are gone
            return
        if wid not in self.fleet.workers:
            name = called(wid, self.lang)
            self.notify(tr("fleet_not_ours", self.lang, worker=name))
            return
        self.apply_fault(wid, action)

    def action_choose_worker(self) -> None:
        """The next of this fleet's workers becomes the one the fault keys act on."""
        ids = list(self.fleet.workers) if self.fleet is not None else []
        if not ids:
            self.notify(tr("no_worker", self.lang), severity="warning", timeout=3)
            return
        at = ids.index(self.chosen) if self.chosen in ids else -1
        self.chosen = ids[(at + 1) % len(ids)]
        name = called(self.chosen, self.lang)
        self.notify(tr("chosen_worker", self.lang, name=name), timeout=4)
        if self.frame is not None:
            self.show_frame(self.frame)

    def action_fault(self, action: str) -> None:
        """A fault's key on the chosen worker: what its word in the pane does now."""
        fleet = self.fleet
        if fleet is None:
            return
        if self.chosen not in fleet.workers:
            self.action_choose_worker()
        wid = self.chosen
        if wid is None or wid not in fleet.workers:
            return
        now = fault_now(
            action, dead=not fleet.workers[wid].alive, partitioned=fleet.partitioned(wid)
        )
        self.fault_on(wid, now.action)

    @work(thread=True, group="fleet-faults")
    def apply_fault(self, wid: str, action: str) -> None:
        """The fault table's row for `action`, done by the fleet's method its row below both
        apps names (core/fleet/faults.py)."""
        fleet, lang = self.fleet, self.lang
        assert fleet is not None
        fault = FAULT_BY_ACTION.get(action)
        if fault is None:
            return
        if fault.act.needs_relay and fleet.relays is None:
            self.post_message(FaultApplied(tr("fleet_no_partition", lang), False))
            return
        w = fleet.workers[wid]
        pid = w.pid
        if fault.action == "partition" and w.alive and not w.ready:
            # Cut while it opens its store, its first connection fails, and a first
            # connection that fails is an answer (a wrong URL): it would stop.
            name = called(wid, lang)
            self.post_message(FaultApplied(tr("fleet_not_ready", lang, worker=name), False))
            return
        if fault.action == "restart" and fleet.partitioned(wid):
            self.post_message(
                FaultApplied(tr("fleet_cut_start", lang, worker=called(wid, lang)), False)
            )
            return
        ok = bool(getattr(fleet, fault.act.fleet)(wid))
        name = called(wid, lang)
        text = tr(fault.done if ok else "fleet_gone", lang, worker=name, pid=pid, new=w.pid)
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

    def action_approve(self) -> None:
        self._decide_waiting(True)

    def action_reject(self) -> None:
        self._decide_waiting(False)

    def _decide_waiting(self, approved: bool) -> None:
        """The selected task if it waits for a person (the first waiting one if none is
        selected), approved or rejected by the store, on a thread."""
        if self.fleet is None or self.frame is None:  # a saved run's screen only shows
            return
        task = self.query_one("#tasks", TaskTable).waiting_selected(self.frame.snap.tasks)
        if task is None:
            what = tr("approve" if approved else "reject", self.lang)
            self.notify(tr("no_waiting", self.lang, what=what), severity="warning")
            return
        self._decide(task, approved)

    @work(thread=True, group="fleet-writes")
    def _decide(self, task: str, approved: bool) -> None:
        assert self.fleet is not None
        try:
            self.fleet.decide(task, approved)
        except BorrowedKeysError as exc:
            self.post_message(FaultApplied(error_sentence(exc, self.lang), False))
            return
        # the task by its name ("已批准任务 1"), as the task table names it, never its id
        named = task_words(task, self.lang)
        form = "fleet_approved" if approved else "fleet_rejected"
        said = spaced(tr(form, self.lang, task=named), self.lang)
        self.post_message(FaultApplied(said, True))

    def action_no_steps(self) -> None:
        self.notify(tr("fleet_no_steps", self.lang, press=ADD_KEY), timeout=4)

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
        name = called(w.worker_id, self.lang)
        text = tr("fleet_started", self.lang, worker=name, pid=w.pid)
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
        """Restart the chosen worker with its clock five minutes ahead (on SQLite it may
        take a lease that is still live; on PostgreSQL nothing changes); `t` again on a
        skewed worker gives it its own clock back."""
        fleet, lang = self.fleet, self.lang
        assert fleet is not None
        wid = self.chosen
        if wid is None or wid not in fleet.workers:
            self.post_message(FaultApplied(tr("no_worker", lang), False))
            return
        if fleet.partitioned(wid):  # a skew is a restart under libfaketime
            self.post_message(
                FaultApplied(tr("fleet_cut_start", lang, worker=called(wid, lang)), False)
            )
            return
        w = fleet.workers[wid]
        old = w.pid
        back = bool(fleet.skews.get(wid))
        if not fleet.skew(wid, 0 if back else SKEW_MS):
            self.post_message(FaultApplied(tr("fleet_no_faketime", lang), False))
            return
        key = "fleet_unskewed" if back else "fleet_skewed"
        text = tr(key, lang, worker=called(wid, lang), pid=old, new=w.pid)
        self.post_message(FaultApplied(text, True))

    # -- the steady queue -----------------------------------------------------------------

    def feed(self) -> None:
        if self.fleet is None or self.arrivals is None or self._feeding:
            return
        self._feeding = True
        self._feed()

    @work(thread=True, group="fleet-writes")
    def _feed(self) -> None:
        assert self.fleet is not None and self.arrivals is not None
        try:
            self.fleet.feed(self.arrivals, self.clock())
        except BorrowedKeysError as exc:
            why = error_sentence(exc, self.lang)
            self.post_message(FaultApplied(tr("fleet_read_failed", self.lang, why=why), False))
        finally:
            self._feeding = False

    def action_faster(self) -> None:
        self._rate(faster=True)

    def action_slower(self) -> None:
        self._rate(faster=False)

    def _rate(self, *, faster: bool) -> None:
        if self.fleet is None:
            return
        if self.arrivals is None:
            self.notify(tr("fleet_fixed_batch", self.lang), severity="warning", timeout=4)
            return
        rate = self.arrivals.faster() if faster else self.arrivals.slower()
        self.notify(tr("fleet_rate_now", self.lang, rate=f"{rate:g}"), timeout=3)

    def action_help(self) -> None:
        self.app.push_screen(FleetHelp(self.lang, self.on_postgresql))

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
        # agent work writes to the fenced service: its books are judged too, as `--check`
        # judges the saved run, so the toast never says "held" over a stale write it took
        service = self.fleet.service_findings()
        if service is not None:
            said = "fleet_service_broken" if service else "fleet_service_held"
            verdict += tr(said, self.lang, n=len(service))
        text = tr("fleet_saved", self.lang, path=str(path), verdict=verdict)
        self.post_message(FaultApplied(text, not check.findings and not service))

    def action_quit_fleet(self) -> None:
        self.app.exit(0)
