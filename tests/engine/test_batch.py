"""`heartbeat_many`, `complete_many` and `claim_many`: many leases in one transaction, each
judged as if alone.

Every test runs on SQLite and on PostgreSQL. The strongest checks are twins: the same
history played once through the batch call and once through the one-lease calls must leave
the same rows and the same register lines (only their order within one batch may differ).
"""

import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from core.engine.backends import postgresql as pg_backend
from core.engine.clock import VirtualClock
from core.engine.config import Mode
from core.engine.errors import (
    InvalidId,
    InvalidPayload,
    LeaseMismatch,
    LeaseRejected,
    RejectReason,
)
from core.engine.records import EventRow, Lease
from core.engine.store import LeaseStore
from tests.conftest import MakeStore

TTL = 60_000
DEADLINE = 40_000


def lines(events: list[EventRow]) -> list[tuple[Any, ...]]:
    """The register lines without their numbers, in a fixed order (a batch writes its
    renewals before its refusals; one call at a time interleaves them)."""
    return sorted(
        (
            e.at,
            e.event,
            e.task_id,
            e.worker_id,
            e.lease_token,
            e.fence_token,
            e.reason,
            sorted(e.detail.items()),
        )
        for e in events
    )


async def queued(store: LeaseStore, n: int, prefix: str = "t", **options: Any) -> list[str]:
    ids = [f"{prefix}{i}" for i in range(n)]
    for task_id in ids:
        await store.enqueue(task_id, **options)
    return ids


async def claim_each(store: LeaseStore, worker: str, n: int) -> list[Lease]:
    got = []
    for _ in range(n):
        lease = await store.claim(worker)
        if lease is None:
            break
        got.append(lease)
    return got


async def heartbeat_each(store: LeaseStore, leases: list[Lease]) -> list[Lease | LeaseRejected]:
    out: list[Lease | LeaseRejected] = []
    for lease in leases:
        try:
            out.append(await store.heartbeat(lease))
        except LeaseRejected as exc:
            out.append(exc)
    return out


def outcome(results: list[Lease | LeaseRejected]) -> list[Any]:
    return [
        r if isinstance(r, Lease) else (r.reason, r.task_id, r.current_lease_token, str(r))
        for r in results
    ]


# -- heartbeat_many ---------------------------------------------------------------------------


