"""A hypothesis state machine over the lease store: three workers, three tasks, one clock.

Workers remember the last lease they were given and keep using it however stale it gets,
while hypothesis interleaves claims, heartbeats, clock moves, checkpoints, ledger writes,
effects, completes, fails, parks, approvals and rejections. Each rule checks the store's
answer against a model; after every rule the events written so far are replayed to check
the safety properties:
- at most one unexpired lease per task at any store time (a claim only ever takes a task
  whose previous lease was released or had expired by the store clock);
- a ledger page is accepted only from the task's current, live lease, whose fence token
  is the newest issued for the task, and never below a token the page already accepted;
- fence tokens strictly increase across all claims of all tasks;
- each idempotency key is applied once;
- a done task is never claimed again.
The inline driver never suspends, so the store's coroutines are driven without a loop.
"""

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig
from core.engine.errors import FencedWrite, LeaseRejected, RejectReason, TaskStateError
from core.engine.records import Lease, TaskRow
from core.engine.store import LeaseStore

T = TypeVar("T")

WORKERS = ("w0", "w1", "w2")
TASKS = ("t0", "t1", "t2")
KEYS = ("page-a", "page-b")
EFFECT_KEYS = ("mail-1", "mail-2", "charge-1")
CONFIG = LeaseConfig(ttl_ms=10_000)  # renew deadline 6.66 s, heartbeat every 3.33 s
MAX_ATTEMPTS = 4


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Drive a store call on the inline driver to its end; it must never suspend."""
    try:
        coro.send(None)
    except StopIteration as stop:
        result: T = stop.value
        return result
    coro.close()
    raise AssertionError("an inline store call suspended")


@dataclass
class TaskHistory:
    """What the event log says about one task so far."""

    lease_token: int = 0
    fence_token: int = 0
    expires_at: int | None = None  # None: no lease held (queued, waiting, done, dead)
    done: bool = False


workers = st.sampled_from(WORKERS)
task_names = st.sampled_from(TASKS)


class LeaseStoreMachine(RuleBasedStateMachine):
    db = ":memory:"  # where each example's store lives (a fresh schema on PostgreSQL)

    def __init__(self) -> None:
        super().__init__()
        self.clock = VirtualClock()
        self.store = LeaseStore.open_inline(self.db, clock=self.clock, config=CONFIG, scratch=True)
        for task_id in TASKS:
            run(self.store.enqueue(task_id, payload={"task": task_id}, max_attempts=MAX_ATTEMPTS))
        self.remembered: dict[str, Lease | None] = dict.fromkeys(WORKERS)
        # The model of the ledger: each page's highest token and the task that wrote it.
        self.ledger_max: dict[str, int] = {}
        self.ledger_task: dict[str, str] = {}
        self.effects_applied: set[str] = set()
        # Replaying the event log:
        self.seen_seq = 0
        self.history = {task_id: TaskHistory() for task_id in TASKS}
        self.last_fence = 0
        self.ledger_seen: dict[str, int] = {}
        self.effects_seen: set[str] = set()

    def teardown(self) -> None:
        run(self.store.close())

    # -- helpers -------------------------------------------------------------------------------

    def row(self, task_id: str) -> TaskRow:
        return run(self.store.task(task_id))

    def expected_rejection(self, lease: Lease) -> RejectReason | None:
        """What the lease gate should say to this lease now (None: let it through)."""
        row = self.row(lease.task_id)
        if lease.lease_token < row.lease_token:
            return RejectReason.SUPERSEDED
        assert lease.lease_token == row.lease_token and lease.fence_token == row.fence_token
        if row.status != "running":
            return RejectReason.NOT_RUNNING
        assert row.lease_expires_at is not None
        if self.clock.now_ms() > row.lease_expires_at:
            return RejectReason.EXPIRED
        return None

    def gated(self, worker: str, operation: str, **kwargs: Any) -> Any:
        """Run a gated call with the worker's remembered lease; check the gate's verdict."""
        lease = self.remembered[worker]
        assert lease is not None
        expected = self.expected_rejection(lease)
        call: Any = {
            "heartbeat": self.store.heartbeat,
            "checkpoint": self.store.save_checkpoint,
            "complete": self.store.complete,
            "fail": self.store.fail,
            "park": self.store.park,
        }[operation]
        try:
            result = run(call(lease, **kwargs))
        except LeaseRejected as err:
            assert err.reason is expected, (operation, err, expected)
            assert (err.current_lease_token, err.current_fence_token) == (
                self.row(lease.task_id).lease_token,
                self.row(lease.task_id).fence_token,
            )
            return None
        assert expected is None, (operation, expected)
        return result

    def has_lease(self, worker: str) -> bool:
        return self.remembered[worker] is not None

    # -- rules ---------------------------------------------------------------------------------

    @rule(by_ms=st.sampled_from([0, 1, 1_000, 3_333, 6_000, 9_999, 10_000, 10_001, 25_000]))
    def advance(self, by_ms: int) -> None:
        self.clock.advance(by_ms)

    @rule(worker=workers, named=st.none() | task_names)
    def claim(self, worker: str, named: str | None) -> None:
        before = {t: self.row(t) for t in TASKS}
        now = self.clock.now_ms()
        lease = run(self.store.claim(worker, named))
        if lease is None:
            # Nothing claimable: no queued task, no expired running one (within attempts).
            for task_id, row in before.items():
                if named is not None and task_id != named:
                    continue
                expired = row.status == "running" and now > (row.lease_expires_at or 0)
                claimable = row.status == "queued" or expired
                assert not (claimable and row.attempt < row.max_attempts), (task_id, row)
            return
        row = before[lease.task_id]
        assert named is None or lease.task_id == named
        assert row.status == "queued" or (
            row.status == "running" and now > (row.lease_expires_at or 0)
        )
        assert lease.lease_token == row.lease_token + 1
        assert lease.fence_token == max(r.fence_token for r in before.values()) + 1
        assert lease.expires_at == now + CONFIG.ttl_ms
        self.remembered[worker] = lease

    # Two sequences too rare for uniformly chosen rules to reach often: a holder writes
    # after its lease ran out (nobody took over yet), and after a successor took over.

    def _run_out(self, task_id: str) -> None:
        row = self.row(task_id)
        if row.status == "running" and row.lease_expires_at is not None:
            self.clock.advance(max(0, row.lease_expires_at - self.clock.now_ms()) + 1)

    @rule(worker=workers, key=st.sampled_from(KEYS))
    def overstay(self, worker: str, key: str) -> None:
        lease = self.remembered[worker]
        if lease is not None:
            self._run_out(lease.task_id)
            self.write(worker, key)

    @rule(worker=workers, taker=workers, key=st.sampled_from(KEYS))
    def midnight_return(self, worker: str, taker: str, key: str) -> None:
        lease = self.remembered[worker]
        if lease is None or taker == worker:
            return
        self._run_out(lease.task_id)
        self.claim(taker, lease.task_id)
        if self.remembered[taker] is not None:
            self.write(taker, key)
        self.write(worker, key)

    @rule(worker=workers)
    def heartbeat(self, worker: str) -> None:
        if not self.has_lease(worker):
            return
        renewed = self.gated(worker, "heartbeat")
        if renewed is not None:
            assert renewed.expires_at == self.clock.now_ms() + CONFIG.ttl_ms
            self.remembered[worker] = renewed

    @rule(worker=workers, step=st.integers(1, 5))
    def checkpoint(self, worker: str, step: int) -> None:
        if not self.has_lease(worker):
            return
        lease = self.remembered[worker]
        assert lease is not None
        saved = self.gated(worker, "checkpoint", step=step, state={"step": step})
        if saved is not None:
            latest = run(self.store.load_checkpoint(lease.task_id))
            assert latest is not None and latest == saved
            assert latest.fence_token == lease.fence_token

    @rule(worker=workers, key=st.sampled_from(KEYS))
    def write(self, worker: str, key: str) -> None:
        lease = self.remembered[worker]
        if lease is None:
            return
        # Fenced if behind the task's newest fence token or the page's highest; otherwise
        # the lease gate's answer, as for a checkpoint.
        newest = max(self.row(lease.task_id).fence_token, self.ledger_max.get(key, 0))
        expected = (
            RejectReason.FENCED if lease.fence_token < newest else self.expected_rejection(lease)
        )
        event(f"write: {expected or 'accepted'}")
        try:
            row = run(self.store.fenced_write(lease, key, f"{worker}@{lease.fence_token}"))
        except LeaseRejected as err:
            assert err.reason is expected, (err, expected)
            assert isinstance(err, FencedWrite) == (expected is RejectReason.FENCED)
            assert err.fence_token == lease.fence_token
            assert err.current_fence_token == newest
            assert err.current_lease_token == self.row(lease.task_id).lease_token
            return
        assert expected is None, expected
        assert (row.fence_token, row.task_id) == (lease.fence_token, lease.task_id)
        self.ledger_max[key] = lease.fence_token
        self.ledger_task[key] = lease.task_id

    @rule(worker=workers, key=st.sampled_from(EFFECT_KEYS))
    def effect(self, worker: str, key: str) -> None:
        lease = self.remembered[worker]
        if lease is None:
            return
        outcome = run(self.store.apply_effect(lease, key, "email", {"by": worker}))
        assert outcome.applied == (key not in self.effects_applied)
        self.effects_applied.add(key)
        assert outcome.result["receipt"].startswith(f"{key}@")

    @rule(worker=workers)
    def complete(self, worker: str) -> None:
        if self.has_lease(worker):
            self.gated(worker, "complete", result={"by": worker})

    @rule(worker=workers, retry=st.booleans())
    def fail(self, worker: str, retry: bool) -> None:
        if self.has_lease(worker):
            lease = self.remembered[worker]
            assert lease is not None
            status = self.gated(worker, "fail", error_code="boom", retry=retry)
            if status is not None:
                expect = "queued" if retry and lease.attempt < MAX_ATTEMPTS else "dead"
                assert status == expect

    @rule(worker=workers)
    def park(self, worker: str) -> None:
        if self.has_lease(worker):
            self.gated(worker, "park")

    @rule(task_id=task_names, approved=st.booleans())
    def decide(self, task_id: str, approved: bool) -> None:
        status = self.row(task_id).status
        try:
            run(self.store.approve(task_id) if approved else self.store.reject(task_id))
        except TaskStateError:
            assert status != "waiting"
            return
        assert status == "waiting"
        assert self.row(task_id).status == ("queued" if approved else "dead")

    @rule(worker=workers)
    def crash(self, worker: str) -> None:
        """The worker forgets its lease (a restart); the store must recover by expiry."""
        self.remembered[worker] = None

    # -- the safety properties, from the event log ----------------------------------------------

    @invariant()
    def event_log_is_safe(self) -> None:
        for ev in run(self.store.events(self.seen_seq)):
            # Increasing, not gapless: a PostgreSQL sequence keeps no promise of no gaps (a
            # rolled-back insert still used its number), and the register needs only order.
            assert ev.seq > self.seen_seq
            self.seen_seq = ev.seq
            if ev.task_id is None or ev.task_id not in self.history:
                continue
            h = self.history[ev.task_id]
            if ev.event == "claimed":
                assert not h.done, f"done task {ev.task_id} claimed again"
                assert h.expires_at is None or ev.at > h.expires_at, (
                    f"{ev.task_id} claimed at {ev.at} while its lease ran to {h.expires_at}"
                )
                assert ev.fence_token is not None and ev.fence_token > self.last_fence
                assert ev.lease_token == h.lease_token + 1
                self.last_fence = ev.fence_token
                h.lease_token, h.fence_token = ev.lease_token, ev.fence_token
                h.expires_at = ev.detail["expires_at"]
            elif ev.event in ("renewed", "checkpoint_saved", "completed", "parked") or (
                ev.event in ("failed", "dead_lettered") and ev.worker_id is not None
            ):
                # Only the current, live lease gets through the gate.
                assert (ev.lease_token, ev.fence_token) == (h.lease_token, h.fence_token)
                assert h.expires_at is not None and ev.at <= h.expires_at
                if ev.event == "renewed":
                    h.expires_at = ev.detail["expires_at"]
                elif ev.event != "checkpoint_saved":
                    h.expires_at = None
                    h.done = ev.event == "completed"
            elif ev.event == "dead_lettered":  # attempts used up at a claim
                h.expires_at = None
            elif ev.event == "write_accepted":
                key = ev.detail["key"]
                assert ev.fence_token is not None
                # The writer held the task's current, live lease: its fence token was the
                # newest issued for the task.
                assert (ev.lease_token, ev.fence_token) == (h.lease_token, h.fence_token)
                assert h.expires_at is not None and ev.at <= h.expires_at
                assert ev.fence_token >= self.ledger_seen.get(key, 0), (
                    f"{key} accepted {ev.fence_token} after {self.ledger_seen[key]}"
                )
                self.ledger_seen[key] = ev.fence_token
            elif ev.event == "effect_applied":
                key = ev.detail["key"]
                assert key not in self.effects_seen, f"effect {key} applied twice"
                self.effects_seen.add(key)

    @invariant()
    def at_most_one_live_lease_per_task(self) -> None:
        now = self.clock.now_ms()
        for task_id in TASKS:
            live = [
                lease
                for lease in self.remembered.values()
                if lease is not None
                and lease.task_id == task_id
                and self.expected_rejection(lease) is None
            ]
            assert len({(lease.lease_token, lease.fence_token) for lease in live}) <= 1
            row = self.row(task_id)
            if row.status == "running":
                assert row.owner_id is not None and row.lease_expires_at is not None
            else:
                assert row.lease_expires_at is None
            if live:
                assert row.lease_expires_at is not None and now <= row.lease_expires_at

    @invariant()
    def stored_rows_match_the_model(self) -> None:
        pages = run(self.store.ledger())
        assert {r.key: r.fence_token for r in pages} == self.ledger_max
        assert {r.key: r.task_id for r in pages} == self.ledger_task
        effects = run(self.store.effects())
        assert {e.idempotency_key for e in effects} == self.effects_applied
        assert all(e.applied_count == 1 for e in effects)


LeaseStoreMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLeaseStore = LeaseStoreMachine.TestCase


class OnPostgreSQL(LeaseStoreMachine):
    """The same machine over PostgreSQL: the same answers, and the same safety."""


OnPostgreSQL.TestCase.settings = settings(
    # Each example opens a schema of its own on a real server: fewer examples keep the
    # suite's time reasonable; the SQLite machine above explores more.
    max_examples=30,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLeaseStoreOnPostgreSQL = OnPostgreSQL.TestCase


@pytest.fixture(autouse=True)
def _postgresql_for_the_machine(request: pytest.FixtureRequest) -> None:
    if request.cls is TestLeaseStoreOnPostgreSQL:
        OnPostgreSQL.db = str(request.getfixturevalue("postgres_url"))
