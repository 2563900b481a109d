"""Everything PostgreSQL-specific lives here: connecting, the dialect, retries, DDL.

It mirrors `core.engine.backends.sqlite`: the store's statements are the same SQLAlchemy
expressions compiled for the postgresql dialect, run on a psycopg 3 connection inside one
function per transaction. What differs is what can go wrong:

- Two transactions can collide: a serialization failure (SQLSTATE 40001) or a deadlock
  (40P01) rolls one back; it is run again from the start, a bounded number of times.
- The connection can be lost (the server restarted, an operator ran
  `pg_terminate_backend`, the network went away). Before COMMIT was sent nothing was
  written, so the transaction runs again on a new connection. If the connection was lost
  while COMMIT was under way, the transaction's id (read when it began) tells whether it
  committed: `pg_xact_status` on a new connection says so, and the result is either kept
  or the transaction is run again. A caller never sees a half-written or doubled
  operation, and never an "outcome unknown".
- Past the bounds the error is a `StoreError` with one line, as on SQLite.
- A worker starting up must never stall the others: the catalog is read first and nothing
  is locked when the store is complete; schema work waits at most a short `lock_timeout`
  for each lock and tries again; the server ends a session left idle inside a transaction
  (`idle_in_transaction_session_timeout`), so a stopped process frees its locks.

A store lives in one schema (`public` unless the URL says `?schema=NAME`). A schema that
has tables but no `store_meta` is someone else's: it is refused and left untouched.
"""

import atexit
import contextlib
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql
from sqlalchemy import MetaData, String, text
from sqlalchemy.dialects.postgresql import psycopg as psycopg_dialect
from sqlalchemy.engine import Dialect
from sqlalchemy.schema import CreateIndex, CreateTable

from core.engine import models
from core.engine.backends import POSTGRESQL_CLOCK_MS, POSTGRESQL_TXN_CLOCK_MS, check_stamp
from core.engine.backends.postgresql_run_lock import DDL_LOCK_TIMEOUT_MS as DDL_LOCK_TIMEOUT_MS
from core.engine.backends.postgresql_run_lock import SCRATCH_PREFIX as SCRATCH_PREFIX
from core.engine.backends.postgresql_run_lock import DBConnection as DBConnection
from core.engine.backends.postgresql_run_lock import drop_schema as drop_schema
from core.engine.backends.postgresql_run_lock import drop_stale_runs as drop_stale_runs
from core.engine.backends.postgresql_run_lock import run_lock_key as run_lock_key
from core.engine.errors import SchemaVersionError, StoreError, Unreachable, Why

T = TypeVar("T")

# Collisions (serialization failure, deadlock) and lost connections are retried this often,
# with a growing pause; past that a StoreError says what kept failing.
RETRIES = 20
CONNECT_TIMEOUT_S = 10
# Reconnecting after a lost connection keeps trying this long before giving up.
RECONNECT_FOR_S = 15.0
# Held while creating tables, so workers starting together do not race on the catalog.
DDL_LOCK_KEY = 0x626B5F736368  # "bk_sch"
# A starting worker that cannot get its locks for this long gives up with one line.
DDL_GIVE_UP_S = 60.0
# "锁更适合短临界区" (a lock suits a short critical section): the server ends a session of
# ours that sits inside a transaction this long without sending anything, rolling it back
# and freeing its locks. A store's transaction is a few statements sent back to back
# (milliseconds); one idle for seconds belongs to a process that is stopped, swapped out or
# hung, and the rows it locked must not wait for it. Five seconds is far above any
# transaction's gaps and well below a lease's renew window at the default ttl (60 s). The
# client that wakes up finds its connection gone and runs the transaction again whole, as
# after any lost connection.
IDLE_IN_TRANSACTION_TIMEOUT_MS = 5_000
FENCE_SEQUENCE = "fence_tokens"


def dialect() -> Dialect:
    """PostgreSQL's dialect as psycopg 3 speaks it (`%(name)s` parameters, typed casts)."""
    return psycopg_dialect.dialect()  # type: ignore[no-untyped-call]


