"""Saving a run and going back to it (`Simulation.save` / `restore`), mixed into
`Simulation`: the explorer branches on it thousands of times, and what a saved run must
remember changes apart from how the run steps.
"""

import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode
from core.engine.records import Lease
from core.engine.store import LeaseStore
from core.sim.checker import SafetyChecker, Violation
from core.sim.heavy import StoreLoad
from core.sim.kinds import KINDS
from core.sim.memory import Work, WorkerFaults
from core.sim.runtime import VirtualRuntime
from core.sim.snapshot import Rejection, TaskView
from core.sim.timeline import Timeline
from core.sim.unfit import ActionError, Unfit
from core.sim.worker import Worker


@dataclass(frozen=True, slots=True)
class _WorkMemory:
    """A worker's `Work` by its kind's name, so a saved run can cross to another process."""

    task_id: str
    kind: str
    steps: int
    states: tuple[tuple[int, dict[str, Any]], ...]

    @classmethod
    def of(cls, work: Work | None) -> "_WorkMemory | None":
        if work is None:
            return None
        states = tuple((step, dict(state)) for step, state in work.states.items())
        return cls(work.task_id, work.kind.name, work.steps, states)

    def work(self) -> Work:
        states = {step: dict(state) for step, state in self.states}
        return Work(self.task_id, KINDS[self.kind], self.steps, states)


@dataclass(frozen=True, slots=True)
class _WorkerMemory:
    """One manual worker as a saved run keeps it: what it remembers and its faults."""

    id: str
    self_fencing: bool
    faults: WorkerFaults
    lease: Lease | None
    work: _WorkMemory | None
    step: int | None
    last_renew_at: int | None
    fenced_out: bool
    last_empty_poll_at: int | None


@dataclass(frozen=True, slots=True)
class SavedRun:
    """A run's whole state at one instant, to go back to with `Simulation.restore`.

    The database is SQLite's own copy of itself (`Connection.serialize`); the rest is what
    the simulation and its checker remember. Taken only from runs whose workers are all
    manual: an autopilot worker is a coroutine in mid-flight, and those cannot be copied.
    """

    database: bytes
    now_ms: int
    workers: tuple[_WorkerMemory, ...]
    checker: SafetyChecker
    live_leases: tuple[tuple[str, tuple[int, int, str | None, int]], ...]
    rejections: tuple[Rejection, ...]
    dedup: tuple[tuple[str, int], ...]
    stuck_look_at: int | None
    stuck_looks: int
    last_seq: int
    store_load: float = 1.0


class _SimLike(Protocol):
    """What saving and restoring use of `Simulation` (the mixin's self type)."""

    store: LeaseStore
    clock: VirtualClock
    runtime: VirtualRuntime
    checker: SafetyChecker
    config: LeaseConfig
    mode: Mode
    store_load: StoreLoad
    workers: dict[str, Worker]
    _live_leases: dict[str, tuple[int, int, str | None, int]]
    _rejections: list[Rejection]
    _dedup: Counter[str]
    _task_views: dict[str, TaskView]
    _pending_violations: list[Violation]
    _stuck_look_at: int | None
    _stuck_looks: int
    _last_seq: int
    timeline: Timeline

    @property
    def now_ms(self) -> int: ...

    def new_timeline(self) -> Timeline: ...

    def _connection(self) -> sqlite3.Connection: ...

    def _stuck_look(self, number: int) -> None: ...

    def _book_expiry_look(self, task: str, lease_token: int, expires: int) -> None: ...


class SaveRestore:
    """`save` and `restore`, mixed into `Simulation` (runs on SQLite only)."""

    def _connection(self: "_SimLike") -> sqlite3.Connection:
        conn = getattr(self.store.driver, "conn", None)
        if not isinstance(conn, sqlite3.Connection):
            raise ActionError(
                "only a run on SQLite can be saved and restored", why=Unfit.SAVE_NEEDS_SQLITE
            )
        return conn

    def save(self: "_SimLike") -> SavedRun:
        """The run's state now, for `restore` to return to (all workers must be manual)."""
        if any(w.autopilot for w in self.workers.values()):
            raise ActionError(
                "a run with autopilot workers cannot be saved", why=Unfit.SAVE_NEEDS_MANUAL
            )
        memories = tuple(
            _WorkerMemory(
                id=w.id,
                self_fencing=w.self_fencing,
                faults=w.faults.copy(),
                lease=w.lease,
                work=_WorkMemory.of(w.work),
                step=w.step,
                last_renew_at=w.last_renew_at,
                fenced_out=w.fenced_out,
                last_empty_poll_at=w.last_empty_poll_at,
            )
            for w in self.workers.values()
        )
        return SavedRun(
            database=self._connection().serialize(),
            now_ms=self.now_ms,
            workers=memories,
            checker=self.checker.copy(),
            live_leases=tuple(self._live_leases.items()),
            rejections=tuple(self._rejections),
            dedup=tuple(self._dedup.items()),
            stuck_look_at=self._stuck_look_at,
            stuck_looks=self._stuck_looks,
            last_seq=self._last_seq,
            store_load=self.store_load.factor,
        )

    def restore(self: "_SimLike", saved: SavedRun) -> None:
        """Go back to a state `save` took from this run; the same actions then give the same
        history as they did from there (the keeper's and the checker's pending looks are
        booked again from what the run remembers, the only thing the scheduler held)."""
        self._connection().deserialize(saved.database)
        self.clock = VirtualClock(saved.now_ms)
        self.store.clock = self.clock
        self.runtime = VirtualRuntime(self.clock)
        self.checker = saved.checker.copy()
        self.store_load.factor = saved.store_load
        self.workers = {}
        for m in saved.workers:
            worker = Worker(
                m.id,
                store=self.store,
                env=self.runtime,
                config=self.config,
                mode=self.mode,
                autopilot=False,
                self_fencing=m.self_fencing,
                skew_ms=m.faults.skew_ms,
                store_load=self.store_load,
            )
            worker.faults = m.faults.copy()
            worker.lease = m.lease
            worker.work = None if m.work is None else m.work.work()
            worker.step = m.step
            worker.last_renew_at = m.last_renew_at
            worker.fenced_out = m.fenced_out
            worker.last_empty_poll_at = m.last_empty_poll_at
            self.workers[m.id] = worker
        self._live_leases = dict(saved.live_leases)
        self._rejections = list(saved.rejections)
        self._dedup = Counter(dict(saved.dedup))
        self._task_views: dict[str, TaskView] = {}
        self._pending_violations: list[Violation] = []
        self._last_seq = saved.last_seq
        self.timeline = self.new_timeline()  # read again from the restored register
        self._stuck_looks = saved.stuck_looks
        self._stuck_look_at = saved.stuck_look_at
        for task, (lease_token, expires, _, _) in sorted(
            self._live_leases.items(), key=lambda item: item[1][1]
        ):
            self._book_expiry_look(task, lease_token, expires)
        if saved.stuck_look_at is not None:
            number = saved.stuck_looks
            self.runtime.call_at(saved.stuck_look_at, lambda: self._stuck_look(number))
