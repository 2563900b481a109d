"""What a fleet is told: how its workers run and what they are given to do, and the note of
a fault the supervisor caused."""

from dataclasses import dataclass

from core.engine.config import LeaseConfig, Mode
from core.engine.vocabulary import EventKind
from core.sim.spec import TASK_KINDS

# The task kinds a fleet enqueues by default: the one that waits for a person's approval
# is left out, so a headless run can finish by itself.
FLEET_KINDS = tuple(k for k in TASK_KINDS if k != "approval")


def mixed_kinds() -> tuple[str, ...]:
    """`--work mixed`: the seed's three agent uses in turn, the browser's where this
    machine has a browser (`missing_browser` says why not)."""
    from core.agents.browser import missing_browser

    kinds = ("tools", "approval", "browser")
    return kinds if missing_browser() is None else kinds[:2]


@dataclass(frozen=True, slots=True)
class FleetSettings:
    """How the fleet's workers run and what they are given to do."""

    db: str
    ttl_ms: int = 6_000
    heartbeat_ms: int | None = None  # default: a third of the ttl
    poll_ms: int = 250
    steps: int = 5
    step_ms: int | None = None  # default: a third of the ttl
    mode: Mode = Mode.CORRECT  # another mode plants one of the design's mistakes
    env: dict[str, str] | None = None  # the workers' environment (None: this one's)
    # On PostgreSQL each worker reaches the server through a relay the fleet owns, so a
    # partition can cut it (SQLite has no road to cut: one machine, one file).
    relays: bool = True
    # Agent work under the lease library (`borrowed-keys agent`) instead of the simulated
    # worker, against the fenced downstream service at `service_url`.
    work: str | None = None
    service_url: str | None = None
    # The ids of the first workers started without one (then w1, w2, ... as ever).
    names: tuple[str, ...] = ()
    # Each worker gives a lease up by itself at its renew deadline when it could not renew
    # (cut off by a partition, its heartbeat frozen):
    # "renew_deadline   下一次续约必须发生在什么时候".
    self_fencing: bool = False

    @property
    def config(self) -> LeaseConfig:
        return LeaseConfig(
            ttl_ms=self.ttl_ms, heartbeat_every_ms=self.heartbeat_ms, poll_every_ms=self.poll_ms
        ).validated()

    @property
    def step_time_ms(self) -> int:
        return self.step_ms if self.step_ms is not None else max(50, self.ttl_ms // 3)


@dataclass(frozen=True, slots=True)
class FaultNote:
    """A fault the supervisor caused: when (wall clock, ms), what, to whom."""

    at: int
    event: EventKind
    worker_id: str
    pid: int | None