@dataclass(frozen=True, slots=True)
class Target:
    """Where a store lives: a libpq URL (without our own parameters) and a schema."""

    conninfo: str
    schema: str
    shown: str  # for messages: the URL without its password
    # Statements every (re)opened connection runs first, e.g. SET synchronous_commit.
    settings: tuple[str, ...] = ()
    # A run schema of this process: every connection holds its run lock (see run_lock_key).
    owned: bool = False
    # How long a lost connection is sought again before a call gives up (`?reconnect_for=`,
    # in seconds): a worker that must keep its heartbeat's rhythm through a network cut
    # asks for less than the default, and is told `Unreachable` in time to try again.
    reconnect_for_s: float = RECONNECT_FOR_S

    @classmethod
    def parse(cls, url: str) -> "Target":
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        schema = "public"
        reconnect_for_s = RECONNECT_FOR_S
        kept = []
        for key, value in query:
            if key == "schema":
                schema = value
            elif key == "reconnect_for":
                try:
                    reconnect_for_s = float(value)
                except ValueError:
                    reconnect_for_s = -1.0
                if not 0 < reconnect_for_s <= 3600:
                    raise StoreError(
                        f"{_hide_password(url)}: reconnect_for {value!r} must be a number of "
                        f"seconds above 0 and at most 3600"
                    )
            else:
                kept.append((key, value))
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
            raise StoreError(
                f"{_hide_password(url)}: schema {schema!r} must be lower-case letters, digits "
                f"and underscores"
            )
        conninfo = urlunsplit(parts._replace(query=urlencode(kept)))
        return cls(conninfo, schema, _hide_password(url), reconnect_for_s=reconnect_for_s)

    def scratch(self) -> "Target":
        """A brand-new schema of its own, for a run that is thrown away afterwards.

        Its commits do not wait for the disk (`synchronous_commit = off`: a server crash may
        lose the last commits, never corrupt them); here that is ~0.1 ms a commit, not ~3.
        """
        return Target(
            self.conninfo,
            scratch_schema_name(),
            self.shown,
            (*self.settings, "SET synchronous_commit = off"),
            owned=True,
            reconnect_for_s=self.reconnect_for_s,
        )


def _hide_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _open(target: Target) -> DBConnection:
    # Defaults the URL may override (`?application_name=...` names a fleet in
    # pg_stat_activity; `?connect_timeout=...`).
    given = psycopg.conninfo.conninfo_to_dict(target.conninfo)
    defaults: dict[str, Any] = {
        "application_name": "borrowed-keys",
        "connect_timeout": CONNECT_TIMEOUT_S,
    }
    options: dict[str, Any] = {k: v for k, v in defaults.items() if k not in given}
    give_up = time.monotonic() + RECONNECT_FOR_S
    delay = 0.05
    while True:
        try:
            return psycopg.connect(target.conninfo, autocommit=True, **options)
        except psycopg.Error as exc:
            # A server starting up (or reaching a consistent state after a crash) answers
            # for a few seconds, then takes connections: that answer is not the URL's fault.
            if not _not_yet_accepting(exc) or time.monotonic() >= give_up:
                raise StoreError(f"{target.shown}: cannot connect: {_one_line(exc)}") from None
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


# SQLSTATE 57P03, cannot_connect_now. A connection refused at start-up may reach us without
# its code, so the server's own words (as libpq passes them on) are matched too.
_NOT_YET = ("the database system is starting up", "not yet accepting connections")


def _not_yet_accepting(exc: psycopg.Error) -> bool:
    if getattr(exc, "sqlstate", None) == "57P03":
        return True
    text = str(exc)
    return any(words in text for words in _NOT_YET)


class ConnectionLost(StoreError):
    """The connection went away while the store was being opened: worth trying again."""

    why = Why.CONNECTION_LOST


