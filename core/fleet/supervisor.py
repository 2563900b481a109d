"""The fleet: real `borrowed-keys worker` processes against one database, their faults, and
the same safety checker the simulations use, judging the events table as it grows.

The app (`borrowed-keys fleet`) and the headless run drive one `Fleet`. Every read of the
database and every process start runs on the fleet's own thread: the store's connection
stays on one thread, and the parent-death signal (which fires when the thread that started
a child ends) is tied to a thread that lives exactly as long as the fleet. Writes (enqueue)
run on a second thread with a connection of their own.
The database's clock judges every lease; the supervisor only watches, signals and reads.
"""

import contextlib
import dataclasses
import itertools
import json
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from core.engine.clock import DatabaseClock
from core.engine.durations import format_duration
from core.engine.errors import BorrowedKeysError, UnknownTask
from core.engine.records import CheckpointRow, EffectRow, EventRow, LedgerRow, TaskRow
from core.engine.store import LeaseStore
from core.engine.vocabulary import EventKind, TaskStatus
from core.fleet.arrivals import Arrivals
from core.fleet.database import FleetDatabase
from core.fleet.database import open_database as open_database
from core.fleet.faketime import libfaketime as libfaketime
from core.fleet.faketime import skewed_env
from core.fleet.history import Believed, Held, extra_lines
from core.fleet.process import WorkerProcess
from core.fleet.relay import Relays, through, upstream_of, with_query
from core.fleet.service_books import service_lines
from core.fleet.settings import FLEET_KINDS, mixed_kinds
from core.fleet.settings import FaultNote as FaultNote
from core.fleet.settings import FleetSettings as FleetSettings
from core.fleet.tail import Tail
from core.fleet.verdict import (
    FinalRows,
    Finding,
    HistoryCheck,
    check_history,
    save_history,
)
from core.fleet.write_in_hand import stop_with_write, writes_through_service
from core.sim.checker import SafetyChecker
from core.sim.simulation import run_inline

T = TypeVar("T")

# What a fleet keeps in memory of what it read and did, however long it runs: the newest
# lines of each (the screen shows the newest, a frame asks for what came since the last).
# The whole register stays in the store, and the supervisor's signals and the workers'
# beliefs go to the journal on disk as they come, so a save still holds the whole run.
KEEP_EVENTS = 1000
KEEP_FINDINGS = 200
KEEP_FAULTS = 500
KEEP_BELIEFS = 2000
JOURNAL = "journal.jsonl"  # in the fleet's log folder: the signals and beliefs, as saved


