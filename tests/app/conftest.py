"""The app's tests: a snapshot is taken of the run on screen, never of the frame painted while
it opens (the app says when its run is there: `BorrowedKeysApp.opened`)."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from textual.pilot import Pilot

from demo.app import BorrowedKeysApp
from tests.app.apps import settled

RunBefore = Callable[[Pilot[Any]], Awaitable[None] | None]


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's `snap_compare`, its keys pressed once the run is open, and
    the screen taken once it has settled (see `settled`: refreshes waited on, never the
    clock)."""

    def compare(
        app: Any,
        *args: Any,
        press: Sequence[str] = (),
        run_before: RunBefore | None = None,
        **kw: Any,
    ) -> bool:
        async def opened(pilot: Pilot[Any]) -> None:
            if isinstance(pilot.app, BorrowedKeysApp):
                await pilot.app.opened.wait()
            if run_before is not None:
                done = run_before(pilot)
                if done is not None:
                    await done
            await pilot.press(*press)
            await settled(pilot)

        return snap_compare(app, *args, run_before=opened, **kw)

    return compare
