"""`LeaseStore.newest`: what a reader that runs for hours (the fleet's screen) shows, read
at a cost that does not grow with the store: every task still to do, the newest of those
done or dead, the newest pages and effects, and those tasks' checkpoint steps."""

import pytest

from core.engine.clock import VirtualClock
from core.engine.errors import InvalidArgument
from core.engine.store import LeaseStore
from core.engine.vocabulary import TaskStatus


async def test_the_newest_rows_and_every_task_still_to_do(
    store: LeaseStore, clock: VirtualClock
) -> None:
    for i in range(8):
        await store.enqueue(f"t{i}", "ledger")
    for i in range(6):  # t0 .. t5 done in turn, one page and one effect each
        lease = await store.claim("acheng", f"t{i}")
        assert lease is not None
        await store.save_checkpoint(lease, i + 1, {"i": i})
        await store.fenced_write(lease, f"t{i}/1", "v")
        await store.apply_effect(lease, f"t{i}/pay", "api_call", {"ok": True})
        await store.complete(lease)
        clock.advance(1000)
    held = await store.claim("linzhou", "t6")
    assert held is not None
    await store.save_checkpoint(held, 4, {})

    tasks, pages, effects, steps = await store.newest(2, 3, 2)
    assert [r.task_id for r in tasks] == ["t4", "t5", "t6", "t7"]  # by id
    assert {r.status for r in tasks if r.task_id in ("t6", "t7")} == {
        TaskStatus.RUNNING,
        TaskStatus.QUEUED,
    }
    assert [p.key for p in pages] == ["t3/1", "t4/1", "t5/1"]
    assert [e.idempotency_key for e in effects] == ["t4/pay", "t5/pay"]
    assert steps == {"t4": 5, "t5": 6, "t6": 4}

    nothing_done = await store.newest(0, 0, 0)
    assert [r.task_id for r in nothing_done[0]] == ["t6", "t7"] and nothing_done[1:3] == ([], [])


@pytest.mark.parametrize("bad", [-1, 10**30, "3", None, True])
async def test_a_count_it_cannot_honour_is_refused_by_name(store: LeaseStore, bad: object) -> None:
    with pytest.raises(InvalidArgument, match="pages"):
        await store.newest(1, bad, 1)  # type: ignore[arg-type]
