"""A fork off the script ends when its work does, and gets the report a script's end gets:
what broke, the proof, the bill beside the correct twin's, by the same checker.

13 under mistake four, the presenter kills A after the first step: B takes the task over
and, with no checkpoint to read, does A's two steps again. No Pilot: the narration is a
pure function of the session, and each frame of the app reads it.
"""

from collections.abc import Iterator

import pytest

from core.engine.config import Mode
from core.scenarios.library import open_scenario
from core.scenarios.report import report_lines
from core.scenarios.session import Session
from core.scenarios.twin import session_report
from core.sim.spec import Kill
from demo.widgets.narration import narration_text


def forked(mode: Mode) -> Iterator[Session]:
    session = Session(open_scenario("13_portfolio_demo"))
    session.set_mode(mode)
    session.next_step()
    assert session.act(Kill("A")).ok and session.dropped_script
    yield session
    # the virtual clock on, until B has finished the task
    for _ in range(200):
        if session.work_over:
            break
        session.tick(5000)
    assert session.work_over
    yield session
    session.close()


@pytest.mark.parametrize(
    ("lang", "broke", "twin"),
    [
        (
            "en",
            "What broke: steps done again (2, against 0 in the correct run)",
            "The same faults in the correct run: 0 pages corrupted · 0 effects doubled · "
            "0 steps done again",
        ),
        ("zh", "坏在哪里：重做的步数（2，正确做法下是 0）", "同样的故障，正确做法下：0 页被写坏"),
    ],
)
def test_a_fork_ends_on_the_report_of_its_run(lang: str, broke: str, twin: str) -> None:
    run = forked(Mode.NO_CHECKPOINT)
    session = next(run)
    said = narration_text(session, lang).plain
    assert broke not in said and twin not in said  # B has not taken over yet
    session = next(run)
    said = narration_text(session, lang).plain
    assert broke in said and twin in said, said
    # the same report the script's end says, line for line, judged by the same checker
    lines = [line for line, _kind in report_lines(session_report(session), lang)]
    assert "\n".join(lines) in said
    next(run, None)


def test_a_correct_fork_says_it_is_the_twin() -> None:
    run = forked(Mode.CORRECT)
    next(run)
    session = next(run)
    said = narration_text(session, "en").plain
    assert "Nothing broke" in said
    assert "This is the correct run: its figures are the ones a mistake is measured against." in (
        said
    )
    next(run, None)
