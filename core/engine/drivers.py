"""How the store's transactions reach the database.

A transaction is a plain function over a DB-API connection. A driver decides where it runs:
- `InlineDriver` runs it in the caller's thread. Virtual-time simulations use it: a store
  call then never suspends, so a simulation step is exact and fast.
- `AsyncSqliteDriver`, for real-clock workers in an asyncio program, owns one sqlite3
  connection and one thread of its own (a one-thread executor: public asyncio and
  concurrent.futures APIs only, no library internals). Each call first lets the loop run
  other tasks once (`asyncio.sleep(0)`: a worker's heartbeat coroutine is never starved by
  its own work), then runs the whole transaction straight away on the loop without waiting
  for any lock, and only if the database is locked by another connection (or a transaction
  of this driver is already on its thread) on the thread, where it may wait. An
  uncontended SQLite transaction in WAL mode takes tens of microseconds, less than one hop
  to another thread (75-100 us measured here), so the fast path blocks the loop less than
  the hop would; a lock held elsewhere never blocks it. WAL flushes (copying the
  write-ahead log into the database file, what SQLite calls a checkpoint; nothing to do
  with a task's checkpoint) never run on the loop: the connection's automatic one is off
  and a second connection on a second thread flushes every `WAL_FLUSH_EVERY` commits.

Both drivers are async context managers, and `close()` is ordered after every call that
entered before it; a call entering after `close()` began raises `StoreClosed`.
"""

import asyncio
import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

from core.engine.backends import sqlite as backend
from core.engine.errors import StoreClosed

T = TypeVar("T")

# With SQLite's default of 1,000 pages, a WAL flush ran inside a commit on the loop about
# every 250 of ours and stalled it up to 10 ms. A passive flush on another thread every
# 200 commits keeps the WAL file near the same size and costs the loop nothing.
WAL_FLUSH_EVERY = 200
# A write reads the store's name back this often (one indexed row), to notice a file
# rewritten in place with another store; a file deleted or renamed over is noticed by the
# stat before every call (about 2 us).
CHECK_STORE_EVERY = 100


class Driver(Protocol):
    """Runs transactions against one database connection."""

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T: ...

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T: ...

    async def close(self) -> None: ...


def _connect_with_schema(
    path: str | os.PathLike[str], use: backend.StoreUse = backend.StoreUse.WORKERS
) -> sqlite3.Connection:
    made = backend.is_file_backed(path) and not os.path.exists(path)
    conn = backend.connect(path, check_same_thread=False)
    try:
        backend.create_schema(conn, use=use, target=str(path))
    except backend.DiskFull:
        conn.close()
        # A store the full disk would not let be made leaves no half of a file. (Only
        # then: after any other failure another process may be making the same file.)
        if made:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.remove(f"{path}{suffix}")
        raise
    except BaseException:
        conn.close()
        raise
    return conn


def _closed_error(what: str) -> StoreClosed:
    return StoreClosed(f"{what}: the store is closed; no new transaction is accepted")


