"""Everything SQLite-specific lives here: connecting, PRAGMAs, the dialect, busy retries, DDL.

The store's statements are SQLAlchemy expressions compiled once for a dialect and run on a
DB-API connection inside one function per transaction. A PostgreSQL backend would give a
psycopg connection, the postgresql dialect and its own `Backend`, and reuse the rest.
"""

import enum
import os
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from core.engine import precompiled
from core.engine.backends import check_stamp
from core.engine.errors import StoreError, Why

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect

T = TypeVar("T")

BUSY_TIMEOUT_MS = 2_000
# A writer that still finds the database locked after busy_timeout retries this often,
# with a growing pause; past that the error surfaces as a StoreError, never a crash.
BUSY_RETRIES = 20

DBConnection = sqlite3.Connection

# store_meta's rows besides the schema version: the store's own name, given when it is
# created (which store a file holds), and what kind of work writes into it.
STORE_ID = "store_id"
USED_BY = "used_by"


# How often an open store looks at its file's identity (see FileGuard).
FILE_CHECK_EVERY_S = 0.05


class StoreUse(enum.StrEnum):
    """Who writes into a store file: real worker processes, or virtual-time simulations."""

    WORKERS = "workers"
    SIMULATIONS = "simulations"


def dialect() -> "Dialect":
    """SQLite's dialect with named parameters, which sqlite3 accepts as a dict (SQLAlchemy
    loaded only by what compiles statements: a store runs precompiled text)."""
    from sqlalchemy.dialects import sqlite as sqlite_dialect

    return sqlite_dialect.dialect(paramstyle="named")


def compiled_ddl() -> tuple[list[str], list[str]]:
    """The CREATE TABLE and CREATE INDEX statements of the SQLModel tables, compiled now."""
    from sqlalchemy.schema import CreateIndex, CreateTable

    from core.engine import models

    d = dialect()
    tables: list[str] = []
    indexes: list[str] = []
    for table in models.metadata.sorted_tables:
        tables.append(str(CreateTable(table, if_not_exists=True).compile(dialect=d)))
        # a table's indexes are a set: by name, so the precompiled file is the same each time
        for index in sorted(table.indexes, key=lambda index: str(index.name)):
            indexes.append(str(CreateIndex(index, if_not_exists=True).compile(dialect=d)))
    return tables, indexes


def _apply_pragmas(conn: sqlite3.Connection, *, file_backed: bool) -> None:
    # `synchronous` and `busy_timeout` are per connection, so every connection sets them.
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if file_backed:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")


def is_file_backed(path: str | os.PathLike[str]) -> bool:
    target = str(path)
    return target != ":memory:" and not target.startswith("file::memory:")


