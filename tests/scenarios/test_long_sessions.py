"""What a long session keeps is bounded where a person can reach the bound.

Undo used to go back through every act of a sandbox session, keeping for redo a copy of the
whole recording per undo: a long session undone far kept its recording hundreds of times.
It now goes back at most MAX_UNDO acts in a row, and the help page says so. The event log
keeps its last EventLog.MAX_LINES lines."""

from core.scenarios.session import MAX_UNDO, Session
from core.sim.spec import Enqueue


def test_undo_goes_back_at_most_max_undo_acts_in_a_row_and_redo_brings_them_back() -> None:
    s = Session()
    for n in range(MAX_UNDO + 5):
        s.act(Enqueue(task=f"extra-{n}"))
    for _ in range(MAX_UNDO):
        assert s.previous_step()
    assert s.undo_limit_reached
    before = list(s.recorded)
    assert not s.previous_step()  # the bound: nothing changes
    assert s.recorded == before and len(s.recorded) == 5
    assert s.redo() and len(s.recorded) == 6 and not s.undo_limit_reached
    assert s.previous_step()  # one more undo is within the bound again
