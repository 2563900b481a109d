"""Shared fixtures: a virtual clock, and a store on it over each backend.

`store` and `make_store` run every test that uses them on SQLite (in memory) and on
PostgreSQL (a fresh schema of a real server, see pgserver_kit).

No test waits on real time but the real-process ones, which must: test_real_workers.py and
test_real_workers_pg.py (real worker processes SIGKILLed on a real database), test_netns_pg.py
(workers in network namespaces) and test_serve_browser.py (a real Chromium against
`borrowed-keys serve`). The database ones are marked `slow`; all wait with bounded polls.
Every other test advances a virtual clock.
"""

import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.engine.clock import VirtualClock
from core.engine.store import LeaseStore
from tests.pgserver_kit import start_server

BACKENDS = ("sqlite", "postgresql")

MakeStore = Callable[..., LeaseStore]


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for the whole run (shared by the run's xdist workers)."""
    # Not under pytest's temporary folder: as root, the server runs as another user, and
    # every pytest start takes the other users' access to /tmp/pytest-of-root away again.
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    url, server = start_server(Path(tempfile.gettempdir()) / f"bk-pgdata-{run}")
    yield url
    if server is not None:
        server.cleanup()  # stops it (and deletes it) once no worker of this run uses it


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_url(backend: str, request: pytest.FixtureRequest) -> str:
    """Where this test's scratch stores go: SQLite in memory, or the test PostgreSQL."""
    if backend == "sqlite":
        return ":memory:"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
async def make_store(db_url: str, clock: VirtualClock) -> AsyncIterator[MakeStore]:
    """Open inline stores on this test's backend (each in its own schema on PostgreSQL)."""
    opened: list[LeaseStore] = []

    def make(**options: Any) -> LeaseStore:
        options.setdefault("clock", clock)
        store = LeaseStore.open_inline(db_url, scratch=True, **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.close()


@pytest.fixture
async def store(make_store: MakeStore) -> LeaseStore:
    return make_store()
