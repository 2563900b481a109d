"""Shared fixtures: a virtual clock and an in-memory store on it.

No test waits on real time but those in test_real_workers.py (about 17 s in all): they run
real worker processes on a file database and SIGKILL them, so they must use the real clock.
They are marked `slow` and are the only ones; every other test advances a virtual clock.
"""

from collections.abc import AsyncIterator

import pytest

from core.engine.clock import VirtualClock
from core.engine.store import LeaseStore


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
async def store(clock: VirtualClock) -> AsyncIterator[LeaseStore]:
    s = LeaseStore.open_inline(clock=clock)
    yield s
    await s.close()