async def test_heartbeat_many_renews_every_live_lease_in_one_transaction(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await queued(store, 5)
    leases = await claim_each(store, "w1", 5)
    clock.advance(20_000)
    writes = 0
    write = store.driver.write

    async def counted(fn: Callable[[Any], Any]) -> Any:
        nonlocal writes
        writes += 1
        return await write(fn)

    store.driver.write = counted  # type: ignore[method-assign]
    before = len(await store.events())
    renewed = await store.heartbeat_many(leases)
    assert writes == 1
    assert renewed == [
        Lease(
            x.task_id,
            "w1",
            x.lease_token,
            x.fence_token,
            x.attempt,
            20_000 + TTL,
            20_000 + DEADLINE,
        )
        for x in leases
    ]
    for row in await store.tasks():
        assert (row.lease_expires_at, row.renew_deadline, row.last_heartbeat_at) == (
            20_000 + TTL,
            20_000 + DEADLINE,
            20_000,
        )
    new = (await store.events())[before:]
    assert [(e.event, e.task_id, e.fence_token, e.detail) for e in new] == [
        ("renewed", x.task_id, x.fence_token, {"expires_at": 20_000 + TTL}) for x in leases
    ]


async def test_heartbeat_many_judges_each_lease_as_heartbeat_does(
    make_store: MakeStore,
) -> None:
    """Live, expired, superseded and finished leases in one batch: the same verdicts, rows
    and register lines as one heartbeat per lease."""

    async def history(renew_many: bool) -> Any:
        clock = VirtualClock()
        store = make_store(clock=clock)

        async def renew(leases: list[Lease]) -> list[Lease | LeaseRejected]:
            if renew_many:
                return await store.heartbeat_many(leases)
            return await heartbeat_each(store, leases)

        await queued(store, 4)
        a, b, c, d = await claim_each(store, "w1", 4)
        clock.advance(30_000)
        renewed = await renew([a, d])  # a and d live on; b and c will expire
        assert all(isinstance(x, Lease) for x in renewed)
        await store.complete(d)  # d's task is done
        clock.advance(TTL - 30_000 + 1)
        assert await store.claim("w2", "t2") is not None  # c is superseded
        clock.advance(1)
        result = await renew([a, b, c, d])
        return outcome(result), await store.tasks(), lines(await store.events())

    batch, single = await history(True), await history(False)
    assert [r[:3] for r in batch[0][1:]] == [
        (RejectReason.EXPIRED, "t1", 1),
        (RejectReason.SUPERSEDED, "t2", 2),
        (RejectReason.NOT_RUNNING, "t3", 1),
    ]
    assert batch == single


async def test_heartbeat_many_refuses_a_lease_never_issued_and_writes_nothing(
    store: LeaseStore,
) -> None:
    await queued(store, 2)
    a, b = await claim_each(store, "w1", 2)
    forged = Lease(b.task_id, "w1", b.lease_token, b.fence_token + 7, b.attempt, None, None)
    before = (await store.tasks(), await store.events())
    with pytest.raises(LeaseMismatch):
        await store.heartbeat_many([a, forged])
    assert (await store.tasks(), await store.events()) == before


async def test_heartbeat_many_bad_input(store: LeaseStore) -> None:
    assert await store.heartbeat_many([]) == []
    await queued(store, 1)
    [a] = await claim_each(store, "w1", 1)
    with pytest.raises(InvalidPayload, match="twice"):
        await store.heartbeat_many([a, a])
    with pytest.raises(InvalidPayload, match=r"leases\[1\] must be a Lease"):
        await store.heartbeat_many([a, "t0"])  # type: ignore[list-item]


async def test_heartbeat_many_events_reach_listeners_as_stored(
    store: LeaseStore, clock: VirtualClock
) -> None:
    heard: list[EventRow] = []
    await queued(store, 3)
    leases = await claim_each(store, "w1", 3)
    store.add_listener(heard.append)
    clock.advance(TTL + 1)
    await store.heartbeat_many(leases[:1])  # expired: a refusal
    assert [e.event for e in heard] == ["renew_rejected"]
    assert heard == (await store.events())[-1:]


async def test_heartbeat_many_listeners_hear_renewals_with_their_numbers(
    store: LeaseStore, clock: VirtualClock
) -> None:
    heard: list[EventRow] = []
    await queued(store, 3)
    leases = await claim_each(store, "w1", 3)
    store.add_listener(heard.append)
    clock.advance(1_000)
    await store.heartbeat_many(leases)
    assert heard == (await store.events())[-3:]
    assert [e.event for e in heard] == ["renewed"] * 3


# -- complete_many ------------------------------------------------------------------------------


async def test_complete_many_judges_each_lease_as_complete_does(make_store: MakeStore) -> None:
    """Live, expired and superseded leases finishing in one batch: the same verdicts, rows
    and register lines as one complete per lease."""

    async def history(many: bool) -> Any:
        clock = VirtualClock()
        store = make_store(clock=clock)
        await queued(store, 4)
        a, b, c, d = await claim_each(store, "w1", 4)
        clock.advance(30_000)
        [a2, d2] = await store.heartbeat_many([a, d])
        assert isinstance(a2, Lease) and isinstance(d2, Lease)
        clock.advance(TTL - 30_000 + 1)  # b and c expired
        assert await store.claim("w2", "t2") is not None  # c superseded
        leases, results = [a, b, c, d], [{"pages": 1}, None, [2], "four"]
        out: list[Any] = []
        if many:
            out = await store.complete_many(leases, results)
        else:
            for lease, result in zip(leases, results, strict=True):
                try:
                    await store.complete(lease, result)
                    out.append(None)
                except LeaseRejected as exc:
                    out.append(exc)
        verdicts = [None if r is None else (r.reason, r.task_id) for r in out]
        return verdicts, await store.tasks(), lines(await store.events())

    batch, single = await history(True), await history(False)
    assert batch[0] == [
        None,
        (RejectReason.EXPIRED, "t1"),
        (RejectReason.SUPERSEDED, "t2"),
        None,
    ]
    assert [r.result for r in batch[1]] == ['{"pages":1}', None, None, '"four"']
    assert batch == single


async def test_complete_many_bad_input_writes_nothing(store: LeaseStore) -> None:
    assert await store.complete_many([]) == []
    await queued(store, 2)
    a, b = await claim_each(store, "w1", 2)
    before = (await store.tasks(), await store.events())
    with pytest.raises(InvalidPayload, match="results"):
        await store.complete_many([a, b], [None])
    with pytest.raises(InvalidPayload, match="JSON"):
        await store.complete_many([a], [object()])
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidPayload, match="nested too deeply"):
        await store.complete_many([a], [deep])
    with pytest.raises(InvalidPayload, match="twice"):
        await store.complete_many([a, a])
    forged = Lease(b.task_id, "w9", b.lease_token, b.fence_token, b.attempt, None, None)
    with pytest.raises(LeaseMismatch):
        await store.complete_many([a, forged])
    assert (await store.tasks(), await store.events()) == before


