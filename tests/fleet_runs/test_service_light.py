"""The fleet's frames carry what the downstream service's own books broke, read from a
stand-in service (its `books()`, as `ServiceThread` exports them) at most every
SERVICE_READ_EVERY_S, so the app's safety light turns red over a stale write the service
took or a second charge, not only over the lease store's rules."""

from pathlib import Path
from typing import Any

from core.downstream.books import ServiceRule
from core.fleet.frame import SERVICE_READ_EVERY_S, FrameMaker
from core.fleet.supervisor import Fleet, FleetSettings


class _Books:
    """The service's export as a test writes it; counts how often it is read."""

    def __init__(self) -> None:
        self.history: list[dict[str, Any]] = []
        self.charges: list[dict[str, Any]] = []
        self.reads = 0

    def books(self) -> dict[str, Any]:
        self.reads += 1
        return {"fencing": False, "history": list(self.history), "charges": list(self.charges)}

    def close(self) -> None:
        pass

    def write(self, key: str, token: int) -> None:
        seq = len(self.history) + 1
        self.history.append(
            {
                **dict(seq=seq, at_ms=seq, endpoint="artifact", key=key, token=token),
                **dict(newest=None, idempotency_key=None, verdict="accepted", detail={}),
            }
        )

    def charge(self, task: str, memo: str) -> None:
        self.charges.append(dict(id=f"ch_{len(self.charges) + 1}", task=task, memo=memo, amount=10))


class _Clock:
    def __init__(self) -> None:
        self.s = 100.0

    def __call__(self) -> float:
        return self.s


def test_the_frame_says_the_service_rules_broken_read_at_most_every_two_seconds(
    tmp_path: Path,
) -> None:
    books, clock = _Books(), _Clock()
    with Fleet(FleetSettings(db=str(tmp_path / "fleet.db")), tmp_path / "logs") as fleet:
        fleet.downstream = books
        maker = FrameMaker(fleet, clock=clock)
        books.write("t1/result", 2)
        books.charge("t1", "call-1")
        assert maker.frame().service == ()
        assert books.reads == 1
        books.write("t1/result", 1)  # older than the 2 it has seen: a stale write taken
        books.charge("t1", "call-1")  # the same thing charged again
        clock.s += SERVICE_READ_EVERY_S / 2
        assert maker.frame().service == ()  # not read again yet
        assert books.reads == 1
        clock.s += SERVICE_READ_EVERY_S / 2
        made = maker.frame()
        assert books.reads == 2
        assert made.service == (
            (ServiceRule.NO_CHARGE_TWICE.value, 1),
            (ServiceRule.NO_STALE_WRITE.value, 1),
        )
        # the lease store's own rules are its own: the service's harm is not counted there
        assert made.snap.violations == {}
        books.charge("t2", "call-1")
        clock.s += SERVICE_READ_EVERY_S / 4
        assert maker.frame().service == made.service  # kept between reads
        fleet.downstream = None  # closed by this test, not by the fleet


def test_a_fleet_without_a_service_reads_none(tmp_path: Path) -> None:
    with Fleet(FleetSettings(db=str(tmp_path / "fleet.db")), tmp_path / "logs") as fleet:
        assert FrameMaker(fleet).frame().service == ()
