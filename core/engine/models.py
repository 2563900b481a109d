"""The tables, as SQLModel classes: the seed's `agent_tasks` and what recoverable execution adds.

SQLModel defines the schema and the typed rows; the hot path runs statements compiled once
from these tables (see core/engine/statements.py). Times are integer milliseconds of the
store clock.
(No `from __future__ import annotations` here: SQLModel table classes break under it.)
"""

from typing import Optional

from sqlalchemy import BigInteger, Index, MetaData, Text, text
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from core.engine.precompiled import FENCE_COUNTER as FENCE_COUNTER
from core.engine.precompiled import SCHEMA_VERSION as SCHEMA_VERSION
from core.engine.vocabulary import TaskStatus

# The partial indexes' predicates, by index. The tables declare them for SQLite only, and
# PostgreSQL's DDL (core/engine/backends/postgresql.py) gives its copy of each index the
# same one: a `postgresql_where=` here would load SQLAlchemy's PostgreSQL dialect (~40 ms)
# in every process, SQLite-only ones too, only to validate the keyword.
PARTIAL_INDEXES: dict[str, str] = {
    "ix_agent_tasks_queue": f"status = '{TaskStatus.QUEUED}'",
    "ix_agent_tasks_running_expiry": f"status = '{TaskStatus.RUNNING}'",
}


class StoreTable(SQLModel, registry=registry()):
    """The store's tables register here, not in SQLModel's global metadata, so a host
    application's own SQLModel tables never land in the store's schema (nor ours in its)."""


class AgentTask(StoreTable, table=True):
    """One long task and its lease: the seed's table, plus kind, max_attempts and fence_token."""

    __tablename__ = "agent_tasks"
    __table_args__ = (
        # A claim probes these two partial indexes instead of scanning finished history.
        Index(
            "ix_agent_tasks_queue",
            "queue_seq",
            "task_id",
            sqlite_where=text(PARTIAL_INDEXES["ix_agent_tasks_queue"]),
        ),
        Index(
            "ix_agent_tasks_running_expiry",
            "lease_expires_at",
            "task_id",
            sqlite_where=text(PARTIAL_INDEXES["ix_agent_tasks_running_expiry"]),
        ),
        Index("ix_agent_tasks_fence", "fence_token"),
    )

    task_id: str = Field(primary_key=True)
    kind: str = Field(default="ledger")
    status: str = Field(default=TaskStatus.QUEUED)
    owner_id: Optional[str] = Field(default=None)
    attempt: int = Field(default=0)
    max_attempts: int = Field(default=5)
    lease_token: int = Field(default=0, sa_type=BigInteger)
    fence_token: int = Field(default=0, sa_type=BigInteger)
    lease_expires_at: Optional[int] = Field(default=None, sa_type=BigInteger)
    renew_deadline: Optional[int] = Field(default=None, sa_type=BigInteger)
    last_heartbeat_at: Optional[int] = Field(default=None, sa_type=BigInteger)
    checkpoint_uri: Optional[str] = Field(default=None)
    input_payload: Optional[str] = Field(default=None, sa_type=Text)
    result: Optional[str] = Field(default=None, sa_type=Text)
    error_code: Optional[str] = Field(default=None)
    approved_at: Optional[int] = Field(default=None, sa_type=BigInteger)
    updated_at: int = Field(sa_type=BigInteger)
    # The task's place in the queue, drawn each time it (re-)enters it: a claim takes the
    # task queued first. Times tie within a millisecond; this number never does.
    queue_seq: int = Field(
        default=0, sa_type=BigInteger, sa_column_kwargs={"server_default": text("0")}
    )


class Checkpoint(StoreTable, table=True):
    """A checkpoint: a holder's half-done work after a step, append-only."""

    __tablename__ = "checkpoints"

    task_id: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    step: int
    state: str = Field(sa_type=Text)
    fence_token: int = Field(sa_type=BigInteger)
    created_at: int = Field(sa_type=BigInteger)


class LedgerEntry(StoreTable, table=True):
    """The master ledger (总册): a fenced downstream store, one row per page."""

    __tablename__ = "ledger"

    key: str = Field(primary_key=True)
    value: str = Field(sa_type=Text)
    fence_token: int = Field(sa_type=BigInteger)
    writer: str
    updated_at: int = Field(sa_type=BigInteger)
    # The task whose lease wrote the page, as the write named it (keys are free text).
    task_id: str = Field(sa_type=Text)


class Effect(StoreTable, table=True):
    """A side effect, applied once per idempotency key."""

    __tablename__ = "effects"

    idempotency_key: str = Field(primary_key=True)
    task_id: str
    effect: str
    fence_token: int = Field(sa_type=BigInteger)
    result: str = Field(sa_type=Text)
    applied_at: int = Field(sa_type=BigInteger)
    applied_count: int = Field(default=1)


class Event(StoreTable, table=True):
    """The loan register (借出登记簿): everything that happened, rejections included."""

    __tablename__ = "events"

    seq: Optional[int] = Field(default=None, primary_key=True)
    at: int = Field(sa_type=BigInteger)
    event: str
    task_id: Optional[str] = Field(default=None)
    worker_id: Optional[str] = Field(default=None)
    lease_token: Optional[int] = Field(default=None, sa_type=BigInteger)
    fence_token: Optional[int] = Field(default=None, sa_type=BigInteger)
    reason: Optional[str] = Field(default=None)
    detail: str = Field(default="{}", sa_type=Text)


class FenceCounter(StoreTable, table=True):
    """The highest fence token ever issued, in one row: a token is never issued twice.

    `max(fence_token) + 1` over the tasks forgot every token of a deleted task row, and
    reissued it. SQLite has no sequences, so each claim reads this row and bumps it in the
    same transaction; PostgreSQL would use a SEQUENCE (see core/engine/statements.py).
    """

    __tablename__ = "fence_counter"

    name: str = Field(primary_key=True)
    value: int = Field(sa_type=BigInteger)


class StoreMeta(StoreTable, table=True):
    """Facts about the database itself, such as its schema version."""

    __tablename__ = "store_meta"

    key: str = Field(primary_key=True)
    value: str


metadata: MetaData = StoreTable.metadata
