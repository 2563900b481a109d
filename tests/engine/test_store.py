"""Unit tests of every LeaseStore operation and every way it says no.

Times are virtual milliseconds; the default config is ttl 60 s, renew deadline 40 s,
heartbeat every 20 s.
"""

import dataclasses
import gc
import warnings
from pathlib import Path
from typing import Any

import pytest

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode, TimingWarning
from core.engine.errors import (
    ConfigError,
    DuplicateTask,
    FencedWrite,
    InvalidPayload,
    LeaseMismatch,
    LeaseRejected,
    RejectReason,
    TaskStateError,
    UnknownTask,
)
from core.engine.records import EventRow, Lease
from core.engine.store import LeaseStore
from tests.conftest import MakeStore

TTL = 60_000
DEADLINE = 40_000


async def snapshot(store: LeaseStore) -> tuple[Any, ...]:
    """Everything the store holds, to show an operation left no trace."""
    return (
        await store.tasks(),
        await store.events(),
        await store.ledger(),
        await store.effects(),
        await store.checkpoints(),
    )


async def last_event(store: LeaseStore) -> EventRow:
    return (await store.events())[-1]


async def expired(store: LeaseStore, clock: VirtualClock) -> list[tuple[Any, ...]]:
    """Running tasks whose lease has expired by the store's clock and not been re-claimed."""
    return [
        (t.task_id, t.owner_id, t.lease_token, t.fence_token, t.lease_expires_at)
        for t in await store.tasks()
        if t.status == "running"
        and t.lease_expires_at is not None
        and t.lease_expires_at < clock.now_ms()
    ]


async def claimed(store: LeaseStore, task_id: str = "t1", worker: str = "w1") -> Lease:
    """Enqueue task_id and claim it by name."""
    await store.enqueue(task_id)
    lease = await store.claim(worker, task_id)
    assert lease is not None
    return lease


# -- enqueue ---------------------------------------------------------------------------------


async def test_enqueue_adds_a_queued_task_and_an_event(
    store: LeaseStore, clock: VirtualClock
) -> None:
    clock.advance(5)
    await store.enqueue("t1", kind="browser", payload={"b": 2, "a": 1}, max_attempts=3)
    row = await store.task("t1")
    assert (row.status, row.kind, row.attempt, row.max_attempts) == ("queued", "browser", 0, 3)
    assert (row.owner_id, row.lease_token, row.fence_token) == (None, 0, 0)
    assert row.lease_expires_at is None
    assert row.input_payload == '{"a":1,"b":2}'
    assert row.updated_at == 5
    ev = await last_event(store)
    assert (ev.event, ev.task_id, ev.at) == ("enqueued", "t1", 5)
    assert ev.detail == {"kind": "browser", "max_attempts": 3}


async def test_enqueue_duplicate_is_refused_and_changes_nothing(store: LeaseStore) -> None:
    await store.enqueue("t1", payload={"x": 1})
    before = await snapshot(store)
    with pytest.raises(DuplicateTask, match="t1"):
        await store.enqueue("t1", payload={"x": 2})
    assert await snapshot(store) == before


@pytest.mark.parametrize(
    "kwargs",
    [
        {"task_id": "t2", "payload": object()},
        {"task_id": "t2", "payload": {"s": {1, 2}}},
        {"task_id": "", "payload": None},
        {"task_id": "t2", "max_attempts": 0},
    ],
)
async def test_enqueue_bad_input_is_refused_and_changes_nothing(
    store: LeaseStore, kwargs: dict[str, Any]
) -> None:
    await store.enqueue("t1")
    before = await snapshot(store)
    with pytest.raises(InvalidPayload):
        await store.enqueue(**kwargs)
    assert await snapshot(store) == before


# -- claim ---------------------------------------------------------------------------------


async def test_claim_hands_out_a_lease(store: LeaseStore, clock: VirtualClock) -> None:
    await store.enqueue("t1")
    clock.advance(1_000)
    lease = await store.claim("w1")
    assert lease == Lease(
        task_id="t1",
        owner_id="w1",
        lease_token=1,
        fence_token=1,
        attempt=1,
        expires_at=1_000 + TTL,
        renew_deadline=1_000 + DEADLINE,
        kind="ledger",
    )
    row = await store.task("t1")
    assert (row.status, row.owner_id, row.attempt) == ("running", "w1", 1)
    assert (row.lease_token, row.fence_token) == (1, 1)
    assert (row.lease_expires_at, row.renew_deadline, row.last_heartbeat_at) == (
        1_000 + TTL,
        1_000 + DEADLINE,
        1_000,
    )
    ev = await last_event(store)
    assert (ev.event, ev.task_id, ev.worker_id, ev.lease_token, ev.fence_token) == (
        "claimed",
        "t1",
        "w1",
        1,
        1,
    )
    assert ev.detail == {"attempt": 1, "expires_at": 1_000 + TTL}


async def test_claim_of_an_empty_queue_is_none_and_writes_nothing(store: LeaseStore) -> None:
    assert await store.claim("w1") is None
    assert await store.events() == []