class InlineDriver:
    """Runs each transaction synchronously in the calling thread; a call never suspends.

    Safe across threads: one connection holds one transaction at a time, so a call from a
    second thread waits for the first's transaction to end (without the lock, its BEGIN
    failed inside the other's transaction, or its COMMIT committed half of the other's).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._closed = False
        self._one_at_a_time = threading.Lock()

    @classmethod
    def open(
        cls, path: str | os.PathLike[str] = ":memory:", *, simulation: bool = False
    ) -> "InlineDriver":
        """`simulation`: a virtual run, refused a store file that real workers use."""
        use = backend.StoreUse.SIMULATIONS if simulation else backend.StoreUse.WORKERS
        return cls(_connect_with_schema(path, use))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._one_at_a_time:
            if self._closed:
                raise _closed_error("write")
            return backend.run_write(self.conn, fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._one_at_a_time:
            if self._closed:
                raise _closed_error("read")
            return backend.run_read(self.conn, fn)

    async def close(self) -> None:
        # Nothing can be in flight once the lock is ours: every call runs to its end.
        with self._one_at_a_time:
            if not self._closed:
                self._closed = True
                self.conn.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.close()


class _WalFlusher:
    """Flushes the WAL on a thread and a connection of its own, never on the loop."""

    def __init__(self, path: str, guard: backend.FileGuard) -> None:
        self._path = path
        self._guard = guard
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bk-wal-flush")
        self._conn: sqlite3.Connection | None = None
        self._pending: asyncio.Future[None] | None = None
        self.done = 0  # flushes run (for tests and curiosity)

    def _flush(self) -> None:
        if self._conn is None:
            # Opened by name: only while the name still holds our file, or this connection
            # would flush our log into whatever file took the name.
            if self._guard.moved():
                return
            self._conn = backend.wal_flush_connection(self._path)
        # A flush writes log pages into the file: never into a file that is no longer ours.
        if not self._guard.still_ours():
            return
        backend.flush_wal(self._conn)
        self.done += 1

    def request(self) -> None:
        """Start a flush unless one is still running (one is as good as two)."""
        if self._pending is not None and not self._pending.done():
            return
        self._pending = asyncio.get_running_loop().run_in_executor(self._thread, self._flush)
        # A failed flush is harmless (the next one catches up); do not log it as lost.
        self._pending.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def close(self) -> None:
        if self._pending is not None:
            with contextlib.suppress(Exception):
                await self._pending

        def shut() -> None:
            if self._conn is not None:
                self._conn.close()

        await asyncio.get_running_loop().run_in_executor(self._thread, shut)
        self._thread.shutdown(wait=False)


class _Job:
    """A transaction handed to the driver's thread, and whether it may still be dropped.

    A job the thread has started may still be waiting for the write lock (BEGIN IMMEDIATE
    in SQLite's busy handler): until it holds the lock it has written nothing, so it may
    still be dropped, and once the lock comes it ends without writing."""

    QUEUED, WAITING, BEGUN, DROPPED = range(4)

    def __init__(self) -> None:
        self.state = _Job.QUEUED
        self.lock = threading.Lock()

    def start(self) -> bool:
        with self.lock:
            if self.state == _Job.DROPPED:
                return False
            self.state = _Job.WAITING
            return True

    def begin(self) -> bool:
        """The transaction is open (it holds the lock): False if the job was dropped."""
        with self.lock:
            if self.state == _Job.DROPPED:
                return False
            self.state = _Job.BEGUN
            return True

    def drop(self) -> bool:
        """Forget a job that has not begun; False if it has (it will run to its end)."""
        with self.lock:
            if self.state in (_Job.QUEUED, _Job.WAITING):
                self.state = _Job.DROPPED
                return True
            return False


class _Dropped(Exception):
    """A job dropped while it waited for the lock: its transaction is rolled back unwritten."""


class AsyncSqliteDriver:
    """The asyncio driver: the loop when the lock is free, its own thread when it is not.

    Cancellation. A call has one suspension point before its transaction begins and, on the
    thread path only, one while the transaction runs there:
    - cancelled before the transaction began (always the case on the loop path), on the
      thread path too while it still waits there for the write lock: nothing was written,
      and nothing will be (a renewal let go at its hold's renew deadline must not renew
      the lease once another connection's lock is released);
    - cancelled while its transaction runs on the thread: the transaction runs to its end
      (it commits or rolls back whole) and only then does `CancelledError` reach the
      caller. So a cancelled call MAY have committed; read the state back to know. No write
      of a cancelled call is ever still under way once the cancellation has been delivered.
    """

    def __init__(
        self, conn: sqlite3.Connection, thread: ThreadPoolExecutor, path: str | None
    ) -> None:
        self._conn = conn
        self._thread = thread
        self._path = path or ":memory:"
        # Jobs queued or running on the thread. While there are any, the connection is not
        # the loop's to use. The thread decrements it as the last thing a job does, so zero
        # means nothing will touch the connection from there.
        self._on_thread = 0
        self._count_lock = threading.Lock()
        # Calls between entry and return (loop only). close() waits for zero.
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._closing = False
        self._closed: asyncio.Future[None] | None = None
        self._commits = 0
        self._guard = backend.FileGuard(path, conn) if path is not None else None
        self.wal_flusher = (
            _WalFlusher(path, self._guard) if path is not None and self._guard else None
        )

    @classmethod
    async def open(cls, path: str | os.PathLike[str]) -> "AsyncSqliteDriver":
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bk-sqlite")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(thread, _connect_with_schema, path)
        except BaseException:
            thread.shutdown(wait=False)
            raise
        file_backed = backend.is_file_backed(path)
        if file_backed:
            backend.disable_auto_wal_flush(conn)
        return cls(conn, thread, str(path) if file_backed else None)

    # -- the guard every call passes --------------------------------------------------------

    def _enter(self, what: str) -> None:
        if self._closing:
            raise _closed_error(f"{what} on {self._path}")
        if self._guard is not None:
            self._guard.check_file()
        self._active += 1
        self._idle.clear()

    def _guarded(self, fn: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
        """fn, checking now and then first that the file still holds the store it opened."""
        guard = self._guard
        if guard is None or self._commits % CHECK_STORE_EVERY:
            return fn

        def checked(conn: sqlite3.Connection) -> T:
            guard.check_store(conn)
            return fn(conn)

        return checked

    def _leave(self) -> None:
        self._active -= 1
        if self._active == 0:
            self._idle.set()

    def _committed(self) -> None:
        self._commits += 1
        if self.wal_flusher is not None and self._commits % WAL_FLUSH_EVERY == 0:
            self.wal_flusher.request()

    # -- the two paths ----------------------------------------------------------------------

    def _now(
        self,
        run: Callable[[sqlite3.Connection, Callable[[sqlite3.Connection], T]], T],
        fn: Callable[[sqlite3.Connection], T],
    ) -> T | backend.Busy:
        if self._on_thread:
            return backend.BUSY
        return backend.try_now(self._conn, run, fn)

    async def _on_own_thread(
        self,
        run: Callable[[sqlite3.Connection, Callable[[sqlite3.Connection], T]], T],
        fn: Callable[[sqlite3.Connection], T],
    ) -> T:
        job = _Job()
        dropped: Any = object()

        def gated(conn: sqlite3.Connection) -> T:
            if not job.begin():
                raise _Dropped
            return fn(conn)

        def work() -> Any:
            try:
                if not job.start():
                    return dropped
                return run(self._conn, gated)
            except _Dropped:
                return dropped
            finally:
                with self._count_lock:
                    self._on_thread -= 1

        with self._count_lock:
            self._on_thread += 1
        future = asyncio.get_running_loop().run_in_executor(self._thread, work)
        try:
            result: T = await asyncio.shield(future)
            return result
        except asyncio.CancelledError:
            if not job.drop():
                # Begun: let it end before the cancellation goes on (see the class doc).
                while not future.done():
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.wait((future,))
            # Whatever it ends with, the caller gets CancelledError instead: mark it read.
            future.add_done_callback(lambda f: f.cancelled() or f.exception())
            raise

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        self._enter("write")
        try:
            # The one suspension point of the loop path, before anything is written.
            await asyncio.sleep(0)
            fn = self._guarded(fn)
            result = self._now(backend.write_once, fn)
            if isinstance(result, backend.Busy):
                result = await self._on_own_thread(backend.run_write, fn)
            self._committed()
            return result
        finally:
            self._leave()

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        self._enter("read")
        try:
            await asyncio.sleep(0)
            result = self._now(backend.run_read, fn)
            if isinstance(result, backend.Busy):
                result = await self._on_own_thread(backend.run_read, fn)
            return result
        finally:
            self._leave()

    # -- closing ----------------------------------------------------------------------------

    async def close(self) -> None:
        """Refuse new calls, wait for every call in flight, then close. Safe to repeat."""
        if self._closed is None:
            self._closing = True
            self._closed = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closed)

    async def _close(self) -> None:
        await self._idle.wait()
        if self.wal_flusher is not None:
            await self.wal_flusher.close()
        # On the thread: closing the last connection flushes the WAL, which takes time.
        await asyncio.get_running_loop().run_in_executor(self._thread, self._conn.close)
        self._thread.shutdown(wait=False)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.close()
