"""The Python API refuses what it cannot honour, naming the argument, writing nothing.

Each case below once failed with Python's or the database's own error (TypeError,
OverflowError, AttributeError, a psycopg error, ValueError) or was taken silently: a mode
nobody runs ran as correct, a lease with `fence_token="1"` had its heartbeat, write and
completion accepted, `record()` wrote an event of no kind, a worker id with a line break
and a reason holding ESC, and a 50 MB page went into the ledger.
"""

import asyncio
import contextlib
import dataclasses
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig, Mode
from core.engine.errors import BorrowedKeysError, InvalidArgument, InvalidPayload
from core.engine.records import Lease
from core.engine.store import LeaseStore
from core.engine.vocabulary import EventKind


async def _store() -> tuple[LeaseStore, Lease]:
    store = LeaseStore.open_inline(clock=VirtualClock())
    await store.enqueue("t1")
    lease = await store.claim("w1")
    assert lease is not None
    return store, lease


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"lease_token": None}, "\\.lease_token must be a whole number, got NoneType"),
        ({"fence_token": 10**30}, "\\.fence_token must be between 0 and"),
        ({"fence_token": "1"}, "\\.fence_token must be a whole number, got str '1'"),
        ({"owner_id": "w1\n"}, "\\.owner_id 'w1\\\\n' must be one line"),
        ({"expires_at": math.inf}, "\\.expires_at must be a whole number, got float"),
    ],
)
async def test_a_forged_lease_is_refused_by_every_call_and_nothing_is_written(
    change: dict[str, Any], said: str
) -> None:
    store, lease = await _store()
    forged = dataclasses.replace(lease, **change)
    before = len(await store.events())
    calls = [
        store.heartbeat(forged),
        store.fenced_write(forged, "t1/1", "a page"),
        store.save_checkpoint(forged, 1, {}),
        store.complete(forged),
        store.fail(forged, "boom"),
        store.park(forged),
        store.apply_effect(forged, "k", "charge"),
        store.heartbeat_many([forged]),
        store.complete_many([forged]),
    ]
    for call in calls:
        with pytest.raises(BorrowedKeysError, match=said):
            await call
    assert len(await store.events()) == before
    assert (await store.task("t1")).status == "running"
    await store.close()


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda s, _: s.claim_many("w", 10**30), "n must be between 1 and 10000"),
        (lambda s, _: s.heartbeat_many(None), "leases must be a list of leases, got NoneType"),
        (lambda s, _: s.heartbeat_many("abc"), "leases must be a list of leases, got str"),
        (lambda s, _: s.claim("w2", judge_now_ms=10**30), "judge_now_ms must be between"),
        (lambda s, _: s.events("0"), "since_seq must be a whole number"),
        (lambda s, _: s.load_checkpoint(None), "task id None must be text"),
        (lambda s, lease: s.fail(lease, "boom", retry="no"), "retry must be True or False"),
        (lambda s, _: s.record("bogus"), "event 'bogus' is not a kind of event"),
        (
            lambda s, _: s.record(EventKind.KILLED, worker_id="w1\nseq 9"),
            "worker_id 'w1\\\\nseq 9' must be one line",
        ),
        (
            lambda s, _: s.record(EventKind.KILLED, reason="\x1b[2J"),
            "reason '\\\\x1b\\[2J' must be one line of printable text; it holds an escape",
        ),
        (lambda s, _: s.record(EventKind.KILLED, foo=object()), "detail is not JSON"),
        (lambda s, _: s.record(EventKind.KILLED, fence_token="1"), "fence_token must be a whole"),
        (
            lambda s, lease: s.fenced_write(lease, "t1/1", "x" * 50_000_000),
            "ledger value is too long: 50000000 characters",
        ),
        (
            lambda s, _: s.enqueue("t9", payload="x" * 2_000_000),
            "payload is 2000002 characters as JSON, more than the store keeps",
        ),
    ],
)
async def test_a_bad_argument_is_named_and_nothing_is_written(call: Any, said: str) -> None:
    store, lease = await _store()
    before = await store.events()
    with pytest.raises(InvalidPayload, match=said):
        await call(store, lease)
    assert await store.events() == before
    assert [t.task_id for t in await store.tasks()] == ["t1"]
    await store.close()


# The wrong types below are the point: the API is called as an untyped caller would.
_Config: Any = LeaseConfig
_Store: Any = LeaseStore


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda: _Config(ttl_ms="5s"),
            "ttl_ms must be a whole number of milliseconds, got str '5s'",
        ),
        (lambda: _Config(ttl_ms=10**30), "ttl_ms must be between"),
        (lambda: _Config(heartbeat_every_ms=1.5), "heartbeat_every_ms must be a whole"),
        (lambda: _Config(poll_every_ms=None), "poll_every_ms must be a whole number"),
        (lambda: _Store.open_inline(clock=None), "clock must have a now_ms"),
        (lambda: _Store.open_inline(None, clock=VirtualClock()), "path must be a file name"),
        (lambda: _Store.open_inline("a\x00b", clock=VirtualClock()), "holds a NUL"),
        (lambda: _Store.open_inline(b"x.db", clock=VirtualClock()), "path must be a file"),
        (lambda: _Store.open_inline(clock=VirtualClock(), mode="bogus"), "mode 'bogus'"),
        (lambda: _Store.open_inline(clock=VirtualClock(), config={}), "config must be"),
        (lambda: _Store.open_inline(clock=VirtualClock(), scratch=1), "scratch must be"),
    ],
)
def test_a_bad_config_clock_path_or_mode_is_named(make: Any, said: str) -> None:
    with pytest.raises(InvalidArgument, match=said):
        make()