async def test_claim_takes_the_oldest_queued_task(store: LeaseStore, clock: VirtualClock) -> None:
    await store.enqueue("b")
    clock.advance(1)
    await store.enqueue("a")
    first = await store.claim("w1")
    second = await store.claim("w2")
    assert first is not None and second is not None
    assert (first.task_id, second.task_id) == ("b", "a")
    assert await store.claim("w3") is None


async def test_claim_named_task(store: LeaseStore) -> None:
    await store.enqueue("a")
    await store.enqueue("b")
    lease = await store.claim("w1", "b")
    assert lease is not None and lease.task_id == "b"
    # A live lease is not claimable by name either.
    assert await store.claim("w2", "b") is None
    assert (await store.task("a")).status == "queued"


async def test_claim_named_unknown_task_is_refused(store: LeaseStore) -> None:
    with pytest.raises(UnknownTask, match="nope"):
        await store.claim("w1", "nope")
    assert await store.events() == []


async def test_fence_tokens_count_all_claims_and_lease_tokens_count_per_task(
    store: LeaseStore, clock: VirtualClock
) -> None:
    for name in ("a", "b", "c"):
        await store.enqueue(name)
    seen: list[tuple[str, int, int]] = []
    for _round in range(3):
        for _ in range(3):
            lease = await store.claim("w")
            assert lease is not None
            seen.append((lease.task_id, lease.lease_token, lease.fence_token))
        clock.advance(TTL + 1)  # every lease expires; the next round re-claims them
    assert [fence for _, _, fence in seen] == list(range(1, 10))
    for name in ("a", "b", "c"):
        assert [lt for t, lt, _ in seen if t == name] == [1, 2, 3]


async def test_expiry_boundary(store: LeaseStore, clock: VirtualClock) -> None:
    lease = await claimed(store)
    # At exactly expires_at the lease is still live: renewable, not claimable.
    clock.advance_to(lease.expires_at)
    assert await store.claim("w2") is None
    assert await store.claim("w2", "t1") is None
    renewed = await store.heartbeat(lease)
    assert renewed.expires_at == lease.expires_at + TTL
    # One millisecond past it, the lease is expired: refused to its holder, claimable.
    clock.advance_to(renewed.expires_at + 1)
    with pytest.raises(LeaseRejected) as err:
        await store.heartbeat(renewed)
    assert err.value.reason is RejectReason.EXPIRED
    taken = await store.claim("w2")
    assert taken is not None
    assert (taken.task_id, taken.lease_token, taken.fence_token, taken.attempt) == ("t1", 2, 2, 2)


