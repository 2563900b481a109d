"""The main screen: header, worker panes, task table, tabbed panels, narration, controls.

All state comes from the Session's snapshots; the screen only turns key presses and button
clicks into Session calls and redraws in place. Every refresh reads one snapshot and every
widget on screen shows that one (one truth per frame): the panes and the task table never
disagree about the same instant.

What changed is said by message: an act, a step or a key posts `MainScreen.Changed` (many in
a row collapse into one) and the handler redraws; `playing` is a reactive. The fixed-interval
timer only lets live time pass and redraws.
"""

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, TabbedContent, TabPane

from core.engine.config import Mode
from core.engine.records import EventRow
from core.scenarios import glossary
from core.scenarios.session import Session
from core.sim.live import LivePacer
from core.sim.snapshot import Snapshot, SnapshotPart
from core.sim.spec import WORKER_ACTIONS, Action, AddWorker, Advance, Approve, Enqueue, Reject
from core.sim.timeline import Timeline
from demo.controls import CONTROLS
from demo.host import Host, host
from demo.i18n import act_words, reason_word, tr
from demo.screens.confirm import ConfirmScreen
from demo.widgets.keybar import Hint, KeyBar
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

# (id, action, word key, tooltip key); the bar shows the ones that fit, by BUTTON_PRIORITY
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
BUTTON_PRIORITY = (
    "btn-next",
    "btn-previous",
    "btn-play",
    "btn-restart",
    "btn-language",
    "btn-help",
    "btn-mode",
    "btn-faster",
    "btn-slower",
    "add-worker",
    "btn-enqueue",
    "btn-approve",
    "btn-reject",
    "btn-save",
    "btn-quit",
)

# The key bar: (key shown, word key, priority); lower priorities stay when space is short.
KEY_HINTS = (
    ("n", "next", 0),
    ("p", "previous", 1),
    ("␣", "play_pause", 2),
    ("1-6", "panels", 4),
    ("r", "restart", 5),
    ("-/+", "speed_word", 8),
    ("l", "language", 6),
    ("m", "mode_next", 9),
    ("s", "save", 10),
    ("?", "help", 3),
    ("^p", "palette", 3),
    ("q", "quit", 7),
)

NARROW_WIDTH = 120  # below this (or NARROW_HEIGHT) the body scrolls as one column
NARROW_HEIGHT = 36
SHORT_HEIGHT = 30  # below this the panes leave out their fault buttons (in the palette)


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


class Body(VerticalScroll):
    """The panes, the task table and the panels; on a small screen it scrolls.

    There a panel brought into view (keys 1-6) fills the whole visible body, tabs and rows.
    """

    def on_resize(self) -> None:
        if self.screen.has_class("-narrow"):
            self.query_one("#panels").styles.height = max(8, self.size.height)


