"""Shared fixtures: a virtual clock and an in-memory store on it. No test waits on real time."""

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