async def test_claim_prefers_an_expired_lease_over_the_queue(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await claimed(store, "old")
    await store.enqueue("new")
    clock.advance(TTL + 1)
    lease = await store.claim("w2")
    assert lease is not None and lease.task_id == "old"


async def test_done_dead_and_waiting_tasks_are_never_claimed(
    store: LeaseStore, clock: VirtualClock
) -> None:
    done = await claimed(store, "done")
    await store.complete(done, {"ok": True})
    dead = await claimed(store, "dead")
    await store.fail(dead, "boom", retry=False)
    waiting = await claimed(store, "waiting")
    await store.park(waiting)
    for _ in range(3):
        clock.advance(10 * TTL)
        assert await store.claim("w9") is None
        for name in ("done", "dead", "waiting"):
            assert await store.claim("w9", name) is None
    assert [t.status for t in await store.tasks()] == ["dead", "done", "waiting"]


async def test_used_up_attempts_make_the_task_dead(store: LeaseStore, clock: VirtualClock) -> None:
    await store.enqueue("t1", max_attempts=2)
    for _ in range(2):
        assert await store.claim("w1") is not None
        clock.advance(TTL + 1)
    assert await store.claim("w2") is None
    row = await store.task("t1")
    assert (row.status, row.error_code, row.owner_id, row.attempt) == (
        "dead",
        "attempts_exhausted",
        None,
        2,
    )
    assert row.lease_expires_at is None
    ev = await last_event(store)
    assert (ev.event, ev.task_id, ev.reason) == ("dead_lettered", "t1", "attempts_exhausted")
    assert ev.detail == {"attempts": 2}
    # A dead-lettered task does not block the queue behind it.
    await store.enqueue("t2")
    lease = await store.claim("w2")
    assert lease is not None and lease.task_id == "t2"


async def test_used_up_attempts_by_name(store: LeaseStore, clock: VirtualClock) -> None:
    await store.enqueue("t1", max_attempts=1)
    assert await store.claim("w1", "t1") is not None
    clock.advance(TTL + 1)
    assert await store.claim("w2", "t1") is None
    assert (await store.task("t1")).status == "dead"
    assert (await last_event(store)).event == "dead_lettered"


# -- heartbeat, checkpoint, complete, fail ---------------------------------------------------


async def test_heartbeat_renews(store: LeaseStore, clock: VirtualClock) -> None:
    lease = await claimed(store)
    clock.advance(20_000)
    renewed = await store.heartbeat(lease)
    assert renewed == dataclasses.replace(
        lease, expires_at=20_000 + TTL, renew_deadline=20_000 + DEADLINE
    )
    row = await store.task("t1")
    assert (row.lease_expires_at, row.last_heartbeat_at) == (20_000 + TTL, 20_000)
    ev = await last_event(store)
    assert (ev.event, ev.worker_id, ev.lease_token, ev.fence_token) == ("renewed", "w1", 1, 1)
    assert ev.detail == {"expires_at": 20_000 + TTL}
    # The old lease object still works: tokens, not expiry times, identify a lease.
    await store.heartbeat(lease)


async def test_checkpoints_save_and_load(store: LeaseStore, clock: VirtualClock) -> None:
    await store.enqueue("t1")
    assert await store.load_checkpoint("t1") is None
    lease = await store.claim("w1")
    assert lease is not None
    clock.advance(10)
    first = await store.save_checkpoint(lease, 1, {"pages": ["a"]})
    second = await store.save_checkpoint(lease, 2, {"pages": ["a", "b"]})
    assert (first.seq, second.seq) == (1, 2)
    latest = await store.load_checkpoint("t1")
    assert latest == second
    assert (latest.step, latest.state, latest.fence_token, latest.created_at) == (
        2,
        {"pages": ["a", "b"]},
        1,
        10,
    )
    assert (await store.task("t1")).checkpoint_uri == "checkpoint://t1/2"
    ev = await last_event(store)
    assert (ev.event, ev.fence_token, ev.detail) == ("checkpoint_saved", 1, {"step": 2, "seq": 2})
    assert [c.seq for c in await store.checkpoints()] == [2, 1]


async def test_complete(store: LeaseStore, clock: VirtualClock) -> None:
    lease = await claimed(store)
    clock.advance(7)
    await store.complete(lease, {"pages": 3})
    row = await store.task("t1")
    assert (row.status, row.result, row.lease_expires_at, row.updated_at) == (
        "done",
        '{"pages":3}',
        None,
        7,
    )
    ev = await last_event(store)
    assert (ev.event, ev.task_id, ev.worker_id, ev.lease_token) == ("completed", "t1", "w1", 1)
    clock.advance(10 * TTL)
    assert await store.claim("w2") is None


async def test_fail_with_retry_requeues(store: LeaseStore) -> None:
    lease = await claimed(store)
    assert await store.fail(lease, "tool_timeout") == "queued"
    row = await store.task("t1")
    assert (row.status, row.owner_id, row.error_code, row.lease_expires_at) == (
        "queued",
        None,
        "tool_timeout",
        None,
    )
    ev = await last_event(store)
    assert (ev.event, ev.reason) == ("failed", "tool_timeout")
    assert ev.detail == {"retry": True, "status": "queued"}
    again = await store.claim("w2")
    assert again is not None
    assert (again.lease_token, again.fence_token, again.attempt) == (2, 2, 2)


async def test_fail_without_retry_is_dead(store: LeaseStore) -> None:
    lease = await claimed(store)
    assert await store.fail(lease, "bad_input", retry=False) == "dead"
    row = await store.task("t1")
    assert (row.status, row.error_code) == ("dead", "bad_input")
    ev = await last_event(store)
    assert (ev.event, ev.reason, ev.detail) == (
        "dead_lettered",
        "bad_input",
        {"retry": False, "status": "dead"},
    )


async def test_fail_with_retry_on_the_last_attempt_is_dead(store: LeaseStore) -> None:
    await store.enqueue("t1", max_attempts=1)
    lease = await store.claim("w1")
    assert lease is not None
    assert await store.fail(lease, "boom") == "dead"
    assert (await last_event(store)).event == "dead_lettered"


# -- park / approve / reject -----------------------------------------------------------------


async def test_park_then_approve_resumes_with_new_tokens(
    store: LeaseStore, clock: VirtualClock
) -> None:
    lease = await claimed(store)
    await store.save_checkpoint(lease, 3, {"at": "approval"})
    await store.park(lease, "needs_sign_off")
    row = await store.task("t1")
    assert (row.status, row.owner_id, row.lease_expires_at, row.renew_deadline) == (
        "waiting",
        None,
        None,
        None,
    )
    ev = await last_event(store)
    assert (ev.event, ev.reason, ev.lease_token) == ("parked", "needs_sign_off", 1)
    clock.advance(100 * TTL)
    assert await expired(store, clock) == []
    assert await store.claim("w2") is None
    await store.approve("t1")
    assert (await store.task("t1")).status == "queued"
    assert (await last_event(store)).event == "approved"
    resumed = await store.claim("w2")
    assert resumed is not None
    assert (resumed.lease_token, resumed.fence_token) == (2, 2)
    checkpoint = await store.load_checkpoint("t1")
    assert checkpoint is not None and (checkpoint.step, checkpoint.state) == (3, {"at": "approval"})


async def test_approval_does_not_cost_the_last_attempt(store: LeaseStore) -> None:
    await store.enqueue("once", "approval", max_attempts=1)
    lease = await store.claim("w1", "once")
    assert lease is not None and lease.attempt == 1
    await store.park(lease)
    await store.approve("once")
    resumed = await store.claim("w1", "once")
    assert resumed is not None, "a planned hand-off must not dead-letter the task"
    row = await store.task("once")
    assert (row.status, row.attempt, row.max_attempts) == ("running", 2, 2)


async def test_park_then_reject_is_dead(store: LeaseStore) -> None:
    lease = await claimed(store)
    await store.park(lease)
    await store.reject("t1")
    row = await store.task("t1")
    assert (row.status, row.error_code) == ("dead", "rejected_by_human")
    assert (await last_event(store)).event == "rejected"


@pytest.mark.parametrize("decide", ["approve", "reject"])
async def test_decide_on_a_task_not_waiting(store: LeaseStore, decide: str) -> None:
    await claimed(store)
    with pytest.raises(TaskStateError, match="running"):
        await getattr(store, decide)("t1")
    ev = await last_event(store)
    assert (ev.event, ev.reason, ev.detail) == (
        f"{decide}_ignored",
        "not_waiting",
        {"status": "running"},
    )
    assert (await store.task("t1")).status == "running"


@pytest.mark.parametrize("decide", ["approve", "reject"])
async def test_decide_on_an_unknown_task(store: LeaseStore, decide: str) -> None:
    with pytest.raises(UnknownTask):
        await getattr(store, decide)("nope")
    assert await store.events() == []


# -- rejections by the lease gate ------------------------------------------------------------

GATED = [
    ("heartbeat", "renew_rejected"),
    ("checkpoint", "checkpoint_rejected"),
    ("complete", "complete_rejected"),
    ("fail", "fail_rejected"),
    ("park", "park_rejected"),
]


async def gated(store: LeaseStore, operation: str, lease: Lease) -> None:
    if operation == "heartbeat":
        await store.heartbeat(lease)
    elif operation == "checkpoint":
        await store.save_checkpoint(lease, 9, {"late": True})
    elif operation == "complete":
        await store.complete(lease, {"late": True})
    elif operation == "fail":
        await store.fail(lease, "late")
    else:
        await store.park(lease)


async def assert_rejected(
    store: LeaseStore,
    operation: str,
    event: str,
    lease: Lease,
    reason: RejectReason,
    current: tuple[int, int],
) -> None:
    before = await snapshot(store)
    with pytest.raises(LeaseRejected) as err:
        await gated(store, operation, lease)
    assert type(err.value) is LeaseRejected
    assert err.value.reason is reason
    assert err.value.operation == operation
    assert (err.value.current_lease_token, err.value.current_fence_token) == current
    assert reason.value in str(err.value)
    tasks, events, *rest = await snapshot(store)
    # Only the rejection's event row was added.
    assert (tasks, rest) == (before[0], list(before[2:]))
    assert events[:-1] == before[1]
    ev = events[-1]
    assert (ev.event, ev.reason, ev.task_id, ev.worker_id) == (
        event,
        reason.value,
        lease.task_id,
        lease.owner_id,
    )
    assert (ev.lease_token, ev.fence_token) == (lease.lease_token, lease.fence_token)
    assert ev.detail["operation"] == operation
    assert (ev.detail["current_lease_token"], ev.detail["current_fence_token"]) == current


@pytest.mark.parametrize(("operation", "event"), GATED)
async def test_rejected_as_superseded(
    store: LeaseStore, clock: VirtualClock, operation: str, event: str
) -> None:
    stale = await claimed(store)
    clock.advance(TTL + 1)
    assert await store.claim("w2") is not None
    await assert_rejected(store, operation, event, stale, RejectReason.SUPERSEDED, (2, 2))


@pytest.mark.parametrize(("operation", "event"), GATED)
async def test_rejected_as_superseded_by_the_same_worker(
    store: LeaseStore, clock: VirtualClock, operation: str, event: str
) -> None:
    stale = await claimed(store)
    clock.advance(TTL + 1)
    assert await store.claim("w1") is not None
    await assert_rejected(store, operation, event, stale, RejectReason.SUPERSEDED, (2, 2))


@pytest.mark.parametrize(("operation", "event"), GATED)
async def test_rejected_as_expired(
    store: LeaseStore, clock: VirtualClock, operation: str, event: str
) -> None:
    lease = await claimed(store)
    clock.advance_to(lease.expires_at + 1)
    await assert_rejected(store, operation, event, lease, RejectReason.EXPIRED, (1, 1))
    assert (await store.task("t1")).status == "running"


@pytest.mark.parametrize("ending", ["complete", "fail_retry", "fail_dead", "park"])
@pytest.mark.parametrize(("operation", "event"), GATED)
async def test_rejected_as_not_running(
    store: LeaseStore, operation: str, event: str, ending: str
) -> None:
    lease = await claimed(store)
    if ending == "complete":
        await store.complete(lease)
    elif ending == "fail_retry":
        await store.fail(lease, "x", retry=True)
    elif ending == "fail_dead":
        await store.fail(lease, "x", retry=False)
    else:
        await store.park(lease)
    await assert_rejected(store, operation, event, lease, RejectReason.NOT_RUNNING, (1, 1))


@pytest.mark.parametrize(("operation", "_event"), GATED)
@pytest.mark.parametrize(
    "forge",
    [
        {"owner_id": "intruder"},
        {"lease_token": 2},
        {"fence_token": 99},
        {"task_id": "other"},
    ],
)
async def test_a_lease_not_issued_for_the_task_is_a_mismatch(
    store: LeaseStore, operation: str, _event: str, forge: dict[str, Any]
) -> None:
    await store.enqueue("other")
    assert await store.claim("w2", "other") is not None
    lease = await claimed(store)
    before = await snapshot(store)
    with pytest.raises(LeaseMismatch):
        await gated(store, operation, dataclasses.replace(lease, **forge))
    assert await snapshot(store) == before


@pytest.mark.parametrize(("operation", "_event"), GATED)
async def test_a_lease_of_an_unknown_task(store: LeaseStore, operation: str, _event: str) -> None:
    lease = await claimed(store)
    before = await snapshot(store)
    with pytest.raises(UnknownTask):
        await gated(store, operation, dataclasses.replace(lease, task_id="ghost"))
    assert await snapshot(store) == before


@pytest.mark.parametrize(
    "call",
    [
        lambda s, lease: s.save_checkpoint(lease, 1, {"x": object()}),
        lambda s, lease: s.complete(lease, [1, {2, 3}]),
        lambda s, lease: s.apply_effect(lease, "k", "email", object()),
    ],
)
async def test_a_payload_that_is_not_json_is_refused(store: LeaseStore, call: Any) -> None:
    lease = await claimed(store)
    before = await snapshot(store)
    with pytest.raises(InvalidPayload, match="JSON"):
        await call(store, lease)
    assert await snapshot(store) == before


# -- the ledger and effects ------------------------------------------------------------------


async def test_fenced_write_accepts_equal_or_higher_and_refuses_lower(
    store: LeaseStore, clock: VirtualClock
) -> None:
    old = await claimed(store)
    row = await store.fenced_write(old, "page-1", "v1")
    assert (row.key, row.value, row.fence_token, row.writer) == ("page-1", "v1", 1, "w1")
    await store.fenced_write(old, "page-1", "v1b")  # equal token: accepted
    ev = await last_event(store)
    assert (ev.event, ev.fence_token, ev.detail) == (
        "write_accepted",
        1,
        {"key": "page-1", "previous_fence_token": 1},
    )
    clock.advance(TTL + 1)
    new = await store.claim("w2")
    assert new is not None and new.fence_token == 2
    await store.fenced_write(new, "page-1", "v2")
    before = await snapshot(store)
    with pytest.raises(FencedWrite) as err:
        await store.fenced_write(old, "page-1", "stale")
    assert err.value.reason is RejectReason.FENCED
    assert (err.value.fence_token, err.value.current_fence_token, err.value.key) == (
        1,
        2,
        "page-1",
    )
    tasks, events, ledger, *rest = await snapshot(store)
    assert (tasks, ledger, rest) == (before[0], before[2], list(before[3:]))
    assert events[:-1] == before[1]
    ev = events[-1]
    assert (ev.event, ev.reason, ev.worker_id, ev.lease_token, ev.fence_token) == (
        "write_rejected",
        "fenced",
        "w1",
        1,
        1,
    )
    assert ev.detail == {
        "operation": "write",
        "key": "page-1",
        "current_lease_token": 2,
        "current_fence_token": 2,
        "page_fence_token": 2,
        "status": "running",
        "value": "stale",  # what the refused page would have said
    }
    assert [(r.key, r.value, r.fence_token, r.task_id) for r in ledger] == [
        ("page-1", "v2", 2, "t1")
    ]
    # Nor may it write a page nobody newer has touched: its token is behind the task's.
    with pytest.raises(FencedWrite):
        await store.fenced_write(old, "page-2", "fresh")


async def test_apply_effect_once_per_key(store: LeaseStore, clock: VirtualClock) -> None:
    first = await claimed(store)
    out = await store.apply_effect(first, "mail-1", "email", {"to": "boss"})
    assert out.applied
    assert out.result == {"effect": "email", "payload": {"to": "boss"}, "receipt": "mail-1@1"}
    assert (await last_event(store)).event == "effect_applied"
    clock.advance(TTL + 1)
    second = await store.claim("w2")
    assert second is not None
    again = await store.apply_effect(second, "mail-1", "email", {"to": "boss"})
    assert not again.applied
    assert again.result == out.result  # the stored receipt, not a new one
    ev = await last_event(store)
    assert (ev.event, ev.worker_id, ev.fence_token, ev.detail) == (
        "effect_deduplicated",
        "w2",
        2,
        {"key": "mail-1", "effect": "email"},
    )
    effects = await store.effects()
    assert [(e.idempotency_key, e.applied_count, e.fence_token) for e in effects] == [
        ("mail-1", 1, 1)
    ]


async def test_record_appends_an_outside_event(store: LeaseStore, clock: VirtualClock) -> None:
    clock.advance(3)
    ev = await store.record(
        "partitioned", task_id="t1", worker_id="w1", reason="network", lost=None, calls=2
    )
    assert ev == EventRow(
        seq=1,
        at=3,
        event="partitioned",
        task_id="t1",
        worker_id="w1",
        reason="network",
        detail={"calls": 2},
    )
    assert await store.events() == [ev]


async def test_listeners_see_committed_events_in_order(store: LeaseStore) -> None:
    seen: list[str] = []
    store.add_listener(lambda ev: seen.append(ev.event))
    lease = await claimed(store)
    with pytest.raises(LeaseRejected):
        await store.heartbeat(dataclasses.replace(lease, lease_token=0))
    with pytest.raises(DuplicateTask):
        await store.enqueue("t1")
    assert seen == ["enqueued", "claimed", "renew_rejected"]


# -- reads -----------------------------------------------------------------------------------


async def test_reads(store: LeaseStore, clock: VirtualClock) -> None:
    with pytest.raises(UnknownTask):
        await store.task("nope")
    assert await store.next_expiry() is None
    a = await claimed(store, "a")
    clock.advance(10)
    b = await claimed(store, "b")
    assert [t.task_id for t in await store.tasks()] == ["a", "b"]
    assert await store.next_expiry() == a.expires_at
    clock.advance_to(a.expires_at + 1)
    assert await store.next_expiry() == b.expires_at
    assert await expired(store, clock) == [("a", "w1", 1, 1, a.expires_at)]
    events = await store.events()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert await store.events(since_seq=2) == events[2:]


# -- the seed's mistakes, switched on ------------------------------------------------------


async def test_no_expiry_mode_never_expires(make_store: MakeStore, clock: VirtualClock) -> None:
    store = make_store(mode=Mode.NO_EXPIRY)
    lease = await claimed(store)
    clock.advance(100 * TTL)
    assert await store.claim("w2") is None
    assert await store.claim("w2", "t1") is None
    # Mistake one whole: `running` and an owner, and nothing else: no expiry, no version.
    row = await store.task("t1")
    assert (row.status, row.owner_id) == ("running", lease.owner_id)
    assert (row.lease_expires_at, row.renew_deadline) == (None, None)
    assert (row.lease_token, row.fence_token) == (0, 0)
    assert await expired(store, clock) == []
    await store.heartbeat(lease)
    await store.complete(lease)
    await store.close()


async def test_no_fencing_mode_accepts_a_stale_write(
    make_store: MakeStore, clock: VirtualClock
) -> None:
    store = make_store(mode=Mode.NO_FENCING)
    old = await claimed(store)
    clock.advance(TTL + 1)
    new = await store.claim("w2")
    assert new is not None
    await store.fenced_write(new, "page", "new")
    await store.fenced_write(old, "page", "stale")
    assert [(r.value, r.fence_token) for r in await store.ledger()] == [("stale", 1)]
    assert (await last_event(store)).event == "write_accepted"
    await store.close()


async def test_no_idempotency_mode_applies_twice(
    make_store: MakeStore, clock: VirtualClock
) -> None:
    store = make_store(mode=Mode.NO_IDEMPOTENCY)
    lease = await claimed(store)
    assert (await store.apply_effect(lease, "k", "charge")).applied
    assert (await store.apply_effect(lease, "k", "charge")).applied
    assert [e.applied_count for e in await store.effects()] == [2]
    assert [e.event for e in (await store.events())[-2:]] == ["effect_applied"] * 2
    await store.close()


async def test_client_clock_steals_a_live_lease(make_store: MakeStore, clock: VirtualClock) -> None:
    store = make_store(mode=Mode.CLIENT_CLOCK)
    holder = await claimed(store)
    clock.advance(1_000)  # by the store clock the lease has 59 s left
    thief = await store.claim("w2", judge_now_ms=clock.now_ms() + TTL)  # a fast clock
    assert thief is not None and thief.task_id == "t1" and thief.lease_token == 2
    assert thief.expires_at == 1_000 + TTL  # the new lease still runs on the store clock
    ev = await last_event(store)
    assert (ev.event, ev.detail["judged_by"]) == ("claimed", "client")
    with pytest.raises(LeaseRejected) as err:
        await store.heartbeat(holder)
    assert err.value.reason is RejectReason.SUPERSEDED
    # A slow client clock never finds the lease expired, even when it is.
    clock.advance(10 * TTL)
    assert await store.claim("w3", judge_now_ms=0) is None
    await store.close()


async def test_the_store_clock_judges_expiry_by_default(store: LeaseStore) -> None:
    await claimed(store)
    assert await store.claim("w2") is None
    ev = await last_event(store)
    assert "judged_by" not in ev.detail


# -- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        LeaseConfig(ttl_ms=0),
        LeaseConfig(ttl_ms=-5),
        LeaseConfig(ttl_ms=10_000, renew_deadline_ms=10_000),
        LeaseConfig(ttl_ms=10_000, renew_deadline_ms=12_000),
        LeaseConfig(ttl_ms=10_000, renew_deadline_ms=5_000, heartbeat_every_ms=5_000),
        LeaseConfig(ttl_ms=10_000, heartbeat_every_ms=0),
        LeaseConfig(poll_every_ms=0),
    ],
)
def test_bad_timing_is_refused(clock: VirtualClock, config: LeaseConfig) -> None:
    with pytest.raises(ConfigError):
        config.validated()
    with pytest.raises(ConfigError):
        LeaseStore.open_inline(clock=clock, config=config)


