"""`borrowed-keys serve`: the app in a browser, for interviews over a video call.

textual-serve runs a web server; every browser tab that opens the page gets its own copy of
the app, started as a child process with the options given here (`python -m demo ...`).
Whoever reaches the port drives that copy, so the server listens on loopback unless told
otherwise, and says so in one line when it is told otherwise. Whatever a browser does, the
server holds: it answers only requests that name it by a loopback name, the `--host` name
or a numeric address (a page whose own name was made to resolve to 127.0.0.1 is refused),
runs at most `--max-sessions` apps at once, never gives an app a screen larger than
MAX_COLUMNS x MAX_ROWS, and ends every app when its connection ends.
"""

import argparse
import asyncio
import base64
import contextlib
import errno
import ipaddress
import json
import logging
import os
import shlex
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from core.scenarios.format import ScenarioError
from demo.i18n import default_lang, tr
from demo.saves import SAVE_FOLDER
from demo.screens.layout import NARROW_HEIGHT, NARROW_WIDTH
from demo.serve_internals import app_process

PROG = "borrowed-keys serve"
EXIT_BAD_INPUT = 2
QUIT_GRACE_S = 3.0  # an app asked to quit has this long before it is made to
# A new tab at a full server waits this long for a place (the server learns of a closed tab
# within it), and for an app still ending, as long as that app may take to end.
FULL_WAIT_S = 1.0
CLOSING_WAIT_S = 3 * QUIT_GRACE_S + 1.0
# Larger than any screen shows; a page asking for more gets this (a frame of millions of
# cells takes an app hundreds of megabytes).
MAX_COLUMNS = 500
MAX_ROWS = 200
PAGE_FOLDER = Path(__file__).resolve().parent / "serve_page"
# The tab's icon, in the page itself: no request, nothing to answer with a 404.
FAVICON = "data:image/svg+xml;base64," + base64.b64encode(
    (PAGE_FOLDER / "favicon.svg").read_bytes()
).decode("ascii")
# Without `?fontsize`, the page picks the largest text that still gives the app its large
# layout (`layout.fit`: at least NARROW_WIDTH x NARROW_HEIGHT cells, one row to spare): at
# 1600 x 1000 that is 20 px, where textual-serve's 16 px left the text small over a call.
# A cell of the terminal's font (Roboto Mono in xterm.js) is 0.6 of the size wide and 1.32
# high, as measured in Chromium (tests/serve/test_serve_browser.py checks the fit it gives).
FIT_COLUMNS = NARROW_WIDTH
FIT_ROWS = NARROW_HEIGHT + 1
CELL_WIDTH_EM = 0.6
CELL_HEIGHT_EM = 1.32
MIN_FONT, MAX_FONT = 12, 32
DEFAULT_FONT = 20  # what a page without script would get: the fit at 1600 x 1000


def app_command(args: argparse.Namespace, lang: str | None = None) -> str:
    """The shell command textual-serve runs for each browser tab: this app, same options,
    in `lang` (the language the server speaks) when given."""
    argv = [sys.executable, "-m", "demo"]
    if args.file:
        argv.append(args.file)
    if lang or args.lang:
        argv += ["--lang", lang or args.lang]
    if args.mode:
        argv += ["--mode", args.mode]
    if args.sandbox:
        argv.append("--sandbox")
    if getattr(args, "interview", False):
        argv.append("--interview")
    if args.db:
        argv += ["--db", args.db]
    # `exec`: the shell textual-serve starts becomes the app, so that ending the process
    # it knows ends the app.
    return "exec " + shlex.join(argv)


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host  # an IPv6 literal needs brackets in a URL
    return f"http://{shown}:{port}"


def _addresses(host: str, port: int) -> list[tuple[socket.AddressFamily, tuple[str, int]]]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    return [(family, (str(addr[0]), int(addr[1]))) for family, _, _, _, addr in infos]