# -- claim_many -------------------------------------------------------------------------------


async def test_claim_many_takes_the_queue_in_order_with_a_fence_token_each(
    store: LeaseStore,
) -> None:
    await queued(store, 5)
    first = await store.claim_many("w1", 3)
    assert [x.task_id for x in first] == ["t0", "t1", "t2"]
    assert [x.fence_token for x in first] == [1, 2, 3]
    assert {x.owner_id for x in first} == {"w1"} and {x.lease_token for x in first} == {1}
    rest = await store.claim_many("w2", 10)  # fewer left than asked
    assert [(x.task_id, x.fence_token) for x in rest] == [("t3", 4), ("t4", 5)]
    assert await store.claim_many("w3", 2) == []
    # The global counter knows every token drawn: the next claim draws above them.
    await store.enqueue("t5")
    nxt = await store.claim("w4")
    assert nxt is not None and nxt.fence_token == 6


async def test_claim_many_rescues_expired_leases_first(
    store: LeaseStore, clock: VirtualClock
) -> None:
    await queued(store, 2, prefix="old")
    await claim_each(store, "w1", 2)
    clock.advance(5_000)
    await queued(store, 2, prefix="new")
    clock.advance(TTL)  # both old leases expired
    got = await store.claim_many("w2", 3)
    assert [(x.task_id, x.lease_token, x.attempt) for x in got] == [
        ("old0", 2, 2),
        ("old1", 2, 2),
        ("new0", 1, 1),
    ]


async def test_claim_many_is_n_claims_in_one(make_store: MakeStore) -> None:
    """Expired, exhausted and queued tasks: the same leases, rows and register lines as
    n claims one after another."""

    async def history(many: bool) -> Any:
        clock = VirtualClock()
        store = make_store(clock=clock)
        await store.enqueue("a", max_attempts=1)
        await store.enqueue("b")
        await claim_each(store, "w1", 2)
        await queued(store, 3)
        clock.advance(TTL + 1)  # a (no attempt left) and b expire
        if many:
            got = await store.claim_many("w2", 3)
        else:
            got = await claim_each(store, "w2", 3)
        return got, await store.tasks(), lines(await store.events())

    batch, single = await history(True), await history(False)
    assert [x.task_id for x in batch[0]] == ["b", "t0", "t1"]
    assert batch == single


async def test_claim_many_bad_input(store: LeaseStore) -> None:
    for n in (0, -1, True, 1.5):
        with pytest.raises(InvalidPayload):
            await store.claim_many("w1", n)  # type: ignore[arg-type]
    for bad in ("", "w\nEVIL 0:00:00 completed a", "w\x00", b"w"):
        with pytest.raises(InvalidId):
            await store.claim_many(bad, 1)  # type: ignore[arg-type]
    assert await store.tasks() == [] and await store.events() == []