def test_ttl_error_is_clear() -> None:
    with pytest.raises(ConfigError, match="lease_ttl must be positive"):
        LeaseConfig(ttl_ms=0).validated()


@pytest.mark.parametrize(
    ("config", "keys"),
    [
        (LeaseConfig(ttl_ms=2), ("lease_ttl",)),
        (LeaseConfig(ttl_ms=10_000, renew_deadline_ms=10_000), ("renew_deadline", "lease_ttl")),
        (
            LeaseConfig(ttl_ms=10_000, renew_deadline_ms=5_000, heartbeat_every_ms=5_000),
            ("heartbeat_every", "renew_deadline", "lease_ttl"),
        ),
    ],
)
def test_a_timing_error_names_its_keys(config: LeaseConfig, keys: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError) as caught:
        config.validated()
    assert caught.value.keys == keys


def test_long_lease_keeps_the_heartbeat_and_poll_under_an_hour() -> None:
    config = LeaseConfig(ttl_ms=30_000, heartbeat_every_ms=10_000, poll_every_ms=2_000)
    assert config.in_mode(Mode.CORRECT) is config
    long = config.in_mode(Mode.LONG_LEASE)
    assert (long.ttl_ms, long.heartbeat_ms, long.poll_every_ms) == (3_600_000, 10_000, 2_000)
    slow = LeaseConfig(ttl_ms=86_400_000, heartbeat_every_ms=3_000_000)
    with pytest.raises(ConfigError, match="long_lease's renew deadline") as caught:
        slow.in_mode(Mode.LONG_LEASE)
    assert caught.value.keys == ("heartbeat_every", "lease_ttl")


