"""The fleet names its workers, never by id: the story's cast first (阿澄, 临舟, 校对官), then
"worker 4" (4 号执行者); in panes, the palette, toasts and the headless run's lines."""

import re
from pathlib import Path
from typing import cast

import pytest

from core.engine.config import LeaseConfig
from core.engine.people import called
from core.fleet.command import DEFAULT_NAMES
from core.fleet.faults import FAULT_ACT
from core.fleet.frame import FleetFrame
from core.fleet.headless import _Undo
from core.fleet.supervisor import Fleet
from core.sim.snapshot import Snapshot, WorkerView
from core.sim.spec import WorkerState
from demo.screens.fleet import FleetScreen
from demo.widgets.worker_pane import WorkerGrid
from tests.app.apps import FleetHost

WORKERS = ("acheng", "linzhou", "elder", "w4", "w5")


def test_a_fleet_starts_its_workers_under_the_cast_then_numbers_them() -> None:
    assert DEFAULT_NAMES == ("acheng", "linzhou", "elder")
    assert [called(w, "zh") for w in WORKERS] == [
        "阿澄",
        "临舟",
        "校对官",
        "4 号执行者",
        "5 号执行者",
    ]
    assert [called(w, "en") for w in WORKERS] == [
        "Acheng",
        "Linzhou",
        "Elder",
        "worker 4",
        "worker 5",
    ]
    assert called("scribe-7", "zh") == "scribe-7"  # a name the presenter chose is its own


def _frame() -> FleetFrame:
    views = tuple(
        WorkerView(w, WorkerState.IDLE, True, None, None, None, None, None, None, None)
        for w in WORKERS
    )
    snap = Snapshot(0, "correct", (), views, (), (), (), ())
    pids: dict[str, int | None] = {w: 100 + n for n, w in enumerate(WORKERS)}
    return FleetFrame(snap, pids, frozenset(WORKERS), {}, {}, (), (), ())


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_panes_name_each_worker_without_its_id(lang: str) -> None:
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.show_frame(_frame())
        await pilot.pause()
        titles = {
            w: str(p.border_title)
            for w, p in screen.query_one("#workers", WorkerGrid).panes.items()
        }
    for w in WORKERS:
        assert titles[w].startswith(f"{called(w, lang)} · "), titles[w]
        assert w not in titles[w], titles[w]  # no id beside the name


class _Fleet:
    def __init__(self) -> None:
        self.workers = {w: type("W", (), {"pid": 7})() for w in ("acheng", "w4")}

    def resume(self, worker_id: str) -> bool:
        return True


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_headless_run_says_workers_by_name(lang: str) -> None:
    said: list[str] = []
    for w in ("acheng", "w4"):
        _Undo(cast(Fleet, _Fleet()), FAULT_ACT["stall"], w, set(), said.append, lang)()
    assert called("acheng", lang) in said[0] and "acheng" not in said[0]
    assert called("w4", lang) in said[1] and "w4" not in said[1]


