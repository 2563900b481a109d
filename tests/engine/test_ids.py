"""Ids are one line of printable text, refused in one line and alike on both backends."""

from pathlib import Path
from typing import Any

import pytest

from core.engine.errors import InvalidId, InvalidPayload
from core.engine.ids import check_id
from core.engine.store import LeaseStore
from core.tools.realworker import main as realworker_main

FORGED = "w1\nEVIL 0:00:00 completed a"
BAD_IDS: list[tuple[Any, str]] = [
    (FORGED, "a line break (U+000A)"),
    ("a\x00b", "a NUL character (U+0000)"),
    ("a\udcffb", "a lone surrogate (U+DCFF"),
    (b"abc", "must be text, got bytes"),
    ("", "must not be empty"),
    ("   ", "must not be empty"),
    ("x" * 201, "is too long: 201 characters"),
    ("tab\there", "not printable (U+0009)"),
]


@pytest.mark.parametrize(("bad", "why"), BAD_IDS)
async def test_a_bad_worker_id_is_refused_before_anything_is_written(
    store: LeaseStore, bad: Any, why: str
) -> None:
    await store.enqueue("t1")
    with pytest.raises(InvalidId, match=r"^worker id ") as err:
        await store.claim(bad)
    assert why in str(err.value) and "\n" not in str(err.value)
    assert [e.event for e in await store.events()] == ["enqueued"]
    assert (await store.task("t1")).status == "queued"


@pytest.mark.parametrize(("bad", "why"), BAD_IDS)
async def test_a_bad_task_id_is_refused(store: LeaseStore, bad: Any, why: str) -> None:
    with pytest.raises(InvalidId, match=r"^task id ") as err:
        await store.enqueue(bad)
    assert why in str(err.value) and "\n" not in str(err.value)
    assert await store.tasks() == []


async def test_every_other_id_the_store_is_given_is_checked(store: LeaseStore) -> None:
    await store.enqueue("t1")
    with pytest.raises(InvalidId, match=r"^task kind "):
        await store.enqueue("t2", "led\nger")
    lease = await store.claim("w1")
    assert lease is not None
    with pytest.raises(InvalidId, match=r"^ledger key "):
        await store.fenced_write(lease, "t1/1\x00", "v")
    with pytest.raises(InvalidId, match=r"^idempotency key "):
        await store.apply_effect(lease, "k\n1", "email")
    with pytest.raises(InvalidId, match=r"^effect "):
        await store.apply_effect(lease, "k1", "e\rmail")
    with pytest.raises(InvalidId, match=r"^reason "):
        await store.park(lease, "wait\n")
    with pytest.raises(InvalidId, match=r"^error code "):
        await store.fail(lease, b"boom")  # type: ignore[arg-type]
    with pytest.raises(InvalidId, match=r"^task id "):
        await store.approve("t1\n")
    assert [e.event for e in await store.events()] == ["enqueued", "claimed"]


async def test_a_payload_nested_absurdly_deep_is_the_stores_own_error(store: LeaseStore) -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidPayload, match="nested too deeply") as err:
        await store.enqueue("t1", payload=deep)
    assert "\n" not in str(err.value)
    assert await store.tasks() == []


def test_the_message_shows_the_id_safely_in_one_line() -> None:
    with pytest.raises(InvalidId) as err:
        check_id(FORGED, "worker id")
    assert str(err.value) == (
        "worker id 'w1\\nEVIL 0:00:00 completed a' must be one line of printable text; "
        "it holds a line break (U+000A)"
    )
    assert check_id("工人-1 (夜班)", "worker id") == "工人-1 (夜班)"


@pytest.mark.parametrize("command", ["worker", "enqueue"])
def test_the_commands_refuse_a_bad_id_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    db = tmp_path / "work.db"
    flag = "--id" if command == "worker" else "--task"
    assert realworker_main([command, "--db", str(db), flag, "a\udcffb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lone surrogate (U+DCFF" in err
    assert not db.exists()


@pytest.mark.parametrize("payload", [{"a": "b\udcffc"}, {"\udcff": 1}], ids=["value", "key"])
async def test_a_payload_that_is_not_utf8_text_is_the_stores_own_error(
    store: LeaseStore, payload: Any
) -> None:
    with pytest.raises(InvalidPayload, match="lone surrogate"):
        await store.enqueue("t1", payload=payload)
    assert await store.tasks() == []


async def test_a_batch_claim_checks_its_worker_id_too(store: LeaseStore) -> None:
    await store.enqueue("t1")
    with pytest.raises(InvalidId, match=r"^worker id 'w1\\nEVIL"):
        await store.claim_many(FORGED, 2)
    assert [e.event for e in await store.events()] == ["enqueued"]


@pytest.mark.parametrize(
    ("value", "why"),
    [("a\x00b", "NUL"), ("a\udcffb", "lone surrogate"), (b"v", "must be text")],
    ids=["nul", "surrogate", "bytes"],
)
async def test_a_ledger_value_is_text_both_backends_store_alike(
    store: LeaseStore, value: Any, why: str
) -> None:
    await store.enqueue("t1")
    lease = await store.claim("w1")
    assert lease is not None
    with pytest.raises(InvalidId, match=f"^ledger value .*{why}"):
        await store.fenced_write(lease, "t1/1", value)
    assert await store.ledger() == []
    # Line breaks are fine in a value: it is a page, not an id.
    row = await store.fenced_write(lease, "t1/1", "line one\nline two")
    assert row.value == "line one\nline two"