async def test_config_drives_the_lease_times(make_store: MakeStore, clock: VirtualClock) -> None:
    config = LeaseConfig(ttl_ms=9_000)
    assert (config.deadline_ms, config.heartbeat_ms) == (6_000, 3_000)
    store = make_store(config=config)
    lease = await claimed(store)
    assert (lease.expires_at, lease.renew_deadline) == (9_000, 6_000)
    await store.close()


def test_heartbeat_above_half_the_ttl_warns() -> None:
    slow = LeaseConfig(ttl_ms=10_000, renew_deadline_ms=9_000, heartbeat_every_ms=6_000)
    assert slow.validated() is slow
    assert len(slow.timing_warnings()) == 1
    with pytest.warns(TimingWarning, match="more than half"):
        slow.warn()
    fine = LeaseConfig()
    assert fine.timing_warnings() == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fine.warn()


# -- the production driver ------------------------------------------------------------------


async def test_aiosqlite_store_on_a_file_does_the_whole_cycle(
    tmp_path: Path, clock: VirtualClock
) -> None:
    path = tmp_path / "keys.db"
    store = await LeaseStore.open_async(path, clock=clock)
    try:
        await store.enqueue("t1", payload={"n": 1})
        lease = await store.claim("w1")
        assert lease is not None and (lease.lease_token, lease.fence_token) == (1, 1)
        clock.advance(20_000)
        lease = await store.heartbeat(lease)
        await store.save_checkpoint(lease, 1, {"done": 1})
        await store.fenced_write(lease, "page", "v")
        await store.apply_effect(lease, "k", "email")
        clock.advance(TTL + 1)
        with pytest.raises(LeaseRejected) as err:
            await store.heartbeat(lease)
        assert err.value.reason is RejectReason.EXPIRED
        second = await store.claim("w2")
        assert second is not None and second.fence_token == 2
        await store.fenced_write(second, "page", "v2")
        with pytest.raises(FencedWrite):
            await store.fenced_write(lease, "page", "stale")
        assert not (await store.apply_effect(second, "k", "email")).applied
        await store.complete(second, {"ok": True})
        assert (await store.task("t1")).status == "done"
        with pytest.raises(UnknownTask):
            await store.task("nope")
        with pytest.raises(DuplicateTask):
            await store.enqueue("t1")
        events = [e.event for e in await store.events()]
    finally:
        await store.close()
    assert events == [
        "enqueued",
        "claimed",
        "renewed",
        "checkpoint_saved",
        "write_accepted",
        "effect_applied",
        "renew_rejected",
        "claimed",
        "write_accepted",
        "write_rejected",
        "effect_deduplicated",
        "completed",
    ]
    # The file keeps it all: a new store (inline this time) reads the same history.
    reopened = LeaseStore.open_inline(path, clock=clock)
    assert [e.event for e in await reopened.events()] == events
    assert (await reopened.task("t1")).status == "done"
    await reopened.close()


