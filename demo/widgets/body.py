"""The main screen's body: the panes, the task table and the panels."""

from textual.containers import VerticalScroll


class Body(VerticalScroll):
    """The panes, the task table and the panels; on a small screen it scrolls.

    There a panel brought into view (keys 1-6) fills the whole visible body, tabs and rows.
    """

    def on_resize(self) -> None:
        if self.screen.has_class("-narrow"):
            self.query_one("#lower").styles.height = max(8, self.size.height)
