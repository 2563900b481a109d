"""The main screen's drawing, mixed into `MainScreen`: bringing every widget up to one frame
of the session (header, narration, panes, task table, the panel on screen and the second one
under the log beside it, the logs), the words that change only with the language (tabs,
buttons, the key bar), and which buttons fit. What to draw and when is the screen's
(`MainScreen.refresh_view`, the actions); this module only draws it, and keeps what the
drawing needs between frames.
"""

import dataclasses
import time
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.widgets import TabbedContent

from core.engine.config import Mode
from core.engine.records import EventRow
from core.engine.vocabulary import TaskStatus
from core.scenarios.session import Session
from core.sim.live import LivePacer
from core.sim.snapshot import Snapshot
from demo.controls import CONTROLS, TABS, Moment
from demo.i18n import reason_word, tr
from demo.screens.session_runner import Frame
from demo.widgets.binding_internals import relabel_bindings
from demo.widgets.body import Body
from demo.widgets.control_bar import ControlBar
from demo.widgets.keybar import Hint, KeyBar
from demo.widgets.narration import NarrationPanel
from demo.widgets.panels import (
    BooksNote,
    BoxDetail,
    CheckpointTable,
    EffectsTable,
    EventLog,
    LedgerTable,
    RefusedNote,
    RejectedTable,
    checkpoint_writers,
)
from demo.widgets.status_header import StatusHeader
from demo.widgets.task_table import TaskTable
from demo.widgets.timeline_view import OwnershipTimeline
from demo.widgets.worker_pane import WorkerGrid, pane_states

if TYPE_CHECKING:
    from textual.screen import Screen

    _ScreenBase = Screen[None]
else:
    _ScreenBase = object

PANEL_ROWS = 5  # on a small screen the chosen panel keeps at least these rows in sight
NARRATION_FOLD_MIN = 3  # a folded narration keeps its step line, a line of text, the hint
TABLE_ROWS_MIN = 2  # on a small screen a panel's table keeps its header and these rows in sight
# The panels with a note over their table: the note, and the table it must leave in sight.
PANEL_NOTES = {
    "tab-ledger": ("#books-note", "#ledger"),
    "tab-rejected": ("#refused-note", "#rejected"),
    "tab-checkpoints": ("#box-detail", "#checkpoints"),
}


