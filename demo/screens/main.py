"""The main screen: header, worker panes, task table, tabbed panels, narration, controls.

All state comes from the Session's snapshots; the screen only turns key presses and button
clicks into Session calls and redraws in place on a fixed refresh interval.
"""

import dataclasses
import os
import time
from collections import Counter
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, HorizontalScroll, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, TabbedContent, TabPane

from core.engine.config import Mode
from core.engine.records import EventRow
from core.scenarios.session import Session
from core.sim.live import LivePacer
from core.sim.snapshot import Snapshot, SnapshotPart
from core.sim.spec import WORKER_ACTIONS, Action, AddWorker, Advance, Approve, Enqueue, Reject
from core.sim.timeline import Timeline
from demo.controls import CONTROLS
from demo.host import Host, host
from demo.i18n import tr
from demo.widgets.narration import NarrationPanel, narration_text, refusal_text
from demo.widgets.panels import (
    CheckpointTable,
    EffectsTable,
    EventLog,
    LedgerTable,
    RejectedTable,
)
from demo.widgets.status_header import HeaderState, StatusHeader
from demo.widgets.task_table import TaskTable
from demo.widgets.timeline_view import OwnershipTimeline
from demo.widgets.worker_pane import PaneState, WorkerGrid, WorkerPane

REFRESH_S = 0.1  # the fixed refresh interval (10 Hz)
TABLE_EVERY = 3  # the task table and the visible panel follow every 3rd refresh (~3 Hz)
SANDBOX_STEP_MS = 5_000  # "next" in a live run lets this much virtual time pass
AUTOPLAY_S = 3.0  # seconds between steps of an auto-playing script at x1

TABS = (
    ("tab-ledger", "ledger"),
    ("tab-checkpoints", "checkpoints"),
    ("tab-rejected", "rejected"),
    ("tab-effects", "effects"),
    ("tab-events", "event_log"),
    ("tab-timeline", "timeline"),
)

# The snapshot lists each panel needs; the others are not read while it is shown.
PANEL_PARTS: dict[str, frozenset[SnapshotPart]] = {
    "tab-ledger": frozenset({"ledger"}),
    "tab-checkpoints": frozenset({"checkpoints"}),
    "tab-effects": frozenset({"effects"}),
}

BUTTONS = (
    ("btn-play", "play_pause", "play_pause", "tip_play"),
    ("btn-previous", "previous_step", "previous", "tip_previous"),
    ("btn-next", "next_step", "next", "tip_next"),
    ("btn-restart", "restart", "restart", "tip_restart"),
    ("btn-slower", "slower", "slower", "tip_speed"),
    ("btn-faster", "faster", "faster", "tip_speed"),
    ("btn-language", "language", "language", "tip_lang"),
    ("btn-mode", "next_mode", "mode_next", "tip_mode"),
    ("btn-approve", "approve", "approve", "tip_approve"),
    ("btn-reject", "reject", "reject", "tip_reject"),
    ("btn-enqueue", "enqueue", "enqueue", "tip_enqueue"),
    ("btn-save", "save", "save", "tip_save"),
    ("btn-help", "help", "help", "tip_help"),
    ("btn-quit", "quit", "quit", "tip_quit"),
)


def make_bindings(lang: str) -> list[BindingType]:
    return [
        Binding(
            keys,
            action,
            tr(word, lang),
            show=show,
            tooltip=tr(tip, lang),
            id=bid,
            priority=True,
            key_display="␣" if keys == "space" else None,
        )
        for bid, keys, action, word, tip, show in CONTROLS
    ]