def test_every_record_field_is_a_column_of_its_table() -> None:
    # The reads select a record's fields by name and build it field by field: a field
    # that is not a column would fail every read, a renamed one would shift the rest.
    from core.engine import statements as st

    for names, table in (
        (st.TASK_COLUMNS, st.tasks),
        (st.LEASE_RETURNING, st.tasks),
        (st.TASK_STATE_COLUMNS, st.tasks),
        (st.CHECKPOINT_COLUMNS, st.checkpoints),
        (st.LEDGER_COLUMNS, st.ledger),
        (st.EFFECT_COLUMNS, st.effects),
        (st.EVENT_COLUMNS, st.events),
    ):
        assert names and set(names) <= set(table.c.keys()), (table.name, names)
    # A task row is the whole task but its place in the queue, which is the store's own.
    assert set(st.tasks.c.keys()) - set(st.TASK_COLUMNS) == {"queue_seq"}
    assert set(st.events.c.keys()) == set(st.EVENT_COLUMNS)


def test_every_operation_has_its_refusal_line_and_no_other() -> None:
    from core.engine.vocabulary import REFUSED_OPERATION, REJECTIONS, EventKind, Operation

    assert {op.rejected for op in Operation} == REJECTIONS
    assert all(REFUSED_OPERATION[op.rejected] is op for op in Operation)
    assert Operation.HEARTBEAT.rejected is EventKind.RENEW_REJECTED


