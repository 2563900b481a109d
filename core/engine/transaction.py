"""One store transaction: the rows it reads and the events it writes, handed to the store's
listeners once it commits; and the small conversions every operation shares."""

from typing import Any

from core.engine.errors import LeaseRejected
from core.engine.records import EventRow, Lease, detail_json, stored_json
from core.engine.sql_text import LeaseReturned, Statements, Stmt, TaskState
from core.engine.vocabulary import EventKind


def to_json(value: Any, what: str) -> str:
    return stored_json(value, what)


def lease_of(row: tuple[Any, ...]) -> Lease:
    r = LeaseReturned._make(row)
    assert r.owner_id is not None  # a lease statement returns a row only to its holder
    return Lease(
        task_id=r.task_id,
        owner_id=r.owner_id,
        lease_token=r.lease_token,
        fence_token=r.fence_token,
        attempt=r.attempt,
        expires_at=r.lease_expires_at,
        renew_deadline=r.renew_deadline,
        kind=r.kind,
    )


class Txn:
    """Collects the events of one transaction, to hand to listeners after it commits."""

    def __init__(self, sql: Statements, conn: Any, now: int, *, fence_tokens: bool = True) -> None:
        self.sql = sql
        self.fence_tokens = fence_tokens  # False: the world before the fence tag
        self.conn = conn
        self.now = now
        self.events: list[EventRow] = []
        # The rows of each statement sent with BEGIN (`LeaseStore._write`'s `first`).
        self.first_rows: list[list[Any]] | None = None

    def one(self, stmt: Stmt, params: dict[str, Any]) -> tuple[Any, ...] | None:
        rows = stmt.run(self.conn, params)
        return tuple(rows[0]) if rows else None

    def task_state(self, task_id: str) -> TaskState | None:
        rows = self.sql.task_state.run(self.conn, {"task_id": task_id})
        return TaskState._make(rows[0]) if rows else None

    def lease_event(self, event: EventKind, lease: Lease, **detail: Any) -> EventRow:
        """An event about one lease: its task, holder and both tokens."""
        reason = detail.pop("reason", None)
        return self._append(
            event,
            lease.task_id,
            lease.owner_id,
            lease.lease_token,
            lease.fence_token,
            reason,
            detail,
        )

    def event(
        self,
        kind: EventKind,
        /,
        *,
        task_id: str | None = None,
        worker_id: str | None = None,
        lease_token: int | None = None,
        fence_token: int | None = None,
        reason: str | None = None,
        **detail: Any,
    ) -> EventRow:
        return self._append(kind, task_id, worker_id, lease_token, fence_token, reason, detail)

    def _append(
        self,
        kind: EventKind,
        task_id: str | None,
        worker_id: str | None,
        lease_token: int | None,
        fence_token: int | None,
        reason: str | None,
        detail: dict[str, Any],
    ) -> EventRow:
        # Every event of every call passes here (most of an explorer's calls are refusals,
        # which write nothing else): one pass over the detail, no second copy of it.
        if self.fence_tokens:
            clean = {k: v for k, v in detail.items() if v is not None}
        else:
            # The world before the fence tag: no line of the register names a fence token.
            fence_token = None
            clean = {k: v for k, v in detail.items() if v is not None and "fence" not in k}
        # Plain strings in the row, as a row read back from the database has them.
        event = str(kind)
        if reason is not None:
            reason = str(reason)
        rows = self.sql.event_insert.run(
            self.conn,
            {
                "at": self.now,
                "event": event,
                "task_id": task_id,
                "worker_id": worker_id,
                "lease_token": lease_token,
                "fence_token": fence_token,
                "reason": reason,
                "detail": detail_json(clean) if clean else "{}",
            },
        )
        ev = EventRow(
            seq=rows[0][0],
            at=self.now,
            event=event,
            task_id=task_id,
            worker_id=worker_id,
            lease_token=lease_token,
            fence_token=fence_token,
            reason=reason,
            detail=clean,
        )
        self.events.append(ev)
        return ev


class Rejected(Exception):
    """Carries a rejection out of a transaction function after its event is written."""

    def __init__(self, error: LeaseRejected) -> None:
        self.error = error
