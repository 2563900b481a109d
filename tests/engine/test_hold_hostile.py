"""The lease library (`store.hold` and the hold's calls) driven with arbitrary values, as
an untyped caller would: each call gives a result or one of the project's typed errors
(BorrowedKeysError), never Python's own, and a refused call leaves the store and the hold
as they were: nothing written, the lease still held, the next checkpoint taken."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig
from core.engine.errors import BorrowedKeysError, InvalidPayload
from core.engine.hold import Hold
from core.engine.store import LeaseStore
from tests.engine.test_api_hostile import _values

# No renewal comes in a test's time: what is judged is the calls, not the timing.
SLOW = LeaseConfig(ttl_ms=60_000)
_Any: Any = None  # the wrong types are the point


def _fns(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """What a caller may hand to `effect` as its function: an async one returning any
    value or raising, a plain one, or no function at all."""

    def returning(value: Any) -> Callable[[str], Awaitable[Any]]:
        async def fn(_key: str) -> Any:
            return value

        return fn

    def plain(value: Any) -> Callable[[str], Any]:
        return lambda _key: value

    return st.one_of(values.map(returning), values.map(plain), values)


_CALLS: dict[str, Callable[[st.DataObject], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "checkpoint": lambda d: (
        (d.draw(_values, label="state"),),
        d.draw(st.fixed_dictionaries({}, optional={"step": _values}), label="kwargs"),
    ),
    "resume": lambda d: ((), {}),
    "effect": lambda d: ((d.draw(_values, label="key"), d.draw(_fns(_values), label="fn")), {}),
    "park": lambda d: (tuple(d.draw(st.lists(_values, max_size=1), label="reason")), {}),
    "complete": lambda d: (tuple(d.draw(st.lists(_values, max_size=1), label="result")), {}),
    "idempotency_key": lambda d: ((d.draw(_values, label="key"),), {}),
}


async def _call(hold: Hold, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    got = getattr(hold, name)(*args, **kwargs)
    return await got if isinstance(got, Awaitable) else got


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task=_values, worker=_values)
def test_hold_takes_any_ids_or_refuses_them_with_a_typed_error(task: Any, worker: Any) -> None:
    async def run() -> None:
        store = LeaseStore.open_inline(clock=VirtualClock(), config=SLOW)
        try:
            await store.enqueue("t1")
            before = await store.events()
            try:
                async with store.hold(task, worker) as lease:
                    assert lease.task_id == task == "t1"
            except BorrowedKeysError:
                if task != "t1":
                    assert await store.events() == before
        finally:
            await store.close()

    asyncio.run(run())


@pytest.mark.parametrize("name", sorted(_CALLS))
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_call_of_a_hold_gives_a_result_or_a_typed_error_and_corrupts_nothing(
    name: str, data: st.DataObject
) -> None:
    args, kwargs = _CALLS[name](data)

    async def run() -> None:
        store = LeaseStore.open_inline(clock=VirtualClock(), config=SLOW)
        try:
            await store.enqueue("t1")
            async with store.hold("t1", "w1") as lease:
                await lease.checkpoint({"at": "start"})
                before = await store.events()
                ended = False
                try:
                    await _call(lease, name, args, kwargs)
                    ended = name in ("park", "complete")
                except InvalidPayload:
                    # refused before anything was written; the hold goes on as it was
                    assert await store.events() == before
                    assert lease.lost is None
                except BorrowedKeysError:
                    pass
                if not ended:
                    await lease.checkpoint({"at": "after"})
                    assert lease.resume() == {"at": "after"}
            row = await store.task("t1")
            assert row.status == ("waiting" if name == "park" and ended else "done")
        finally:
            await store.close()

    asyncio.run(run())


@pytest.mark.parametrize("when", ["not entered", "after its block"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(_CALLS)), data=st.data())
def test_a_hold_not_entered_or_over_refuses_every_fenced_call_and_writes_nothing(
    when: str, name: str, data: st.DataObject
) -> None:
    args, kwargs = _CALLS[name](data)
    if name == "idempotency_key":
        return  # a pure function of the task and the key: no lease needed

    async def run() -> None:
        store = LeaseStore.open_inline(clock=VirtualClock(), config=SLOW)
        try:
            await store.enqueue("t1")
            hold = store.hold("t1", "w1")
            if when == "after its block":
                async with hold:
                    pass
            before = await store.events()
            try:
                await _call(hold, name, args, kwargs)
            except BorrowedKeysError:
                pass
            else:
                raise AssertionError(f"{name} was taken {when}")
            assert await store.events() == before
            row = await store.task("t1")
            assert row.status == ("queued" if when == "not entered" else "done")
        finally:
            await store.close()

    asyncio.run(run())