def is_loopback(host: str) -> bool:
    """True when every address the name stands for is loopback (127/8, ::1)."""
    try:
        addresses = _addresses(host, 0)
    except OSError:
        return False
    return bool(addresses) and all(
        ipaddress.ip_address(addr[0].split("%")[0]).is_loopback for _, addr in addresses
    )


def bind_problem(host: str, port: int, lang: str = "en") -> str | None:
    """Why the server could not listen on host:port, in one line; None when it can.

    Checked before the server starts so that a taken port is a sentence, not a traceback
    from deep inside aiohttp. (A port taken between this check and the bind is still caught
    around the server, with the same sentence.)
    """
    try:
        addresses = _addresses(host, port)
    except OSError as exc:
        return tr("serve_cannot_listen", lang, where=host, why=exc.strerror or exc)
    for family, addr in addresses:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            # The server sets SO_REUSEADDR too: a port left in TIME_WAIT is free to it.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(addr)
            except OSError as exc:
                return describe_bind_error(exc, host, port, lang)
    return None


def describe_bind_error(exc: OSError, host: str, port: int, lang: str = "en") -> str:
    if exc.errno == errno.EADDRINUSE:
        return tr("serve_in_use", lang, port=port, host=host)
    if exc.errno == errno.EACCES:
        return tr("serve_privileged", lang, port=port)
    return tr("serve_cannot_listen", lang, where=url_for(host, port), why=exc.strerror or exc)


class BoundedAppService(AppService):
    """One tab's app process, which can neither be made huge nor outlive its connection.

    textual-serve stops reading an app's output when a write to a closed connection fails;
    an app in the middle of a large frame then waits on its pipe forever and never reads the
    request to quit. Output for a connection that has gone is read and dropped instead, so
    the app reads that request and leaves; `end` makes sure of it.
    """

    def __init__(self, command: str, websocket: web.WebSocketResponse, server: Server) -> None:
        async def close() -> None:
            await websocket.close()

        super().__init__(
            command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=close,
            download_manager=server.download_manager,
            debug=server.debug,
        )
        self.websocket = websocket

    async def on_data(self, payload: bytes) -> None:
        if self.websocket.closed:
            return
        with contextlib.suppress(ConnectionError):
            await super().on_data(payload)

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*clamp_size(width, height))

    async def end(self) -> None:
        """Ask the app to quit; after a grace period, make it. Returns once it has gone."""
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(self.stop(), QUIT_GRACE_S)
        process = app_process(self)
        if process is None:
            return
        # Nobody reads the app's output any more: read and drop it, so that an app halfway
        # through a frame can finish writing it, and its pipes close when it exits.
        drain = asyncio.gather(*(_read_to_end(p) for p in (process.stdout, process.stderr)))
        for stop in (None, process.terminate, process.kill):
            if stop is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_GRACE_S)
            if process.returncode is not None:
                break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drain, QUIT_GRACE_S)


async def _read_to_end(pipe: asyncio.StreamReader | None) -> None:
    while pipe is not None and await pipe.read(65536):
        pass


def clamp_size(width: int, height: int) -> tuple[int, int]:
    """A terminal size a screen can have: a page may ask for anything."""
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