def connect(target: Target) -> DBConnection:
    """A connection whose search_path is the store's schema, checked before any write."""
    conn = _open(target)
    try:
        conn.execute(
            pg_sql.SQL(
                "SET search_path TO {}; SET idle_in_transaction_session_timeout = {}"
            ).format(
                pg_sql.Identifier(target.schema), pg_sql.Literal(IDLE_IN_TRANSACTION_TIMEOUT_MS)
            )
        )
        for setting in target.settings:
            conn.execute(setting)
        if target.owned:
            _take_run_lock(conn, target)
        _check_version(conn, target)
    except psycopg.Error as exc:
        lost = conn.broken
        conn.close()
        error = ConnectionLost if lost else StoreError
        raise error(f"{target.shown}: {_one_line(exc)}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _check_version(conn: DBConnection, target: Target) -> None:
    tables = {
        name
        for (name,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (target.schema,),
        )
    }
    stamp = None
    if "store_meta" in tables:
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        stamp = None if row is None else row[0]
    # Stores on PostgreSQL began at the current version: an earlier stamp is no store of ours.
    check_stamp(
        f"{target.shown} (schema {target.schema})",
        "PostgreSQL",
        tables,
        stamp,
        untouched="left untouched",
        oldest=models.SCHEMA_VERSION,
    )


def _ddl() -> list[tuple[str, str]]:
    """(relation, CREATE statement) for every table, index and the fence sequence, text
    columns in the "C" collation.

    SQLite compares text byte by byte; PostgreSQL's default collation follows the server's
    locale. Ordering by task id must be the same on both, or the same scenario would claim
    tasks in another order.
    """
    d = dialect()
    copy = MetaData()
    statements: list[tuple[str, str]] = []
    for table in models.metadata.sorted_tables:
        t = table.to_metadata(copy)
        for column in t.columns:
            if isinstance(column.type, String):
                column.type = String(collation="C")
        statements.append((t.name, str(CreateTable(t, if_not_exists=True).compile(dialect=d))))
        for index in t.indexes:
            assert isinstance(index.name, str)
            where = models.PARTIAL_INDEXES.get(index.name)
            if where is not None:  # declared for SQLite alone (see models.PARTIAL_INDEXES)
                index.dialect_kwargs["postgresql_where"] = text(where)
            sql = str(CreateIndex(index, if_not_exists=True).compile(dialect=d))
            statements.append((index.name, sql))
    statements.append((FENCE_SEQUENCE, f"CREATE SEQUENCE IF NOT EXISTS {FENCE_SEQUENCE}"))
    return statements


def _missing(conn: DBConnection, target: Target, statements: list[tuple[str, str]]) -> list[str]:
    """The statements whose relation is not there yet, and the stamp if it is missing.

    Read from the catalog, which takes no lock on any table: a worker starting on a store
    that is complete touches none of the tables the lease path uses.
    """
    found = {
        name
        for (name,) in conn.execute(
            "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s",
            (target.schema,),
        )
    }
    todo = [sql for name, sql in statements if name not in found]
    if not todo:
        stamped = conn.execute("SELECT 1 FROM store_meta WHERE key = 'schema_version'")
        if stamped.fetchone() is None:
            todo.append("")  # nothing to create, only the stamp to write
    return todo


def create_schema(conn: DBConnection, target: Target) -> None:
    """Create the schema, tables, indexes and fence sequence if missing; stamp the version.

    "续约写入要足够轻。心跳本身如果需要重数据库事务、跨区域 RPC 或大对象序列化，它会先把自己
    变成新的瓶颈。" A heartbeat that waits for a starting worker's lock is such a bottleneck:
    a starting worker must never make the fleet's heartbeats wait. So the catalog is read first and
    nothing is locked when the store is complete (`CREATE INDEX IF NOT EXISTS` takes a
    ShareLock on its table even when the index exists, and holds it to COMMIT); and what
    must be created waits at most DDL_LOCK_TIMEOUT_MS for each lock, then steps aside and
    tries again.
    """
    statements = _ddl()
    give_up = time.monotonic() + DDL_GIVE_UP_S
    delay = 0.05
    while True:
        try:
            todo = _missing(conn, target, statements)
            if not todo:
                return

            def ddl(c: DBConnection) -> None:
                c.execute(f"SET LOCAL lock_timeout = {DDL_LOCK_TIMEOUT_MS}")
                c.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK_KEY,))
                c.execute(
                    pg_sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                        pg_sql.Identifier(target.schema)
                    )
                )
                # Another worker may have created them while this one waited for the lock.
                for sql in _missing(c, target, statements):
                    if sql:
                        c.execute(sql)
                c.execute(
                    "INSERT INTO store_meta (key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO NOTHING",
                    (str(models.SCHEMA_VERSION),),
                )

            _transaction(conn, ddl)
            return
        except pg_errors.LockNotAvailable as exc:
            if time.monotonic() >= give_up:
                raise StoreError(
                    f"{target.shown}: cannot create the store's tables: a lock stayed taken "
                    f"for {DDL_GIVE_UP_S:.0f} s ({_one_line(exc)})"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
        except psycopg.Error as exc:
            error = ConnectionLost if conn.broken else StoreError
            raise error(
                f"{target.shown}: cannot create the store's tables: {_one_line(exc)}"
            ) from None


def scratch_schema_name() -> str:
    """A schema name no other run uses: each simulation on PostgreSQL gets its own."""
    return SCRATCH_PREFIX + secrets.token_hex(8)


def _take_run_lock(conn: DBConnection, target: Target) -> None:
    row = conn.execute("SELECT pg_try_advisory_lock_shared(%s)", (run_lock_key(target.schema),))
    taken = row.fetchone()
    if taken is None or not taken[0]:
        # Only a cleaner holds it exclusively, for the moment it checks a schema: try again.
        raise StoreError(f"{target.shown}: run schema {target.schema} is held by another run")


def _transaction(conn: DBConnection, fn: Callable[[DBConnection], T]) -> T:
    conn.execute("BEGIN")
    try:
        result = fn(conn)
    except BaseException:
        with contextlib.suppress(psycopg.Error):
            if not conn.broken:
                conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


# -- running transactions -----------------------------------------------------------------


class TxnConnection:
    """The connection a transaction runs on, with the server's clock as it began.

    Reading the clock in the round trip that sends BEGIN saves one round trip per
    transaction; a store on the database's clock uses `db_now_ms` instead of asking again.
    A write's BEGIN is sent with the first thing the transaction asks for: its clock, its
    first statement, or with `begin_with` a statement in the same round trip.
    """

    __slots__ = ("_at", "_begin_sql", "_with_xid", "conn", "xid")

    def __init__(self, conn: DBConnection, begin: str = "BEGIN", *, with_xid: bool = True) -> None:
        self.conn = conn
        self._begin_sql = begin
        self._with_xid = with_xid
        self.xid: str | None = None
        self._at: int | None = None

    @property
    def begun(self) -> bool:
        return self._at is not None

    def _begin(self) -> None:
        if self._at is None:
            self.xid, self._at = _begin(self.conn, self._begin_sql, with_xid=self._with_xid)

    @property
    def db_now_ms(self) -> int:
        self._begin()
        assert self._at is not None
        return self._at

    def begin_with(self, statements: Sequence[tuple[str, dict[str, Any]]]) -> list[list[Any]]:
        """BEGIN, the transaction's id and clock, and its first statements, in one round trip.

        The statements read the clock as `POSTGRESQL_TXN_CLOCK_MS` (the transaction's
        start, the same for every statement of it), which is the `db_now_ms` read here:
        the same instant a statement run after `_begin` is given as a parameter. Nothing
        is committed in this trip, so a connection lost in it leaves nothing written, and
        the id is known before COMMIT is sent, as for any other write. Returns each
        statement's rows, in the order sent.
        """
        assert self._at is None, "begin_with must be the transaction's first request"
        xid = "pg_current_xact_id()::text" if self._with_xid else "NULL"
        with self.conn.pipeline():
            self.conn.execute(self._begin_sql)
            began = self.conn.execute(f"SELECT {xid}, {POSTGRESQL_TXN_CLOCK_MS}")
            cursors = [self.conn.execute(sql, params) for sql, params in statements]
            row = began.fetchone()
            rows = [c.fetchall() if c.description is not None else [] for c in cursors]
        assert row is not None
        self.xid, self._at = (None if row[0] is None else str(row[0])), int(row[1])
        return rows

    def execute(self, query: Any, params: Any = None) -> psycopg.Cursor[Any]:
        self._begin()
        return self.conn.execute(query, params)

    @property
    def info(self) -> Any:
        return self.conn.info


def _begin(conn: DBConnection, begin: str, *, with_xid: bool) -> tuple[str | None, int]:
    """Send BEGIN; read the server's clock (and the transaction's id) in the same trip."""
    xid = "pg_current_xact_id()::text" if with_xid else "NULL"
    cursor = conn.execute(f"{begin}; SELECT {xid}, {POSTGRESQL_CLOCK_MS}")
    cursor.nextset()
    row = cursor.fetchone()
    assert row is not None
    return (None if row[0] is None else str(row[0])), int(row[1])


def _retryable(exc: psycopg.Error) -> bool:
    """Errors after which the transaction did not happen and may simply run again."""
    return isinstance(exc, (pg_errors.SerializationFailure, pg_errors.DeadlockDetected))


class Session:
    """One connection to a store, re-opened when it is lost; runs whole transactions.

    Not thread-safe: one thread at a time (the drivers see to it).
    """

    def __init__(self, target: Target, conn: DBConnection | None) -> None:
        self.target = target
        self.conn: DBConnection | None = conn

    @classmethod
    def open(cls, target: Target) -> "Session":
        """Connect and make sure the store's tables are there.

        A first connection that fails is an answer (a wrong URL, no server): one line. Once
        connected, a connection lost while the store is checked or created is retried like
        any other.
        """
        try:
            conn: DBConnection | None = connect(target)
        except ConnectionLost:
            conn = None  # connected, then lost: reconnected below like any other
        session = cls(target, conn)
        try:
            for attempt in range(RETRIES + 1):
                try:
                    create_schema(session._connection(), target)
                    return session
                except ConnectionLost as exc:
                    session._lost("while opening the store", exc, attempt)
        except BaseException:
            session.close()
            raise
        raise StoreError(f"{target.shown}: opening the store kept failing")  # pragma: no cover

    def _connection(self) -> DBConnection:
        conn = self.conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        if conn is not None:
            conn.close()
            self.conn = None
        give_up = time.monotonic() + self.target.reconnect_for_s
        delay = 0.05
        while True:
            try:
                self.conn = connect(self.target)
                return self.conn
            except SchemaVersionError:
                raise
            except StoreError as exc:
                if time.monotonic() >= give_up:
                    # The connection had been made once: the road or the server went away.
                    raise Unreachable(str(exc)) from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _lost(self, what: str, exc: BaseException, attempt: int) -> None:
        if attempt >= RETRIES:
            raise StoreError(
                f"{self.target.shown}: lost the connection {what} {attempt + 1} times: "
                f"{_one_line(exc)}"
            ) from None

    def write(self, fn: Callable[[TxnConnection], T]) -> T:
        """Run fn as one transaction: collisions and lost connections are run again."""
        delay = 0.002
        for attempt in range(RETRIES + 1):
            conn = self._connection()
            # The round trip that begins the transaction names it, so that a connection
            # lost during COMMIT can still learn whether the commit happened.
            txn = TxnConnection(conn, "BEGIN", with_xid=True)
            try:
                result = fn(txn)
                if not txn.begun:
                    return result  # nothing was asked of the server: nothing to commit
            except psycopg.Error as exc:
                if conn.broken:
                    self._lost("inside a transaction", exc, attempt)
                    continue  # nothing was committed: the server rolled it back
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
                if _retryable(exc) and attempt < RETRIES:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.1)
                    continue
                raise StoreError(f"{self.target.shown}: {_one_line(exc)}") from None
            except BaseException:
                if txn.begun and not conn.broken:
                    with contextlib.suppress(psycopg.Error):
                        conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
                return result
            except psycopg.Error as exc:
                if not conn.broken:
                    if _retryable(exc) and attempt < RETRIES:
                        time.sleep(delay)
                        delay = min(delay * 2, 0.1)
                        continue
                    raise StoreError(f"{self.target.shown}: {_one_line(exc)}") from None
                if txn.xid is not None and self._committed(txn.xid):
                    return result
                self._lost("while committing", exc, attempt)
        raise StoreError(f"{self.target.shown}: the transaction kept failing")  # pragma: no cover

    def _committed(self, xid: str) -> bool:
        """Whether a transaction whose COMMIT was cut off did commit (waits for its end)."""
        give_up = time.monotonic() + RECONNECT_FOR_S
        while True:
            conn = self._connection()
            try:
                row = conn.execute("SELECT pg_xact_status(%s::xid8)", (xid,)).fetchone()
            except psycopg.OperationalError:
                if time.monotonic() >= give_up:
                    raise StoreError(
                        f"{self.target.shown}: lost the connection while committing, and "
                        f"could not learn whether transaction {xid} committed"
                    ) from None
                continue
            status = None if row is None else row[0]
            if status == "committed":
                return True
            if status == "aborted":
                return False
            # Still "in progress": the old backend has not finished dying yet.
            if time.monotonic() >= give_up:
                raise StoreError(
                    f"{self.target.shown}: transaction {xid} was still in progress "
                    f"{RECONNECT_FOR_S:.0f} s after its connection was lost"
                )
            time.sleep(0.01)

    def read(self, fn: Callable[[TxnConnection], T]) -> T:
        """Run fn in one read-only snapshot, so several SELECTs see one state."""
        for attempt in range(RETRIES + 1):
            conn = self._connection()
            try:
                txn = TxnConnection(
                    conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", with_xid=False
                )
                txn._begin()
                try:
                    return fn(txn)
                finally:
                    if not conn.broken:
                        conn.execute("COMMIT")
            except psycopg.Error as exc:
                if conn.broken:
                    self._lost("inside a read", exc, attempt)
                    continue
                raise StoreError(f"{self.target.shown}: {_one_line(exc)}") from None
        raise StoreError(f"{self.target.shown}: the read kept failing")  # pragma: no cover

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# Run schemas of this process not dropped yet: dropped at exit if their run never closed
# (an app quit without closing its run, a command that failed while starting one).
_open_runs: set[Session] = set()
_open_runs_lock = threading.Lock()


