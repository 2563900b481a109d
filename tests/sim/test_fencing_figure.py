"""The data the fencing figure and the harms of mistakes five and six are drawn from: two
live leases at once, the newest fence token over time with each write against it, and each
application of a side effect.

Kleppmann's figure (DDIA, ch. 8, "fencing tokens") is the seed's "存储层或状态机只接受当前最大的
token" drawn: these tests hold what the timeline and the snapshot say, the app only lays it out.
"""

from core.engine.config import Mode
from core.engine.vocabulary import Operation
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.sim.snapshot import WITH_TIMELINE
from core.sim.timeline import CallOutcome, LeaseEnd, TimelineView

CLIENT_CLOCK = "11_mistake_client_clock"
NO_IDEMPOTENCY = "12_mistake_no_idempotency"
FENCE_STEP = 14  # 01_fog: Acheng's late page 3 meets the fence


def played(name: str, steps: int, mode: Mode | None = None) -> Session:
    session = Session(open_scenario(name))
    if mode is not None:
        session.set_mode(mode)
    for _ in range(steps):
        if session.next_step() is None:
            session.reveal()  # the step asked its question first
    return session


def view_of(session: Session) -> TimelineView:
    view = session.snapshot(WITH_TIMELINE).timeline
    assert view is not None
    return view


def test_a_claim_over_a_live_lease_is_two_live_leases_until_the_old_holder_lets_go() -> None:
    # step 2: Linzhou's fast clock claims at 0:00:15 the lease the store holds until 0:01:00
    view = view_of(played(CLIENT_CLOCK, 2))
    (overlap,) = view.overlaps
    assert (overlap.older_worker, overlap.older_lease_token) == ("acheng", 1)
    assert (overlap.newer_worker, overlap.newer_lease_token) == ("linzhou", 2)
    assert (overlap.start, overlap.end, overlap.older_live_until) == (15_000, None, 60_000)
    acheng = view.row("acheng")
    assert acheng is not None and acheng.leases[0].ended_by is LeaseEnd.OVERRIDDEN
    # step 3: her heartbeat is refused at 0:00:20 and she lets go: the overlap ends there
    (overlap,) = view_of(played(CLIENT_CLOCK, 3)).overlaps
    assert (overlap.start, overlap.end) == (15_000, 20_000)


def test_in_the_correct_mode_no_claim_lands_on_a_live_lease() -> None:
    view = view_of(played(CLIENT_CLOCK, 4, Mode.CORRECT))
    assert view.overlaps == ()
    # a takeover after an expiry is no overlap either
    fog = view_of(played("01_fog", FENCE_STEP))
    assert fog.overlaps == ()
    acheng = fog.row("acheng")
    assert acheng is not None and acheng.leases[0].ended_by is LeaseEnd.EXPIRED


def test_the_store_lane_steps_up_with_each_claim_and_each_write_knows_the_newest() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    (line,) = view.fences
    assert line.steps == ((0, 1), (85_000, 2))
    assert (line.newest_at(84_999), line.newest_at(85_000)) == (1, 2)
    writes = [
        (row.worker_id, c.at, c.outcome, c.fence_token, c.newest_fence_token)
        for row in view.rows
        for c in row.calls
        if c.operation is Operation.WRITE
    ]
    assert ("acheng", 10_000, CallOutcome.ACCEPTED, 1, 1) in writes
    assert ("acheng", 95_000, CallOutcome.REFUSED, 1, 2) in writes
    assert ("linzhou", 95_000, CallOutcome.ACCEPTED, 2, 2) in writes


def test_without_the_fence_the_late_page_is_accepted_against_a_newer_token() -> None:
    view = view_of(played("01_fog", FENCE_STEP, Mode.NO_FENCING))
    acheng = view.row("acheng")
    assert acheng is not None
    (late,) = [c for c in acheng.calls if c.operation is Operation.WRITE and c.at == 95_000]
    assert (late.outcome, late.fence_token, late.newest_fence_token) == (CallOutcome.STALE, 1, 2)


def test_each_application_of_an_effect_is_its_own_call_with_its_cost() -> None:
    calls = played(NO_IDEMPOTENCY, 3).snapshot().effect_calls
    assert [(c.at, c.worker_id, c.fence_token, c.applied_times) for c in calls] == [
        (30_000, "acheng", 1, 1),
        (95_000, "linzhou", 2, 2),
    ]
    assert all(c.step == 3 and c.amount == 120 and not c.deduplicated for c in calls)


def test_with_idempotency_keys_the_repeat_is_answered_not_applied() -> None:
    calls = played(NO_IDEMPOTENCY, 3, Mode.CORRECT).snapshot().effect_calls
    assert [(c.worker_id, c.deduplicated, c.applied_times) for c in calls] == [
        ("acheng", False, 1),
        ("linzhou", True, 1),
    ]
