"""`borrowed-keys serve` against a hostile or careless browser: a real server, raw sockets.

No Chromium here (tests/serve/test_serve_browser.py drives one): a small WebSocket client sends
exactly the headers and frames a misbehaving page, or a DNS-rebinding attacker, would.
"""

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from tests.servekit import (
    APP_TIMEOUT_S,
    blocked_writing,
    get,
    handshake,
    idle,
    processes_in_group,
    read_some,
    send_json,
    start_serve,
    unread,
    wait_until,
)

FIRST_SCREEN_BYTES = 2000  # the picker's first frame is well over this
BIG_FRAME = 100_000  # the picker at 80x24 is 6 kB; at 500x200 (the most served) 128 kB


@pytest.fixture
def served(request: pytest.FixtureRequest) -> str:
    return start_serve(request)[1]


def _port(url: str) -> str:
    return url.rstrip("/").rsplit(":", 1)[1]


def test_a_rebound_host_name_cannot_open_the_socket_or_the_page(served: str) -> None:
    """DNS rebinding: evil.example made to resolve to 127.0.0.1. The browser then sends the
    attacker's name as Host and as Origin, which agree with each other: only the name tells."""
    port = _port(served)
    conn, status = handshake(
        served, host=f"evil.example:{port}", origin=f"http://evil.example:{port}"
    )
    conn.close()
    assert status.startswith("HTTP/1.1 403"), status
    code, _ = get(served, host=f"evil.example:{port}")
    assert code == 403
    # The names of this machine's loopback stay welcome, each from its own page.
    for name in ("localhost", "127.0.0.1", "[::1]"):
        conn, status = handshake(served, host=f"{name}:{port}", origin=f"http://{name}:{port}")
        conn.close()
        assert status.startswith("HTTP/1.1 101"), (name, status)
    # A loopback page of another port (another local server) is another site.
    conn, status = handshake(served, host=f"localhost:{port}", origin="http://localhost:1")
    conn.close()
    assert status.startswith("HTTP/1.1 403"), status


def test_the_host_given_with_host_is_accepted_and_no_other_name() -> None:
    from demo.serve import host_allowed

    assert host_allowed("demo.lan:8000", given="demo.lan")
    assert host_allowed("localhost:8000", given="demo.lan")
    assert not host_allowed("evil.example:8000", given="demo.lan")
    assert not host_allowed("demo.lan.evil.example:8000", given="demo.lan")
    assert not host_allowed("", given="127.0.0.1")


def test_an_app_ends_when_its_connection_drops_even_after_a_huge_resize(
    request: pytest.FixtureRequest,
) -> None:
    proc, url = start_serve(request)
    conn, status = handshake(url, query="?width=80&height=24")
    assert status.startswith("HTTP/1.1 101"), status
    assert read_some(conn, FIRST_SCREEN_BYTES) >= FIRST_SCREEN_BYTES
    assert processes_in_group(proc.pid), "no app was started for the connection"
    send_json(conn, ["resize", {"width": 3000, "height": 1000}])
    # This client reads nothing more. Either the app waits on its pipe to write a frame of
    # three million cells (the server stopped reading it once the socket's buffers were
    # full), or it has sent a big frame whole and waits for input; then the connection
    # drops, with no close frame.
    wait_until(
        "the app waits to send a huge frame, or has sent a big one",
        lambda: blocked_writing(proc.pid) or (unread(conn) >= BIG_FRAME and idle(proc.pid)),
    )
    conn.close()
    wait_until("the app ended with its connection", lambda: not processes_in_group(proc.pid))
    assert proc.poll() is None  # the server itself goes on


def test_sessions_are_capped_and_the_next_browser_gets_a_page_saying_so(
    request: pytest.FixtureRequest,
) -> None:
    proc, url = start_serve(request, "--max-sessions", "1")
    first, status = handshake(url)
    assert status.startswith("HTTP/1.1 101"), status
    assert read_some(first, FIRST_SCREEN_BYTES) >= FIRST_SCREEN_BYTES

    code, page = get(url)
    assert code == 503
    assert "<title>Borrowed Keys: all sessions in use</title>" in page
    assert "at most 1 session(s) at once" in page and "Close a tab" in page
    second, status = handshake(url)
    second.close()
    assert status.startswith("HTTP/1.1 503"), status
    assert len(processes_in_group(proc.pid)) >= 1

    first.close()  # its app ends, and the place is free again
    wait_until("the first app ended", lambda: not processes_in_group(proc.pid))
    code, page = get(url)
    assert code == 200 and "data-session-websocket-url" in page


def test_a_tab_closed_and_opened_again_at_once_gets_an_app_not_the_full_page(
    request: pytest.FixtureRequest,
) -> None:
    _proc, url = start_serve(request, "--max-sessions", "1")
    first, status = handshake(url)
    assert status.startswith("HTTP/1.1 101"), status
    assert read_some(first, FIRST_SCREEN_BYTES) >= FIRST_SCREEN_BYTES
    first.close()
    # At once: the old tab's app is still ending, and the new one waits for its place.
    code, page = get(url)
    assert code == 200 and "data-session-websocket-url" in page
    second, status = handshake(url)
    assert status.startswith("HTTP/1.1 101"), status
    assert read_some(second, FIRST_SCREEN_BYTES) >= FIRST_SCREEN_BYTES
    second.close()