class MainScreen(Screen[None]):
    """One run: a scenario in playback (maybe forked) or the sandbox."""

    BINDINGS: ClassVar[list[BindingType]] = make_bindings("en")

    def __init__(self, session: Session, *, playing: bool | None = None) -> None:
        super().__init__()
        self.session = session
        self.pacer = LivePacer(speed=1.0)
        self.playing = session.is_sandbox if playing is None else playing
        self.timeline = Timeline()
        self.dedup: Counter[str] = Counter()
        self._seen_seq = 0
        self._sim_id = 0
        self._last_now = -1
        self._last_key: tuple[int, int, int, str, int] | None = None
        self._tables_key: tuple[int, int, int, str, int] | None = None
        self._autoplay_wall = 0.0
        self._message: str | None = None
        self.refresh_count = 0
        self.tables_refreshes = 0  # refreshes that also brought the tables up to date
        self._snap: Snapshot | None = None
        self._pending_events: list[EventRow] = []
        self._rejections_seen = 0
        self._rejected_now = -1

    @property
    def bk_app(self) -> Host:
        return host(self.app)

    @property
    def lang(self) -> str:
        return self.bk_app.lang

    # -- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="status")
        with VerticalScroll(id="narration-box"):
            yield NarrationPanel(id="narration")
        with Container(id="body"):
            with Vertical(id="left"):
                yield WorkerGrid(id="workers")
                yield TaskTable(id="tasks")
            with TabbedContent(id="panels"):
                with TabPane("Ledger", id="tab-ledger"):
                    yield LedgerTable(id="ledger")
                with TabPane("Checkpoints", id="tab-checkpoints"):
                    yield CheckpointTable(id="checkpoints")
                with TabPane("Rejected", id="tab-rejected"):
                    yield RejectedTable(id="rejected")
                with TabPane("Effects", id="tab-effects"):
                    yield EffectsTable(id="effects")
                with TabPane("Event log", id="tab-events"):
                    yield EventLog(id="events")
                with TabPane("Ownership", id="tab-timeline"), VerticalScroll():
                    yield OwnershipTimeline(id="timeline")
        with HorizontalScroll(id="controls"):
            # outside the grid, so it stays in sight however many panes there are
            yield Button("+ Worker", id="add-worker", action="screen.add_worker", compact=True)
            for bid, action, word, _tip in BUTTONS:
                yield Button(word, id=bid, action=f"screen.{action}", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.relabel()
        self.refresh_view(force=True)
        if self.bk_app.live_clock:
            self.set_interval(REFRESH_S, self.on_tick)
        self.query_one("#tasks", TaskTable).focus(scroll_visible=False)

    def on_resize(self) -> None:
        self.set_class(self.size.width < 120 or self.size.height < 36, "-narrow")

    # -- the clock ---------------------------------------------------------------------------

    def on_tick(self) -> None:
        """The fixed-interval refresh: live time in a live run, auto-steps in playback."""
        now = time.monotonic()
        if self.playing and self.session.live:
            self.pacer.paused = False
            self.session.tick(self.pacer.tick(now))
        else:
            self.pacer.paused = True
            self.pacer.tick(now)
            if self.playing and now - self._autoplay_wall >= AUTOPLAY_S / self.pacer.speed:
                self._autoplay_wall = now
                if self.session.next_step() is None:
                    self.playing = False
        self.refresh_view()

    # -- drawing -----------------------------------------------------------------------------

    def relabel(self) -> None:
        """Words that change only with the language (tabs, buttons, footer)."""
        lang = self.lang
        tabs = self.query_one("#panels", TabbedContent)
        for pane_id, word in TABS:
            tabs.get_tab(pane_id).label = tr(word, lang)
        for bid, _action, word, tip in BUTTONS:
            button = self.query_one(f"#{bid}", Button)
            button.label = tr(word, lang)
            button.tooltip = tr(tip, lang)
        add = self.query_one("#add-worker", Button)
        add.label = tr("add_worker", lang)
        for button in self.query_one("#controls").query(Button):
            # a new label does not resize the button: size it from the label's cells
            # (a CJK character is two), or 下一步 shows as 下一 and English as Engl
            button.styles.width = cell_len(str(button.label)) + 2
        by_id = {c[0]: c for c in CONTROLS}
        bindings = self._bindings.key_to_bindings
        for key, items in bindings.items():
            fresh = []
            for b in items:
                spec = by_id.get(b.id or "")
                if spec is not None:
                    b = dataclasses.replace(
                        b, description=tr(spec[3], lang), tooltip=tr(spec[4], lang)
                    )
                fresh.append(b)
            bindings[key] = fresh
        self.refresh_bindings()

    def _reset_incremental(self) -> None:
        self._sim_id = id(self.session.sim)
        self._seen_seq = 0
        self.timeline = Timeline()
        self.dedup.clear()
        self.query_one("#events", EventLog).clear()
        self._pending_events = []
        self._rejections_seen = 0
        self.query_one("#rejected", RejectedTable).reset()
        self.query_one("#timeline", OwnershipTimeline).reset()

    def refresh_view(self, *, force: bool = False) -> None:
        """One refresh: read a snapshot and update the widgets in place.

        The header, narration and worker panes are updated on every refresh; the task table
        and the visible panel on every TABLE_EVERY-th one (and at once when `force`d by an
        act, a step or a key, or when time stands still and they are behind).
        """
        session = self.session
        sim = session.sim
        key = (id(sim), sim.now_ms, sim.last_event_seq, self.lang, len(session.recorded))
        moved = key != self._last_key
        behind = key != self._tables_key
        if not force and not moved and not behind and not self._header_dirty():
            return
        self._last_key = key
        self.refresh_count += 1
        tables = force or not moved or self.refresh_count % TABLE_EVERY == 0
        if id(sim) != self._sim_id:
            self._reset_incremental()
        lang = self.lang
        include = PANEL_PARTS.get(self._active_tab(), frozenset()) if tables else frozenset()
        snap = session.snapshot(include)
        self._last_now = snap.now_ms
        new_events = session.events(self._seen_seq) if sim.last_event_seq > self._seen_seq else []
        if new_events:
            self._seen_seq = new_events[-1].seq
            self.timeline.feed(new_events)
            for ev in new_events:
                if ev.event == "effect_deduplicated":
                    self.dedup[str(ev.detail.get("key", ev.detail.get("idempotency_key", "")))] += 1
            self._pending_events.extend(new_events)
        self._show_header(snap)
        narration = self.query_one("#narration-box")
        narration.display = not session.is_sandbox or bool(self._message)
        self.query_one("#narration", NarrationPanel).show(
            narration_text(session, lang, self._message)
        )
        self._show_workers(snap)
        if not tables:
            return
        self._tables_key = key
        self.tables_refreshes += 1
        self.query_one("#tasks", TaskTable).show(snap.tasks, snap.now_ms, lang)
        tab = self.query_one("#panels", TabbedContent).get_tab("tab-rejected")
        n = len(snap.rejections)
        label = tr("rejected", lang) + (f" ({n})" if n else "")
        if n > self._rejections_seen and self._active_tab() != "tab-rejected":
            label += " ●"
        if str(tab.label) != label:
            tab.label = label  # a new label costs a layout: only when it changed
        self._snap = snap
        self._show_active_panel()

    def _active_tab(self) -> str:
        return self.query_one("#panels", TabbedContent).active

    def _show_active_panel(self) -> None:
        """Only the panel on screen is brought up to date; the others catch up when shown."""
        snap, lang = self._snap, self.lang
        if snap is None:
            return
        active = self._active_tab()
        if active == "tab-ledger":
            self.query_one("#ledger", LedgerTable).show(snap, lang)
        elif active == "tab-checkpoints":
            self.query_one("#checkpoints", CheckpointTable).show(snap, lang)
        elif active == "tab-rejected":
            self._rejections_seen = len(snap.rejections)
            self.query_one("#rejected", RejectedTable).show(
                snap, lang, time_moved=snap.now_ms != self._rejected_now
            )
            self._rejected_now = snap.now_ms
        elif active == "tab-effects":
            self.query_one("#effects", EffectsTable).show(snap, self.dedup, lang)
        elif active == "tab-events":
            if self._pending_events:
                events, self._pending_events = self._pending_events, []
                self.query_one("#events", EventLog).append(events[-2000:], lang)
        elif active == "tab-timeline":
            self.query_one("#timeline", OwnershipTimeline).show(self.timeline, snap.now_ms, lang)

    def _header_dirty(self) -> bool:
        status = self.query_one("#status", StatusHeader)
        shown = status._shown
        return shown is None or shown.playing != self.playing or shown.speed != self.pacer.speed

    def _show_header(self, snap: Snapshot) -> None:
        violations = tuple((k, v) for k, v in sorted(snap.violations.items()) if v)
        self.query_one("#status", StatusHeader).show(
            HeaderState(
                title=self.session.title(self.lang),
                now_ms=snap.now_ms,
                speed=self.pacer.speed,
                mode=snap.mode,
                playing=self.playing,
                forked=self.session.forked,
                dropped_script=self.session.dropped_script,
                violations=violations,
                lang=self.lang,
            )
        )

    def _show_workers(self, snap: Snapshot) -> None:
        sim = self.session.sim
        cfg = sim.config
        steps = {t.id: t.steps for t in self.session.settings.tasks}
        for ev_task in snap.tasks:
            if ev_task.task_id not in steps:
                steps[ev_task.task_id] = 0
        states = [
            PaneState(
                view=w,
                ttl_ms=cfg.ttl_ms,
                heartbeat_ms=cfg.heartbeat_ms,
                deadline_ms=cfg.deadline_ms,
                total_steps=steps.get(w.task_id or "") or None,
                client_clock=snap.mode == Mode.CLIENT_CLOCK.value,
                lang=self.lang,
            )
            for w in snap.workers
        ]
        self.query_one("#workers", WorkerGrid).sync(states)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_view(force=True)  # the snapshot held may lack this panel's list
        if event.pane.id == "tab-rejected":
            event.tab.label = str(event.tab.label).removesuffix(" ●")

    # -- acting --------------------------------------------------------------------------------

    def act(self, action: Action) -> bool:
        """An act of the person: forks a playback, is recorded, and shows at once."""
        result = self.session.act(action)
        self._message = None if result.ok else refusal_text(self.session, action, result, self.lang)
        if not result.ok:
            self.notify(self._message or result.message, severity="warning", timeout=4)
        self.refresh_view(force=True)
        return result.ok

    def on_worker_pane_fault_requested(self, message: WorkerPane.FaultRequested) -> None:
        self.act(WORKER_ACTIONS[message.action](message.worker_id))

    def action_play_pause(self) -> None:
        self.playing = not self.playing
        self._autoplay_wall = time.monotonic()
        self.pacer.paused = not self.playing
        self.refresh_view(force=True)

    def action_show_tab(self, pane_id: str) -> None:
        self.query_one("#panels", TabbedContent).active = pane_id
        self.refresh_view(force=True)

    def action_pause(self) -> None:
        self.playing = False
        self.pacer.paused = True
        self.refresh_view(force=True)

    def action_next_step(self) -> None:
        self._message = None
        if self.session.live:
            self.session.tick(SANDBOX_STEP_MS)
        else:
            self.session.next_step()
        self.refresh_view(force=True)

    def action_reveal(self) -> None:
        """Interview mode: the step waits on its question until the presenter reveals it."""
        self._message = None
        if self.session.reveal() is None:
            self.notify(tr("nothing_to_reveal", self.lang), timeout=3)
        self.refresh_view(force=True)

    def action_previous_step(self) -> None:
        self._message = None
        self.session.previous_step()
        self.refresh_view(force=True)

    def action_restart(self) -> None:
        self._message = None
        self.session.restart()
        self.refresh_view(force=True)

    def action_advance(self, ms: int) -> None:
        """Let `ms` of virtual time pass (a live run; tests drive time with this)."""
        if self.session.live:
            self.session.tick(ms)
        else:
            self.act(Advance(ms))
        self.refresh_view(force=True)

    def action_slower(self) -> None:
        self.pacer.slower()
        self.refresh_view(force=True)

    def action_faster(self) -> None:
        self.pacer.faster()
        self.refresh_view(force=True)

    def action_language(self) -> None:
        self.bk_app.lang = "en" if self.lang == "zh" else "zh"

    def on_language_changed(self) -> None:
        """Called by the app after a language switch."""
        self.relabel()
        seen = self._rejections_seen
        self._sim_id = 0  # rewrite the event log in the new language
        self.refresh_view(force=True)
        if seen > self._rejections_seen:  # the same run: rejections already looked at stay seen
            self._rejections_seen = seen
            self.refresh_view(force=True)

    def action_next_mode(self) -> None:
        modes = list(Mode)
        self.set_mode(modes[(modes.index(self.session.mode) + 1) % len(modes)])

    def set_mode(self, mode: Mode) -> None:
        self._message = None
        self.session.set_mode(mode)
        self.notify(tr("mode_now", self.lang, mode=mode.value), timeout=3)
        self.refresh_view(force=True)

    def _waiting_task(self, what: str) -> str | None:
        snap = self.session.snapshot()
        task = self.query_one("#tasks", TaskTable).waiting_selected(snap.tasks)
        if task is None:
            self.notify(tr("no_waiting", self.lang, what=tr(what, self.lang)), severity="warning")
        return task

    def action_approve(self) -> None:
        task = self._waiting_task("approve")
        if task is not None:
            self.act(Approve(task))

    def action_reject(self) -> None:
        task = self._waiting_task("reject")
        if task is not None:
            self.act(Reject(task))

    def action_enqueue(self, kind: str = "ledger") -> None:
        taken = {t.task_id for t in self.session.snapshot().tasks}
        n = len(taken) + 1
        while f"task-{n}" in taken:
            n += 1
        self.act(Enqueue(f"task-{n}", kind=kind))

    def action_add_worker(self) -> None:
        taken = {w.id for w in self.session.snapshot().workers}
        n = len(taken) + 1
        while f"w{n}" in taken:
            n += 1
        self.act(AddWorker(f"w{n}"))

    def action_help(self) -> None:
        from demo.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))

    def action_save(self) -> list[Path]:
        paths = self.bk_app.save_all(self.session)
        folder = f"{paths[0].parent}{os.sep}"
        names = "\n".join(f"  {p.name}" for p in paths)
        self.notify(tr("saved", self.lang, folder=folder, names=names), timeout=8)
        return paths

    def action_quit(self) -> None:
        self.app.exit()
