"""The facade: one object that the TUI, the headless player and the fuzzer all drive.

`Simulation(settings)` builds a store on a virtual clock, its workers and tasks. Every change
goes through `apply(action)`, which says what happened (a refusal with the Rejected panel's
row for it); screens read `snapshot()` and `events(since)`, and the few figures a caller
needs between snapshots (`task_statuses`, `worker_faults`, `violations`, ...) have methods of
their own. The store, the workers and the checker inside are the simulation's business:
this module and the parts mixed into `Simulation` (the keeper's watch, building snapshots,
saving and restoring). No lease logic lives outside core/, so the app and the player cannot
disagree.
"""

import dataclasses
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode
from core.engine.errors import (
    BorrowedKeysError,
    DuplicateTask,
    InvalidPayload,
    LeaseRejected,
    TaskStateError,
    UnknownTask,
)
from core.engine.people import called
from core.engine.records import EventRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import EventKind, TaskStatus
from core.sim.checker import SafetyChecker, Violation
from core.sim.heavy import StoreLoad, format_size
from core.sim.memory import WorkerFaults
from core.sim.runtime import VirtualRuntime
from core.sim.runtime import run_inline as run_inline
from core.sim.saving import SavedRun as SavedRun
from core.sim.saving import SaveRestore
from core.sim.snapshot import (
    Metrics,
    Rejection,
    TaskView,
)
from core.sim.snapshot_builder import SnapshotBuilder
from core.sim.spec import (
    Action,
    AddWorker,
    Advance,
    Approve,
    Autopilot,
    Checkpoint,
    Claim,
    Complete,
    Effect,
    Enqueue,
    Fail,
    FreezeHeartbeat,
    Heal,
    Heartbeat,
    HeartbeatPayload,
    Kill,
    Load,
    ManualAction,
    Park,
    Partition,
    Reject,
    Restart,
    Resume,
    SimSettings,
    Skew,
    Slow,
    Stall,
    TaskSpec,
    WorkerState,
    Write,
)
from core.sim.timeline import Timeline
from core.sim.unfit import ActionError as ActionError
from core.sim.unfit import Unfit as Unfit
from core.sim.watch import KeeperWatch
from core.sim.worker import Worker

