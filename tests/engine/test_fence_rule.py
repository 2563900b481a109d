"""The ledger's fence rule, as the seed states it.

Whoever writes to the master ledger (总册) must show a currently valid lease and stamp the
page with the fence token (围栏签); "as long as his fence number is behind the current
holder's, everything he writes is refused". So a page is accepted only from the task's
current, live lease, whose fence token is the newest issued for the task, and never below
a token the page has already accepted. `no_fencing` switches all of it off.
"""

import sqlite3
from pathlib import Path

import pytest

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode
from core.engine.errors import FencedWrite, LeaseRejected, RejectReason
from core.engine.models import SCHEMA_VERSION
from core.engine.records import EventRow, Lease
from core.engine.store import LeaseStore
from core.sim.checker import SafetyChecker
from core.sim.spec import TaskSpec
from tests.simkit import act, advance, make_sim, named

TTL = 60_000


async def claimed(store: LeaseStore, task_id: str = "t1", worker: str = "w1") -> Lease:
    await store.enqueue(task_id)
    lease = await store.claim(worker, task_id)
    assert lease is not None
    return lease


# -- the bug: scenario 02 with the stall shortened from 95 s to 61 s ------------------------


def test_a_superseded_holder_cannot_write_a_page_its_successor_has_not_reached() -> None:
    """Scenario 02's fire with a 61 s stall: the elder gets fence token 2 at 85 s, before
    writing page 3; Linzhou resumes at 86 s and at 91 s tries his page 3 with fence 1.
    The page has seen no token yet, but the task has issued a newer one: refused."""
    sim = make_sim(("linzhou", "elder"), (TaskSpec("floor6", steps=8, step_time_ms=10_000),))
    advance(sim, 25)
    act(sim, "stall", worker="linzhou")
    advance(sim, 61)
    (elder,) = named(sim, "claimed", worker_id="elder")
    assert (elder.at, elder.fence_token) == (85_000, 2)
    assert not [p for p in sim.snapshot().ledger if p.key == "floor6/3"]
    act(sim, "resume", worker="linzhou")
    advance(sim, 5)
    assert not [e for e in named(sim, "write_accepted", worker_id="linzhou") if e.at > 85_000]
    (refused,) = named(sim, "write_rejected", worker_id="linzhou")
    assert (refused.at, refused.reason, refused.detail["key"]) == (91_000, "fenced", "floor6/3")
    assert (refused.lease_token, refused.fence_token) == (1, 1)
    assert (refused.detail["current_lease_token"], refused.detail["current_fence_token"]) == (2, 2)
    assert "page_fence_token" not in refused.detail  # nobody had written page 3 yet
    # The rejection the Rejected panel shows carries the writer's tokens and the current ones.
    rejection = sim.snapshot().rejections[-1]
    assert (rejection.lease_token, rejection.current_lease_token) == (1, 2)
    assert (rejection.fence_token, rejection.current_fence_token) == (1, 2)
    advance(sim, 120)
    snap = sim.snapshot()
    task = snap.task("floor6")
    assert task is not None and (task.row.status, task.row.owner_id) == ("done", "elder")
    page = next(p for p in snap.ledger if p.key == "floor6/3")
    assert (page.writer, page.fence_token) == ("elder", 2)
    assert snap.violations == {}


def test_in_no_fencing_mode_the_same_page_is_taken_and_the_checker_calls_it_stale() -> None:
    sim = make_sim(
        ("linzhou", "elder"),
        (TaskSpec("floor6", steps=8, step_time_ms=10_000),),
        mode=Mode.NO_FENCING,
    )
    advance(sim, 25)
    act(sim, "stall", worker="linzhou")
    advance(sim, 61)
    act(sim, "resume", worker="linzhou")
    advance(sim, 5)
    (late,) = [e for e in named(sim, "write_accepted", worker_id="linzhou") if e.at > 85_000]
    assert (late.at, late.fence_token, late.detail["key"]) == (91_000, 1, "floor6/3")
    (violation,) = named(sim, "violation", reason="stale_write_accepted")
    assert violation.at == 91_000 and violation.task_id == "floor6"


# -- the store ------------------------------------------------------------------------------


