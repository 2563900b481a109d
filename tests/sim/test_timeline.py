"""Belief against truth: the timeline below the app, the panel that draws it, the step's panel.

The seed's first lesson is the gap between what a holder believes and what the store knows
("是别人能不能相信这把钥匙现在确实在你手里"); these tests pin where the bars part and meet.
"""

from pathlib import Path

from core.engine.errors import RejectReason
from core.engine.vocabulary import Operation
from core.scenarios.format import Panel, parse_scenario
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.scenarios.writer import dump
from core.sim.snapshot import SNAPSHOT_PARTS, WITH_TIMELINE
from core.sim.timeline import (
    BeliefEnd,
    CallOutcome,
    LeaseEnd,
    TickKind,
    Timeline,
    TimelineView,
)

FENCE_STEP = 14  # 01_fog: Acheng's stale page 3 meets the fence


def played(name: str, steps: int, mode: str | None = None) -> Session:
    session = Session(open_scenario(name))
    if mode is not None:
        from core.engine.config import Mode

        session.set_mode(Mode(mode))
    for _ in range(steps):
        if session.next_step() is None:
            session.reveal()  # the step asked its question first
    return session


def view_of(session: Session) -> TimelineView:
    view = session.snapshot(WITH_TIMELINE).timeline
    assert view is not None
    return view


def test_at_the_fence_achengs_belief_runs_past_her_expiry() -> None:
    view = view_of(played("01_fog", FENCE_STEP))
    assert view.now_ms == 95_000
    acheng = view.row("acheng")
    assert acheng is not None
    (lease,) = acheng.leases
    # the store's lease: from the claim, renewed once at 0:00:20, ended by its expiry
    assert (lease.start, lease.renewals, lease.end) == (0, (20_000,), 80_000)
    assert lease.ended_by is LeaseEnd.EXPIRED
    (belief,) = acheng.beliefs
    # what she believes runs on past 0:01:20, until the fence refuses her page at 0:01:35
    assert belief.start == 0 and belief.end == 95_000
    assert belief.ended_by is BeliefEnd.REFUSED and belief.reason is RejectReason.FENCED
    assert lease.end is not None and belief.end > lease.end
    # her heartbeats: one delivered, then lost in the fog every 20 s
    assert [(t.at, t.kind) for t in acheng.ticks] == [
        (20_000, TickKind.DELIVERED),
        (40_000, TickKind.FROZEN),
        (60_000, TickKind.FROZEN),
        (80_000, TickKind.FROZEN),
    ]
    refused = [c for c in acheng.calls if c.outcome is CallOutcome.REFUSED]
    assert [(c.at, c.operation, c.reason) for c in refused] == [
        (95_000, Operation.WRITE, RejectReason.FENCED)
    ]
    assert (refused[0].fence_token, refused[0].current_fence_token) == (1, 2)
    linzhou = view.row("linzhou")
    assert linzhou is not None
    (his,) = linzhou.leases
    # Linzhou's lease from 0:01:25, held now, to 0:02:25
    assert (his.start, his.end, his.expires_at, his.fence_token) == (85_000, None, 145_000, 2)
    assert linzhou.believes_at(95_000) is not None and acheng.holds_at(90_000) is None
    # the correct mode takes no call from a lease that is not the current live one
    assert not any(c.outcome is CallOutcome.STALE for r in view.rows for c in r.calls)


def test_a_stale_page_accepted_without_the_fence_is_marked() -> None:
    view = view_of(played("09_mistake_no_fencing", 5))
    linzhou = view.row("linzhou")
    assert linzhou is not None
    stale = [c for c in linzhou.calls if c.outcome is CallOutcome.STALE]
    assert [(c.operation, c.key) for c in stale] == [(Operation.WRITE, "floor6/3")]
    # the elder's pages, from the lease the store holds, are plain accepted calls
    elder = view.row("elder")
    assert elder is not None and elder.calls
    assert all(c.outcome is CallOutcome.ACCEPTED for c in elder.calls)


def test_self_fencing_ends_the_belief_before_the_store_lease() -> None:
    view = view_of(played("17_self_fencing", 4))
    acheng, linzhou = view.row("acheng"), view.row("linzhou")
    assert acheng is not None and linzhou is not None
    (belief,) = acheng.beliefs
    assert (belief.end, belief.ended_by) == (60_000, BeliefEnd.SELF_FENCED)
    assert acheng.leases[0].end is None and acheng.leases[0].expires_at == 80_000
    # the bridge is down: Linzhou's heartbeats never reach the store, and he believes on
    assert any(t.kind is TickKind.PARTITIONED for t in linzhou.ticks)
    assert linzhou.beliefs[0].end is None


def test_only_a_reader_who_asks_pays_for_the_timeline() -> None:
    session = played("01_fog", 3)
    assert session.snapshot(SNAPSHOT_PARTS).timeline is None
    assert session.snapshot(WITH_TIMELINE).timeline is not None


def test_fed_in_pieces_it_is_the_same_as_fed_at_once() -> None:
    session = played("01_fog", 17)
    events = session.events(0)
    whole, pieces = Timeline(20_000, 60_000, 40_000), Timeline(20_000, 60_000, 40_000)
    whole.feed(events)
    for n in range(0, len(events), 3):
        pieces.feed(events[: n + 3])  # overlapping batches: a line is taken once
    assert whole.view(session.now_ms) == pieces.view(session.now_ms)
    # nothing new, the same instant: the same picture, not a new one
    assert whole.view(session.now_ms) is whole.view(session.now_ms)
    assert not whole.feed(events)


def test_the_panel_key_loads_writes_back_and_is_optional(tmp_path: Path) -> None:
    scenario = open_scenario("17_self_fencing")
    named = [n for n, step in enumerate(scenario.steps, start=1) if step.panel is not None]
    assert named == [4, 7]
    assert scenario.steps[3].panel is Panel.TIMELINE
    again = parse_scenario(dump(scenario), "again.toml")
    assert [s.panel for s in again.steps] == [s.panel for s in scenario.steps]