def _rows_frame() -> FleetFrame:
    """A numbered worker's page in the ledger, its refusal, and the task it holds."""
    from core.engine.records import LedgerRow, TaskRow
    from core.engine.vocabulary import Operation, TaskStatus
    from core.sim.snapshot import Rejection, TaskView

    task = TaskRow(
        "t1",
        "report",
        TaskStatus.RUNNING,
        "w4",
        2,
        5,
        2,
        2,
        9_000,
        7_000,
        3_000,
        None,
        None,
        None,
        None,
        None,
        3_000,
    )
    page = LedgerRow("t1/1", "v", 2, "w4", 3_000, "t1")
    refused = Rejection(
        seq=9,
        at=2_000,
        worker_id="w5",
        task_id="t1",
        operation=Operation.WRITE,
        reason="fenced",
        lease_token=1,
        fence_token=1,
        current_lease_token=2,
        current_fence_token=2,
        key="t1/1",
    )
    snap = Snapshot(
        4_000, "correct", (TaskView(task, 5_000, None),), (), (page,), (), (), (refused,)
    )
    return FleetFrame(snap, {}, frozenset(), {}, {}, (), (), ())


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_tables_name_numbered_workers_without_their_ids(lang: str) -> None:
    from demo.widgets.panels import LedgerTable, RejectedTable
    from demo.widgets.task_table import TaskTable

    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.show_frame(_rows_frame())
        await pilot.pause()
        cells = {
            name: [str(c) for c in screen.query_one(name, table).get_row_at(0)]
            for name, table in (("#ledger", LedgerTable), ("#rejected", RejectedTable))
        }
        tasks = [str(c) for c in screen.query_one("#tasks", TaskTable).get_row_at(0)]
    assert called("w4", lang) in cells["#ledger"], cells["#ledger"]  # the writer
    assert called("w5", lang) in cells["#rejected"], cells["#rejected"]  # who was refused
    assert called("w4", lang) in tasks, tasks  # the owner
    for row in (*cells.values(), tasks):
        assert not {"w4", "w5"} & set(row), row
    # the lease's time left and the heartbeat's age in the run's words: 5秒, never 5s
    if lang == "zh":
        assert "5秒" in tasks and "1秒" in tasks, tasks
        assert not any(re.search(r"\d(ms|s|m|h)\b", cell) for cell in tasks), tasks


class _CutFleet:
    """A fleet on PostgreSQL whose worker's road is cut: it counts the restarts asked of it."""

    relays = object()

    def __init__(self) -> None:
        self.restarts = 0
        self.skews: dict[str, int] = {}
        self.workers = {"linzhou": type("W", (), {"pid": 7, "alive": False, "ready": False})()}

    def partitioned(self, worker_id: str) -> bool:
        return True

    def restart(self, worker_id: str) -> bool:
        self.restarts += 1
        return True

    def skew(self, worker_id: str, skew_ms: int) -> bool:
        self.restarts += 1
        return True


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_a_worker_cut_off_is_not_started_again_into_a_crash(lang: str) -> None:
    """Started with no road to its store, a process could not open it and would stop at
    once (a partition shown as a crash): `u` on it dead and `t` say to heal it first."""
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        fleet = _CutFleet()
        screen.fleet = cast(Fleet, fleet)
        said: list[str] = []
        screen.notify = lambda text, **_: said.append(str(text))  # type: ignore[method-assign,assignment,misc]
        screen.read_frame = lambda: None  # type: ignore[method-assign]
        screen.apply_fault("linzhou", "restart")
        screen.chosen = "linzhou"
        screen._skew()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    assert fleet.restarts == 0
    heal = "（c）" if lang == "zh" else "(c)"  # the key that heals it, said
    assert len(said) == 2 and all(called("linzhou", lang) in s and heal in s for s in said)


class _ServiceFleet:
    """A fleet whose lease history held while its service took a stale write."""

    def save(self, path: Path, frames: object) -> object:
        return type("Check", (), {"findings": []})()

    def service_findings(self) -> list[object]:
        return [object()]


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_saving_says_the_services_books_broke_where_the_leases_held(
    lang: str, tmp_path: Path
) -> None:
    screen = FleetScreen(None, lang, tmp_path, live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        said: list[tuple[str, str]] = []
        screen.notify = lambda text, severity="information", **_: said.append(  # type: ignore[method-assign,assignment,misc]
            (str(text), severity)
        )
        screen.read_frame = lambda: None  # type: ignore[method-assign]
        screen.fleet = cast(Fleet, _ServiceFleet())
        screen.maker = type("Maker", (), {"log": None})()  # type: ignore[assignment]
        screen._save()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    [(text, severity)] = said
    assert ("1 处违反它自己的规则" if lang == "zh" else "break its own rules (findings: 1;") in text
    assert severity == "warning"  # not the green of a run that held