async def test_claim_many_passes_over_rows_another_claim_holds(
    backend: str, postgres_url: str, make_store: MakeStore
) -> None:
    """PostgreSQL: a claim that holds the queue's first rows does not make another wait."""
    if backend != "postgresql":
        pytest.skip("row locks are PostgreSQL's (SQLite has one writer)")
    store = make_store()
    await queued(store, 5)
    driver: Any = store.driver
    target = driver.session.target
    other = pg_backend.connect(target)
    try:
        other.execute("BEGIN")
        other.execute("SELECT task_id FROM agent_tasks WHERE task_id IN ('t0', 't1') FOR UPDATE")
        got: list[Lease] = []

        done = threading.Event()
        failed: list[BaseException] = []

        def claim() -> None:
            import asyncio

            try:
                got.extend(asyncio.run(store.claim_many("w1", 2)))
            except BaseException as exc:  # pragma: no cover - reported below
                failed.append(exc)
            done.set()

        thread = threading.Thread(target=claim)
        thread.start()
        finished = done.wait(timeout=20)
        other.execute("ROLLBACK")
        thread.join(timeout=20)
        assert finished, "claim_many waited on rows another transaction holds"
        assert not failed
        assert [x.task_id for x in got] == ["t2", "t3"]
    finally:
        other.close()


# -- heartbeat: one statement for the renewal and its line on PostgreSQL ------------------------


@pytest.mark.parametrize("mode", [Mode.CORRECT, Mode.NO_EXPIRY, Mode.SEED_SQL])
async def test_heartbeat_line_is_the_one_stored_and_heard(
    make_store: MakeStore, clock: VirtualClock, mode: Mode
) -> None:
    store = make_store(mode=mode)
    heard: list[EventRow] = []
    store.add_listener(heard.append)
    await store.enqueue("t1")
    lease = await store.claim("w1")
    assert lease is not None
    clock.advance(20_000)
    renewed = await store.heartbeat(lease)
    stored = (await store.events())[-1]
    assert heard[-1] == stored
    expires = None if mode is Mode.NO_EXPIRY else 20_000 + TTL
    assert renewed.expires_at == expires
    # without expiry a heartbeat extends nothing: its line says what it wrote
    assert (stored.event, stored.task_id, stored.worker_id, stored.at) == (
        "renewed" if expires is not None else "heartbeat_noted",
        "t1",
        "w1",
        20_000,
    )
    assert stored.detail == (
        {"last_heartbeat_at": 20_000} if expires is None else {"expires_at": expires}
    )


async def test_batch_lines_are_the_ones_stored_and_heard(
    store: LeaseStore, clock: VirtualClock
) -> None:
    heard: list[EventRow] = []
    store.add_listener(heard.append)
    await store.enqueue("spent", max_attempts=1)
    assert await store.claim("w0") is not None
    await queued(store, 3)
    clock.advance(TTL + 1)  # "spent" expires with no attempt left: dead-lettered on the way
    mark = len(heard)
    leases = await store.claim_many("w1", 3)
    clock.advance(1_000)
    assert await store.complete_many(leases) == [None] * 3
    assert [e.event for e in heard[mark:]] == ["dead_lettered"] + ["claimed"] * 3 + [
        "completed"
    ] * 3
    assert heard[mark:] == (await store.events())[mark:]