def open_scratch(target: Target) -> Session:
    """A session in a brand-new schema of its own (dropped by `drop_scratch`, or at exit).

    Run schemas left by runs that ended without dropping theirs are dropped first.
    """
    session = Session.open(target.scratch())
    with _open_runs_lock:
        _open_runs.add(session)
    # Best effort: a clean-up that fails now is tried again by the next run.
    with contextlib.suppress(psycopg.Error, StoreError):
        drop_stale_runs(session._connection(), session.target.schema)
    return session


def drop_scratch(session: Session, *, reconnect: bool = True) -> None:
    """Drop a scratch session's schema and close it; a lost server is not an error here
    (without `reconnect`, a lost connection leaves the schema to the next run's clean-up)."""
    schema = session.target.schema
    if not schema.startswith(SCRATCH_PREFIX):  # pragma: no cover - a caller's bug
        raise ValueError(f"{schema} is not a scratch schema")
    with _open_runs_lock:
        _open_runs.discard(session)
    conn = session.conn
    usable = conn is not None and not conn.closed and not conn.broken
    if usable or reconnect:
        with contextlib.suppress(psycopg.Error, StoreError):
            drop_schema(session._connection(), schema)
    session.close()


@atexit.register
def _drop_open_runs() -> None:
    with _open_runs_lock:
        left = list(_open_runs)
    for session in left:
        # At exit, no waiting for a server that went away.
        drop_scratch(session, reconnect=False)
