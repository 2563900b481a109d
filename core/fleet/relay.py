"""A TCP relay per worker between it and the PostgreSQL server, which the fleet can cut.

A partition here is a real network cut that needs no root (the idea of Toxiproxy, in a few
dozen lines of asyncio): each worker reaches the server through a port of its own on
127.0.0.1, and cutting it drops the connections in flight and refuses new ones until it
heals. The worker's store sees a lost connection, and reconnects by itself once the road is
back; meanwhile its lease runs out by the server's clock, which it cannot reach.
"""

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

T = TypeVar("T")

DEFAULT_PORT = 5432
_CHUNK = 64 * 1024


def upstream_of(url: str) -> tuple[str, int] | str:
    """Where a postgresql:// URL's server listens: (host, port), or a Unix socket's path."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    port = int(query.get("port") or parts.port or DEFAULT_PORT)
    host = query.get("host") or parts.hostname or "localhost"
    if host.startswith("/"):
        return f"{host}/.s.PGSQL.{port}"
    return host, port


def through(url: str, port: int) -> str:
    """The same URL (user, database, schema, options), reaching the server via 127.0.0.1:port."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("host", "port")]
    user = parts.netloc.rpartition("@")[0]
    netloc = f"{user}@127.0.0.1:{port}" if user else f"127.0.0.1:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment))


def with_query(url: str, **params: object) -> str:
    """The URL with `params` set in its query (replacing any of the same name)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in params]
    query += [(k, str(v)) for k, v in params.items()]
    return urlunsplit(parts._replace(query=urlencode(query)))


@dataclass
class _Road:
    port: int = 0
    cut: bool = False
    server: asyncio.Server | None = None
    open: set[asyncio.StreamWriter] = field(default_factory=set)


class Relays:
    """One relay per worker id, all on one event loop on a thread of its own."""

    def __init__(self, upstream: tuple[str, int] | str) -> None:
        self.upstream = upstream
        self.roads: dict[str, _Road] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="relays", daemon=True)
        self._thread.start()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def port(self, worker_id: str) -> int:
        """The worker's own port (opened the first time it is asked for)."""
        road = self.roads.get(worker_id)
        if road is None:
            road = self.roads[worker_id] = _Road()
            road.port = self._run(self._listen(road))
        return road.port

    async def _listen(self, road: _Road) -> int:
        async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._carry(road, reader, writer)

        road.server = await asyncio.start_server(on_client, "127.0.0.1", 0)
        return int(road.server.sockets[0].getsockname()[1])

    async def _carry(
        self, road: _Road, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if road.cut:
            writer.transport.abort()
            return
        try:
            if isinstance(self.upstream, str):
                up_reader, up_writer = await asyncio.open_unix_connection(self.upstream)
            else:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        road.open.update((writer, up_writer))
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                road.open.discard(w)
                w.transport.abort()

    def cut(self, worker_id: str) -> None:
        """Drop the worker's connections and refuse new ones until `heal`."""
        road = self.roads.get(worker_id)
        if road is None:
            return

        async def go() -> None:
            road.cut = True
            for w in list(road.open):
                w.transport.abort()

        self._run(go())

    def heal(self, worker_id: str) -> None:
        road = self.roads.get(worker_id)
        if road is not None:
            road.cut = False

    def is_cut(self, worker_id: str) -> bool:
        road = self.roads.get(worker_id)
        return road is not None and road.cut

    def close(self) -> None:
        async def go() -> None:
            for road in self.roads.values():
                road.cut = True
                for w in list(road.open):
                    w.transport.abort()
                if road.server is not None:
                    road.server.close()

        with contextlib.suppress(RuntimeError):
            self._run(go())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._loop.is_running():
            self._loop.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    writer.transport.abort()  # one side ended: so does the other