async def test_a_batch_costs_the_same_statements_for_5_leases_as_for_20(
    backend: str, make_store: MakeStore
) -> None:
    """Renewals, refusals, claims and completes: no statement per lease (counted on SQLite,
    whose connection reports every statement it runs)."""
    if backend != "sqlite":
        pytest.skip("statements are counted through sqlite3's trace callback")

    async def statements(n: int) -> list[int]:
        clock = VirtualClock()
        store = make_store(clock=clock)
        conn: Any = store.driver.conn  # type: ignore[attr-defined]
        ran: list[str] = []
        await queued(store, 2 * n)
        conn.set_trace_callback(ran.append)
        counts = []
        leases = await store.claim_many("w1", 2 * n)
        counts.append(len(ran))
        clock.advance(TTL + 1)
        live = await store.claim_many("w2", n)  # n of the 2n expired, rescued
        counts.append(len(ran) - sum(counts))
        results = await store.heartbeat_many(leases)  # all 2n refused: n superseded, n expired
        assert all(isinstance(r, LeaseRejected) for r in results)
        counts.append(len(ran) - sum(counts))
        assert await store.complete_many(live) == [None] * n
        counts.append(len(ran) - sum(counts))
        conn.set_trace_callback(None)
        return counts

    assert await statements(5) == await statements(20)


def test_rows_are_read_in_the_order_the_statements_return() -> None:
    """The batch reads a lease statement's row by position (tens of thousands a call)."""
    from core.engine.statements import LEASE_RETURNING

    assert LEASE_RETURNING == (
        "task_id",
        "status",
        "owner_id",
        "attempt",
        "lease_token",
        "fence_token",
        "lease_expires_at",
        "renew_deadline",
        "kind",
    )


async def test_a_large_claim_many_takes_the_same_tasks_and_writes_the_same_lines(
    make_store: MakeStore,
) -> None:
    """Over LOGGED_CLAIM_MAX tasks a claim writes its lines in a second statement."""
    from core.engine.batch import LOGGED_CLAIM_MAX

    async def history(n: int, step: int) -> Any:
        store = make_store(clock=VirtualClock())
        await queued(store, n)
        got: list[Lease] = []
        while len(got) < n:
            got.extend(await store.claim_many("w1", step))
        return got, lines(await store.events())

    big = LOGGED_CLAIM_MAX + 5
    assert await history(big, big) == await history(big, 7)


@pytest.mark.parametrize("mode", list(Mode))
async def test_the_batch_calls_write_what_the_single_calls_write_in_every_mode(
    make_store: MakeStore, mode: Mode
) -> None:
    """claim_many, heartbeat_many and complete_many agree with claim, heartbeat and
    complete in every mode: the same leases back, the same rows and the same register
    lines, heard as stored. In `no_expiry` a heartbeat has nothing to extend, so neither
    form writes `renewed`: both note the heartbeat; before the fence tag no line of either
    names a fence token."""

    async def history(many: bool) -> Any:
        clock = VirtualClock()
        store = make_store(clock=clock, mode=mode)
        heard: list[EventRow] = []
        store.add_listener(heard.append)
        await queued(store, 2)
        leases = await store.claim_many("w1", 2) if many else await claim_each(store, "w1", 2)
        clock.advance(20_000)
        if many:
            renewed = await store.heartbeat_many(leases)
        else:
            renewed = await heartbeat_each(store, leases)
        clock.advance(1_000)
        if many:
            assert await store.complete_many(leases) == [None, None]
        else:
            for lease in leases:
                await store.complete(lease)
        stored = await store.events()
        assert heard == stored
        return outcome(renewed), await store.tasks(), lines(stored)

    batch, single = await history(True), await history(False)
    assert batch == single
    kinds = {line[1] for line in batch[2] if line[0] == 20_000}
    assert kinds == ({"heartbeat_noted"} if mode is Mode.NO_EXPIRY else {"renewed"})
    if mode is Mode.BEFORE_FENCE:
        assert {line[5] for line in batch[2]} == {None}