async def test_an_expired_holder_cannot_write_even_before_anyone_takes_over(
    store: LeaseStore, clock: VirtualClock
) -> None:
    lease = await claimed(store)
    clock.advance(TTL)  # now == lease_expires_at: still live, as for a checkpoint
    await store.fenced_write(lease, "p1", "on time")
    clock.advance(1)
    with pytest.raises(LeaseRejected) as err:
        await store.fenced_write(lease, "p2", "too late")
    assert not isinstance(err.value, FencedWrite)
    assert err.value.reason is RejectReason.EXPIRED
    assert (err.value.current_lease_token, err.value.current_fence_token) == (1, 1)
    assert [p.key for p in await store.ledger()] == ["p1"]
    ev = (await store.events())[-1]
    assert (ev.event, ev.reason, ev.detail["key"]) == ("write_rejected", "expired", "p2")
    # The same page the same instant, as the gate of every other operation says.
    with pytest.raises(LeaseRejected) as cp:
        await store.save_checkpoint(lease, 1, {})
    assert cp.value.reason is RejectReason.EXPIRED


async def test_a_finished_task_takes_no_more_pages(store: LeaseStore) -> None:
    lease = await claimed(store)
    await store.complete(lease)
    with pytest.raises(LeaseRejected) as err:
        await store.fenced_write(lease, "p1", "after the end")
    assert err.value.reason is RejectReason.NOT_RUNNING
    assert await store.ledger() == []


async def test_a_superseded_holder_is_fenced_on_a_fresh_page(
    store: LeaseStore, clock: VirtualClock
) -> None:
    old = await claimed(store)
    clock.advance(TTL + 1)
    new = await store.claim("w2")
    assert new is not None and new.fence_token == 2
    with pytest.raises(FencedWrite) as err:
        await store.fenced_write(old, "untouched", "stale")
    assert err.value.reason is RejectReason.FENCED
    e = err.value
    assert (e.fence_token, e.current_lease_token, e.current_fence_token) == (1, 2, 2)
    assert "behind 2" in str(err.value)
    assert await store.ledger() == []


async def test_a_page_refuses_a_token_below_one_it_accepted_from_another_task(
    store: LeaseStore,
) -> None:
    first = await claimed(store, "t1", "w1")
    second = await claimed(store, "t2", "w2")
    assert (first.fence_token, second.fence_token) == (1, 2)
    await store.fenced_write(second, "shared", "from t2")
    with pytest.raises(FencedWrite) as err:
        await store.fenced_write(first, "shared", "from t1")
    assert (err.value.current_fence_token, err.value.current_lease_token) == (2, 1)
    ev = (await store.events())[-1]
    assert ev.detail["page_fence_token"] == 2
    (page,) = await store.ledger()
    assert (page.value, page.task_id) == ("from t2", "t2")


async def test_a_page_records_its_task_whatever_its_key(store: LeaseStore) -> None:
    lease = await claimed(store, "river-tax", "w1")
    row = await store.fenced_write(lease, "free form key", "v")
    assert row.task_id == "river-tax"
    (page,) = await store.ledger()
    assert (page.key, page.task_id, page.writer) == ("free form key", "river-tax", "w1")


async def test_no_fencing_takes_any_write(clock: VirtualClock) -> None:
    store = LeaseStore.open_inline(clock=clock, mode=Mode.NO_FENCING)
    old = await claimed(store)
    clock.advance(TTL + 1)
    await store.fenced_write(old, "expired", "taken")  # expired, nobody took over
    new = await store.claim("w2")
    assert new is not None
    await store.fenced_write(new, "page", "new")
    await store.fenced_write(old, "page", "stale")  # superseded, and below the page's 2
    await store.complete(new)
    await store.fenced_write(new, "page", "after the end")
    pages = {p.key: (p.value, p.fence_token) for p in await store.ledger()}
    assert pages == {"expired": ("taken", 1), "page": ("after the end", 2)}
    assert not [e for e in await store.events() if e.event == "write_rejected"]
    await store.close()


async def test_no_expiry_mode_keeps_the_rest_of_the_rule(clock: VirtualClock) -> None:
    store = LeaseStore.open_inline(clock=clock, mode=Mode.NO_EXPIRY)
    lease = await claimed(store)
    clock.advance(10 * TTL)
    await store.fenced_write(lease, "p", "leases never expire here")
    await store.complete(lease)
    with pytest.raises(LeaseRejected) as err:
        await store.fenced_write(lease, "p", "after the end")
    assert err.value.reason is RejectReason.NOT_RUNNING
    await store.close()


