"""The one table of faults a worker process can be put through, below both apps.

Each row is a fault by the name the simulation calls its act (`core.sim.spec.WORKER_ACTIONS`)
and the `Fleet` method that does it to a real process. The app's fault table
(demo/controls.py `FAULTS`) gives each row its key, its words on screen and its place in a
pane, and calls the method named here; the headless run (`--faults`) presses the rows that
have a hand's name, says the words named here, and takes each fault back by the method named
here. Neither keeps a list of faults of its own.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FaultAct:
    """A fault as the fleet does it; the `hand` fields are for the headless run only."""

    action: str  # its key in `WORKER_ACTIONS`, the name the app's fault table uses
    fleet: str  # the `Fleet` method that does it to a worker process
    # It cuts or heals the road between a worker and its server: only a fleet on
    # PostgreSQL has one (the relay); on SQLite the database is a file in the same place.
    needs_relay: bool = False
    hand: str | None = None  # its name in `--faults`; None: the headless hand never presses it
    said: str = ""  # core.fleet.words key the headless run says as it presses it
    undo: str | None = None  # the `Fleet` method that takes it back, a while later
    undo_after: tuple[float, float] = (1.3, 2.5)  # how long until then, in lease lengths
    undone: str = ""  # core.fleet.words key the headless run says as it takes it back
    # The same two, said when the fault stopped an agent worker with a downstream write on
    # its way out (`Fleet.holds_a_write`): it is taken back once another holder has
    # finished the task, so that the write lands late (within `undo_after_held` at most).
    said_held: str = ""
    undone_held: str = ""
    undo_after_held: float = 6.0  # in lease lengths

    @property
    def down_until_undone(self) -> bool:
        """The process is gone until the fault is taken back: not a death by itself."""
        return self.undo == "restart"


# In the order the headless hand draws from them (`--faults random`): a seed replays the
# same faults as before this table was one.
FAULT_ACTS: tuple[FaultAct, ...] = (
    FaultAct(
        "kill",
        "kill",
        hand="kill",
        said="killed",
        undo="restart",
        undo_after=(0.3, 1.0),
        undone="restarted",
    ),
    FaultAct(
        "stall",
        "stall",
        hand="stall",
        said="stalled",
        undo="resume",
        undone="resumed",
        said_held="stalled_write",
        undone_held="resumed_write",
    ),
    FaultAct(
        "freeze_heartbeat",
        "freeze",
        hand="freeze",
        said="frozen",
        undo="thaw",
        undone="thawed",
    ),
    FaultAct("restart", "restart", hand="restart", said="restarted_now"),
    FaultAct(
        "partition",
        "partition",
        needs_relay=True,
        hand="partition",
        said="cut",
        undo="heal",
        undone="healed",
    ),
    FaultAct("resume", "resume"),
    FaultAct("heal", "heal", needs_relay=True),
)
FAULT_ACT = {a.action: a for a in FAULT_ACTS}
HAND_FAULTS: tuple[FaultAct, ...] = tuple(a for a in FAULT_ACTS if a.hand is not None)
