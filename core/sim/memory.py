"""What a worker carries: its memory of the task's work, and the faults switched on for it."""

from dataclasses import dataclass

from core.sim.kinds import State, TaskKind


@dataclass
class Work:
    """A holder's memory of its task's work: the kind's state after each step it knows,
    starting from the checkpoint it resumed from (or from nothing)."""

    task_id: str
    kind: TaskKind
    steps: int
    states: dict[int, State]

    def state_at(self, step: int) -> State:
        """The state after `step`; steps it has not seen are worked from the last it knows."""
        known = [k for k in self.states if k <= step]
        start = max(known) if known else 0
        state = self.states[start] if known else self.kind.initial_state(self.task_id, self.steps)
        for n in range(start + 1, step + 1):
            state = self.kind.run_step(self.task_id, n, self.steps, state).state
        return state

    def did(self, step: int, state: State) -> None:
        """Step `step` is done with `state`; anything it knew past it no longer follows."""
        for later in [k for k in self.states if k > step]:
            del self.states[later]
        self.states[step] = state

    def wrote(self, step: int, page: str) -> None:
        """A page written by hand as step `step`: learn what it says."""
        before = self.state_at(step - 1)
        self.did(step, self.kind.after_page(self.task_id, step, self.steps, before, page))


@dataclass
class WorkerFaults:
    """The faults switched on for one worker."""

    heartbeat_frozen: bool = False
    stalled: bool = False
    partitioned: bool = False
    dead: bool = False
    slow_factor: float = 1.0
    skew_ms: int = 0
    # What each heartbeat carries besides the lease (0: nothing, the cheap heartbeat). Not a
    # passing fault but how the worker is written, so `resume` leaves it.
    heartbeat_payload_bytes: int = 0

    def copy(self) -> "WorkerFaults":
        return WorkerFaults(
            self.heartbeat_frozen,
            self.stalled,
            self.partitioned,
            self.dead,
            self.slow_factor,
            self.skew_ms,
            self.heartbeat_payload_bytes,
        )