class MainScreen(Screen[None]):
    """One run: a scenario in playback (maybe forked) or the sandbox."""

    BINDINGS: ClassVar[list[BindingType]] = make_bindings("en")

    class Changed(Message):
        """The run or the screen's state changed: redraw from one new snapshot.

        Posted by every act, step and key; a burst (a held key) collapses into one.
        """

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, MainScreen.Changed)

    playing: reactive[bool] = reactive(False, init=False)

    def __init__(self, session: Session, *, playing: bool | None = None) -> None:
        super().__init__()
        self.session = session
        self.pacer = LivePacer(speed=1.0)
        self.set_reactive(MainScreen.playing, session.is_sandbox if playing is None else playing)
        self.timeline = Timeline()
        self._seen_seq = 0
        self._generation = 0
        self._frame_key: tuple[object, ...] | None = None
        self._autoplay_wall = 0.0
        self._message: str | None = None
        self.refresh_count = 0
        self._snap: Snapshot | None = None
        self._pending_events: list[EventRow] = []
        self._rejections_seen = 0
        self._rejected_now = -1
        self._hinted_question = False  # whether the key bar offers `v` (reveal)

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
        with Body(id="body"):
            with Vertical(id="left"):
                yield WorkerGrid(id="workers")
                yield TaskTable(id="tasks")
            with TabbedContent(id="panels"):
                with TabPane(tr("ledger", "en"), id="tab-ledger"):
                    yield LedgerTable(id="ledger")
                with TabPane(tr("checkpoints", "en"), id="tab-checkpoints"):
                    yield CheckpointTable(id="checkpoints")
                with TabPane(tr("rejected", "en"), id="tab-rejected"):
                    yield RejectedTable(id="rejected")
                with TabPane(tr("effects", "en"), id="tab-effects"):
                    yield EffectsTable(id="effects")
                with TabPane(tr("event_log", "en"), id="tab-events"):
                    yield EventLog(id="events")
                with TabPane(tr("timeline", "en"), id="tab-timeline"), VerticalScroll():
                    yield OwnershipTimeline(id="timeline")
        with Horizontal(id="controls"):
            # outside the grid, so it stays in sight however many panes there are
            yield Button("+ Worker", id="add-worker", action="screen.add_worker", compact=True)
            for bid, action, word, _tip in BUTTONS:
                yield Button(word, id=bid, action=f"screen.{action}", compact=True)
        yield KeyBar(id="keybar")

    def on_mount(self) -> None:
        self.relabel()
        self.refresh_view()
        if self.bk_app.live_clock:
            self.set_interval(REFRESH_S, self.on_tick)
        self.query_one("#tasks", TaskTable).focus(scroll_visible=False)

    def on_unmount(self) -> None:
        # The run ends with its screen, however the app ends (`q`, an error, the picker):
        # its store is closed, and on PostgreSQL its run schema dropped.
        self.session.close()

    def on_resize(self) -> None:
        width, height = self.size
        narrow = width < NARROW_WIDTH or height < NARROW_HEIGHT
        self.set_class(narrow, "-narrow")
        self.set_class(height < SHORT_HEIGHT, "-short")
        # The narration shows all of a step (its ✓ lines too) up to 40% of a small screen.
        box = self.query_one("#narration-box")
        box.styles.max_height = max(5, height * 2 // 5) if narrow else 10
        if not narrow:
            self.query_one("#panels").styles.height = "1fr"
        self._fit_controls(width)
        self.post_message(self.Changed())

    def _fit_controls(self, width: int) -> None:
        """Show the buttons that fit whole, by priority; the rest stay keys and palette entries."""
        buttons = {b.id: b for b in self.query_one("#controls").query(Button)}
        used = 0
        for bid in BUTTON_PRIORITY:
            button = buttons.get(bid)
            if button is None:
                continue
            size = cell_len(str(button.label)) + 2 + 1
            button.display = used + size <= width
            if button.display:
                used += size

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

    def changed(self) -> None:
        """Something the screen shows changed: redraw once the current message is handled."""
        self.post_message(self.Changed())

    def on_main_screen_changed(self, _message: "MainScreen.Changed") -> None:
        self.refresh_view(force=True)

    def watch_playing(self) -> None:
        self.pacer.paused = not self.playing
        self.changed()

    def relabel(self) -> None:
        """Words that change only with the language (tabs, buttons, key bar)."""
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
        add.tooltip = tr("tip_add_worker", lang)
        for button in self.query_one("#controls").query(Button):
            # a new label does not resize the button: size it from the label's cells
            # (a CJK character is two), or 下一步 shows as 下一 and English as Engl
            button.styles.width = cell_len(str(button.label)) + 2
        self._fit_controls(self.size.width)
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
        self._set_key_hints()

    def _set_key_hints(self) -> None:
        lang = self.lang
        self._hinted_question = self.session.question is not None
        hints = []
        if self._hinted_question:
            # interview mode: while a question waits, `v` (reveal) leads the bar
            hints.append(Hint("v", tr("reveal", lang), 0))
        for key, word, priority in KEY_HINTS:
            if word == "previous" and self.session.is_sandbox:
                word = "undo"
            hints.append(Hint(key, tr(word, lang), priority))
        self.query_one("#keybar", KeyBar).set_items(hints)

    def _reset_incremental(self, generation: int) -> None:
        self._generation = generation
        self._seen_seq = 0
        self.timeline = Timeline()
        self.query_one("#events", EventLog).clear()
        self._pending_events = []
        self._rejections_seen = 0
        self.query_one("#rejected", RejectedTable).reset()
        self.query_one("#timeline", OwnershipTimeline).reset()

    def refresh_view(self, *, force: bool = False) -> None:
        """One refresh: read one snapshot and bring every widget on screen up to it."""
        session = self.session
        frame = (
            session.generation,
            session.now_ms,
            session.last_event_seq,
            self.lang,
            session.acts_count,
            self.playing,
            self.pacer.speed,
            self._message,
            self._active_tab(),
        )
        if not force and frame == self._frame_key:
            return
        self._frame_key = frame
        self.refresh_count += 1
        if session.generation != self._generation:
            self._reset_incremental(session.generation)
        lang = self.lang
        snap = session.snapshot(PANEL_PARTS.get(self._active_tab(), frozenset()))
        self._snap = snap
        if snap.last_event_seq > self._seen_seq:
            new_events = session.events(self._seen_seq)
            if new_events:
                self._seen_seq = new_events[-1].seq
                self.timeline.feed(new_events)
                self._pending_events.extend(new_events)
                del self._pending_events[:-2000]
        self._show_header(snap)
        if (session.question is not None) != self._hinted_question:
            self._set_key_hints()
        narration = self.query_one("#narration-box")
        narration.display = not session.is_sandbox or bool(self._message) or session.acts_count > 0
        self.query_one("#narration", NarrationPanel).show(
            narration_text(session, lang, self._message)
        )
        self._show_workers(snap)
        self.query_one("#tasks", TaskTable).show(
            snap.tasks, snap.now_ms, lang, fenced=Mode(snap.mode).issues_fence_tokens
        )
        self._label_rejected(snap)
        self._show_active_panel()

    def _label_rejected(self, snap: Snapshot) -> None:
        lang = self.lang
        tab = self.query_one("#panels", TabbedContent).get_tab("tab-rejected")
        table = self.query_one("#rejected", RejectedTable)
        n = len(snap.rejections)
        label = tr("rejected", lang) + (f" ({n})" if n else "")
        if table.reason_filter is not None:
            label += f" · {reason_word(table.reason_filter, lang)}"  # no [ ]: tab labels are markup
        if n > self._rejections_seen and self._active_tab() != "tab-rejected":
            label += " ●"
        if str(tab.label) != label:
            tab.label = label  # a new label costs a layout: only when it changed

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
            self.query_one("#effects", EffectsTable).show(snap, lang)
        elif active == "tab-events":
            if self._pending_events:
                events, self._pending_events = self._pending_events, []
                self.query_one("#events", EventLog).append(events, lang)
        elif active == "tab-timeline":
            self.query_one("#timeline", OwnershipTimeline).show(self.timeline, snap.now_ms, lang)

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
        cfg = self.session.config
        held = {w.task_id for w in snap.workers if w.task_id is not None}
        steps = {t.task_id: t.total_steps for t in snap.tasks if t.task_id in held}
        # read once, not once a pane: `lang` asks the app through a runtime-checked protocol
        lang, faults = self.lang, not self.has_class("-short")
        client_clock = snap.mode == Mode.CLIENT_CLOCK.value
        states = [
            PaneState(
                view=w,
                expires_at_ms=(
                    None if w.store_remaining_ms is None else snap.now_ms + w.store_remaining_ms
                ),
                ttl_ms=cfg.ttl_ms,
                heartbeat_ms=cfg.heartbeat_ms,
                deadline_ms=cfg.deadline_ms,
                total_steps=steps.get(w.task_id or ""),
                client_clock=client_clock,
                lang=lang,
                faults=faults,
            )
            for w in snap.workers
        ]
        self.query_one("#workers", WorkerGrid).sync(states)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.changed()  # the snapshot held may lack this panel's list

    # -- acting --------------------------------------------------------------------------------

    def act(self, action: Action) -> bool:
        """An act of the person: forks a playback (if it happened), is recorded, shows at once."""
        result = self.session.act(action)
        self._message = None if result.ok else refusal_text(result, self.lang)
        if not result.ok:
            self.notify(self._message or result.message, severity="warning", timeout=4)
        elif result.ignored:
            self.notify(tr("ignored", self.lang, msg=result.message), timeout=4)
        self.changed()
        return result.ok

    def on_worker_pane_fault_requested(self, message: WorkerPane.FaultRequested) -> None:
        self.act(WORKER_ACTIONS[message.action](message.worker_id))

    def action_play_pause(self) -> None:
        self._autoplay_wall = time.monotonic()
        self.playing = not self.playing

    def action_show_tab(self, pane_id: str) -> None:
        """Open a panel and bring it into view (on a small screen the body scrolls to it)."""
        panels = self.query_one("#panels", TabbedContent)
        panels.active = pane_id
        self.query_one("#body", VerticalScroll).scroll_to_widget(panels, animate=False, top=True)
        self.changed()

    def action_show_workers(self) -> None:
        self.query_one("#body", VerticalScroll).scroll_home(animate=False)

    def action_filter_rejected(self) -> None:
        """Show one reason in the Rejected panel, then the next, then all again."""
        table = self.query_one("#rejected", RejectedTable)
        reasons = table.reasons()
        if table.reason_filter is None:
            table.reason_filter = reasons[0] if reasons else None
        elif table.reason_filter in reasons and reasons.index(table.reason_filter) + 1 < len(
            reasons
        ):
            table.reason_filter = reasons[reasons.index(table.reason_filter) + 1]
        else:
            table.reason_filter = None
        self.action_show_tab("tab-rejected")

    def set_rejected_filter(self, reason: str | None) -> None:
        self.query_one("#rejected", RejectedTable).reason_filter = reason
        self.action_show_tab("tab-rejected")

    def action_pause(self) -> None:
        self.playing = False

    def action_next_step(self) -> None:
        self._message = None
        if self.session.live:
            self.session.tick(SANDBOX_STEP_MS)
        else:
            self.session.next_step()
        self.changed()

    def action_reveal(self) -> None:
        """Interview mode: the step waits on its question until the presenter reveals it."""
        self._message = None
        if self.session.reveal() is None:
            self.notify(tr("nothing_to_reveal", self.lang), timeout=3)
        self.changed()

    def action_previous_step(self) -> None:
        if self.session.forked:  # back to the fork point: the whole recording goes
            self._discard_then(tr("previous", self.lang), self._previous_step)
        else:
            self._previous_step()

    def _previous_step(self) -> None:
        self._message = None
        undone = self.session.undo_target
        if self.session.previous_step() and undone is not None:
            self.notify(tr("undone", self.lang, act=act_words(undone, self.lang)), timeout=4)
        elif self.session.is_sandbox and undone is None:
            self.notify(tr("nothing_to_undo", self.lang), timeout=3)
        self.changed()

    def action_restart(self) -> None:
        self._discard_then(tr("restart", self.lang), self._restart)

    def _restart(self) -> None:
        self._message = None
        self.session.restart()
        self.changed()

    def _discard_then(self, what: str, then: "Callable[[], None]") -> None:
        """Run `then`, after asking when it would lose acts recorded and not yet saved."""
        if not self.session.has_unsaved_acts:
            then()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                then()

        question = tr("discard_question", self.lang, n=self.session.acts_count, what=what)
        self.app.push_screen(ConfirmScreen(question, self.lang), answered)

    def action_advance(self, ms: int) -> None:
        """Let `ms` of virtual time pass (a live run; tests drive time with this)."""
        if self.session.live:
            self.session.tick(ms)
        else:
            self.act(Advance(ms))
        self.changed()

    def action_slower(self) -> None:
        self.pacer.slower()
        self.changed()

    def action_faster(self) -> None:
        self.pacer.faster()
        self.changed()

    def action_language(self) -> None:
        self.bk_app.lang = "en" if self.lang == "zh" else "zh"

    def on_language_changed(self) -> None:
        """Called by the app after a language switch."""
        self.relabel()
        seen = self._rejections_seen
        self._generation = 0  # rewrite the event log in the new language
        self.refresh_view(force=True)
        # the same run: rejections already looked at stay seen
        self._rejections_seen = max(seen, self._rejections_seen)

    def action_next_mode(self) -> None:
        self.set_mode(self.session.next_mode())

    def set_mode(self, mode: Mode) -> None:
        def switch() -> None:
            self._message = None
            self.session.set_mode(mode)
            meaning = glossary.mode_word(mode.value, self.lang)
            self.notify(tr("mode_now", self.lang, mode=mode.value, meaning=meaning), timeout=3)
            self.changed()

        self._discard_then(tr("mode", self.lang), switch)

    def _waiting_task(self, what: str) -> str | None:
        tasks = self._snap.tasks if self._snap is not None else self.session.snapshot(()).tasks
        task = self.query_one("#tasks", TaskTable).waiting_selected(tasks)
        if task is None:
            self.notify(tr("no_waiting", self.lang, what=tr(what, self.lang)), severity="warning")
        return task

    def action_approve(self, task: str | None = None) -> None:
        task = task or self._waiting_task("approve")
        if task is not None:
            self.act(Approve(task))

    def action_reject(self, task: str | None = None) -> None:
        task = task or self._waiting_task("reject")
        if task is not None:
            self.act(Reject(task))

    def action_enqueue(self, kind: str = "ledger") -> None:
        self.act(Enqueue(self.session.new_task_id(), kind=kind))

    def action_add_worker(self) -> None:
        self.act(AddWorker(self.session.new_worker_id()))

    def action_help(self) -> None:
        from demo.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))

    def action_save(self) -> list[Path]:
        paths = self.bk_app.save_all(self.session)
        folder = f"{paths[0].parent}{os.sep}"
        names = "\n".join(f"  {p.name}" for p in paths)
        self.notify(tr("saved", self.lang, folder=folder, names=names), timeout=8)
        self.changed()
        return paths

    def action_quit(self) -> None:
        self._discard_then(tr("quit", self.lang), self.app.exit)