@pytest.mark.parametrize("mode", [m for m in Mode if not m.issues_fence_tokens])
async def test_claim_many_draws_no_fence_token_where_claim_draws_none(
    make_store: MakeStore, mode: Mode
) -> None:
    """Before the fence tag (and without expiry) a claim issues no fence token, so it
    leaves the counter (PostgreSQL: the sequence) alone; claim_many must too. A store in
    the correct world on the same database then issues the token that follows the last
    one it issued, whichever form the claims in between took."""

    async def history(many: bool) -> Any:
        clock = VirtualClock()
        fenced = make_store(clock=clock)
        await queued(fenced, 4)
        first = await fenced.claim("w0")
        assert first is not None and first.fence_token > 0
        unfenced = LeaseStore(fenced.driver, clock, fenced.config, mode)
        if many:
            taken = await unfenced.claim_many("w1", 2)
        else:
            taken = await claim_each(unfenced, "w1", 2)
        assert len(taken) == 2
        after = await fenced.claim("w2")
        assert after is not None
        return after.fence_token - first.fence_token, taken, lines(await fenced.events())

    batch, single = await history(True), await history(False)
    assert single[0] == 1  # the next token: nothing was drawn in between
    assert batch == single


@pytest.mark.parametrize("mode", list(Mode))
async def test_the_batch_refusals_write_what_the_single_refusals_write_in_every_mode(
    make_store: MakeStore, mode: Mode
) -> None:
    """heartbeat_many and complete_many of leases whose tasks are done give the verdicts
    and write the lines heartbeat and complete give one lease at a time: before the fence
    tag neither line's detail names a fence token."""

    async def complete_each(store: LeaseStore, leases: list[Lease]) -> list[Any]:
        out: list[Any] = []
        for lease in leases:
            try:
                await store.complete(lease)
                out.append(None)
            except LeaseRejected as refused:
                out.append(refused)
        return out

    async def history(many: bool) -> Any:
        clock = VirtualClock()
        store = make_store(clock=clock, mode=mode)
        heard: list[EventRow] = []
        store.add_listener(heard.append)
        await queued(store, 2)
        leases = await claim_each(store, "w1", 2)
        for lease in leases:
            await store.complete(lease)
        clock.advance(1_000)
        if many:
            beats = await store.heartbeat_many(leases)
            ends = await store.complete_many(leases)
        else:
            beats = await heartbeat_each(store, leases)
            ends = await complete_each(store, leases)
        stored = await store.events()
        assert heard == stored
        return outcome(beats), [e and outcome([e]) for e in ends], lines(stored)

    batch, single = await history(True), await history(False)
    assert batch == single
    if mode is Mode.BEFORE_FENCE:
        assert not any("fence" in key for line in batch[2] for key, _ in line[7])


# -- PostgreSQL on its own clock: the batch's statement travels with its BEGIN -----------------


def test_the_postgresql_batch_statements_fit_psycopgs_parse_cache() -> None:
    """A statement longer than psycopg keeps is parsed again at every execution."""
    from core.engine.batch_statements import (
        PSYCOPG_CACHED_LENGTH,
        batch_statements_for,
        clocked_by_transaction,
    )
    from core.engine.policies import policy_for

    for mode in Mode:
        sql = batch_statements_for(pg_backend.dialect(), policy_for(mode))
        for stmt in (sql.claim_logged_for(10), sql.complete_logged, sql.renew_many_logged):
            if stmt is not None:
                assert len(stmt.sql) <= PSYCOPG_CACHED_LENGTH, mode
                # and as it is sent with BEGIN, its clock read in
                assert len(clocked_by_transaction(stmt).sql) <= PSYCOPG_CACHED_LENGTH, mode
        claim = sql.claim_logged_for(7)
        if claim is not None:
            # the count is written in (a generic plan that knows it), nothing else
            assert "%(n)s" not in claim.sql and "%(worker_id)s" in claim.sql


PgClockStore = tuple[LeaseStore, list[EventRow]]


@pytest.fixture
async def on_pg_clock(backend: str, postgres_url: str) -> AsyncIterator[PgClockStore]:
    """A store on PostgreSQL's own clock, and the lines its listeners heard: the round
    trips counted here are PostgreSQL's (SQLite sends nothing with BEGIN)."""
    if backend != "postgresql":
        pytest.skip("the round trips are PostgreSQL's")
    from core.engine.clock import DatabaseClock

    store = LeaseStore.open_inline(postgres_url, scratch=True, clock=DatabaseClock())
    heard: list[EventRow] = []
    store.add_listener(heard.append)
    try:
        yield store, heard
    finally:
        await store.close()


