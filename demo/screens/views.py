"""The main screen's views: its widgets and how it shares its size out, the panel in sight,
the narration folded or whole, the expectations as sentences or as the file spells them
(a part of `MainScreen`, demo/screens/main.py). Drawing a frame into them is
demo/screens/drawing.py's.
"""

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, TabbedContent, TabPane

from demo.i18n import tr
from demo.screens.layout import Fit, fit
from demo.screens.main_part import MainPart
from demo.widgets.body import Body
from demo.widgets.control_bar import ControlBar
from demo.widgets.keybar import KeyBar
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
)
from demo.widgets.status_header import StatusHeader
from demo.widgets.task_table import TaskTable
from demo.widgets.timeline_view import OwnershipTimeline
from demo.widgets.worker_pane import WorkerGrid


class Views(MainPart):
    """What is on screen, and where."""

    def compose(self) -> ComposeResult:
        # the screen's shape from the terminal's size before any widget is made: each takes
        # its style once, where set at the first resize it would restyle them all
        self._fit_classes(*self.app.size)
        yield StatusHeader(id="status")
        with VerticalScroll(id="narration-box"):
            yield NarrationPanel(id="narration")
        with Body(id="body"):
            with Vertical(id="left"):
                yield WorkerGrid(id="workers")
                yield TaskTable(id="tasks")
            with Horizontal(id="lower"):
                with TabbedContent(id="panels"):
                    with TabPane(tr("ledger", "en"), id="tab-ledger"), Vertical():
                        yield BooksNote(id="books-note")
                        yield LedgerTable(id="ledger")
                    with TabPane(tr("checkpoints", "en"), id="tab-checkpoints"), Vertical():
                        yield BoxDetail(id="box-detail")
                        yield CheckpointTable(id="checkpoints")
                    with TabPane(tr("rejected", "en"), id="tab-rejected"), Vertical():
                        yield RefusedNote(id="refused-note")
                        yield RejectedTable(id="rejected")
                    with TabPane(tr("effects", "en"), id="tab-effects"):
                        yield EffectsTable(id="effects")
                    with TabPane(tr("event_log", "en"), id="tab-events"):
                        yield EventLog(id="events", wrap=True)  # a sentence folds, never cut
                    with TabPane(tr("timeline", "en"), id="tab-timeline"), VerticalScroll():
                        yield OwnershipTimeline(id="timeline")
                # on a roomy screen the event log stays in sight beside any other panel,
                # and on a tall one a second panel under it: the refused writes beside
                # the ledger, or the ledger beside them
                with Vertical(id="side"):
                    yield EventLog(id="side-events", wrap=True)
                    with Vertical(id="side-second"):
                        yield RejectedTable(id="side-rejected")
                        yield LedgerTable(id="side-ledger")
        yield ControlBar(id="controls")
        yield KeyBar(id="keybar")

    def _fit_classes(self, width: int, height: int) -> Fit:
        shape = fit(width, height)
        fitted = {"-narrow": shape.narrow, "-short": shape.short, "-roomy": shape.roomy}
        fitted["-tall"] = shape.tall
        classes = {c for c in self.classes if c not in fitted}
        classes |= {c for c, on in fitted.items() if on}
        if classes != set(self.classes):
            # one restyle of every widget on the screen for the four, not one for each that
            # changed (each is a tenth of a second's work on a run's first frame)
            self.set_classes(classes)
        return shape

    def on_resize(self) -> None:
        width, height = self.size
        shape = self._fit_classes(width, height)
        self.query_one("#narration-box").styles.max_height = shape.narration_rows
        if not shape.narrow:
            self.query_one("#lower").styles.height = "1fr"
        self.query_one("#tasks").styles.max_height = shape.task_rows
        self.query_one("#workers", WorkerGrid).one_row = shape.narrow and shape.short
        self._fit_controls(width)
        self.changed()

    def action_show_tab(self, pane_id: str) -> None:
        """Open a panel and bring it into view (on a small screen the body scrolls to it)."""
        panels = self.query_one("#panels", TabbedContent)
        panels.active = pane_id
        self._pin_panels()
        # and again once the frame this key asks for is laid out: a pane above that grows
        # or shrinks in it would leave the panel a row off the top (or a task row above it);
        # a later frame of the step is kept to it by the drawing
        self.call_after_refresh(self._pin_panels)
        self.changed()
        if pane_id == "tab-events" and self.has_class("-narrow"):
            self._keep_newest_lines(laid_out=False)  # more of the log is in sight now

    def on_body_regrown(self) -> None:
        if self._panels_pinned is not None and self.has_class("-narrow"):
            self.call_after_refresh(self._keep_panels_pinned)

    def action_show_workers(self) -> None:
        self._panels_pinned = None
        self.query_one("#body", VerticalScroll).scroll_home(animate=False, immediate=True)
        if self.has_class("-narrow") and self._active_tab() == "tab-events":
            self._keep_newest_lines(laid_out=False)  # less of the log is in sight now

    def action_filter_rejected(self) -> None:
        """Show one reason in the Rejected panel, then the next, then all again."""
        self.query_one("#rejected", RejectedTable).next_filter()
        self.action_show_tab("tab-rejected")

    def set_rejected_filter(self, reason: str | None) -> None:
        self.query_one("#rejected", RejectedTable).reason_filter = reason
        self.action_show_tab("tab-rejected")

    def action_toggle_narration(self) -> None:
        """d: the whole step's narration, or folded to its first lines again."""
        self._narration_open = not self._narration_open
        self.changed()

    def action_toggle_toml(self) -> None:
        """The expectations as the scenario file spells them, or as sentences again."""
        self._toml = not self._toml
        self.changed()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """A row chosen in the Checkpoints table: its whole box under the table."""
        if event.data_table.id == "checkpoints" and self._snap is not None:
            self.query_one("#box-detail", BoxDetail).show(
                self._snap, self.lang, event.row_key.value
            )

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.changed()  # the snapshot held may lack this panel's list
