"""The downstream service on a thread of its own, with its own event loop: for a program
that is not itself on asyncio (the fleet's supervisor runs threads)."""

import asyncio
import threading
from pathlib import Path
from typing import Any

from core.downstream.books import Finding, judge, read_books
from core.downstream.service import serve_downstream


class ServiceThread:
    """Start with `ServiceThread(path)`: it answers on `url` until `close()`."""

    def __init__(self, path: str | Path, *, fencing: bool = True) -> None:
        self.path = Path(path)
        self.fencing = fencing
        self.url = ""
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="downstream", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            raise self._failed

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with serve_downstream(self.path, fencing=self.fencing) as service:
                self.url = service.url
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:
            self._failed = exc
            self._ready.set()

    def books(self) -> dict[str, Any]:
        """The service's books as they stand, read on a connection of the caller's own (from
        a caller that is not itself on asyncio, as the service's own loop is another's)."""
        return asyncio.run(read_books(self.path, fencing=self.fencing))

    def findings(self) -> list[Finding]:
        """The service's rules over its books (docs/library.md)."""
        seen = self.books()
        return judge(seen["history"], seen["charges"])

    def close(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        self._thread.join(timeout=10)