def _round_trips(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[list[str]]]:
    """What the PostgreSQL transactions send from here on: the statements executed on
    their own, and each BEGIN's round trip as the statements that went with it."""
    executed: list[str] = []
    trips: list[list[str]] = []
    original_execute = pg_backend.TxnConnection.execute
    original_begin_with = pg_backend.TxnConnection.begin_with

    def execute(self: Any, query: Any, params: Any = None) -> Any:
        executed.append(str(query))
        return original_execute(self, query, params)

    def begin_with(self: Any, statements: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        trips.append([sql for sql, _params in statements])
        return original_begin_with(self, statements)

    monkeypatch.setattr(pg_backend.TxnConnection, "execute", execute)
    monkeypatch.setattr(pg_backend.TxnConnection, "begin_with", begin_with)
    return executed, trips


async def test_a_batch_on_the_database_clock_sends_its_statement_with_begin(
    on_pg_clock: PgClockStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """claim_many and complete_many on PostgreSQL's clock: BEGIN, the clock and the batch's
    statement in one round trip, COMMIT in a second; the lines stored, the ones heard and
    the leases agree on the clock the statement read (one instant per transaction)."""
    store, heard = on_pg_clock
    await queued(store, 4)
    sent, trips = _round_trips(monkeypatch)
    mark = len(heard)
    leases = await store.claim_many("w1", 3)
    assert [x.task_id for x in leases] == ["t0", "t1", "t2"]
    assert await store.complete_many(leases) == [None] * 3
    assert sent == [] and [len(trip) for trip in trips] == [1, 1]
    monkeypatch.undo()
    claimed = heard[mark : mark + 3]
    assert [e.event for e in heard[mark:]] == ["claimed"] * 3 + ["completed"] * 3
    assert heard[mark:] == (await store.events())[mark:]
    assert len({e.at for e in claimed}) == 1
    for lease, line in zip(leases, claimed, strict=True):
        assert lease.expires_at == line.at + store.config.ttl_ms
        assert line.detail == {"attempt": 1, "expires_at": lease.expires_at}
    assert {t.task_id: t.status for t in await store.tasks()} == {
        "t0": "done",
        "t1": "done",
        "t2": "done",
        "t3": "queued",
    }


@pytest.mark.parametrize("mode", list(Mode))
async def test_complete_many_and_claim_is_complete_many_then_claim_many_in_every_mode(
    make_store: MakeStore, mode: Mode
) -> None:
    """One transaction, the same outcome as the two calls: the same refusals, leases, rows
    and register lines, heard as stored. The batch finished holds a lease another worker
    has since taken over (refused where the fence guards) and one that lives."""

    async def history(together: bool) -> Any:
        clock = VirtualClock()
        store = make_store(clock=clock, mode=mode)
        heard: list[EventRow] = []
        store.add_listener(heard.append)
        await queued(store, 6)
        first = await store.claim_many("w1", 2)
        clock.advance(20_000)
        (renewed,) = await store.heartbeat_many(first[1:])
        assert isinstance(renewed, Lease)
        clock.advance(45_000)  # the first lease (60 s) has run out, the renewed one lives
        await store.claim("w3")  # rescues the first where leases expire
        batch = [first[0], renewed]
        if together:
            done, taken = await store.complete_many_and_claim(batch, "w2", 3, ["a", "b"])
        else:
            done = await store.complete_many(batch, ["a", "b"])
            taken = await store.claim_many("w2", 3)
        stored = await store.events()
        assert heard == stored
        refused = [None if d is None else d.reason for d in done]
        return refused, taken, await store.tasks(), lines(stored)

    together, apart = await history(True), await history(False)
    assert together == apart
    refused, taken, _tasks, _lines = together
    assert len(taken) == 3
    if mode is Mode.CORRECT:
        assert refused[0] is not None and refused[1] is None


async def test_complete_many_and_claim_with_nothing_to_finish_is_claim_many(
    store: LeaseStore,
) -> None:
    await queued(store, 3)
    done, taken = await store.complete_many_and_claim([], "w1", 2)
    assert done == [] and [x.task_id for x in taken] == ["t0", "t1"]
    done, taken = await store.complete_many_and_claim(taken, "w1", 5)
    assert done == [None, None] and [x.task_id for x in taken] == ["t2"]
    done, taken = await store.complete_many_and_claim(taken, "w1", 5)
    assert done == [None] and taken == []
    assert {t.status for t in await store.tasks()} == {"done"}


async def test_complete_many_and_claim_bad_input_writes_nothing(store: LeaseStore) -> None:
    """A bad argument to either part is raised before anything is written."""
    await queued(store, 3)
    leases = await store.claim_many("w1", 2)
    before = (await store.tasks(), await store.events())
    with pytest.raises(InvalidPayload):
        await store.complete_many_and_claim(leases, "w1", 0)
    with pytest.raises(InvalidId):
        await store.complete_many_and_claim(leases, "w\n1", 1)
    with pytest.raises(InvalidPayload):
        await store.complete_many_and_claim(leases, "w1", 1, ["only one"])
    assert (await store.tasks(), await store.events()) == before


async def test_complete_many_and_claim_on_the_database_clock_is_two_round_trips(
    on_pg_clock: PgClockStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL's clock both statements go with BEGIN and COMMIT follows: one commit
    where the two calls take two, and the lines stored and heard on one instant."""
    store, heard = on_pg_clock
    await queued(store, 4)
    leases = await store.claim_many("w1", 2)
    executed, trips = _round_trips(monkeypatch)
    mark = len(heard)
    done, taken = await store.complete_many_and_claim(leases, "w2", 2)
    monkeypatch.undo()
    assert executed == [] and len(trips) == 1 and len(trips[0]) == 2
    assert done == [None, None] and [x.task_id for x in taken] == ["t2", "t3"]
    assert [e.event for e in heard[mark:]] == ["completed"] * 2 + ["claimed"] * 2
    assert heard[mark:] == (await store.events())[mark:]
    assert len({e.at for e in heard[mark:]}) == 1


async def test_complete_many_and_claim_judges_a_refusal_before_its_claim_rescues_the_task(
    on_pg_clock: PgClockStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL's clock the claim goes with BEGIN beside the complete. A lease the
    complete refuses as expired is one the same claim would rescue: judged after it, the
    refusal would say superseded (the claim's new lease on the row) and be written after the
    `claimed` lines. It is judged as the two calls judge it: the transaction is run again in
    order, the claim after the refusal."""
    store, heard = on_pg_clock
    await queued(store, 3)
    leases = await store.claim_many("w1", 2)
    assert [x.task_id for x in leases] == ["t0", "t1"]
    # t0's lease ran out long ago by the database's clock (no test waits for time)
    await store._write(
        lambda txn: txn.conn.execute(
            "UPDATE agent_tasks SET lease_expires_at = 0 WHERE task_id = 't0'", {}
        )
    )
    executed, trips = _round_trips(monkeypatch)
    mark = len(heard)
    done, taken = await store.complete_many_and_claim(leases, "w1", 2)
    monkeypatch.undo()
    assert [len(trip) for trip in trips] == [2, 1]  # rolled back, then in order
    assert executed != []  # the claim, run by the body after the refusal
    refused = done[0]
    assert isinstance(refused, LeaseRejected) and done[1] is None
    assert refused.reason is RejectReason.EXPIRED
    assert refused.current_lease_token == leases[0].lease_token
    assert [x.task_id for x in taken] == ["t0", "t2"]  # rescued first, then the queue
    assert taken[0].lease_token > leases[0].lease_token
    assert [(e.event, e.task_id) for e in heard[mark:]] == [
        ("completed", "t1"),
        ("complete_rejected", "t0"),
        ("claimed", "t0"),
        ("claimed", "t2"),
    ]
    assert heard[mark:] == (await store.events())[mark:]