def connect(path: str | os.PathLike[str], *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open (or create) a store database and check it before anything is written."""
    target = str(path)
    file_backed = is_file_backed(target)
    if file_backed:
        p = Path(target)
        if p.is_dir():
            raise StoreError(f"{target}: is a directory, not a database file")
        if not p.parent.exists():
            raise StoreError(f"{target}: folder {p.parent} does not exist")
        if p.exists() and not os.access(p, os.R_OK | os.W_OK):
            raise StoreError(f"{target}: cannot read and write this file")
        if not p.exists() and not os.access(p.parent, os.W_OK):
            raise StoreError(f"{target}: cannot create a database in {p.parent}")
        if p.exists() and p.stat().st_size > 0:
            with p.open("rb") as handle:
                header = handle.read(16)
            if header != b"SQLite format 3\x00":
                raise StoreError(f"{target}: not a SQLite database (left untouched)")
            check_log_belongs(target)
    try:
        conn = sqlite3.connect(target, isolation_level=None, check_same_thread=check_same_thread)
    except sqlite3.Error as exc:
        raise StoreError(f"{target}: {exc}") from None
    try:
        _check_version(conn, target)
        _apply_pragmas(conn, file_backed=file_backed)
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"{target}: {exc}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def disable_auto_wal_flush(conn: sqlite3.Connection) -> None:
    """No WAL flush (SQLite's "checkpoint") inside this connection's commits: someone else
    runs them."""
    conn.execute("PRAGMA wal_autocheckpoint = 0")


def wal_flush_connection(path: str) -> sqlite3.Connection:
    """A second connection to a store, only for WAL flushes (it never writes rows).

    `mode=rw`: a database deleted meanwhile is an error here, never a new empty file.
    """
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=rw", uri=True)
    conn.isolation_level = None
    # A passive flush never waits for a lock, so it needs no busy handler.
    conn.execute("PRAGMA busy_timeout = 0")
    return conn


def flush_wal(conn: sqlite3.Connection) -> None:
    """Copy what it can from the WAL into the database without waiting for anyone."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


def _check_version(conn: sqlite3.Connection, target: str) -> None:
    tables = {
        name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    stamp = None
    if "store_meta" in tables:
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        stamp = None if row is None else row[0]
    # sqlite_sequence is SQLite's own bookkeeping, in any database with AUTOINCREMENT.
    check_stamp(
        target, "SQLite", tables - {"sqlite_sequence"}, stamp, untouched="file left untouched"
    )


# Version 1 -> 2: a ledger page names its task, and the queue keeps its order. A page
# written before takes its task from the register's last `write_accepted` of that key.
_MIGRATE_1_TO_2 = (
    "ALTER TABLE ledger ADD COLUMN task_id TEXT NOT NULL DEFAULT ''",
    "UPDATE ledger SET task_id = coalesce((SELECT e.task_id FROM events AS e "
    "WHERE e.event = 'write_accepted' AND json_extract(e.detail, '$.key') = ledger.key "
    "ORDER BY e.seq DESC LIMIT 1), '')",
    "ALTER TABLE agent_tasks ADD COLUMN queue_seq BIGINT NOT NULL DEFAULT 0",
    "UPDATE agent_tasks SET queue_seq = rowid WHERE status = 'queued'",
    "DROP INDEX IF EXISTS ix_agent_tasks_queued",
)


# Every table that records fence tokens, for seeding the counter of an older store.
_FENCED = ("agent_tasks", "checkpoints", "ledger", "effects", "events")


def _refuse_simulation(conn: sqlite3.Connection, target: str) -> None:
    """A simulation never writes into a store that real workers use (or used)."""
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (USED_BY,)).fetchone()
    used_by = None if row is None else row[0]
    # A store from before this stamp holding tasks: real work until shown otherwise.
    if used_by is None and conn.execute("SELECT 1 FROM agent_tasks LIMIT 1").fetchone():
        used_by = StoreUse.WORKERS
    if used_by == StoreUse.WORKERS:
        raise StoreError(
            "this store holds real work (worker processes use it); a simulation "
            "never writes into it: give another file, or a postgresql:// URL (a schema "
            "of its own per run); file left untouched"
        )


def create_schema(
    conn: sqlite3.Connection, *, use: StoreUse = StoreUse.WORKERS, target: str = "database"
) -> None:
    """Create the tables and indexes if missing, migrate an older store, stamp the version.

    The store is stamped with a name of its own and with who writes into it (`use`); a
    simulation is refused a store that real workers use, before anything is written.
    """
    tables, indexes = precompiled.ddl("sqlite") or compiled_ddl()

    def ddl(c: sqlite3.Connection) -> None:
        for sql in tables:
            c.execute(sql)
        if use is StoreUse.SIMULATIONS:
            _refuse_simulation(c, target)
        row = c.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        if row is not None and int(row[0]) < 2:
            for sql in _MIGRATE_1_TO_2:
                c.execute(sql)
        for sql in indexes:
            c.execute(sql)
        # Version 1 drew fence tokens as max(fence_token) + 1; the counter starts above every
        # token any table remembers, so none is issued twice across the upgrade. (A new
        # store starts at 0.) INSERT OR IGNORE: a store that has the row keeps it.
        c.execute(
            "INSERT OR IGNORE INTO fence_counter (name, value) SELECT ?, max("
            + ", ".join(f"(SELECT coalesce(max(fence_token), 0) FROM {t})" for t in _FENCED)
            + ")",
            (precompiled.FENCE_COUNTER,),
        )
        # Nothing is written when the store is already complete and current: opening a
        # store (even a damaged one) must not change its file.
        c.execute(
            "INSERT OR IGNORE INTO store_meta (key, value) VALUES ('schema_version', ?)",
            (str(precompiled.SCHEMA_VERSION),),
        )
        # Older versions have been brought up to this one just above.
        c.execute(
            "UPDATE store_meta SET value = ? WHERE key = 'schema_version'"
            " AND CAST(value AS INTEGER) < ?",
            (str(precompiled.SCHEMA_VERSION), precompiled.SCHEMA_VERSION),
        )
        c.execute(
            "INSERT OR IGNORE INTO store_meta (key, value) VALUES (?, ?)",
            (STORE_ID, secrets.token_hex(8)),
        )
        # Real work marks a store for good; simulations mark only a store nobody marked.
        change = " DO UPDATE SET value = excluded.value WHERE value <> excluded.value"
        c.execute(
            "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
            + (change if use is StoreUse.WORKERS else " DO NOTHING"),
            (USED_BY, str(use)),
        )

    try:
        run_write(conn, ddl)
    except sqlite3.Error as exc:
        raise StoreError(f"{target}: cannot create the store's tables: {exc}") from None
    except StoreError as exc:
        raise type(exc)(f"{target}: {exc}") from None


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class DiskFull(StoreError):
    """The disk (or the file's allowed size) is full: the transaction was not written."""

    why = Why.DISK_FULL


def store_error(exc: sqlite3.Error) -> StoreError:
    """What a driver error means for the store, in one line (no driver class names)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    code = getattr(exc, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_CORRUPT or "malformed" in text:
        return StoreError(
            f"the database file is damaged ({text}); nothing more was written to it: "
            f"restore it from a copy"
        )
    if code == sqlite3.SQLITE_FULL or "disk is full" in text:
        return DiskFull(
            f"the disk is full ({text}); this transaction was not written, and the "
            f"database holds what was committed before it"
        )
    if code == sqlite3.SQLITE_IOERR or "disk i/o error" in text.lower():
        return StoreError(f"the database file cannot be read or written ({text})")
    return StoreError(f"database error: {text}")


def run_write(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run fn as one write transaction, retrying a bounded number of times on SQLITE_BUSY."""
    delay = 0.002
    for attempt in range(BUSY_RETRIES + 1):
        try:
            # IMMEDIATE takes the write lock up front: no deadlock on lock upgrade.
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            if _is_busy(exc) and attempt < BUSY_RETRIES:
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
                continue
            if _is_busy(exc):
                raise StoreError(f"database stayed busy: {exc}") from None
            raise store_error(exc) from None
        try:
            result = fn(conn)
            conn.execute("COMMIT")
            return result
        except sqlite3.Error as exc:
            # SQLite may already have rolled back by itself (on BUSY, FULL, IOERR, NOMEM);
            # a ROLLBACK then would fail and hide the real error.
            _rollback(conn)
            if _is_busy(exc):
                if attempt < BUSY_RETRIES:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.1)
                    continue
                raise StoreError(f"database stayed busy: {exc}") from None
            raise store_error(exc) from None
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    raise StoreError("database stayed busy")  # pragma: no cover - loop always returns or raises


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as exc:  # a damaged file may refuse even that
            raise store_error(exc) from None


class Busy:
    """The lock was taken: try again where waiting is allowed."""


BUSY = Busy()


def try_now(
    conn: sqlite3.Connection,
    run: Callable[[sqlite3.Connection, Callable[[sqlite3.Connection], T]], T],
    fn: Callable[[sqlite3.Connection], T],
) -> T | Busy:
    """One attempt of `run(conn, fn)` that never waits for a lock: BUSY if it would have."""
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        return run(conn, fn)
    except sqlite3.Error as exc:
        _rollback(conn)
        if _is_busy(exc):
            return BUSY
        raise store_error(exc) from None
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def write_once(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """One write transaction, no retries: a busy lock surfaces as OperationalError."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn)
        conn.execute("COMMIT")
        return result
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def run_read(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run fn in one read transaction, so several SELECTs see one consistent state.

    A busy lock surfaces as OperationalError (for `try_now`); any other driver error as a
    StoreError.
    """
    try:
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if _is_busy(exc):
            raise
        _rollback(conn)
        raise store_error(exc) from None


def store_id(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (STORE_ID,)).fetchone()
    return None if row is None else str(row[0])


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _written(path: str) -> tuple[int, int] | None:
    """When the file was last written and how long it is: a copy over it changes these."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


# The files SQLite keeps beside a database in WAL mode: the log and its shared index.
LOG_SUFFIXES = ("-wal", "-shm")
# A log of no more than its header holds no page: nothing to replay.
_WAL_HEADER = 32


class ForeignLog(StoreError):
    """A write-ahead log beside the file that does not belong to it."""

    why = Why.FOREIGN_LOG


def check_log_belongs(target: str) -> None:
    """Refuse to open a file whose write-ahead log is another store's.

    SQLite pairs a database with the `-wal` beside it by name alone: a log left by a store
    whose file was then replaced is replayed into the new file on the next open, and the
    first WAL flush writes the other store's pages into it ("row 1 missing from index").
    A log with pages in it is read first through a read-only connection (which never
    flushes anything), and the task table and its indexes are checked against each other
    (the part every transaction changes, so a stranger's pages show there; the whole-file
    check would cost a scan of every table). Damaged: both files are left untouched.
    """
    log = f"{target}-wal"
    try:
        if os.path.getsize(log) <= _WAL_HEADER:
            return
    except OSError:
        return
    uri = f"{Path(target).resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        return  # it cannot be read without writing (no shared index): SQLite's own checks
    try:
        tables = {
            name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "agent_tasks" not in tables:
            return
        # The store's name through the log against the file's own: a log that holds the
        # name page of another store (a young one's does) gives itself away at once.
        in_file = _store_id_in_file(target)
        through_log = store_id(conn) if "store_meta" in tables else None
        if in_file is not None and through_log is not None and in_file != through_log:
            found = [f"it names store {through_log}, the file store {in_file}"]
        else:
            found = [row[0] for row in conn.execute("PRAGMA integrity_check(agent_tasks)")]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    finally:
        conn.close()
    if found != ["ok"]:
        raise ForeignLog(
            f"{target}: its write-ahead log {log} does not fit the file (the log of another "
            f"store, left when this file was replaced?): {found[0]}; both left untouched "
            f"(move the log away to open the file as it is)"
        )


def _store_id_in_file(path: str) -> str | None:
    """The store's name as the file alone holds it (None: not there, or not readable now).

    Neither through the store's own connection (a copy over the file changes no log index,
    so that connection answers from the pages it keeps in memory) nor through the log (it
    holds our pages, the name among them while the store is young): `immutable` reads the
    file's own bytes and nothing beside them.
    """
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?immutable=1", uri=True)
    except sqlite3.Error:
        return None
    try:
        return store_id(conn)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _another_store_in_file(path: str, ours: str | None) -> bool:
    """Another store's name in the file, read twice (a page read while a WAL flush writes
    it could be torn, and a wrong "yes" would give up a live store's log)."""
    return all((found := _store_id_in_file(path)) is not None and found != ours for _ in range(2))


def _disown_logs(path: str, logs: dict[str, tuple[int, int] | None]) -> None:
    """Empty and remove this store's log and index, if they are still the ones it opened.

    They are named after the file, not tied to it: left beside a file that replaced ours,
    the next open would replay our pages into that other store. Emptied first, so that no
    connection still holding them (ours, when it closes) can flush a page of ours into the
    file that now has our name: a flush reads each page from the log before writing it,
    and there is none left to read.
    """
    for suffix in LOG_SUFFIXES:
        name = f"{path}{suffix}"
        if logs.get(suffix) is None or _identity(name) != logs[suffix]:
            continue  # gone, or another store's by now: not ours to touch
        try:
            if suffix == "-wal":
                os.truncate(name, 0)
            os.remove(name)
        except OSError:
            pass


class FileGuard:
    """Notices that the file under an open store was deleted or replaced.

    An open SQLite connection keeps writing into the file it opened even after that file
    is unlinked or another is renamed over its name, and nobody else ever reads it: work
    done there is lost without a word. The file's identity (device and inode, which no
    other file can take while this one is held open) is compared before a transaction, at
    most every FILE_CHECK_EVERY_S (a stat costs a few microseconds, a tenth of a heartbeat;
    a transaction in that window goes where it would have gone had the file been deleted
    a moment later), and the store's own name (in store_meta) now and then, and read
    afresh whenever the file was written by anyone (a copy over it keeps its identity).

    Once gone, the store's log and index are emptied and removed (see `_disown_logs`), so
    no other store is ever given our pages.
    """

    def __init__(self, path: str, conn: sqlite3.Connection) -> None:
        self.path = path
        self.identity = _identity(path)
        self.store_id = store_id(conn)
        self._written = _written(path)
        self._logs = {suffix: _identity(f"{path}{suffix}") for suffix in LOG_SUFFIXES}
        self._next_look = 0.0
        self._lost: StoreError | None = None  # once gone, gone for good

    def _gone(self, what: str) -> StoreError:
        if self._lost is None:
            _disown_logs(self.path, self._logs)
            self._lost = StoreError(
                f"{self.path}: the database file was {what} while this store had it open; "
                f"stopping, so that no work goes into a file nobody else reads"
            )
        return self._lost

    def check_file(self) -> None:
        if self._lost is not None:
            raise self._lost
        clock = time.monotonic()
        if clock < self._next_look:
            return
        self._next_look = clock + FILE_CHECK_EVERY_S
        now = _identity(self.path)
        if now != self.identity:
            raise self._gone("deleted" if now is None else "replaced")
        written = _written(self.path)
        if written != self._written:
            self._written = written
            self._look_at_store_on_disk()

    def _look_at_store_on_disk(self) -> None:
        if _another_store_in_file(self.path, self.store_id):
            raise self._gone("replaced by another store")

    def check_store(self, conn: sqlite3.Connection) -> None:
        if store_id(conn) != self.store_id:
            raise self._gone("replaced by another store")

    def moved(self) -> bool:
        """The name no longer holds the file this store opened (or it was found gone)."""
        return self._lost is not None or _identity(self.path) != self.identity

    def still_ours(self) -> bool:
        """For a WAL flush: the name still holds our file, and our store is in it."""
        if self.moved():
            return False
        if _another_store_in_file(self.path, self.store_id):
            self._gone("replaced by another store")
            return False
        return True
