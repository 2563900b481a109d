"""How the store's transactions reach the database.

A transaction is a plain function over a DB-API connection. A driver decides where it runs:
- `InlineDriver` runs it in the caller's thread. Virtual-time simulations use it: a store
  call then never suspends, so a simulation step is exact and fast.
- `AioSqliteDriver`, for real-clock workers in an asyncio program, runs it on aiosqlite's
  connection: first straight away on the event loop, without waiting for any lock, and
  only if the database is locked by another process (or a transaction of this one is
  already on aiosqlite's thread) on that thread, where it may wait. An uncontended SQLite
  transaction in WAL mode takes tens of microseconds, less than one hop to another thread
  on this machine (75-100 us measured), so the fast path blocks the loop less than the hop
  would; a lock held elsewhere never blocks it.
"""

import os
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import aiosqlite

from core.engine.backends import sqlite as backend

T = TypeVar("T")


class Driver(Protocol):
    """Runs transactions against one database connection."""

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T: ...

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T: ...

    async def close(self) -> None: ...


def _connect_with_schema(path: str | os.PathLike[str]) -> sqlite3.Connection:
    conn = backend.connect(path, check_same_thread=False)
    try:
        backend.create_schema(conn)
    except BaseException:
        conn.close()
        raise
    return conn


class InlineDriver:
    """Runs each transaction synchronously in the calling thread."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @classmethod
    def open(cls, path: str | os.PathLike[str] = ":memory:") -> "InlineDriver":
        return cls(_connect_with_schema(path))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return backend.run_write(self.conn, fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return backend.run_read(self.conn, fn)

    async def close(self) -> None:
        self.conn.close()


class AioSqliteDriver:
    """Runs each transaction on aiosqlite's thread: one thread round trip per transaction."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._aconn = conn
        # Transactions queued or running on aiosqlite's thread. While there are any, the
        # connection is not ours to use on the loop. The thread decrements it as the last
        # thing a job does, so zero means nothing will touch the connection from there.
        self._on_thread = 0
        self._count_lock = threading.Lock()

    @classmethod
    async def open(cls, path: str | os.PathLike[str]) -> "AioSqliteDriver":
        aconn = aiosqlite.Connection(lambda: _connect_with_schema(path), iter_chunk_size=64)
        try:
            await aconn
        except BaseException:
            # aiosqlite stops its thread on a failed connect but does not wait for it; if
            # the loop closed first, the thread dies on "Event loop is closed". It has
            # nothing left but to stop, so wait for that (only on this error path).
            aconn._thread.join(timeout=5)
            raise
        return cls(aconn)

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        # aiosqlite's public API runs one statement per round trip; a whole transaction in
        # one trip keeps the core near raw aiosqlite speed (`make bench` measures it).
        def job() -> T:
            try:
                return fn(*args)
            finally:
                with self._count_lock:
                    self._on_thread -= 1

        with self._count_lock:
            self._on_thread += 1
        result: T = await self._aconn._execute(job)  # type: ignore[no-untyped-call]
        return result

    def _now(
        self,
        run: Callable[[sqlite3.Connection, Callable[[sqlite3.Connection], T]], T],
        fn: Callable[[sqlite3.Connection], T],
    ) -> T | backend.Busy:
        if self._on_thread:
            return backend.BUSY
        return backend.try_now(self._aconn._conn, run, fn)

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        result = self._now(backend.write_once, fn)
        if isinstance(result, backend.Busy):
            return await self._run(backend.run_write, self._aconn._conn, fn)
        return result

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        result = self._now(backend.run_read, fn)
        if isinstance(result, backend.Busy):
            return await self._run(backend.run_read, self._aconn._conn, fn)
        return result

    async def close(self) -> None:
        await self._aconn.close()