class Drawing(_ScreenBase):
    """The drawing part of `MainScreen`: what it keeps between frames is set up here
    (`_start_drawing`); what the screen's actions set and the drawing reads is declared."""

    # the screen's, read by the drawing
    session: Session
    pacer: LivePacer
    playing: bool
    chosen_worker: str | None  # the worker the fault keys act on; its pane is marked
    _message: str | None  # a refusal said under the narration
    _narration_open: bool  # d: the step's narration whole on a small screen
    _answered: bool  # interview mode: an answer was just given (scroll to what it said)

    @property
    def lang(self) -> str:
        raise NotImplementedError  # the screen's: the app's language

    def _answer_waits(self) -> bool:
        raise NotImplementedError  # the screen's: interview mode's numbers wait for an answer

    def changed(self) -> None:
        raise NotImplementedError  # the screen's: the session changed, a frame is owed

    def _start_drawing(self) -> None:
        self._seen_seq = 0
        self._generation = 0
        self.refresh_count = 0
        self._snap: Snapshot | None = None
        # events not yet in each log (the tab's, and the one beside the panels)
        self._pending_events: dict[str, list[EventRow]] = {"events": [], "side-events": []}
        self._checkpoint_writers: dict[tuple[str, int], str] = {}
        self._rejections_seen = 0
        self._rejected_now = -1
        self._opened: tuple[int, int, str] | None = None  # the last step's panel, opened
        self._side_rejected_now = -1
        # what the key bar was made for: a question waiting (`v` leads), p undoing, redo
        # possible, an answer waiting (interview mode: the numbers lead)
        self._hinted: tuple[bool, bool, bool, bool] = (False, False, False, False)
        self._narration_step: tuple[int, int, bool] | None = None  # the step it was opened at
        self._note_rows_folded = 0  # the rows of the chosen panel's note the fold was made for
        self._table_kept: tuple[object, ...] | None = None  # the step and note last scrolled for
        self._table_scrolled: tuple[int, float] | None = None  # by how much, and to where
        # a panel opened on a small screen: the step it was opened at, and the body's scroll
        self._panels_pinned: tuple[tuple[int, int], float] | None = None
        self._log_rows: int | None = None  # the event log held to the rows in sight (small screen)
        # While the run plays on the live clock, a log takes its new lines at most this often:
        # each write grows the log, and Textual lays the whole screen out for a widget whose
        # size changed (the log beside the panels cost a layout in two refreshes of five).
        # Stepping by hand, and every test without the live clock, writes at once.
        self.log_every_s = 0.0
        self._log_written: dict[str, float] = {}
        self._log_top: int | None = None  # where the log starts among the body's rows

    def _moments(self) -> frozenset[Moment]:
        """What the run waits for now: the buttons that answer it go first."""
        moments = set()
        if self.session.question is not None:
            moments.add(Moment.QUESTION)
        snap = self._snap
        if snap is not None and any(t.row.status == TaskStatus.WAITING for t in snap.tasks):
            moments.add(Moment.TASK_WAITS)
        return frozenset(moments)

    def _fit_controls(self, width: int) -> None:
        """Show the buttons that fit whole, by priority; the rest stay keys and palette entries."""
        self.query_one("#controls", ControlBar).fit(width, self._moments())

    def relabel(self) -> None:
        """Words that change only with the language (tabs, buttons, key bar, bindings)."""
        lang = self.lang
        tabs = self.query_one("#panels", TabbedContent)
        for pane_id, word in TABS:
            tabs.get_tab(pane_id).label = tr(word, lang)
        self.query_one("#side-events").border_title = tr("event_log", lang)
        self._label_second()
        self.query_one("#controls", ControlBar).relabel(lang)
        self._fit_controls(self.size.width)
        controls = {c.id: c for c in CONTROLS}

        def words(binding: Binding) -> tuple[str, str] | None:
            c = controls.get(binding.id or "")
            return None if c is None else (tr(c.word, lang), tr(c.tip, lang))

        relabel_bindings(self, words)
        self._set_key_hints()

    def _hint_moment(self) -> tuple[bool, bool, bool, bool]:
        s = self.session
        return (s.question is not None, s.undoes, s.redo_target is not None, self._answer_waits())

    def _set_key_hints(self) -> None:
        lang = self.lang
        self._hinted = self._hint_moment()
        hints = []
        if self._hinted[3]:
            # interview mode: the room answers first, by number
            awaited = self.session.awaited
            n = len(awaited.choices) if awaited is not None else 0
            hints.append(Hint(f"1-{n}", tr("answer_keys", lang), 0))
        if self._hinted[0]:
            # while a question waits, `v` (reveal) leads the bar
            hints.append(Hint("v", tr("reveal", lang), 0))
        for c in CONTROLS:
            if c.hint is None:
                continue
            word = c.hint.word
            if word == "previous" and self.session.undoes:
                word = "undo"
            hints.append(Hint(c.hint.key, tr(word, lang), c.hint.priority))
            if word == "undo" and self._hinted[2]:
                hints.append(Hint("y", tr("redo", lang), c.hint.priority))
        self.query_one("#keybar", KeyBar).set_items(hints)
        # p has one meaning in every sandbox and after a fork; its button says the same
        undo = "undo" if self.session.undoes else "previous"
        self.query_one("#controls", ControlBar).say("previous", undo, lang)

    def _reset_incremental(self, generation: int) -> None:
        self._generation = generation
        self._seen_seq = 0
        for log, pending in self._pending_events.items():
            self.query_one(f"#{log}", EventLog).clear()
            pending.clear()
        self._checkpoint_writers.clear()
        self._rejections_seen = 0
        self.query_one("#rejected", RejectedTable).reset()
        self.query_one("#side-rejected", RejectedTable).reset()
        self.query_one("#timeline", OwnershipTimeline).reset()

    def draw(self, frame: Frame) -> None:
        """Bring every widget on screen up to one frame of the session."""
        session = self.session
        self.refresh_count += 1
        if frame.generation != self._generation:
            self._reset_incremental(frame.generation)
        if frame.opened is not None and frame.opened != self._opened:
            # a step opens the panel it is about (the file's `panel`, or what it did)
            self._opened = frame.opened
            self.query_one("#panels", TabbedContent).active = frame.opened[2]
        lang = self.lang
        snap = frame.snap
        self._snap = snap
        new_events = [e for e in frame.events if e.seq > self._seen_seq]
        if new_events:
            self._seen_seq = new_events[-1].seq
            checkpoint_writers(new_events, self._checkpoint_writers)
            for pending in self._pending_events.values():
                pending.extend(new_events)
                del pending[:-2000]
        header = frame.header(speed=self.pacer.speed, playing=self.playing, lang=lang)
        if session.guess is not None and not session.guess.revealed:
            # a mistake scenario's title names its own mistake: the round's question instead
            header = dataclasses.replace(header, mode_hidden=True, title=tr("guess_round", lang))
        self.query_one("#status", StatusHeader).show(header)
        self._fit_controls(self.size.width)  # what the moment needs first (cached)
        if self._hint_moment() != self._hinted:
            self._set_key_hints()
        narration = self.query_one("#narration-box")
        narration.display = not session.is_sandbox or bool(self._message) or session.acts_count > 0
        said = frame.narration
        if self._message:
            said = said.copy()
            said.append("\n")
            said.append(self._message, style="red")
        self.query_one("#narration", NarrationPanel).show(
            said, fold=self._narration_fold(), lang=lang
        )
        if self._answered:
            # right or not, and the follow-up, are said at the end of the narration box;
            # its new height is known once the panel has been laid out, and again once a
            # scrollbar that appeared has narrowed it (the text wraps anew)
            self._answered = False
            panel = self.query_one("#narration", NarrationPanel)

            def to_end() -> None:
                narration.scroll_end(animate=False, immediate=True)
                panel.call_after_refresh(narration.scroll_end, animate=False, immediate=True)

            panel.call_after_refresh(to_end)
        self._show_workers(snap)
        self.query_one("#tasks", TaskTable).show(
            snap.tasks, snap.now_ms, lang, fenced=Mode(snap.mode).issues_fence_tokens
        )
        self._label_rejected(snap)
        self._show_active_panel()

    def _narration_fold(self) -> int | None:
        """The narration's most lines now: on a small screen, folded, what leaves the chosen
        panel PANEL_ROWS rows under the panes, the task table and its tabs; None: all.

        A question is never folded (its choices are what the room answers), and `d`
        opens a step whole until the next step.
        """
        session = self.session
        step = (session.generation, session.position, session.question is not None)
        if step != self._narration_step:
            self._narration_step = step
            self._narration_open = False
        if self._narration_open or not self.has_class("-narrow") or session.question is not None:
            return None
        above = sum(
            self.query_one(part).outer_size.height for part in ("#status", "#workers", "#tasks")
        )
        bars = 2  # the button bar and the key bar
        tabs = 2  # the panels' tab bar and its underline
        note = self._note_rows()  # the books, the refused page, the box: over the table
        self._note_rows_folded = note
        return max(NARRATION_FOLD_MIN, self.size.height - above - bars - tabs - note - PANEL_ROWS)

    def _note_rows(self) -> int:
        """The rows the note over the chosen panel's table takes now (0: none shown)."""
        parts = PANEL_NOTES.get(self._active_tab())
        if parts is None:
            return 0
        note = self.query_one(parts[0])
        return note.outer_size.height if note.display else 0

    def _keep_table_rows(self) -> None:
        """On a small screen the chosen panel's table keeps its header and TABLE_ROWS_MIN
        rows in sight under its note. The narration folds around the note first (the note's
        height is known once it is laid out: the fold is made again when it changed); what
        folding cannot give, the body scrolls down for (the panes' top goes out of sight),
        once for each step and note, so that a scroll back up stays."""
        parts = PANEL_NOTES.get(self._active_tab())
        if parts is None or not self.has_class("-narrow"):
            return
        rows = self._note_rows()
        if rows != self._note_rows_folded and self._narration_fold() is not None:
            self.changed()
            return
        key = (self._narration_step, self._narration_open, self._active_tab(), rows)
        if key == self._table_kept:
            return
        self._table_kept = key
        body = self.query_one("#body", Body)
        scrolled, self._table_scrolled = self._table_scrolled, None
        if scrolled is not None and body.scroll_y == scrolled[1]:
            # the last step's scroll, left as it was: undone before this one is judged
            body.scroll_relative(y=-scrolled[0], animate=False, immediate=True)
        if rows == 0:
            return  # no note: the fold alone leaves PANEL_ROWS rows
        header = self.query_one(parts[1]).region.y
        missing = header + 1 + TABLE_ROWS_MIN - body.region.bottom
        if missing > 0:
            body.scroll_relative(y=missing, animate=False, immediate=True)
            self._table_scrolled = (missing, body.scroll_y)

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
            self.query_one("#books-note", BooksNote).show(snap, lang)
            self.query_one("#ledger", LedgerTable).show(snap, lang)
        elif active == "tab-checkpoints":
            table = self.query_one("#checkpoints", CheckpointTable)
            table.show(snap, lang, self._checkpoint_writers)
            self.query_one("#box-detail", BoxDetail).show(snap, lang, table.selected_key())
        elif active == "tab-rejected":
            self._rejections_seen = len(snap.rejections)
            self.query_one("#refused-note", RefusedNote).show(snap, lang)
            self.query_one("#rejected", RejectedTable).show(
                snap, lang, time_moved=snap.now_ms != self._rejected_now
            )
            self._rejected_now = snap.now_ms
        elif active == "tab-effects":
            self.query_one("#effects", EffectsTable).show(snap, lang)
        elif active == "tab-events":
            self._catch_up("events")
        elif active == "tab-timeline":
            self.query_one("#timeline", OwnershipTimeline).show(snap.timeline, lang)
        # the log beside the panels, on a roomy screen, unless the panel is the log itself
        self.set_class(active == "tab-events", "-events-tab")
        if self.has_class("-roomy") and active != "tab-events":
            self._catch_up("side-events")
        if self.has_class("-tall") and active != "tab-events":
            self._show_second(snap, active)
        if self.has_class("-narrow") and active in PANEL_NOTES:
            self.call_after_refresh(self._keep_table_rows)
        if self.has_class("-narrow") and self._panels_pinned is not None:
            # and after each frame: a frame can move the panels with the body's height the
            # same (the narration folded a row shorter as a pane grew one), which sends no
            # `Body.Regrown`
            self.call_after_refresh(self._keep_panels_pinned)
        if self.has_class("-narrow") and active == "tab-events":
            self.call_after_refresh(self._keep_newest_lines)
        elif self._log_rows is not None:
            self._log_rows = None
            self.query_one("#events", EventLog).styles.max_height = None

    def _pin_panels(self) -> None:
        """Scroll the body so that the panels' tabs are at its top, and, on a small screen
        (where the body scrolls), note where it was scrolled to."""
        body = self.query_one("#body", Body)
        body.scroll_to_widget(self.query_one("#panels"), animate=False, top=True, immediate=True)
        session = self.session
        self._panels_pinned = (
            ((session.generation, session.position), body.scroll_target_y)
            if self.has_class("-narrow")
            else None
        )

    def _keep_panels_pinned(self) -> None:
        """A panel opened on a small screen stays at the body's top for the rest of its step
        (asked after each frame, and whenever the body's content changes height,
        `Body.Regrown`, which a layout no frame asked for can do): a frame drawn
        after the key's own (the off-loop session's, a fold made again) can change the
        heights above it, which would leave a task row over the tabs or the
        panel's first rows out of sight. A scroll by anything else (the person, `0`, the
        table's rows kept in sight) lets go of it, and so does the next step. A scroll is
        told by where it was sent (`scroll_target_y`): Textual holds `scroll_y` to the
        content's end when the body grows before the panels' part does, which is no one's
        scroll."""
        pinned = self._panels_pinned
        if pinned is None:
            return
        session = self.session
        body = self.query_one("#body", Body)
        step = (session.generation, session.position)
        if not self.has_class("-narrow") or pinned != (step, body.scroll_target_y):
            self._panels_pinned = None
            return
        self._pin_panels()

    def _keep_newest_lines(self, *, laid_out: bool = True) -> None:
        """On a small screen the body scrolls and the chosen panel runs on below its fold; the
        log, scrolled to its own end, would keep the newest lines (the step's own, where a
        broken rule is said) down there. Its height is held to the rows in sight instead.

        `laid_out`: the log's place on screen is current (after a refresh), so where it starts
        in the body's rows is measured again; a scroll just made is not laid out yet, and the
        rows in sight follow from the place measured before."""
        log = self.query_one("#events", EventLog)
        body = self.query_one("#body", Body)
        scrolled = round(body.scroll_y)
        if laid_out and log.region.height > 0:
            self._log_top = log.region.y - body.region.y + scrolled
        if self._log_top is None:
            return
        rows = max(3, body.size.height - (self._log_top - scrolled))
        if rows != self._log_rows:
            self._log_rows = rows
            log.styles.max_height = rows
            log.call_after_refresh(log.scroll_end, animate=False)

    def _second_is_ledger(self, active: str) -> bool:
        """The panel under the log beside: the refused writes, or the ledger when the
        refused writes are the chosen panel."""
        return active == "tab-rejected"

    def _show_second(self, snap: Snapshot, active: str) -> None:
        ledger = self._second_is_ledger(active)
        self.set_class(ledger, "-second-ledger")
        self._label_second()
        if ledger:
            self.query_one("#side-ledger", LedgerTable).show(snap, self.lang)
        else:
            self._rejections_seen = len(snap.rejections)  # in sight: the tab's ● is not owed
            self.query_one("#side-rejected", RejectedTable).show(
                snap, self.lang, time_moved=snap.now_ms != self._side_rejected_now
            )
            self._side_rejected_now = snap.now_ms

    def _label_second(self) -> None:
        word = "ledger" if self.has_class("-second-ledger") else "rejected"
        self.query_one("#side-second").border_title = tr(word, self.lang)

    def _catch_up(self, log: str) -> None:
        if not self._pending_events[log]:
            return
        if self.playing and self.log_every_s:
            now = time.monotonic()
            if now - self._log_written.get(log, 0.0) < self.log_every_s:
                return  # the lines wait for the next refresh that may write
            self._log_written[log] = now
        events, self._pending_events[log] = self._pending_events[log], []
        if events:
            self.query_one(f"#{log}", EventLog).append(events, self.lang)

    def _show_workers(self, snap: Snapshot) -> None:
        # read once, not once a pane: `lang` asks the app through a runtime-checked protocol
        ids = [w.id for w in snap.workers]
        if self.chosen_worker not in ids:
            self.chosen_worker = ids[0] if ids else None
        short = self.has_class("-short")
        states = pane_states(
            snap, self.session.config, self.lang, not short, self.chosen_worker, compact=short
        )
        self.query_one("#workers", WorkerGrid).sync(states)
