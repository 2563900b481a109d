"""How the main screen shares its size out: one function of the width and the height.

Three shapes. A small screen (80 x 24, 100 x 30) is one column that scrolls: the narration
grows to show a step whole and a panel brought into view fills the visible body. A large
one fits without scrolling. A roomy one (160 x 40 and up) also has the event log in sight beside
the chosen panel, in the rows and columns a few-row panel would leave empty.
"""

from dataclasses import dataclass

NARROW_WIDTH = 120  # below this (or NARROW_HEIGHT) the body scrolls as one column
NARROW_HEIGHT = 36
# From here the event log stays beside the chosen panel: the panel keeps at least the 116
# columns the walkthrough's widest panel needs (the checkpoints, app.tcss), and the log beside
# has 44 or more. A browser at 1600 x 1000 (about 173 x 47) is roomy: from 40 rows the log
# beside still has a score of rows below the panes and the task table.
ROOMY_WIDTH = 160
ROOMY_HEIGHT = 40
# From here (200 x 60) the column beside has rows to spare even late in a run: the event
# log gets a sensible height and a second panel takes the rest, so the refused writes
# stand beside the ledger (or the ledger beside them) with no half screen of empty border.
TALL_HEIGHT = 52
TASK_ROWS_MIN = 8  # the task table's least height (its two header lines included)
NARRATION_SPARE = 9  # rows a small screen keeps for the header, the body and the bars
SHORT_HEIGHT = 30  # below this the panes leave out their fault buttons (in the palette)


@dataclass(frozen=True, slots=True)
class Fit:
    narrow: bool  # one column that scrolls
    short: bool  # the panes without their fault buttons
    roomy: bool  # the event log beside the chosen panel
    tall: bool  # roomy, and under the log beside a second panel
    narration_rows: int  # the narration's most rows
    task_rows: int  # the task table's most rows


def fit(width: int, height: int) -> Fit:
    narrow = width < NARROW_WIDTH or height < NARROW_HEIGHT
    return Fit(
        narrow=narrow,
        short=height < SHORT_HEIGHT,
        roomy=width >= ROOMY_WIDTH and height >= ROOMY_HEIGHT,
        tall=width >= ROOMY_WIDTH and height >= TALL_HEIGHT,
        # The narration grows to show a step whole (its ✓ lines, the answer and why): on a
        # small screen it may leave the body only a few rows (the body scrolls, keys 0-6
        # bring a part into view), on a large one a third of the height.
        narration_rows=max(5, height - NARRATION_SPARE) if narrow else max(10, height // 3),
        # The task table takes a third of the height (more rows on a tall screen, not a
        # fixed dozen with empty lines below); the panels have the rest.
        task_rows=max(TASK_ROWS_MIN, height // 3),
    )
