"""Scenario 23: the lock (`no_expiry`) under a long pause, beside the lease under the same
pause (`m`: `correct`).

The seed: "锁默认假设持有者在场、连接稳定、释放路径清楚。长任务世界没有这些好前提。"
"""

from pathlib import Path

from core.engine.config import Mode
from core.engine.errors import RejectReason
from core.engine.vocabulary import EventKind
from core.scenarios.format import load_scenario
from core.scenarios.session import Session

SCENARIO = Path(__file__).parents[2] / "scenarios" / "23_lock_long_pause.toml"


def played(mode: Mode) -> Session:
    session = Session(load_scenario(SCENARIO), mode=mode)
    while not session.at_end:
        if session.next_step() is None and session.question is not None:
            session.reveal()
    return session


def writes_of_page_3(session: Session) -> list[tuple[str, str | None]]:
    return [
        (e.event, e.worker_id)
        for e in session.events(0)
        if e.event in (EventKind.WRITE_ACCEPTED, EventKind.WRITE_REJECTED)
        and e.detail.get("key") == "floor6/3"
    ]


def test_the_lock_lets_the_paused_holder_come_back_and_write() -> None:
    session = played(Mode.NO_EXPIRY)
    claims = [e.worker_id for e in session.events(0) if e.event == EventKind.CLAIMED]
    assert claims == ["acheng"]  # nothing ever took the lock away
    assert writes_of_page_3(session) == [(EventKind.WRITE_ACCEPTED, "acheng")]


def test_the_lease_passes_on_and_the_late_page_is_fenced() -> None:
    session = played(Mode.CORRECT)
    events = session.events(0)
    claims = [(e.worker_id, e.at) for e in events if e.event == EventKind.CLAIMED]
    assert claims == [("acheng", 0), ("linzhou", 85_000)]
    assert writes_of_page_3(session) == [
        (EventKind.WRITE_ACCEPTED, "linzhou"),
        (EventKind.WRITE_REJECTED, "acheng"),
    ]
    refused = next(e for e in events if e.event == EventKind.WRITE_REJECTED)
    assert refused.reason == RejectReason.FENCED.value


def test_the_m_key_goes_from_the_lock_to_the_lease() -> None:
    session = Session(load_scenario(SCENARIO))
    assert session.mode is Mode.NO_EXPIRY and session.next_mode() is Mode.CORRECT
    session.close()