# -- one app and its connection, in this process ----------------------------------------------

# An app that never reads its input (so never the request to quit) and writes without end.
FLOODER = "exec " + shlex.join(
    [
        sys.executable,
        "-c",
        "import sys\n"
        "print('__GANGLION__', flush=True)\n"
        "while True:\n"
        "    sys.stdout.buffer.write(b'D' + (4096).to_bytes(4, 'big') + b'x' * 4096)\n",
    ]
)


class ClientThatStoppedReading:
    """A WebSocket whose browser reads nothing: every send waits, until the line drops."""

    def __init__(self) -> None:
        self.closed = False
        self.sending = asyncio.Event()
        self._dropped = asyncio.Event()

    async def send_bytes(self, data: bytes) -> None:
        self.sending.set()
        await self._dropped.wait()
        raise ConnectionResetError("Cannot write to closing transport")

    async def send_str(self, data: str) -> None:
        await self.send_bytes(data.encode())

    async def close(self) -> None:
        self.drop()

    def drop(self) -> None:
        self.closed = True
        self._dropped.set()


async def test_an_app_that_does_not_leave_when_asked_is_ended() -> None:
    from textual_serve.server import Server

    from demo.serve import BoundedAppService
    from demo.serve_internals import app_process

    client = ClientThatStoppedReading()
    service = BoundedAppService(FLOODER, client, Server("unused"))  # type: ignore[arg-type]
    await service.start(80, 24)
    process = app_process(service)
    assert process is not None
    try:
        await asyncio.wait_for(client.sending.wait(), APP_TIMEOUT_S)
        client.drop()
        await asyncio.wait_for(service.end(), APP_TIMEOUT_S)
        assert process.returncode is not None
    finally:
        if process.returncode is None:
            process.kill()


def test_every_textual_serve_internal_used_is_still_there() -> None:
    from pathlib import Path

    import textual_serve
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager

    from demo import serve_internals

    async def nothing(*_: object) -> None:
        return None

    service = AppService(
        "true",
        write_bytes=nothing,
        write_str=nothing,
        close=nothing,
        download_manager=DownloadManager(),
    )
    assert [name for name in serve_internals.INTERNALS if not hasattr(service, name)] == []
    assert serve_internals.app_process(service) is None  # nothing started yet
    static = Path(textual_serve.__file__).parent / "static"
    script = (static / "js" / "textual.js").read_text(encoding="utf-8")
    assert [name for name in serve_internals.PAGE_CONTRACT if name not in script] == []
    for asset in serve_internals.STATIC_ASSETS:
        assert (static / asset).is_file(), asset


def test_a_max_sessions_out_of_bounds_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from demo.cli import main

    assert main(["serve", "--max-sessions", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "borrowed-keys serve: --max-sessions must be between 1 and 1000, not 0\n"


@pytest.mark.parametrize(("locale_name", "said"), [("zh_CN.UTF-8", "zh"), ("C.UTF-8", "en")])
def test_serve_without_lang_speaks_the_locale_and_so_does_every_tab(
    locale_name: str, said: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One language for all serve says: what tui would pick, in the terminal and the tabs."""
    from demo.cli import main

    for var in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", locale_name)
    lines = {
        "zh": "borrowed-keys serve: --max-sessions 必须在 1 到 1000 之间，这里是 0",
        "en": "borrowed-keys serve: --max-sessions must be between 1 and 1000, not 0",
    }
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "t"\nmode = "corect"\n', encoding="utf-8")
    errors = {"zh": "没有 “corect” 这个模式", "en": 'unknown mode "corect"'}
    with pytest.MonkeyPatch.context() as m:
        told: list[str] = []
        m.setattr("demo.serve.say", lambda line: told.append(line))
        assert main(["serve", "--max-sessions", "0"]) == 2
        assert [f"borrowed-keys serve: {line}" for line in told] == [lines[said]]
    with pytest.MonkeyPatch.context() as m:
        printed: list[str] = []
        m.setattr("builtins.print", lambda *a, **k: printed.append(" ".join(map(str, a))))
        assert main(["serve", str(bad)]) == 2
        assert len(printed) == 1 and errors[said] in printed[0], printed
    started: list[tuple[str, str]] = []

    class Server:
        def __init__(self, command: str, *_: object, lang: str, **__: object) -> None:
            started.append((command, lang))

        def serve(self) -> None:
            pass

    monkeypatch.setattr("demo.serve.AppServer", Server)
    monkeypatch.setattr("demo.serve.bind_problem", lambda *a: None)
    assert main(["serve", "01_fog"]) == 0
    ((command, lang),) = started
    assert lang == said and command.endswith(f"01_fog --lang {said}")
