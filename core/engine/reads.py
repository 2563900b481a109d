"""The store's reads: one task, every row of a table (for a screen or a test), the event
log, and the expiries a watcher looks for. A mixin of `LeaseStore`, whose connection,
statements and clock they use; they write nothing."""

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from core.engine.drivers import Driver
from core.engine.errors import UnknownTask
from core.engine.ids import MAX_BATCH, MAX_TOKEN, check_id, check_whole
from core.engine.records import CheckpointRow, EffectRow, EventRow, LedgerRow, TaskRow
from core.engine.sql_text import Statements

R = TypeVar("R")


def _kept(
    known: dict[tuple[Any, ...], R], raws: Iterable[Sequence[Any]], make: Callable[..., R]
) -> tuple[list[R], dict[tuple[Any, ...], R]]:
    """Rows made from `raws`, each one that `known` has (by its raw values) the same object
    as before, and the rows by their values for the next read."""
    fresh: dict[tuple[Any, ...], R] = {}
    rows = []
    for raw in raws:
        values = tuple(raw)
        row = known.get(values)
        if row is None:
            row = make(*values)
        fresh[values] = row
        rows.append(row)
    return rows, fresh


class StoreReads:
    driver: Driver
    sql: Statements
    _task_rows: dict[tuple[Any, ...], TaskRow]  # the last `tasks()`, by raw values
    _ledger_rows: dict[tuple[Any, ...], LedgerRow]  # the last `ledger()`, by raw values

    def _now(self, conn: Any) -> int:
        """The store's clock, as the store reads it (LeaseStore defines it)."""
        raise NotImplementedError

    async def task(self, task_id: str) -> TaskRow:
        """One task's row; UnknownTask if there is none."""
        check_id(task_id, "task id")

        def body(conn: Any) -> TaskRow:
            rows = self.sql.task_one.run(conn, {"task_id": task_id})
            if not rows:
                raise UnknownTask(task_id)
            return TaskRow(*rows[0])

        return await self.driver.read(body)

    async def tasks(self) -> list[TaskRow]:
        """Every task, by id."""

        def body(conn: Any) -> list[TaskRow]:
            rows, self._task_rows = _kept(self._task_rows, self.sql.task_all.run(conn), TaskRow)
            return rows

        return await self.driver.read(body)

    async def queue(self) -> list[str]:
        """The queued tasks' ids, first in, first out: the order the claim of any task
        takes them in (a task's place in the queue is in no row a read returns)."""
        return await self.driver.read(lambda conn: [r[0] for r in self.sql.queue_order.run(conn)])

    async def ledger(self) -> list[LedgerRow]:
        """Every page of the ledger, by key (an unchanged page is the LedgerRow read before:
        a screen reads every page ten times a second, and most have not changed)."""

        def body(conn: Any) -> list[LedgerRow]:
            known = self._ledger_rows
            rows, self._ledger_rows = _kept(known, self.sql.ledger_all.run(conn), LedgerRow)
            return rows

        return await self.driver.read(body)

    async def checkpoints(self) -> list[CheckpointRow]:
        """Every checkpoint, per task, newest first."""

        def body(conn: Any) -> list[CheckpointRow]:
            return [
                CheckpointRow(t, seq, step, json.loads(state), fence, created)
                for t, seq, step, state, fence, created in self.sql.checkpoint_all.run(conn)
            ]

        return await self.driver.read(body)

    async def load_checkpoint(self, task_id: str) -> CheckpointRow | None:
        """The latest checkpoint of a task, or None."""
        check_id(task_id, "task id")

        def body(conn: Any) -> CheckpointRow | None:
            rows = self.sql.checkpoint_latest.run(conn, {"task_id": task_id})
            if not rows:
                return None
            t, seq, step, state, fence, created = rows[0]
            return CheckpointRow(t, seq, step, json.loads(state), fence, created)

        return await self.driver.read(body)

    async def checkpoint_steps(self) -> dict[str, int]:
        """The step of each task's newest checkpoint (no checkpoint state is decoded)."""

        def body(conn: Any) -> dict[str, int]:
            latest: dict[str, int] = {}
            for task_id, step in self.sql.checkpoint_steps.run(conn):
                latest.setdefault(task_id, step)
            return latest

        return await self.driver.read(body)

    async def effects(self) -> list[EffectRow]:
        """Every effect with how many times it was really applied."""

        def body(conn: Any) -> list[EffectRow]:
            return [
                EffectRow(k, t, e, f, json.loads(r), at, n)
                for k, t, e, f, r, at, n in self.sql.effect_all.run(conn)
            ]

        return await self.driver.read(body)

    async def newest(
        self, finished: int, pages: int, effects: int
    ) -> tuple[list[TaskRow], list[LedgerRow], list[EffectRow], dict[str, int]]:
        """What a reader that runs for hours shows, in one read: every task still to do
        and the newest `finished` of those done or dead, by id; the newest `pages` of the
        ledger and `effects` effects, by key; and each of those tasks' newest checkpoint
        step. Its cost stays the same however many rows the store has gathered."""
        for value, what in ((finished, "finished"), (pages, "pages"), (effects, "effects")):
            check_whole(value, what, 0, MAX_BATCH)

        def body(
            conn: Any,
        ) -> tuple[list[TaskRow], list[LedgerRow], list[EffectRow], dict[str, int]]:
            sql = self.sql
            rows = [TaskRow(*r) for r in sql.task_unfinished.run(conn)]
            rows += [TaskRow(*r) for r in sql.task_finished_newest.run(conn, {"n": finished})]
            rows.sort(key=lambda r: r.task_id)
            ledger = [LedgerRow(*r) for r in sql.ledger_newest.run(conn, {"n": pages})]
            calls = [
                EffectRow(k, t, e, f, json.loads(r), at, n)
                for k, t, e, f, r, at, n in sql.effect_newest.run(conn, {"n": effects})
            ]
            steps: dict[str, int] = {}
            for task_id, step in sql.checkpoint_steps_shown.run(conn, {"n": finished}):
                steps.setdefault(task_id, step)
            ledger.sort(key=lambda p: p.key)
            calls.sort(key=lambda e: e.idempotency_key)
            return rows, ledger, calls, steps

        return await self.driver.read(body)

    async def events(self, since_seq: int = 0) -> list[EventRow]:
        """Events after since_seq, in order."""
        check_whole(since_seq, "since_seq", 0, MAX_TOKEN)

        def body(conn: Any) -> list[EventRow]:
            return [
                EventRow(seq, at, ev, t, w, lt, ft, reason, json.loads(detail))
                for seq, at, ev, t, w, lt, ft, reason, detail in self.sql.event_since.run(
                    conn, {"since": since_seq}
                )
            ]

        return await self.driver.read(body)

    async def next_expiry(self) -> int | None:
        """The earliest expiry among live running leases (for the next look at expiries)."""

        def body(conn: Any) -> int | None:
            rows = self.sql.next_expiry.run(conn, {"now": self._now(conn)})
            return None if not rows or rows[0][0] is None else int(rows[0][0])

        return await self.driver.read(body)
