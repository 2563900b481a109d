"""How the store's transactions reach PostgreSQL (psycopg 3).

The store's transaction functions are plain synchronous functions over a DB-API connection,
the same code for SQLite and PostgreSQL. A driver decides where they run:
- `PgInlineDriver` runs them in the caller's thread on a synchronous connection: for
  virtual-time simulations, whose store calls must never suspend.
- `PgThreadDriver`, for real-clock workers in an asyncio program, runs each whole transaction
  on one thread of its own that holds the connection, and the event loop awaits it: one
  hop per transaction, never one per statement, and the loop keeps running while the
  statements travel to the server (the same shape as aiosqlite's thread). Driving the same
  functions through psycopg's `AsyncConnection` would need a second, `async` copy of every
  transaction in the store.

A call cancelled while its transaction is on the thread still runs to its end there: it may
commit. Its result is dropped; the store's gates make a repeated call safe.
`close()` waits for the transaction in flight, then refuses new ones with StoreClosed (a
StoreError), as on SQLite.
"""

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.engine import Dialect

from core.engine.backends import postgresql as backend
from core.engine.errors import StoreClosed

T = TypeVar("T")


class PgInlineDriver:
    """Runs each transaction synchronously in the calling thread.

    With `scratch`, the store lives in a new schema of its own, dropped on close: each
    simulation run on a shared server sees only its own rows.
    """

    def __init__(self, session: backend.Session, *, scratch: bool = False) -> None:
        self.session = session
        self.scratch = scratch
        self.dialect: Dialect = backend.dialect()
        self._closed = False
        # One connection, one transaction at a time: calls from other threads wait.
        self._one_at_a_time = threading.Lock()

    @classmethod
    def open(cls, url: str, *, scratch: bool = False) -> "PgInlineDriver":
        target = backend.Target.parse(url)
        if scratch:
            return cls(backend.open_scratch(target), scratch=True)
        return cls(backend.Session.open(target))

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed(f"{self.session.target.shown}: the store is closed")

    async def write(self, fn: Callable[[Any], T]) -> T:
        with self._one_at_a_time:
            self._check_open()
            return self.session.write(fn)

    async def read(self, fn: Callable[[Any], T]) -> T:
        with self._one_at_a_time:
            self._check_open()
            return self.session.read(fn)

    async def close(self) -> None:
        with self._one_at_a_time:
            if self._closed:
                return
            self._closed = True
            if self.scratch:
                backend.drop_scratch(self.session)
            else:
                self.session.close()


class PgThreadDriver:
    """Runs each transaction on a thread that owns the connection; the loop awaits it.

    The hand-over is a queue the thread reads and a loop callback that resolves the
    caller's future: a concurrent.futures pool and `wrap_future` around it cost the loop a
    third more processor time per call (two futures, their locks and callbacks), paid twice
    per batch by a process that claims and completes.
    """

    def __init__(self, session: backend.Session, *, scratch: bool = False) -> None:
        self.session = session
        self.scratch = scratch
        self.dialect: Dialect = backend.dialect()
        # One thread: the connection is used by one transaction at a time, in call order.
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="bk-postgresql", daemon=True)
        self._thread.start()
        self._closing = False
        self._lock = threading.Lock()

    @classmethod
    async def open(cls, url: str, *, scratch: bool = False) -> "PgThreadDriver":
        target = backend.Target.parse(url)

        def opened() -> backend.Session:
            if scratch:
                return backend.open_scratch(target)
            return backend.Session.open(target)

        session = await asyncio.to_thread(opened)
        return cls(session, scratch=scratch)

    def _serve(self) -> None:
        """The thread: each job in turn, its outcome handed to the loop that asked."""
        while (job := self._jobs.get()) is not None:
            loop, future, fn, args = job
            try:
                outcome: tuple[bool, Any] = (True, fn(*args))
            except BaseException as exc:  # handed to the caller, as a pool's worker does
                outcome = (False, exc)
            # a loop that has closed waits for no answer any more
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, outcome)
            del job, future, outcome  # hold no caller's frame while waiting for the next

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._closing:
                raise StoreClosed(f"{self.session.target.shown}: the store is closed")
            self._jobs.put((loop, future, fn, args))
        return await future

    async def write(self, fn: Callable[[Any], T]) -> T:
        return await self._run(self.session.write, fn)

    async def read(self, fn: Callable[[Any], T]) -> T:
        return await self._run(self.session.read, fn)

    async def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True

        def finish() -> None:
            # Runs after every transaction already submitted: nothing is cut off.
            if self.scratch:
                backend.drop_scratch(self.session)
            else:
                self.session.close()

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._jobs.put((loop, future, finish, ()))
        self._jobs.put(None)  # the thread ends after `finish`
        await future


# A job for the thread: the loop to answer on, the caller's future, the function and its
# arguments.
_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


def _settle(future: "asyncio.Future[Any]", outcome: tuple[bool, Any]) -> None:
    """On the loop: the caller's future resolved, unless the caller gave up (cancelled): a
    transaction already on the thread runs to its end, and its result is dropped."""
    if future.cancelled():
        return
    done, value = outcome
    if done:
        future.set_result(value)
    else:
        future.set_exception(value)
