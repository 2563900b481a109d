"""The real-clock `Env`: the same Worker coroutines under asyncio, for worker processes.

On the virtual runtime a sleep yields to the scheduler; here it is `asyncio.sleep`, spawn is
`create_task` and cancel is `Task.cancel`. Store calls go through the store's asyncio
driver: on SQLite the `AsyncSqliteDriver`, whose every call lets the other tasks (the
heartbeat) run once; on PostgreSQL the `PgThreadDriver`, whose every call waits on its
thread, so the loop runs the other tasks meanwhile.
"""

import asyncio
from collections.abc import Coroutine
from typing import Any


class AsyncioEnv:
    """Where a worker runs in a real process: asyncio tasks on the wall clock."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self.errors: list[BaseException] = []

    async def sleep(self, ms: int) -> None:
        await asyncio.sleep(max(0, ms) / 1000)

    def spawn(
        self, coro: Coroutine[Any, Any, None], *, owner: str, name: str
    ) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro, name=f"{owner}/{name}")
        self.tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def cancel(self, handle: Any) -> None:
        if isinstance(handle, asyncio.Task) and not handle.done():
            handle.cancel()

    def _done(self, task: "asyncio.Task[None]") -> None:
        self.tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self.errors.append(error)

    async def drain(self) -> None:
        """Cancel every task still running and wait for them to end."""
        pending = [t for t in self.tasks if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