def test_each_manual_action_is_the_operation_of_its_name() -> None:
    from core.engine.vocabulary import Operation
    from core.sim.spec import MANUAL_ACTIONS

    assert [a.operation for a in MANUAL_ACTIONS] == list(Operation)
    assert all(a.name == a.operation for a in MANUAL_ACTIONS)


# -- queue order: first in, first out -------------------------------------------------------


async def test_an_untargeted_claim_takes_the_task_enqueued_first(store: LeaseStore) -> None:
    for task_id in ("zeta", "alpha", "mu"):
        await store.enqueue(task_id)  # the same millisecond: only the order tells them apart
    claimed = [await store.claim(w) for w in ("w1", "w2", "w3")]
    assert [(c.task_id, c.fence_token) for c in claimed if c] == [
        ("zeta", 1),
        ("alpha", 2),
        ("mu", 3),
    ]


async def test_a_task_back_in_the_queue_goes_behind_those_waiting(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await store.enqueue("first")
    await store.enqueue("second")
    lease = await store.claim("w1")
    assert lease is not None and lease.task_id == "first"
    assert await store.fail(lease, "flaky", retry=True) == "queued"
    await store.enqueue("third")
    order = [await store.claim(w) for w in ("w2", "w3", "w4")]
    assert [c.task_id for c in order if c] == ["second", "first", "third"]


async def test_an_approved_task_queues_behind_those_waiting(store: LeaseStore) -> None:
    await store.enqueue("grant")
    lease = await store.claim("w1")
    assert lease is not None
    await store.park(lease)
    await store.enqueue("other")
    await store.approve("grant")
    order = [await store.claim(w) for w in ("w2", "w3")]
    assert [c.task_id for c in order if c] == ["other", "grant"]


async def test_an_expired_task_is_rescued_before_the_queue(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await store.enqueue("held")
    lease = await store.claim("w1")
    assert lease is not None
    await store.enqueue("waiting")
    clock.advance(TTL + 1)
    rescued = await store.claim("w2")
    assert rescued is not None and rescued.task_id == "held"


def test_the_claim_and_the_queue_draw_read_the_queue_index(store: LeaseStore, backend: str) -> None:
    if backend != "sqlite":
        pytest.skip("reads SQLite's EXPLAIN QUERY PLAN")
    conn = store.driver.conn  # type: ignore[attr-defined]
    names = ("now", "judge_now", "ttl", "deadline", "worker_id", "task_id", "kind")
    params = dict.fromkeys(names, 0) | {"max_attempts": 1, "input_payload": "null"}
    for stmt in (store.sql.claim_any, store.sql.enqueue, store.sql.approve, store.sql.fail):
        plan = " | ".join(
            str(row[3])
            for row in conn.execute(
                "EXPLAIN QUERY PLAN " + stmt.sql,
                params | {"retry": 1, "error_code": "", "lease_token": 0, "fence_token": 0},
            )
        )
        assert "ix_agent_tasks_queue" in plan, plan
        assert "SCAN agent_tasks |" not in plan + " |"  # never the whole table


async def test_a_refusal_leaves_no_reference_cycle(store: LeaseStore, clock: VirtualClock) -> None:
    """The explorer makes tens of thousands of refused calls: each one left as a cycle of
    frames and tracebacks made the garbage collector a quarter of its time."""
    lease = await claimed(store)
    clock.advance_to(lease.expires_at + 1)
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            with pytest.raises(LeaseRejected):
                await store.heartbeat(lease)
        left = gc.collect()
    finally:
        gc.enable()
    # a handful may come from the test's own machinery; a cycle per refusal is 50 and more
    assert left < 50, f"{left} objects were left in reference cycles by 50 refusals"


async def test_a_read_hands_back_the_row_of_an_unchanged_task_or_page_and_a_new_one_else(
    store: LeaseStore, clock: VirtualClock
) -> None:
    """A screen reads every task and page ten times a second: an unchanged one is the object
    read before (its screen then compares nothing), a changed one a new row of its values."""
    lease = await claimed(store)
    await store.enqueue("t2")
    await store.fenced_write(lease, "a", "1")
    await store.fenced_write(lease, "b", "1")
    tasks, pages = await store.tasks(), await store.ledger()
    await store.fenced_write(lease, "b", "2")
    again_tasks, again_pages = await store.tasks(), await store.ledger()
    assert [a is b for a, b in zip(tasks, again_tasks, strict=True)] == [True, True]
    assert [a is b for a, b in zip(pages, again_pages, strict=True)] == [True, False]
    assert (again_pages[1].key, again_pages[1].value) == ("b", "2")
    clock.advance(1)
    await store.heartbeat(lease)  # a new expiry: a new row for t1, t2 as it was
    renewed = await store.tasks()
    assert renewed[0] is not again_tasks[0] and renewed[1] is again_tasks[1]
