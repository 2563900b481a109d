"""An agent worker: on autopilot it polls, claims, resumes from the checkpoint, works the
steps (each a fenced ledger write, maybe an idempotent effect, then a checkpoint) and
completes, while a separate heartbeat loop renews the lease.

The worker is put together from its jobs, a module each: what it remembers and how its calls
reach the store (core/sim/calls.py), keeping the lease (core/sim/renewal.py: the heartbeat
loop and self-fencing), the work loop (core/sim/autopilot.py), and the calls made by hand
(core/sim/manual.py). This module holds its state and its life cycle: started, going on
alone, killed.
"""

from core.sim.autopilot import Autopilot
from core.sim.calls import Env as Env
from core.sim.calls import Partitioned as Partitioned
from core.sim.calls import SelfFenced as SelfFenced
from core.sim.manual import Manual
from core.sim.spec import WorkerState


class Worker(Autopilot, Manual):
    """One worker: its memory, its heartbeats, its work loop, and its calls by hand."""

    @property
    def state(self) -> WorkerState:
        f = self.faults
        if f.dead:
            return WorkerState.DEAD
        if f.stalled:
            return WorkerState.STALLED
        if f.partitioned:
            return WorkerState.PARTITIONED
        if f.heartbeat_frozen:
            return WorkerState.FROZEN
        return WorkerState.WORKING if self.lease is not None else WorkerState.IDLE

    def start(self) -> None:
        if self.autopilot:
            self.work_process = self.env.spawn(self.work_loop(), owner=self.id, name="work")

    def go_on_alone(self) -> None:
        """Manual until now, the worker goes on by itself from where it stands: the lease
        it remembers (live or stale) is worked on with the work it remembers, then it polls
        as any autopilot worker. A dead worker comes back on autopilot when restarted."""
        if self.autopilot:
            return
        self.autopilot = True
        if self.faults.dead:
            return
        self.work_process = self.env.spawn(
            self.work_loop(resume=self.lease), owner=self.id, name="work"
        )

    def stop(self) -> None:
        """Kill: every coroutine ends and the memory is lost; the lease is left to expire."""
        for handle in (self.heartbeat_process, self.work_process):
            if handle is not None:
                self.env.cancel(handle)
        self.heartbeat_process = self.work_process = None
        self.lease = None
        self.work = None
        self.step = None
        self.last_renew_at = None
        self.last_empty_poll_at = None
        self.heartbeat_lands_at = None
        self.faults.dead = True
