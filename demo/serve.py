"""`borrowed-keys serve`: the app in a browser, for interviews over a video call.

textual-serve runs a web server; every browser tab that opens the page gets its own copy of
the app, started as a child process with the options given here (`python -m demo ...`).
Whoever reaches the port drives that copy, so the server listens on loopback unless told
otherwise, and says so in one line when it is told otherwise.
"""

import argparse
import errno
import ipaddress
import logging
import shlex
import socket
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server

from core.engine.config import Mode
from core.scenarios.format import ScenarioError
from demo.i18n import LANGS

PROG = "borrowed-keys serve"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Serve the Borrowed Keys app to a web browser (one app per browser tab).",
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="a scenario to open directly")
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    parser.add_argument("--lang", choices=LANGS, default=None, help="en or zh (default: locale)")
    parser.add_argument("--mode", choices=[m.value for m in Mode], default=None)
    parser.add_argument("--sandbox", action="store_true", help="open the sandbox directly")
    return parser


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs for each browser tab: this app, same options."""
    argv = [sys.executable, "-m", "demo"]
    if args.file:
        argv.append(args.file)
    if args.lang:
        argv += ["--lang", args.lang]
    if args.mode:
        argv += ["--mode", args.mode]
    if args.sandbox:
        argv.append("--sandbox")
    return shlex.join(argv)


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


def bind_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port, in one line; None when it can.

    Checked before the server starts so that a taken port is a sentence, not a traceback
    from deep inside aiohttp. (A port taken between this check and the bind is still caught
    around the server, with the same sentence.)
    """
    try:
        addresses = _addresses(host, port)
    except OSError as exc:
        return f"cannot listen on {host}: {exc.strerror or exc}"
    for family, addr in addresses:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            # The server sets SO_REUSEADDR too: a port left in TIME_WAIT is free to it.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(addr)
            except OSError as exc:
                return describe_bind_error(exc, host, port)
    return None


def describe_bind_error(exc: OSError, host: str, port: int) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} on {host} is in use; pick another with --port"
    if exc.errno == errno.EACCES:
        return f"port {port} needs more privileges; pick one above 1023 with --port"
    return f"cannot listen on {url_for(host, port)}: {exc.strerror or exc}"


class AppServer(Server):
    """textual-serve's server with a one-line banner and URLs taken from the request.

    The stock page writes the WebSocket address from the host and port the server was
    started with; behind an ssh tunnel on another local port, or when listening on 0.0.0.0,
    that address is wrong for the browser. Here it is the address the browser used.
    """

    def __init__(self, command: str, host: str, port: int) -> None:
        super().__init__(command, host=host, port=port, title="Borrowed Keys")

    def initialize_logging(self) -> None:
        # Warnings only: no request log scrolling past the presenter's terminal.
        logging.basicConfig(level=logging.WARNING, format=f"{PROG}: %(message)s")

    async def on_startup(self, app: web.Application) -> None:
        print(
            f"Serving Borrowed Keys at {url_for(self.host, self.port)} — Ctrl+C to stop",
            flush=True,
        )

    async def handle_index(self, request: web.Request) -> web.Response:
        base = f"{request.scheme}://{request.host}"
        websocket = ("wss" if request.scheme == "https" else "ws") + f"://{request.host}/ws"
        context = {
            "font_size": _int_or(request.query.get("fontsize", ""), 16),
            "app_websocket_url": websocket,
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        # A page on another site open in the presenter's browser could otherwise open this
        # socket and drive the app (which can save files): browsers always send Origin.
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise web.HTTPForbidden(text="this app only talks to its own page")
        return await super().handle_websocket(request)


def _int_or(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def say(line: str) -> None:
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    if not 0 < args.port < 65536:
        say(f"--port must be between 1 and 65535, not {args.port}")
        return EXIT_BAD_INPUT
    if args.file:
        # Refuse a bad file here, once, rather than in every browser tab that connects.
        from core.scenarios.library import open_scenario

        try:
            open_scenario(args.file)
        except (ScenarioError, OSError) as exc:
            print(" ".join(str(exc).split()), file=sys.stderr)
            return EXIT_BAD_INPUT
    problem = bind_problem(args.host, args.port)
    if problem is not None:
        say(problem)
        return EXIT_BAD_INPUT
    if not is_loopback(args.host):
        say(
            f"warning: listening on {args.host}: anyone who can reach port {args.port} "
            "controls the app"
        )
    server = AppServer(app_command(args), args.host, args.port)
    try:
        server.serve()
    except OSError as exc:  # the port was taken after bind_problem looked
        say(describe_bind_error(exc, args.host, args.port))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        pass
    return 0
