"""What the main screen's parts read of the screen and of one another.

`MainScreen` is put together from parts by job (demo/screens/main.py): the drawing, the
playback, interview mode, the acts on the run, the views (layout and panels), and the run as
a whole (open, mode, language, save, quit). Each part is a mixin of this class, which to the
type checker is the screen's drawing (so a part may read the frame it shows) and at run time
adds nothing: every name declared here is defined by the screen or by one other part.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from core.sim.snapshot import Snapshot
from core.sim.spec import Action

if TYPE_CHECKING:
    from demo.host import Host
    from demo.screens.drawing import Drawing
    from demo.screens.session_runner import SessionRunner, Then

    _PartBase = Drawing
else:
    _PartBase = object


class MainPart(_PartBase):
    """One part of `MainScreen`: the screen's state and the calls the parts share."""

    # the screen's (demo/screens/main.py)
    runner: "SessionRunner"
    _toml: bool  # expectations in the file's form instead of as sentences
    _autoplay_wall: float  # when auto-play last stepped, on the wall clock
    _owed_ms: int  # live time not yet handed to a busy off-loop session

    if TYPE_CHECKING:

        @property
        def bk_app(self) -> Host: ...

        def _work(self, work: Callable[[], object], then: Then | None = None) -> None: ...

        def act(self, action: Action | Callable[[], Action]) -> None: ...

        def refresh_view(self, *, force: bool = False) -> None: ...

        def shown_snapshot(self) -> Snapshot: ...

        def _discard_then(self, what: str, then: Callable[[], None]) -> None: ...

        # interview mode's (demo/screens/interview.py)
        def _guessing(self) -> bool: ...
