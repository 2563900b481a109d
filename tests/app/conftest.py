"""The app's tests: a snapshot is taken of the run on screen, never of the frame painted while
it opens (the app says when its run is there: `BorrowedKeysApp.opened`)."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from textual.pilot import Pilot

from demo.app import BorrowedKeysApp

RunBefore = Callable[[Pilot[Any]], Awaitable[None] | None]


SETTLE_REFRESHES = 12  # far more than any chain of after-refresh work on these screens


async def settled(pilot: Pilot[Any]) -> None:
    """Refresh until the screen stops changing: a refresh can ask for work after itself
    (the log beside measures its rows, then scrolls to its end), and that work for another
    refresh; how many of them are done when a key's messages are handled depends on the
    machine's load, not on the run."""
    before = None
    for _ in range(SETTLE_REFRESHES):
        await pilot.pause()
        now = pilot.app.export_screenshot()
        if now == before:
            return
        before = now
    raise AssertionError(f"the screen still changed after {SETTLE_REFRESHES} refreshes")


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
