"""The main screen's body: the panes, the task table and the panels."""

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.message import Message


class Body(VerticalScroll):
    """The panes, the task table and the panels; on a small screen it scrolls.

    There a panel brought into view (keys 1-6) fills the whole visible body, tabs and rows.
    """

    class Regrown(Message):
        """The body's content changed height: a place scrolled to may have moved."""

    def on_resize(self) -> None:
        if self.screen.has_class("-narrow"):
            self.query_one("#lower").styles.height = max(8, self.size.height)

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        # A pane or the task table that grows in a layout no draw asked for (a row added
        # after the frame was laid out) moves the panels under a scroll made before it.
        if old.height != new.height:
            self.post_message(self.Regrown())