async def test_a_mode_by_its_name_is_that_mode() -> None:
    store = _Store.open_inline(clock=VirtualClock(), mode="no_fencing")
    assert store.mode is Mode.NO_FENCING and not store.policy.fencing
    await store.close()


# -- any value, every public method ---------------------------------------------------------

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=8),
    st.just(object()),
    st.sampled_from(["t1", "w1", "t1/1", "ledger", "correct", "killed", "fenced"]),
)
_hostile = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
# half of the values are ones the store takes, so a call with several arguments gets past
# its first check often enough to try the later ones
_plausible: st.SearchStrategy[Any] = st.sampled_from(
    ["t1", "w1", "t1/1", "charge", 0, 1, 2, None, {}, True]
)
_nasty = st.sampled_from([object(), b"t1", math.nan, 10**30, "w1\x1b[2J", "t1\n", "", -1])
_values = st.one_of(_plausible, _nasty, _hostile)


def _leases(lease: Lease) -> st.SearchStrategy[Any]:
    fields = {f.name: _values for f in dataclasses.fields(Lease)}
    forged = st.fixed_dictionaries({}, optional=fields).map(
        lambda change: dataclasses.replace(lease, **change)
    )
    return st.one_of(st.just(lease), forged, _values)


_METHODS = [
    ("enqueue", 4),
    ("claim", 2),
    ("heartbeat", 1),
    ("save_checkpoint", 3),
    ("load_checkpoint", 1),
    ("complete", 2),
    ("fail", 3),
    ("park", 2),
    ("approve", 1),
    ("reject", 1),
    ("fenced_write", 3),
    ("apply_effect", 4),
    ("record", 1),
    ("task", 1),
    ("events", 1),
    ("heartbeat_many", 1),
    ("complete_many", 2),
    ("claim_many", 2),
    ("newest", 3),
]
_KEYWORDS = {
    "record": ("task_id", "worker_id", "lease_token", "fence_token", "reason", "foo"),
    "claim": ("judge_now_ms",),
}
_LEASE_FIRST = {
    "heartbeat",
    "save_checkpoint",
    "complete",
    "fail",
    "park",
    "fenced_write",
    "apply_effect",
}


@pytest.mark.parametrize(("name", "arity"), _METHODS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_public_method_gives_a_result_or_a_borrowed_keys_error(
    name: str, arity: int, data: st.DataObject
) -> None:
    # a plain test running its own loop: hypothesis does not await a coroutine test
    async def run() -> None:
        store, lease = await _store()
        try:
            n = data.draw(st.integers(min_value=0, max_value=arity), label="arguments")
            args: list[Any] = []
            for i in range(n):
                if i == 0 and name in _LEASE_FIRST:
                    args.append(data.draw(_leases(lease)))
                elif i == 0 and name in ("heartbeat_many", "complete_many"):
                    args.append(data.draw(st.one_of(st.lists(_leases(lease), max_size=3), _values)))
                else:
                    args.append(data.draw(_values))
            names = _KEYWORDS.get(name, ())
            kwargs = data.draw(st.fixed_dictionaries({}, optional={k: _values for k in names}))
            if name == "record" and not args:
                args.append(data.draw(st.one_of(st.sampled_from(list(EventKind)), _values)))
            before = await store.events()
            try:
                await getattr(store, name)(*args, **kwargs)
            except InvalidPayload:
                # refused before anything was written
                assert await store.events() == before
            except BorrowedKeysError:
                pass
            except TypeError as exc:
                # too few arguments for the method is Python's own word, not the store's
                assert "required positional argument" in str(exc), exc
        finally:
            await store.close()

    asyncio.run(run())


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            k: _values
            for k in ("ttl_ms", "heartbeat_every_ms", "renew_deadline_ms", "poll_every_ms")
        },
    )
)
def test_any_lease_config_is_taken_or_refused_with_a_borrowed_keys_error(
    given_values: dict[str, Any],
) -> None:
    with contextlib.suppress(BorrowedKeysError):
        LeaseConfig(**given_values).validated()


@settings(max_examples=100, deadline=None)
@given(
    event=st.sampled_from(list(EventKind)),
    detail=st.dictionaries(st.sampled_from(["foo", "key", "step"]), _values, max_size=3),
)
def test_any_detail_of_a_recorded_event_is_stored_or_refused_whole(
    event: EventKind, detail: dict[str, Any]
) -> None:
    async def run() -> None:
        store, _lease = await _store()
        before = await store.events()
        try:
            row = await store.record(event, task_id="t1", worker_id="w1", **detail)
            assert (await store.events())[-1] == row
        except InvalidPayload:
            assert await store.events() == before
        finally:
            await store.close()

    asyncio.run(run())
