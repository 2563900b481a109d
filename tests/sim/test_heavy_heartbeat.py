"""A heartbeat must be cheap (scenario 20): a heartbeat that carries a payload takes time to
land in proportion to its size and the store's load, on the virtual clock, and the store
judges it when it lands; a cheap one under the same load renews on time."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.config import LeaseConfig
from core.engine.vocabulary import EventKind
from core.scenarios.format import Step, load_scenario, parse_scenario
from core.scenarios.writer import dump_scenario
from core.sim.heavy import (
    MB,
    RENEWAL_BYTES,
    SizeError,
    format_size,
    heartbeat_cost_ms,
    parse_size,
)
from core.sim.simulation import Simulation
from core.sim.spec import (
    Action,
    Advance,
    HeartbeatPayload,
    Load,
    SimSettings,
    TaskSpec,
    WorkerSpec,
)
from tests.simkit import act, advance, make_sim, named

SCENARIO = Path(__file__).parents[2] / "scenarios" / "20_heavy_heartbeat.toml"
LOAD = 100.0  # at this load a heartbeat takes 25 ms per KB: 40 bytes per millisecond
CLAIM_EXPIRES = 60_000  # the first lease: claimed at 0, ttl 60 s
FIRST_BEAT = 20_000  # heartbeat_every: a third of the ttl
RENEW_DEADLINE = 40_000  # two thirds of the ttl


def holding(sim: Simulation) -> str | None:
    view = sim.snapshot().worker("acheng")
    assert view is not None
    return view.task_id


def payload_landing_after(trip_ms: int) -> int:
    """The payload whose heartbeat takes exactly `trip_ms` to land at LOAD."""
    return 40 * trip_ms - RENEWAL_BYTES


def one_long_step(*, self_fencing: bool = False) -> Simulation:
    """Acheng alone on a task whose one step outlasts the tests: only her heartbeats act."""
    return make_sim(
        ("acheng",),
        (TaskSpec("floor6", steps=1, step_time_ms=600_000),),
        self_fencing=self_fencing,
    )


def heavy(trip_ms: int, *, self_fencing: bool = False) -> Simulation:
    sim = one_long_step(self_fencing=self_fencing)
    act(sim, "load", factor=LOAD)
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=payload_landing_after(trip_ms))
    return sim


def test_the_cost_grows_with_the_size_and_the_load() -> None:
    assert heartbeat_cost_ms(2 * MB, 1.0) == 500  # a quiet store: half a second
    assert heartbeat_cost_ms(2 * MB, 100.0) == 50_000
    assert heartbeat_cost_ms(4 * MB, 100.0) == 2 * heartbeat_cost_ms(2 * MB, 100.0)
    assert heartbeat_cost_ms(payload_landing_after(39_999), LOAD) == 39_999
    # the cheap one: four timestamps, under a millisecond until the load is in the hundreds
    assert heartbeat_cost_ms(0, 1.0) == heartbeat_cost_ms(0, 100.0) == 0
    assert heartbeat_cost_ms(0, 1000.0) == 8


@pytest.mark.parametrize(
    ("lands_at", "renewed"),
    [
        (CLAIM_EXPIRES - 1, True),
        (CLAIM_EXPIRES, True),  # the store's rule: live while now <= lease_expires_at
        (CLAIM_EXPIRES + 1, False),
    ],
    ids=["1ms-before-expiry", "at-expiry", "1ms-after-expiry"],
)
def test_a_heavy_heartbeat_is_judged_at_the_instant_it_lands(lands_at: int, renewed: bool) -> None:
    sim = heavy(lands_at - FIRST_BEAT)
    advance(sim, 61)
    sent = named(sim, EventKind.HEARTBEAT_SENT, worker_id="acheng")[0]
    assert sent.at == FIRST_BEAT and sent.detail["lands_at"] == lands_at
    assert sent.detail["payload"] == format_size(payload_landing_after(lands_at - FIRST_BEAT))
    row = sim.snapshot().task("floor6")
    assert row is not None
    if renewed:
        [renewal] = named(sim, EventKind.RENEWED)
        assert renewal.at == lands_at
        assert renewal.detail == {"expires_at": lands_at + 60_000}  # the store saw no payload
        # the cheap statement ran when it landed, and wrote what any renewal writes
        assert row.row.last_heartbeat_at == lands_at
        assert row.row.lease_expires_at == lands_at + 60_000
        assert row.row.renew_deadline == lands_at + 40_000
        assert named(sim, EventKind.RENEW_REJECTED) == []
    else:
        [refusal] = named(sim, EventKind.RENEW_REJECTED, worker_id="acheng")
        assert refusal.at == lands_at and refusal.reason == "expired"
        assert named(sim, EventKind.RENEWED) == []
        assert row.row.last_heartbeat_at == 0  # the claim's: the heavy one never wrote
        assert holding(sim) is None  # a healthy worker lost it


def test_a_heartbeat_past_its_renew_deadline_still_renews_a_live_lease() -> None:
    # The store judges only expiry; the renew deadline is the holder's own (self-fencing).
    sim = heavy(RENEW_DEADLINE + 1 - FIRST_BEAT)
    advance(sim, 41)
    [renewal] = named(sim, EventKind.RENEWED)
    assert renewal.at == RENEW_DEADLINE + 1
    assert named(sim, EventKind.SELF_FENCED) == []


@pytest.mark.parametrize(
    ("lands_at", "fenced"),
    [(RENEW_DEADLINE - 1, False), (RENEW_DEADLINE, False), (RENEW_DEADLINE + 1, True)],
    ids=["1ms-before-deadline", "at-deadline", "1ms-after-deadline"],
)
def test_a_self_fencing_holder_stops_at_its_renew_deadline_while_a_heartbeat_is_on_its_way(
    lands_at: int, fenced: bool
) -> None:
    sim = heavy(lands_at - FIRST_BEAT, self_fencing=True)
    advance(sim, 45)
    stops = named(sim, EventKind.SELF_FENCED, worker_id="acheng")
    holds = holding(sim)
    if fenced:
        [stop] = stops
        assert stop.at == RENEW_DEADLINE and holds is None
        # it lands after and renews the row; the holder has let go, so the lease runs out
        [renewal] = named(sim, EventKind.RENEWED)
        assert renewal.at == lands_at
    else:
        assert stops == [] and holds == "floor6"


def test_the_cheap_heartbeat_never_misses_under_the_same_load() -> None:
    for load in (LOAD, 1000.0):
        sim = one_long_step()
        act(sim, "load", factor=load)
        advance(sim, 490)
        renewals = named(sim, EventKind.RENEWED, worker_id="acheng")
        # each leaves on the beat and lands its trip later: 0 ms, or 8 ms at the top load
        trip = heartbeat_cost_ms(0, load)
        assert [e.at for e in renewals] == [n * FIRST_BEAT + trip for n in range(1, 25)]
        assert named(sim, EventKind.RENEW_REJECTED) == []
        assert named(sim, EventKind.LEASE_EXPIRED) == []
        assert named(sim, EventKind.HEARTBEAT_SENT) == []  # nothing to announce: no payload
        assert holding(sim) == "floor6"


def test_the_same_heavy_heartbeat_lands_in_time_on_a_quiet_store() -> None:
    sim = one_long_step()
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=2 * MB)
    advance(sim, 300)
    assert [e.at for e in named(sim, EventKind.RENEWED)][:2] == [20_500, 40_500]
    assert named(sim, EventKind.RENEW_REJECTED) == []


def test_under_load_the_lease_flaps_to_a_worker_with_a_cheap_heartbeat() -> None:
    sim = make_sim(("acheng", "linzhou"), (TaskSpec("floor6", steps=6, step_time_ms=30_000),))
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=2 * MB)
    act(sim, "load", factor=LOAD)
    advance(sim, 120)
    [refusal] = named(sim, EventKind.RENEW_REJECTED, worker_id="acheng")
    assert refusal.at == 70_000 and refusal.reason == "superseded"  # sent at 20 s, 50 s trip
    [taken] = named(sim, EventKind.CLAIMED, worker_id="linzhou")
    assert taken.at == 65_000 and taken.lease_token == 2
    advance(sim, 300)
    assert sim.task_statuses()["floor6"] == "done"
    assert sim.violations() == {}
    assert len(named(sim, EventKind.RENEW_REJECTED)) == 1  # his cheap ones all landed


def test_restart_keeps_the_payload_and_resume_does_not_lift_it() -> None:
    sim = one_long_step()
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=MB)
    act(sim, "resume", worker="acheng")
    assert sim.worker_faults()["acheng"].heartbeat_payload_bytes == MB
    act(sim, "restart", worker="acheng")
    assert sim.worker_faults()["acheng"].heartbeat_payload_bytes == MB
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=0)
    assert sim.worker_faults()["acheng"].heartbeat_payload_bytes == 0
    [load_set] = [e for e in sim.events() if e.event == EventKind.HEARTBEAT_PAYLOAD][-1:]
    assert load_set.detail["payload"] == "0B"


def test_a_manual_heartbeat_is_one_instant_call_whatever_the_payload() -> None:
    sim = make_sim(("acheng",), manual=("acheng",))
    act(sim, "claim", worker="acheng")
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=2 * MB)
    act(sim, "load", factor=LOAD)
    advance(sim, 5)
    act(sim, "heartbeat", worker="acheng")
    [renewal] = named(sim, EventKind.RENEWED)
    assert renewal.at == 5_000
    assert named(sim, EventKind.HEARTBEAT_SENT) == []


def test_a_saved_run_keeps_the_load_and_the_payload() -> None:
    sim = make_sim(("acheng",), manual=("acheng",))
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=3 * MB)
    act(sim, "load", factor=7.0)
    saved = sim.save()
    act(sim, "load", factor=1.0)
    act(sim, "heartbeat_payload", worker="acheng", size_bytes=0)
    sim.restore(saved)
    assert sim.store_load.factor == 7.0
    assert sim.worker_faults()["acheng"].heartbeat_payload_bytes == 3 * MB
    assert sim.workers["acheng"].store_load is sim.store_load


def test_sizes_read_and_write_back() -> None:
    for text, size in [("2MB", 2 * MB), ("512KB", 512_000), ("1.5MB", 1_500_000), ("0", 0)]:
        assert parse_size(text) == size and parse_size(format_size(size)) == size
    assert parse_size(300) == 300 and format_size(300) == "300B"
    for bad in ("2 parsecs", "-1MB", "MB", "5GB"):
        with pytest.raises(SizeError):
            parse_size(bad)


def test_the_new_keys_and_acts_round_trip_through_the_writer() -> None:
    settings = SimSettings(
        config=LeaseConfig(),
        workers=(WorkerSpec("acheng", heartbeat_payload_bytes=2 * MB),),
        tasks=(TaskSpec("floor6"),),
    )
    acts: list[Action] = [
        HeartbeatPayload(worker="acheng", size_bytes=512_000),
        Load(factor=100.0),
        Advance(by_ms=1_000),
    ]
    text = dump_scenario("heavy", settings, [Step(action=a) for a in acts])
    assert 'heartbeat_payload = "2MB"' in text and 'size = "512KB"' in text
    back = parse_scenario(text, "again.toml")
    assert back.settings == settings
    assert [s.action for s in back.steps] == acts


def test_the_scenario_shows_the_four_columns_and_the_flap() -> None:
    scenario = load_scenario(SCENARIO)
    first = scenario.steps[0]
    assert first.say is not None and first.say_zh is not None
    for column in ("lease_expires_at", "renew_deadline", "last_heartbeat_at", "updated_at"):
        assert column in first.say and column in first.say_zh
    keys = {k for exp in first.expects for k, _v in exp.params}
    assert {"expires_at", "renew_deadline", "last_heartbeat_at"} <= keys
    acts = [s.action.name for s in scenario.steps if s.action is not None]
    assert acts.count("heartbeat_payload") == 2 and "load" in acts
    assert any(s.question is not None for s in scenario.steps)


def test_a_heavy_heartbeat_on_its_way_when_the_bridge_goes_down_never_lands() -> None:
    sim = heavy(10_000)
    advance(sim, 25)  # sent at 20 s, due at 30 s
    act(sim, "partition", worker="acheng")
    advance(sim, 6)
    [lost] = named(sim, EventKind.RENEW_REJECTED, worker_id="acheng")
    assert lost.at == 30_000 and lost.reason == "partitioned"
    assert named(sim, EventKind.RENEWED) == []


@settings(max_examples=25, deadline=None)
@given(
    load=st.floats(min_value=0.01, max_value=1000.0),
    ttl_s=st.integers(min_value=3, max_value=120),
)
def test_at_any_load_the_format_allows_a_cheap_heartbeat_renews_on_time(
    load: float, ttl_s: int
) -> None:
    sim = make_sim(
        ("acheng",),
        (TaskSpec("floor6", steps=1, step_time_ms=3_600_000),),
        config=LeaseConfig(ttl_ms=ttl_s * 1000),
    )
    act(sim, "load", factor=load)
    advance(sim, 5 * ttl_s)
    assert named(sim, EventKind.RENEW_REJECTED) == []
    assert named(sim, EventKind.LEASE_EXPIRED) == []
    assert len(named(sim, EventKind.RENEWED)) >= 14  # a beat every third of the ttl