# Where a run keeps its store when nobody says otherwise.
IN_MEMORY = ":memory:"


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What an action did: ok, or refused with a message (the refusal is also an event).

    `ignored`: the action was fine but had nothing to act on (approving a task that is not
    waiting); nothing changed and it is not a rejection. `message` says why.

    `rejection` is the Rejected panel's row for a refusal the store wrote (reason and
    tokens), so a screen can word it in any language; None for other refusals.
    """

    ok: bool = True
    message: str = ""
    ignored: bool = False
    rejection: Rejection | None = None
    error: BorrowedKeysError | None = None  # what `message` says, by name, for any language


def effective_config(settings: SimSettings) -> LeaseConfig:
    """The lease timing a run uses: long_lease swaps in a one-hour ttl (mistake two)."""
    return settings.config.in_mode(settings.mode)


class Simulation(KeeperWatch, SnapshotBuilder, SaveRestore):
    """A run: store, virtual clock, workers, the keeper's watch (core/sim/watch.py) and the
    safety checker; its snapshots are built in core/sim/snapshot_builder.py."""

    def __init__(
        self,
        settings: SimSettings,
        *,
        db_path: str | os.PathLike[str] | None = None,
        generation: int = 0,
        start: bool = True,
    ):
        self.settings = settings
        # Whether the run has begun: what was due at its first instant (the autopilot's first
        # claim) has run. A run made with start=False shows the world before it until its
        # first act or advance, as a scenario's step 0 must.
        self._started = False
        # Which rebuild of a run this is (a session makes a new one to step back): a screen
        # that keeps things between refreshes starts over when it changes.
        self.generation = generation
        self.mode = settings.mode
        self.config = effective_config(settings)
        self.clock = VirtualClock(0)
        # Where the run keeps its store is the caller's to say (the session's, the fuzzer's
        # setting): SQLite in memory unless told otherwise. A run on PostgreSQL works in a
        # fresh schema (scratch), dropped by close().
        self.store = LeaseStore.open_inline(
            IN_MEMORY if db_path is None else db_path,
            clock=self.clock,
            config=self.config,
            mode=settings.mode,
            scratch=True,
        )
        self.runtime = VirtualRuntime(self.clock)
        # How busy the store is (the `load` act): what a heavy heartbeat pays, shared by the
        # workers.
        self.store_load = StoreLoad()
        self.checker = SafetyChecker(
            ttl_ms=self.config.ttl_ms,
            expiry_enabled=settings.mode is not Mode.NO_EXPIRY,
            fence_tokens=settings.mode.issues_fence_tokens,
        )
        self.workers: dict[str, Worker] = {}
        self._live_leases: dict[str, tuple[int, int, str | None, int]] = {}
        self._rejections: list[Rejection] = []
        # Both forms of each scripted page written (see Snapshot.page_forms): words, not
        # state, so a restore keeps what it learned.
        self._page_forms: dict[str, tuple[str, str]] = {}
        self._dedup: Counter[str] = Counter()  # effect key -> repeats deduplicated
        self._task_views: dict[str, TaskView] = {}  # the last snapshot's, by task id
        self._pending_violations: list[Violation] = []
        self._stuck_look_at: int | None = None  # when the pending stuck-task look runs
        self._stuck_looks = 0  # looks scheduled so far; only the latest one is live
        self._last_seq = 0
        # Belief against truth: fed the register lines it has not seen when it is read, so a
        # run nobody draws (the explorer's, the fuzzer's) pays nothing for it.
        self.timeline = self.new_timeline()
        self.store.add_listener(self._on_event)
        try:
            for task in settings.tasks:
                self._enqueue(task)
            for spec in settings.workers:
                self._add_worker(
                    spec.id,
                    autopilot=spec.autopilot,
                    skew_ms=spec.skew_ms,
                    self_fencing=spec.self_fencing,
                    heartbeat_payload_bytes=spec.heartbeat_payload_bytes,
                )
            if start:
                self.start()
        except BaseException:
            # A run that cannot start leaves nothing behind (on PostgreSQL, its schema).
            self.close()
            raise

    # -- time -------------------------------------------------------------------------------

    @property
    def now_ms(self) -> int:
        return self.clock.now_ms()

    def start(self) -> None:
        """Begin the run, once: what is due at its first instant runs (idle autopilots claim)."""
        if not self._started:
            self._started = True
            self._settle()

    def advance(self, by_ms: int) -> None:
        """Let virtual time pass; every action due up to and including the end runs."""
        if by_ms < 0:
            raise ActionError("time cannot go backwards", why=Unfit.TIME_BACKWARDS)
        self.start()
        self.runtime.run_until(self.now_ms + by_ms, after_each=self._flush)
        self._flush()

    # -- actions ------------------------------------------------------------------------------

    def _enqueue(self, task: TaskSpec) -> None:
        run_inline(
            self.store.enqueue(
                task.id,
                task.kind,
                {"steps": task.steps, "step_time_ms": task.step_time_ms},
                task.max_attempts,
            )
        )

    def _add_worker(
        self,
        worker_id: str,
        *,
        autopilot: bool = True,
        skew_ms: int = 0,
        self_fencing: bool = False,
        heartbeat_payload_bytes: int = 0,
    ) -> Worker:
        worker = Worker(
            worker_id,
            store=self.store,
            env=self.runtime,
            config=self.config,
            heartbeat_payload_bytes=heartbeat_payload_bytes,
            store_load=self.store_load,
            mode=self.mode,
            autopilot=autopilot,
            self_fencing=self.settings.self_fencing or self_fencing,
            skew_ms=skew_ms,
        )
        self.workers[worker_id] = worker
        worker.start()
        return worker

    def _worker(self, action: Action) -> Worker:
        worker_id = getattr(action, "worker", None)
        if worker_id is None or worker_id not in self.workers:
            raise ActionError(
                f"{action.name}: unknown worker {worker_id!r}",
                why=Unfit.UNKNOWN_WORKER,
                action=action.name,
                worker=worker_id,
            )
        return self.workers[worker_id]

    def _fault_event(self, name: EventKind, worker: Worker, **detail: Any) -> None:
        run_inline(worker.record(name, worker.lease, **detail))

    def _processes(self, worker: Worker) -> list[Any]:
        return [p for p in (worker.work_process, worker.heartbeat_process) if p is not None]

    def apply(self, action: Action) -> ActionResult:
        """Apply one action; rejections by the store are recorded, not raised. A refusal the
        store wrote comes back with its row (the newest rejection this action caused)."""
        self.start()
        before = len(self._rejections)
        try:
            result = self._apply(action)
        except LeaseRejected as refused:
            result = ActionResult(False, str(refused), error=refused)
        except (DuplicateTask, UnknownTask, InvalidPayload) as bad:
            # The action itself does not fit this run (enqueue an id that exists, approve
            # one that does not): the caller's mistake, reported like any other ActionError.
            self._settle()
            raise ActionError(
                f"{action.name}: {bad}", why=Unfit.DOES_NOT_FIT, action=action.name, cause=bad
            ) from None
        self._settle()
        if not result.ok and result.rejection is None and len(self._rejections) > before:
            result = dataclasses.replace(result, rejection=self._rejections[-1])
        return result

    def _settle(self) -> None:
        # An act takes effect at once: whatever it made due now (a restarted worker's first
        # poll, a freshly enqueued task) runs before anyone looks at the screen.
        self._flush()
        self.runtime.run_until(self.now_ms, after_each=self._flush)
        # A kill, stall, restart or heal past the 3 x ttl mark can make a task stuck at this
        # very instant: judge it now, while the idle worker is still idle; a look one poll
        # later could find it busy with other work and never report the violation.
        if not self.checker.holder_down():
            return  # no task can be stuck, nor a look for one fall due: nothing to judge
        self._pending_violations.extend(self.checker.check_stuck(self.now_ms, self._idle_map()))
        self._flush()
        self._schedule_stuck_look()

    def _apply(self, a: Action) -> ActionResult:
        match a:
            case Advance(by_ms=by_ms):
                self.advance(by_ms)
                return ActionResult()
            case Enqueue():
                self._enqueue(a.spec())
                return ActionResult()
            case Approve() | Reject():
                op = self.store.approve if isinstance(a, Approve) else self.store.reject
                try:
                    run_inline(op(a.task))
                except TaskStateError as moot:
                    return ActionResult(message=f"ignored: {moot}", ignored=True, error=moot)
                return ActionResult()
            case AddWorker(worker=worker_id, skew_ms=skew_ms, autopilot=autopilot):
                if worker_id in self.workers:
                    raise ActionError(
                        f"add_worker: worker {worker_id!r} already exists",
                        why=Unfit.WORKER_EXISTS,
                        worker=worker_id,
                    )
                added = self._add_worker(worker_id, autopilot=autopilot, skew_ms=skew_ms)
                self._fault_event(EventKind.WORKER_ADDED, added, autopilot=added.autopilot)
                return ActionResult()
            case Load(factor=factor):
                self.store_load.factor = factor
                run_inline(self.store.record(EventKind.STORE_LOADED, load=factor))
                return ActionResult()
        worker = self._worker(a)
        f = worker.faults
        if isinstance(a, Autopilot):
            worker.go_on_alone()
            if worker.faults.stalled:  # a stalled worker's new loop waits like its others
                for process in self._processes(worker):
                    self.runtime.suspend(process)
            self._fault_event(EventKind.AUTOPILOT, worker)
            return ActionResult()
        if isinstance(a, Restart):
            skew = f.skew_ms
            if not f.dead:
                worker.stop()
            fresh = self._add_worker(
                worker.id,
                autopilot=worker.autopilot,
                skew_ms=skew,
                self_fencing=worker.self_fencing,
                # the same program: its heartbeat carries what it carried
                heartbeat_payload_bytes=f.heartbeat_payload_bytes,
            )
            self._fault_event(EventKind.RESTARTED, fresh)
            return ActionResult()
        if f.dead:
            self._fault_event(
                EventKind.CALL_DROPPED, worker, reason=WorkerState.DEAD, operation=a.name
            )
            dead = ActionError(
                f"{called(worker.id, 'en')} is dead: restart it first (u)",
                why=Unfit.WORKER_DEAD,
                action=a.name,
                worker=worker.id,
            )
            return ActionResult(False, str(dead), error=dead)
        match a:
            case FreezeHeartbeat():
                f.heartbeat_frozen = True
                self._fault_event(EventKind.HEARTBEAT_FROZEN, worker)
            case Stall():
                f.stalled = True
                for process in self._processes(worker):
                    self.runtime.suspend(process)
                self._fault_event(EventKind.STALLED, worker)
            case Kill():
                self._fault_event(EventKind.KILLED, worker)
                worker.stop()
            case Partition():
                f.partitioned = True
                self._fault_event(EventKind.PARTITIONED, worker)
            case Heal():
                f.partitioned = False
                worker.last_empty_poll_at = None
                self._fault_event(EventKind.HEALED, worker)
            case Resume():
                ended = [
                    label
                    for label, on in (
                        ("freeze", f.heartbeat_frozen),
                        ("stall", f.stalled),
                        ("partition", f.partitioned),
                        ("slow", f.slow_factor != 1.0),
                    )
                    if on
                ]
                was_stalled = f.stalled
                f.heartbeat_frozen = f.stalled = f.partitioned = False
                f.slow_factor = 1.0
                worker.last_empty_poll_at = None
                if was_stalled:
                    for process in self._processes(worker):
                        self.runtime.unsuspend(process)
                self._fault_event(EventKind.RESUMED, worker, ended=",".join(ended))
            case Slow(factor=factor):
                f.slow_factor = factor
                self._fault_event(EventKind.SLOWED, worker, factor=f.slow_factor)
            case Skew(by_ms=by_ms):
                f.skew_ms = by_ms
                self._fault_event(EventKind.SKEWED, worker, skew_ms=f.skew_ms)
            case HeartbeatPayload(size_bytes=size):
                f.heartbeat_payload_bytes = size
                self._fault_event(EventKind.HEARTBEAT_PAYLOAD, worker, payload=format_size(size))
            case (
                Claim()
                | Heartbeat()
                | Checkpoint()
                | Write()
                | Effect()
                | Complete()
                | Fail()
                | Park()
            ):
                return self._manual(worker, a)
            case _:
                raise ActionError(
                    f"unknown action {a.name!r}", why=Unfit.UNKNOWN_ACTION, action=a.name
                )
        return ActionResult()

    def own_page(self, worker_id: str, key: str) -> str | None:
        """The page `worker_id`'s memory makes for the step `key` names, were it to write
        it now (a `Write` with no value writes this); None when it remembers no lease or
        the key is no step of the task it holds."""
        worker = self.workers.get(worker_id)
        lease = None if worker is None else worker.lease
        if worker is None or lease is None:
            return None
        try:
            return run_inline(worker.own_page(lease, key))
        except ActionError:
            return None

    def _manual(self, worker: Worker, a: ManualAction) -> ActionResult:
        """A manual call with the lease the worker remembers (which may be stale)."""
        if isinstance(a, Write) and a.value is not None and a.value_zh is not None:
            self._page_forms[a.value_zh if a.lang == "zh" else a.value] = (a.value, a.value_zh)
        refused = run_inline(worker.by_hand(a))  # NoLease, an ActionError, is raised
        if refused is None:
            return ActionResult()
        return ActionResult(False, str(refused), error=refused)

    # -- reading ------------------------------------------------------------------------------

    def events(self, since_seq: int = 0) -> list[EventRow]:
        """The event log after since_seq."""
        return run_inline(self.store.events(since_seq))

    @property
    def last_event_seq(self) -> int:
        return self._last_seq

    def worker_ids(self) -> tuple[str, ...]:
        """Every worker of the run, in the order they were added (dead ones included)."""
        return tuple(self.workers)

    def worker_faults(self) -> dict[str, WorkerFaults]:
        """Each worker's faults as they are now (copies: changing one changes nothing)."""
        return {wid: dataclasses.replace(w.faults) for wid, w in self.workers.items()}

    def task_statuses(self) -> dict[str, TaskStatus]:
        """Each task's status by the store, without the rest of a snapshot."""
        return {row.task_id: TaskStatus(row.status) for row in run_inline(self.store.tasks())}

    @property
    def rejections(self) -> tuple[Rejection, ...]:
        """Every refusal the store wrote so far, oldest first."""
        return tuple(self._rejections)

    def violations(self) -> dict[str, int]:
        """The safety checker's counts so far, by violation name."""
        return dict(self.checker.violations)

    def violations_found(self) -> tuple[Violation, ...]:
        """Every violation found so far, with when and where, in the order found."""
        return tuple(self.checker.found)

    def metrics(self) -> Metrics:
        """The cost figures so far (wasted steps, the longest recovery)."""
        so_far, until, task = self.checker.out_of_reach_now(self.now_ms)
        return Metrics(
            self.checker.wasted_steps, self.checker.recovery_time_ms, so_far, until, task
        )

    def new_timeline(self) -> Timeline:
        """An empty timeline for this run's timing (a restored run starts one again)."""
        config = self.config
        return Timeline(config.heartbeat_ms, config.ttl_ms, config.deadline_ms)

    @property
    def on_network(self) -> bool:
        """Whether the store is across a network (PostgreSQL): each call takes a round trip."""
        dialect = getattr(self.store.driver, "dialect", None)
        return dialect is not None and dialect.name != "sqlite"

    def close(self) -> None:
        """End every worker coroutine and close the database."""
        for worker in self.workers.values():
            for process in self._processes(worker):
                self.runtime.cancel(process)
        run_inline(self.store.close())