def host_allowed(host: str, *, given: str) -> bool:
    """Whether a request's Host (name or address, with or without port) is one to answer.

    A page on any site can make the browser talk to this server, and by DNS rebinding
    (its own name made to resolve to 127.0.0.1) even with a Host and an Origin that agree:
    only the name tells. Answered are loopback names, the name given with `--host`, and
    addresses written as numbers (a rebinding needs a name the attacker controls; a number
    cannot be pointed anywhere else).
    """
    name = urlsplit(f"//{host}").hostname if host else None
    if not name:
        return False
    if name == "localhost" or name.endswith(".localhost") or name == given.lower().strip("[]"):
        return True  # browsers resolve *.localhost to loopback themselves
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class AppServer(Server):
    """textual-serve's server, made safe to open to a browser.

    Only requests that name this server as `host_allowed` says are answered; a WebSocket
    only from the server's own page; at most `max_sessions` apps run
    at once, and the next browser gets a page saying so; every app ends with its connection.
    The page's WebSocket address is the one the browser used (behind an ssh tunnel on
    another local port, or when listening on 0.0.0.0, the stock page's address is wrong).
    """

    def __init__(self, command: str, host: str, port: int, *, max_sessions: int, lang: str) -> None:
        super().__init__(
            command, host=host, port=port, title=tr("app_name", lang), templates_path=PAGE_FOLDER
        )
        self.max_sessions = max_sessions
        self.sessions = 0
        self.closing = 0  # sessions whose tab has gone and whose app is still ending
        self._changed = asyncio.Condition()  # sessions or closing changed
        self.lang = lang

    def initialize_logging(self) -> None:
        # Warnings only: no request log scrolling past the presenter's terminal.
        logging.basicConfig(level=logging.WARNING, format=f"{PROG}: %(message)s")

    async def on_startup(self, app: web.Application) -> None:
        url, folder = url_for(self.host, self.port), f"{Path.cwd() / SAVE_FOLDER}{os.sep}"
        print(
            tr("serve_serving", self.lang, url=url, limit=self.max_sessions, folder=folder),
            flush=True,
        )

    def _check_host(self, request: web.Request) -> None:
        if not host_allowed(request.host, given=self.host):
            raise web.HTTPForbidden(text="this server answers only to its own address")

    async def _place(self) -> bool:
        """Whether a new tab may have an app, waiting a little for a place being freed.

        A tab closed and opened again at once would otherwise find its own old app still
        counted while it ends (it is given QUIT_GRACE_S to leave): the new tab waits for
        that app instead of being told the server is full. A server that is simply full
        answers after FULL_WAIT_S, the time it takes the server to learn of a closed tab.
        """
        if self.sessions < self.max_sessions:
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FULL_WAIT_S
        async with self._changed:
            while self.sessions >= self.max_sessions:
                if self.closing:
                    deadline = max(deadline, loop.time() + CLOSING_WAIT_S)
                left = deadline - loop.time()
                if left <= 0:
                    return False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), left)
        return True

    async def _count(self, sessions: int = 0, closing: int = 0) -> None:
        async with self._changed:
            self.sessions += sessions
            self.closing += closing
            self._changed.notify_all()

    def _full(self, request: web.Request) -> web.Response:
        lang, name = self.lang, self.title
        context = {
            "lang": lang,
            "title": tr("serve_full_title", lang, name=name),
            "heading": tr("serve_full_heading", lang, name=name),
            "text": tr("serve_full_text", lang, limit=self.max_sessions),
            "more": tr("serve_full_more", lang),
        }
        response = aiohttp_jinja2.render_template("full.html", request, context, status=503)
        response.headers["Retry-After"] = "10"
        return response

    async def handle_index(self, request: web.Request) -> web.Response:
        self._check_host(request)
        if not await self._place():
            return self._full(request)
        base = f"{request.scheme}://{request.host}"
        websocket = ("wss" if request.scheme == "https" else "ws") + f"://{request.host}/ws"
        lang = self.lang
        context = {
            # `?fontsize=N` as given; without it the page fits the text to its window
            "font_size": _int_or(request.query.get("fontsize", ""), DEFAULT_FONT),
            "fit_columns": FIT_COLUMNS,
            "fit_rows": FIT_ROWS,
            "cell_width": CELL_WIDTH_EM,
            "cell_height": CELL_HEIGHT_EM,
            "min_font": MIN_FONT,
            "max_font": MAX_FONT,
            "favicon": FAVICON,
            "starting": tr("serve_starting", lang, name=self.title),
            "ended": tr("serve_ended", lang),
            "again": tr("serve_again", lang),
            "app_websocket_url": websocket,
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
            "lang": self.lang,
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        self._check_host(request)
        return await super().handle_download(request)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        self._check_host(request)
        # A page on another site open in the presenter's browser could otherwise open this
        # socket and drive the app (which can save files): browsers always send Origin.
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise web.HTTPForbidden(text="this app only talks to its own page")
        if not await self._place() or self.sessions >= self.max_sessions:
            raise web.HTTPServiceUnavailable(text="every session is in use")
        self.sessions += 1  # counted before the next await: no two tabs take the last place
        try:
            return await self._run_session(request)
        finally:
            await self._count(sessions=-1)

    async def _run_session(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(heartbeat=15)
        width, height = clamp_size(
            _int_or(request.query.get("width", ""), 80),
            _int_or(request.query.get("height", ""), 24),
        )
        await websocket.prepare(request)
        service = BoundedAppService(self.command, websocket, self)
        try:
            await service.start(width, height)
            await relay(websocket, service)
        except asyncio.CancelledError:  # the server is stopping
            await websocket.close()
        finally:
            await self._count(closing=1)
            try:
                await service.end()
            finally:
                await self._count(closing=-1)
        return websocket


# The page sends a keystroke, a paste or a size: a paste of a long text is the largest.
MAX_MESSAGE_CHARS = 1_000_000


def read_message(text: object) -> tuple[object, object] | None:
    """(kind, data) of a message the page sends, or None for anything else: not text, too
    long, not JSON (a hundred thousand `[` exhaust the parser's stack: RecursionError), not
    a list with a kind first."""
    if not isinstance(text, str) or len(text) > MAX_MESSAGE_CHARS:
        return None
    try:
        kind, *rest = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None
    return kind, (rest[0] if rest else None)


async def relay(websocket: web.WebSocketResponse, service: AppService) -> None:
    """Pass what the browser sends to its app until the connection ends; a message it
    cannot read is dropped with one line in the log, and the session goes on."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        read = read_message(message.data)
        if read is None:
            size = len(message.data) if isinstance(message.data, str) else 0
            logging.getLogger(PROG).warning(
                "dropped a websocket message it cannot read (%d characters)", size
            )
            continue
        kind, data = read
        if kind == "stdin" and isinstance(data, str):
            await service.send_bytes(data.encode("utf-8", "replace"))
        elif kind == "resize" and isinstance(data, dict):
            width, height = data.get("width"), data.get("height")
            if isinstance(width, int) and isinstance(height, int):
                await service.set_terminal_size(width, height)
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await service.blur()
        elif kind == "focus":
            await service.focus()


def _int_or(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def say(line: str) -> None:
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)


def serve(args: argparse.Namespace) -> int:
    """`borrowed-keys serve` with its options parsed (demo/cli.py declares them).

    One language for all it says: `--lang`, else the locale's, as `tui` picks it. The
    terminal's lines, the page and every tab's app speak it (a tab's `l` switches that
    tab's app alone)."""
    lang = args.lang or default_lang()
    if not 0 < args.port < 65536:
        say(tr("serve_port_range", lang, port=args.port))
        return EXIT_BAD_INPUT
    if not 0 < args.max_sessions <= 1000:
        say(tr("serve_sessions_range", lang, n=args.max_sessions))
        return EXIT_BAD_INPUT
    if args.file:
        # Refuse a bad file here, once, rather than in every browser tab that connects.
        from core.scenarios.library import open_scenario

        try:
            open_scenario(args.file)
        except (ScenarioError, OSError) as exc:
            told = exc.in_language(lang) if isinstance(exc, ScenarioError) else exc
            print(" ".join(str(told).split()), file=sys.stderr)
            return EXIT_BAD_INPUT
    problem = bind_problem(args.host, args.port, lang)
    if problem is not None:
        say(problem)
        return EXIT_BAD_INPUT
    if not is_loopback(args.host):
        say(tr("serve_open", lang, host=args.host, port=args.port))
    server = AppServer(
        app_command(args, lang),
        args.host,
        args.port,
        max_sessions=args.max_sessions,
        lang=lang,
    )
    try:
        server.serve()
    except OSError as exc:  # the port was taken after bind_problem looked
        say(describe_bind_error(exc, args.host, args.port, lang))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        pass
    return 0
