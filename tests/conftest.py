"""Shared fixtures: a virtual clock, and a store on it over each backend.

`store` and `make_store` run every test that uses them on SQLite (in memory) and on
PostgreSQL (a fresh schema of a real server, see pgserver_kit).

The tests are laid out like the code (engine, sim, scenarios, search, tools, app, export,
serve), with two folders for what needs more than Python: postgresql/ (the test server) and
real/ (real processes on the wall clock). Every test that uses a PostgreSQL server is marked
`postgresql`, wherever it sits (the PostgreSQL half of a test run on both backends too), and
every test in real/ or that drives a real browser is marked `real_clock`.

No test waits on real time but the real-process ones, which must: real/test_real_workers.py
and real/test_real_workers_pg.py (real worker processes SIGKILLed on a real database),
real/test_fleet.py (the fleet under its supervisor), real/test_netns_pg.py (workers in
network namespaces) and serve/test_serve_browser.py (a real Chromium against
`borrowed-keys serve`). The database ones are marked `slow`; all wait with bounded polls.
Every other test advances a virtual clock.
"""

import os
import tempfile
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.engine.clock import VirtualClock
from core.engine.store import LeaseStore
from tests.pgserver_kit import start_server

BACKENDS = ("sqlite", "postgresql")

MakeStore = Callable[..., LeaseStore]

TESTS = Path(__file__).resolve().parent
# Real-clock tests outside real/: a real browser against a real server.
REAL_CLOCK_MODULES = ("test_serve_browser.py", "test_export_browser.py", "test_hold.py")
# The sweeps that search every mode's whole small world again, or let hypothesis drive the
# store for long (`deep`: `make check` leaves them to `make test`, to stay a quick loop; each
# takes seconds, together half of what the parts below the app cost).
DEEP_TESTS = frozenset(
    {
        "test_explore.py::test_a_refused_call_is_answered_from_memory",
        "test_explore.py::test_answering_a_refused_call_from_memory_changes_no_result",
        "test_explore_reduction.py::test_the_reduced_search_finds_every_rule_at_the_full_searchs_length",
        "test_explore_reduction.py::test_the_choices_taken_as_independent_commute",
        "test_explore_reduction.py::test_two_jobs_reduce_as_one_does",
        "test_explore_faults.py::test_faults_left_out_of_the_choices_hide_no_broken_rule",
        "test_store_stateful.py::TestLeaseStore",
        "test_scenario_writer.py::test_generated_scenarios_round_trip",
        "test_scenario_bad_input.py::test_fuzz_generated_documents",
        "test_chaos.py::test_jobs_do_not_change_the_summary",
    }
)


def _uses_postgresql(item: pytest.Item) -> bool:
    if TESTS / "postgresql" in Path(item.path).parents:
        return True
    if "postgres_url" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend") == "postgresql":
        return True
    # A test that starts a server of its own, or asks for the shared one only when it runs
    # (a state machine's class), says so in its name.
    return "postgresql" in item.nodeid.split("::", 1)[-1].lower()


# The parameters a run on other library versions must still cover in every case: the
# backend (another driver, another server) and the language (the wide cells of Chinese are
# measured by the terminal libraries).
KEPT_PARAMS = ("backend", "lang")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--one-case-each",
        action="store_true",
        help=(
            "run each test function once per backend and language, its other parameters at "
            "their first value (make test-min: the lowest library versions are tested on "
            "every code path, the whole grid of cases on the newest)"
        ),
    )


def _one_case_each(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen: set[tuple[object, ...]] = set()
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = {} if callspec is None else callspec.params
        function = getattr(item, "originalname", item.name)
        kept_params = (str(params.get(name)) for name in KEPT_PARAMS)
        key = (item.path, getattr(item, "cls", None), function, *kept_params)
        if key in seen:
            dropped.append(item)
        else:
            seen.add(key)
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what needs a PostgreSQL server and what runs on the wall clock (see above), and
    what compares the app's SVG screen with a stored one (`snapshot`: `make test-min` leaves
    those to `make test`, see the Makefile), and the `deep` sweeps `make check` leaves out.
    With `--one-case-each`, keep one case of each test per backend and language."""
    if config.getoption("--one-case-each"):
        _one_case_each(config, items)
    for item in items:
        if _uses_postgresql(item):
            item.add_marker(pytest.mark.postgresql)
        path = Path(item.path)
        if TESTS / "real" in path.parents or path.name in REAL_CLOCK_MODULES:
            item.add_marker(pytest.mark.real_clock)
        if "snap_compare" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.snapshot)
        within = item.nodeid.partition("::")[2].partition("[")[0]
        if {f"{path.name}::{within}", f"{path.name}::{within.partition('::')[0]}"} & DEEP_TESTS:
            item.add_marker(pytest.mark.deep)
    # The tests on the wall clock (real processes, a real browser) first: most of their time
    # is waiting, which the other workers fill; left to the end, the longest of them ran on
    # alone after the rest had finished.
    items.sort(key=lambda item: item.get_closest_marker("real_clock") is None)


@pytest.fixture(autouse=True)
def _runs_closed() -> Iterator[None]:
    """Every simulated run a test opens (a Simulation, a Session's) is closed when the test
    ends, if the test left it open: its workers' coroutines, spawned and never started,
    would otherwise each warn that they were never awaited whenever the collector came by,
    inside whatever test runs then (pyproject's filterwarnings makes that warning an error).
    The code's own runs close themselves; this only tidies after a test's."""
    from core.sim.simulation import Simulation

    opened: weakref.WeakSet[Simulation] = weakref.WeakSet()
    closed: weakref.WeakSet[Simulation] = weakref.WeakSet()
    init, close = Simulation.__init__, Simulation.close

    def opening(self: Simulation, *args: Any, **kwargs: Any) -> None:
        opened.add(self)
        init(self, *args, **kwargs)

    def closing(self: Simulation) -> None:
        closed.add(self)
        close(self)

    # A patch of its own, not the test's `monkeypatch`: sharing it would keep a test's own
    # patches (a refused connect) in place until after the test's other fixtures end.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Simulation, "__init__", opening)
        patch.setattr(Simulation, "close", closing)
        yield
    for sim in list(opened):
        # a run whose building failed half way has nothing of its own to close
        if sim not in closed and hasattr(sim, "workers"):
            closing(sim)


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