async def test_a_version_1_store_gains_the_task_of_each_page(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    clock = VirtualClock()
    store = LeaseStore.open_inline(path, clock=clock)
    lease = await claimed(store, "floor6")
    await store.fenced_write(lease, "page-1", "v")
    await store.enqueue("later")
    await store.enqueue("earlier")
    await store.close()
    # Make it what version 1 wrote: no ledger.task_id, no queue_seq, the old queue index.
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        DROP INDEX ix_agent_tasks_queue;
        ALTER TABLE ledger DROP COLUMN task_id;
        ALTER TABLE agent_tasks DROP COLUMN queue_seq;
        CREATE INDEX ix_agent_tasks_queued ON agent_tasks (updated_at, task_id)
            WHERE status = 'queued';
        UPDATE store_meta SET value = '1' WHERE key = 'schema_version';
        """
    )
    conn.close()
    store = LeaseStore.open_inline(path, clock=clock)
    (page,) = await store.ledger()
    assert page.task_id == "floor6"
    second = await store.claim("w2")
    assert second is not None and second.task_id == "later"  # enqueued first
    await store.close()
    conn = sqlite3.connect(path)
    version = conn.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    conn.close()
    assert version == (str(SCHEMA_VERSION),)
    assert "ix_agent_tasks_queued" not in indexes and "ix_agent_tasks_queue" in indexes


# -- the checker ------------------------------------------------------------------------------


def _ev(
    seq: int, at: int, event: str, task: str, worker: str, fence: int, **detail: object
) -> EventRow:
    """An event whose lease and fence tokens are equal (one task per fence, as in tests)."""
    return EventRow(seq, at, event, task, worker, fence, fence, None, dict(detail))


def test_stale_write_means_behind_the_newest_fence_token_issued_for_the_task() -> None:
    checker = SafetyChecker(ttl_ms=TTL)
    history = [
        _ev(1, 0, "claimed", "t1", "a", 1, expires_at=TTL),
        _ev(2, 61_000, "claimed", "t1", "b", 2, expires_at=121_000),
        _ev(3, 62_000, "claimed", "t2", "c", 3, expires_at=122_000),
    ]
    for ev in history:
        assert checker.observe(ev) == []
    # A page nobody wrote before: still stale, t1 has issued fence token 2.
    (found,) = checker.observe(_ev(4, 63_000, "write_accepted", "t1", "a", 1, key="fresh"))
    assert (found.name, found.task_id) == ("stale_write_accepted", "t1")
    assert "newest is 2" in found.detail
    # Fence 2 is t1's newest: fine, although t2 has drawn a higher token since.
    assert checker.observe(_ev(5, 64_000, "write_accepted", "t1", "b", 2, key="fresh")) == []
    assert checker.violations == {"stale_write_accepted": 1}


def test_an_expired_holder_writing_before_anyone_takes_over_is_not_stale() -> None:
    """No newer token exists yet, so nothing the checker can call stale; the store refuses
    the write anyway (`expired`). In no_fencing mode it takes the page, which breaks the
    seed's other half: a page needs the current, live lease."""
    checker = SafetyChecker(ttl_ms=TTL)
    checker.observe(_ev(1, 0, "claimed", "t1", "a", 1, expires_at=TTL))
    (found,) = checker.observe(_ev(2, TTL + 5, "write_accepted", "t1", "a", 1, key="p"))
    assert found.name == "page_without_live_lease"
    assert checker.violations == {"page_without_live_lease": 1}


def test_every_refused_page_counts_as_a_step_worked_for_nothing() -> None:
    sim = make_sim(
        ("acheng", "linzhou"), (TaskSpec("floor6", steps=6),), config=LeaseConfig(ttl_ms=30_000)
    )
    advance(sim, 5)
    act(sim, "freeze_heartbeat", worker="acheng")
    advance(sim, 120)
    refused = named(sim, "write_rejected", worker_id="acheng")
    assert refused and all(e.reason in ("expired", "fenced") for e in refused)
    assert sim.snapshot().metrics.wasted_steps >= len(refused)