class Fleet:
    """Worker processes by id on one database, read and judged as they run."""

    def __init__(self, settings: FleetSettings, logs: Path, database: Any = None) -> None:
        self.settings = settings
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self._database: FleetDatabase | None = database
        self.workers: dict[str, WorkerProcess] = {}
        self.checker = SafetyChecker(ttl_ms=settings.ttl_ms)
        # the running checker's findings (the newest), and how many of each rule in all
        self.found: Tail[Finding] = Tail(KEEP_FINDINGS)
        self.violations: Counter[str] = Counter()
        self.events: Tail[EventRow] = Tail(KEEP_EVENTS)  # the newest of the history read
        self._seen = 0
        self._ids = itertools.count(len(settings.names) + 1)  # after the named ones
        self._task_ids = itertools.count(1)
        # What the supervisor did to its workers, by the wall clock (ms), for the screen
        # and the saved history. Not written to the store: a worker stopped by SIGSTOP in
        # the middle of a SQLite transaction holds the write lock until it is resumed, and
        # the supervisor, which is the one to resume it, must never wait for that lock.
        self.faults: Tail[FaultNote] = Tail(KEEP_FAULTS)
        # What each process said it held, each change once (see `_note_beliefs`).
        self.beliefs: Tail[Believed] = Tail(KEEP_BELIEFS)
        # Both, whole, on disk as they come: what a save writes beside the register.
        self._journal_lock = threading.Lock()
        self._journal_path = logs / JOURNAL
        self._journal = self._journal_path.open("w", encoding="utf-8")
        self._held: dict[str, Held] = {}
        self._pending_beliefs: list[tuple[str, Held, int]] = []  # found, kept next read
        self._belief_lines: dict[str, tuple[int, int]] = {}  # worker -> incarnation, lines read
        self._belief_at: dict[str, int] = {}  # worker -> its last belief's time
        self._polling = threading.RLock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fleet")
        # Writes (enqueue, approve) on a thread and a connection of their own, for the same
        # reason: the reads and the signals go on while a write waits for the lock.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fleet-write")
        self._closed = False
        self.downstream: Any = None  # the fenced service agent work writes to (closed last)
        self._lock = threading.Lock()
        self.relays: Relays | None = None
        self.skews: dict[str, int] = {}  # worker -> how far its clock is off (ms)
        # Workers a stall is waiting on (for their write), and those of them resumed meanwhile.
        self._stalling: set[str] = set()
        self._called_off: set[str] = set()
        self._skewed_from: dict[str, tuple[int, int]] = {}  # worker -> (after seq, skew)
        if settings.relays and settings.db.startswith(("postgresql://", "postgres://")):
            self.relays = Relays(upstream_of(settings.db))
        self.store: LeaseStore = self._do(self._open)
        self._wstore: LeaseStore = self._writer.submit(self._open).result()

    def _open(self) -> LeaseStore:
        return LeaseStore.open_inline(
            self.settings.db, clock=DatabaseClock(), config=self.settings.config
        )

    # -- the fleet's own thread ---------------------------------------------------------------

    def _do(self, fn: Callable[[], T]) -> T:
        return self._pool.submit(fn).result()

    # -- workers ----------------------------------------------------------------------------

    def _command(self, worker_id: str) -> list[str]:
        s = self.settings
        cfg = s.config
        db = s.db
        if self.relays is not None:
            # Cut off, a call gives up after half a heartbeat and is tried again: the worker
            # keeps its rhythm (and its renew deadline) instead of waiting on a dead road.
            bound = max(0.2, cfg.heartbeat_ms / 2000)
            db = with_query(through(s.db, self.relays.port(worker_id)), reconnect_for=bound)
        if s.work is not None and s.service_url is not None:
            return [
                sys.executable,
                "-m",
                "core.tools.agent_cli",
                "agent",
                "--db",
                db,
                "--id",
                worker_id,
                "--work",
                s.work,
                "--service",
                s.service_url,
                "--ttl",
                format_duration(cfg.ttl_ms),
                "--poll-every",
                format_duration(cfg.poll_every_ms),
                "--steps",
                str(s.steps),
                "--step-time",
                format_duration(s.step_time_ms),
                "--mode",
                s.mode.value,
                "--control",
            ]
        return [
            sys.executable,
            "-m",
            "core.tools.realworker",
            "worker",
            "--db",
            db,
            "--id",
            worker_id,
            "--ttl",
            format_duration(cfg.ttl_ms),
            "--heartbeat-every",
            format_duration(cfg.heartbeat_ms),
            "--renew-deadline",
            format_duration(cfg.deadline_ms),
            "--poll-every",
            format_duration(cfg.poll_every_ms),
            "--mode",
            s.mode.value,
            "--json",
            "--control",
            *(["--self-fence"] if s.self_fencing else []),
        ]

    def add_worker(self, worker_id: str | None = None) -> WorkerProcess:
        """Start one more worker process (w1, w2, ... unless named)."""
        proc = self.add_worker_within(None, worker_id)
        assert proc is not None
        return proc

    def add_worker_within(
        self, at_most: int | None, worker_id: str | None = None
    ) -> WorkerProcess | None:
        """Start one more worker process unless `at_most` are there already (None then):
        counted under the lock, so presses in quick succession cannot pass the bound."""
        with self._lock:
            if at_most is not None and len(self.workers) >= at_most:
                return None
            if worker_id is None:
                worker_id = next((n for n in self.settings.names if n not in self.workers), None)
            while worker_id is None or worker_id in self.workers:
                worker_id = f"w{next(self._ids)}"
            proc = WorkerProcess(
                worker_id, self._command(worker_id), self.logs, env=self.settings.env
            )
            self.workers[worker_id] = proc
        self._do(proc.start)
        return proc

    def restart(self, worker_id: str) -> WorkerProcess:
        """A new process under the same id (the old one killed first if it still runs),
        under the same skew as before, if any."""
        proc = self.workers[worker_id]
        if proc.alive:
            proc.kill()
            self._note(EventKind.KILLED, worker_id, pid=proc.pid)
        env = skewed_env(self.skews[worker_id]) if self.skews.get(worker_id) else None
        self._do(lambda: proc.start(env))
        self._note(EventKind.RESTARTED, worker_id, pid=proc.pid)
        return proc

    def skew(self, worker_id: str, skew_ms: int) -> bool:
        """Restart the worker under libfaketime, its clock `skew_ms` off (0: its own clock
        again); False where libfaketime is not installed.

        The seed's fifth mistake, made real: "Lease 的时间边界最好由统一的服务端时钟或数据库时钟
        裁决。否则不同机器各自判断“到没到点”，会把时钟漂移重新带回系统。" On SQLite each
        process's store reads its own clock, so a skewed worker brings the drift back; on
        PostgreSQL the server's clock judges and the skew changes nothing.
        """
        if skew_ms and libfaketime() is None:
            return False
        proc = self.workers[worker_id]
        if proc.alive:
            proc.kill()
            self._note(EventKind.KILLED, worker_id, pid=proc.pid)
        # Every line it writes from now on is stamped by its skewed clock (on SQLite the
        # store's clock is the process's own). The fleet applied the skew, so it knows it,
        # and judges the history on the true timeline: those stamps, less the skew.
        self.poll()
        self._skewed_from[worker_id] = (self._seen, skew_ms)
        self.skews[worker_id] = skew_ms
        self.restart(worker_id)
        self._note(EventKind.SKEWED, worker_id, pid=proc.pid)
        return True

    def true_time(self, ev: EventRow) -> EventRow:
        """The event on the true timeline: a skewed worker's stamps less its skew."""
        skewed = self._skewed_from.get(ev.worker_id or "")
        if skewed is None or ev.seq <= skewed[0] or not skewed[1]:
            return ev
        off = skewed[1]
        detail = dict(ev.detail)
        for key in ("expires_at", "renew_deadline"):
            if isinstance(detail.get(key), int):
                detail[key] -= off
        return dataclasses.replace(ev, at=ev.at - off, detail=detail)

    def kill(self, worker_id: str) -> bool:
        proc = self.workers[worker_id]
        pid = proc.pid
        done = proc.kill()
        if done:
            self._note(EventKind.KILLED, worker_id, pid=pid)
        return done

    def stall(self, worker_id: str) -> bool:
        """SIGSTOP: the whole process stops (a long pause). An agent worker whose writes go
        through the service is stopped with its next write on its way out, as the
        simulation's stall freezes a worker with its step (its write included) still to
        finish: its lease ends while it is stopped, and `resume` sends that write late,
        with the token it was made with. It waits at most a lease length for that write
        (on a thread of the app's, never its screen's); none by then, it stops as it is."""
        w = self.workers[worker_id]
        if self._writes_through_service(worker_id):
            self._stop_with_write(w)
        if worker_id in self._called_off:
            self._called_off.discard(worker_id)
            return False
        done = w.stall()
        if done:
            self._note(EventKind.STALLED, worker_id, pid=w.pid)
        return done

    def _writes_through_service(self, worker_id: str) -> bool:
        return writes_through_service(self, worker_id)

    def _stop_with_write(self, w: WorkerProcess) -> None:
        stop_with_write(w, self.settings.ttl_ms / 1000, self._stalling, self._called_off)

    def resume(self, worker_id: str) -> bool:
        """SIGCONT for a stalled worker, and its heartbeat back for a frozen one; a write it
        was stopped with goes now, late, with its old token. A stall still waiting for that
        write is called off."""
        w = self.workers[worker_id]
        if worker_id in self._stalling:
            self._called_off.add(worker_id)
            w.wake()
        was = w.stalled or w.frozen
        done = w.resume()
        if w.frozen:
            done = w.thaw() and done
        if w.write_held is not None:
            done = w.send_writes() and done
        if done and was:
            self._note(EventKind.RESUMED, worker_id, pid=w.pid)
        return done

    def stopping_at_write(self, worker_id: str) -> bool:
        """Whether a stall asked for waits for the worker's next downstream write."""
        return worker_id in self._stalling

    def holds_a_write(self, worker_id: str) -> bool:
        """Whether the worker was stopped with a downstream write on its way out."""
        return self.workers[worker_id].write_held is not None

    def taken_over(self, task_id: str) -> bool:
        """Whether the task a stopped worker held is finished by now, which only another
        holder can have done while it was stopped: that holder's write reached the service
        before the stopped one's late write can. (A successor's claim alone is not enough:
        its write may still be to come, after the late one, and a fence refuses only a
        token older than one it has seen.)"""
        still = self.newest(0, 0, 0)[0]  # the tasks still to do alone: cheap at every look
        return all(r.task_id != task_id for r in still)

    def freeze(self, worker_id: str) -> bool:
        done = self.workers[worker_id].freeze()
        if done:
            self._note(EventKind.HEARTBEAT_FROZEN, worker_id, pid=self.workers[worker_id].pid)
        return done

    def thaw(self, worker_id: str) -> bool:
        was = self.workers[worker_id].frozen
        done = self.workers[worker_id].thaw()
        if done and was:
            self._note(EventKind.RESUMED, worker_id, pid=self.workers[worker_id].pid)
        return done

    def partition(self, worker_id: str) -> bool:
        """Cut the worker's road to the server (PostgreSQL only): False if there is none."""
        if self.relays is None or not self.workers[worker_id].alive:
            return False
        self.relays.cut(worker_id)
        self._note(EventKind.PARTITIONED, worker_id, pid=self.workers[worker_id].pid)
        return True

    def heal(self, worker_id: str) -> bool:
        if self.relays is None or not self.relays.is_cut(worker_id):
            return False
        self.relays.heal(worker_id)
        self._note(EventKind.HEALED, worker_id, pid=self.workers[worker_id].pid)
        return True

    def partitioned(self, worker_id: str) -> bool:
        return self.relays is not None and self.relays.is_cut(worker_id)

    def _note(self, event: EventKind, worker_id: str, pid: int | None) -> None:
        """A fault the supervisor caused, kept beside the store's own lines."""
        note = FaultNote(time.time_ns() // 1_000_000, event, worker_id, pid)
        self.faults.append(note)
        self._journal_lines(extra_lines([note], []))

    def _journal_lines(self, lines: list[dict[str, Any]]) -> None:
        with self._journal_lock:
            if self._journal.closed:
                return
            for line in lines:
                self._journal.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
            self._journal.flush()

    def journal(self) -> list[dict[str, Any]]:
        """Every signal and belief noted so far, read back from the journal on disk."""
        with self._journal_lock:
            text = self._journal_path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line]

    def _write(self, fn: Callable[[], T]) -> T:
        return self._writer.submit(fn).result()

    # -- tasks ------------------------------------------------------------------------------

    def enqueue(self, n: int, kinds: tuple[str, ...] = FLEET_KINDS) -> list[str]:
        """Add `n` tasks (t1, t2, ... not used yet), kinds in turn."""
        s = self.settings
        if s.work is not None:
            kinds = mixed_kinds() if s.work == "mixed" else (s.work,)

        store = self._wstore

        def taken(task_id: str) -> bool:
            try:
                run_inline(store.task(task_id))
            except UnknownTask:
                return False
            return True

        def go() -> list[str]:
            # One task's row per id tried, not every task's: a fleet that has run for an
            # hour would read (and its store keep) thousands of rows to add a few.
            made: list[str] = []
            for _ in range(n):
                number = next(self._task_ids)
                while taken(f"t{number}"):
                    number = next(self._task_ids)
                task_id = f"t{number}"
                kind = kinds[(number - 1) % len(kinds)]
                payload = {"steps": s.steps, "step_time_ms": s.step_time_ms}
                run_inline(store.enqueue(task_id, kind, payload, 100))
                made.append(task_id)
            return made

        return self._write(go)

    def decide(self, task_id: str, approved: bool) -> None:
        """A person's answer to a task parked for approval: the store's own `approve` or
        `reject`, as `borrowed-keys approve TASK --db ...` calls it; a task that is not
        waiting is refused with the store's typed error (and a line in the register)."""
        store = self._wstore
        decide = store.approve if approved else store.reject
        self._write(lambda: run_inline(decide(task_id)))

    def waiting(self) -> int:
        """How many tasks wait in the queue for a worker."""
        tasks = self.newest(0, 0, 0)[0]  # the tasks still to do alone: as cheap late as early
        return sum(1 for r in tasks if r.status == TaskStatus.QUEUED)

    def feed(self, arrivals: Arrivals, now: float) -> list[str]:
        """Enqueue the tasks `arrivals` says are due by `now` (monotonic seconds)."""
        n = arrivals.due(now, self.waiting())
        return self.enqueue(n) if n else []

    # -- reading and judging ------------------------------------------------------------------

    def poll(self) -> list[EventRow]:
        """Read the events written since the last look and judge each one as it comes."""
        with self._polling:  # the screen's reader and a save may both look
            return self._poll()

    def _poll(self) -> list[EventRow]:
        def go() -> list[EventRow]:
            fresh = run_inline(self.store.events(self._seen))
            if fresh:
                self._seen = fresh[-1].seq
            return fresh

        fresh = [self.true_time(ev) for ev in self._do(go)]
        for ev in fresh:
            self.events.append(ev)
            for v in self.checker.observe(ev):
                self.found.append(Finding(v.name.value, v.task_id, v.worker_id, v.at, v.detail))
                self.violations[v.name.value] += 1
        self._note_beliefs()
        return fresh

    def _all_beliefs(self) -> None:
        """Every belief line printed so far kept now, for a save: the events before them
        are read by then (a read, then the lines it found kept)."""
        with self._polling:
            self._poll()
            self._note_beliefs()

    def _note_beliefs(self) -> None:
        """Keep each change of what a process says it holds, one read late.

        A worker writes its event, then prints what it now believes: a read of the store
        that began just before the write would see the belief without the event that
        caused it (a refusal read after the worker's letting go would lose its reason). So
        the belief lines found at one read are kept at the next, by when every event
        written before them is in the store. Each is stamped by the time the worker printed
        with it (`_belief_time`), else by the read that found it, on the wall clock as the
        supervisor's own signals are; a dead process holds nothing: its memory went with it.
        """
        kept: list[Believed] = []
        for wid, said, at in self._pending_beliefs:
            if wid not in self._held or self._held[wid] != said:
                self._held[wid] = said
                kept.append(Believed(at, wid, said))
        for belief in kept:
            self.beliefs.append(belief)
        if kept:
            self._journal_lines(extra_lines([], kept))
        read_at = time.time_ns() // 1_000_000
        found: list[tuple[str, Held, int]] = []
        for wid, w in list(self.workers.items()):
            generation, seen = self._belief_lines.get(wid, (0, 0))
            now_generation, lines = w.said_since(seen)
            if now_generation != generation:  # a new incarnation: its lines from the first
                seen = 0
                now_generation, lines = w.said_since(0)
            for line in lines:
                if line.get("t") != "belief":
                    continue
                lease = line.get("lease") or {}
                task, token = lease.get("task"), lease.get("lease_token")
                held: Held = None if task is None or token is None else (str(task), int(token))
                found.append((wid, held, self._belief_time(wid, line.get("at"), read_at)))
            self._belief_lines[wid] = (now_generation, seen + len(lines))
            if not w.alive:
                found.append((wid, None, read_at))
        self._pending_beliefs = found

    def _belief_time(self, worker_id: str, printed: Any, read_at: int) -> int:
        """When a belief line says the worker changed its mind, on the true timeline.

        The worker stamps the line with its own wall clock. Under libfaketime that clock is
        the machine's plus the skew this fleet gave it, so the skew comes off, as it comes
        off the stamps of that worker's events (`true_time`): belief and truth are compared
        on one timeline, never on each process's own ("否则不同机器各自判断“到没到点”，会把
        时钟漂移重新带回系统"). A line cannot have been printed after the read that found it, nor
        before the worker's previous line: a clock off by more than the fleet knows (or a
        line with no time, from an older worker) falls back within those bounds.
        """
        last = self._belief_at.get(worker_id, 0)
        at = read_at
        if isinstance(printed, int) and not isinstance(printed, bool):
            at = min(printed - self.skews.get(worker_id, 0), read_at)
        at = max(at, last)
        self._belief_at[worker_id] = at
        return at

    def rows(self) -> tuple[list[TaskRow], list[LedgerRow], list[EffectRow]]:
        def go() -> tuple[list[TaskRow], list[LedgerRow], list[EffectRow]]:
            return (
                run_inline(self.store.tasks()),
                run_inline(self.store.ledger()),
                run_inline(self.store.effects()),
            )

        return self._do(go)

    def newest(
        self, finished: int, pages: int, effects: int
    ) -> tuple[list[TaskRow], list[LedgerRow], list[EffectRow], dict[str, int]]:
        """What a screen shows of the store, read at the same cost however long the fleet
        has run: the tasks still to do and the newest `finished` others, the newest `pages`
        and `effects`, and those tasks' checkpoint steps (`LeaseStore.newest`)."""
        return self._do(lambda: run_inline(self.store.newest(finished, pages, effects)))

    def checkpoints(self) -> list[CheckpointRow]:
        return self._do(lambda: run_inline(self.store.checkpoints()))

    def now_ms(self) -> int:
        """The store's clock (the database's), which judges every lease."""
        return self._do(lambda: run_inline(self.store.driver.read(self.store._now)))

    def resting(self) -> bool:
        """Every task done, dead or waiting for a person: nothing left to work on."""
        tasks, _l, _e = self.rows()
        return bool(tasks) and all(
            r.status in (TaskStatus.DONE, TaskStatus.DEAD, TaskStatus.WAITING) for r in tasks
        )

    def final_events(self) -> list[EventRow]:
        """The whole events table, read again from its first row."""
        return self._do(lambda: run_inline(self.store.events(0)))

    def final_state(self) -> tuple[list[EventRow], FinalRows]:
        """The whole events table (on the true timeline) and the store's rows, read so that
        they agree: every change of a row writes its event in the same transaction, so rows
        read while no event was written are the rows of exactly those events. Workers still
        running may write in between: then the read is made again."""

        def go() -> tuple[list[EventRow], FinalRows]:
            store = self.store
            events = run_inline(store.events(0))
            for _ in range(20):
                rows = FinalRows(
                    tuple(run_inline(store.tasks())),
                    tuple(run_inline(store.ledger())),
                    tuple(run_inline(store.effects())),
                )
                later = run_inline(store.events(events[-1].seq if events else 0))
                if not later:
                    break
                events += later
            return events, rows

        events, rows = self._do(go)
        return [self.true_time(ev) for ev in events], rows

    def final_check(self) -> HistoryCheck:
        """The whole events table read again from its first row and judged afresh, with the
        store's final rows."""
        events, rows = self.final_state()
        return self._judge(events, rows)

    def _judge(self, events: list[EventRow], rows: FinalRows) -> HistoryCheck:
        ttl = self.settings.ttl_ms
        return check_history(events, ttl_ms=ttl, tasks=rows.tasks, effects=rows.effects)

    def timing(self) -> dict[str, Any]:
        """The run's lease timing and its kind of database, as a saved history keeps them."""
        cfg = self.settings.config
        pg = self.settings.db.startswith(("postgresql://", "postgres://"))
        return {
            "ttl_ms": cfg.ttl_ms,
            "heartbeat_ms": cfg.heartbeat_ms,
            "deadline_ms": cfg.deadline_ms,
            "database": "postgresql" if pg else "sqlite",
        }

    def service_findings(self) -> list[Any] | None:
        """The downstream service's rules over its own books, as `fleet --check` judges
        them (None: no service in this run)."""
        books = self.service_books()
        if books is None:
            return None
        from core.downstream.books import judge

        return list(judge(books["history"], books["charges"]))

    def service_books(self) -> dict[str, Any] | None:
        """The downstream service's books as they stand (None: no service in this run)."""
        return None if self.downstream is None else dict(self.downstream.books())

    def save(self, path: Path, frames: Iterable[dict[str, Any]] = ()) -> HistoryCheck:
        """Write the whole history (on the true timeline), the store's final rows, the
        supervisor's signals, what the workers said they held, the screen's `frames` and the
        verdict of that same history and those same rows checked again."""
        self._all_beliefs()
        events, rows = self.final_state()
        check = self._judge(events, rows)
        # the signals first, then the beliefs, as a save always wrote them
        noted = self.journal()
        extra = [
            *(line for line in noted if line.get("t") == "signal"),
            *(line for line in noted if line.get("t") == "belief"),
            *frames,
        ]
        if self.downstream is not None:
            # the service's own books beside the lease history, judged again by `--check`
            extra += service_lines(self.downstream.books())
        save_history(path, events, check, rows=rows, extra=extra, timing=self.timing())
        return check

    # -- the end ----------------------------------------------------------------------------

    def stop_workers(self) -> dict[str, int | None]:
        """Ask every worker to stop (resumed first if stalled); their exit statuses."""
        for w in self.workers.values():  # all asked first: they stop side by side
            w.ask_to_stop()
        return {wid: w.stop() for wid, w in self.workers.items()}

    def close(self) -> None:
        """Stop every worker, close the store, stop an embedded server, remove a fresh
        folder. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.stop_workers()
        with contextlib.suppress(BorrowedKeysError):
            self._do(lambda: run_inline(self.store.close()))
        with contextlib.suppress(BorrowedKeysError):
            self._write(lambda: run_inline(self._wstore.close()))
        self._pool.shutdown(wait=True)
        self._writer.shutdown(wait=True)
        with self._journal_lock:
            self._journal.close()
        if self.relays is not None:
            self.relays.close()
        if self.downstream is not None:
            self.downstream.close()
        db = self._database
        if db is not None:
            if db.server is not None:
                with contextlib.suppress(Exception):
                    db.server.cleanup()
            if db.watchdog is not None and db.watchdog.stdin is not None:
                db.watchdog.stdin.close()  # its work is done already: it only tidies up
                with contextlib.suppress(subprocess.TimeoutExpired):
                    db.watchdog.wait(timeout=30)
            for folder in (db.folder, db.logs):
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
