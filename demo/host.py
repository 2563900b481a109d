"""What the screens need of the app they run in.

The app imports its screens; the screens import this, not demo.app, so the two do not import
each other. `BorrowedKeysApp` is checked against `Host` by mypy (demo/app.py).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from core.engine.config import Mode
from core.scenarios.format import Scenario
from core.scenarios.session import Session


@runtime_checkable
class Host(Protocol):
    lang: str  # "en" or "zh"; setting it relabels every screen
    live_clock: bool  # False in tests and snapshots: time moves only by keys
    interview: bool  # the room answers questions by number; the runs it opens start so

    def open_session(self, scenario: Scenario | None, *, mode: Mode | None = None) -> object:
        """Open a scenario (None: the sandbox) on a new main screen."""
        ...

    def prepare_save(self, session: Session) -> Callable[[], list[Path]]:
        """Begin saving the transcript, a screenshot and the session as a scenario: the
        screenshot is taken now, the returned job reads the run and writes the files (on
        the session's runner) and returns their paths.

        Raises demo.saves.SaveLimitReached when this app may save no more.
        """
        ...


def host(app: object) -> Host:
    """The app a screen runs in."""
    assert isinstance(app, Host), "the screens run inside BorrowedKeysApp"
    return app
