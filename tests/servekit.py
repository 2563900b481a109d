"""`borrowed-keys serve` as a real process, for the tests that talk to it over a socket.

The server and the apps it starts run on the wall clock, so every wait here is a bounded
poll for something the server or an app does (never a sleep standing in for virtual time).
The server gets a process group of its own: every app it starts is in it, which is how the
tests count the apps and how the finalizer stops them all.
"""

import base64
import contextlib
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest

# Bounds on waiting for real processes: generous, since a start on a loaded machine (four
# test runs on two cores) can take many times its usual second or two; a healthy run never
# comes near them, only a hung one does.
START_TIMEOUT_S = 120.0  # the server answering on its port
STOP_TIMEOUT_S = 10.0
APP_TIMEOUT_S = 120.0  # an app started (or ended) for a connection


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(proc: "subprocess.Popen[str]", port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"serve exited with {proc.returncode}: {out} {err}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)  # wall-clock poll for a real process, bounded by the deadline
    pytest.fail(f"serve did not listen on port {port} within {START_TIMEOUT_S:.0f}s")


def stop(proc: "subprocess.Popen[str]") -> None:
    """Stop the server and every app it started (they share its new process group)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_TIMEOUT_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # apps still closing after the server left
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=STOP_TIMEOUT_S)


def start_serve(
    request: pytest.FixtureRequest, *args: str, cwd: Path | None = None
) -> tuple["subprocess.Popen[str]", str]:
    """`borrowed-keys serve ARGS` on a free loopback port; the process and its page's URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo.cli", "serve", "--port", str(port), "--lang", "en", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        start_new_session=True,  # its own process group: the finalizer stops the apps too
    )
    request.addfinalizer(lambda: stop(proc))
    wait_for_port(proc, port)
    return proc, f"http://127.0.0.1:{port}/"


def processes_in_group(pgid: int) -> list[int]:
    """Every live process in the group but its leader (the server): the apps it started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == pgid:
            continue
        with contextlib.suppress(OSError):
            # The command name is in parentheses and may hold spaces: split after it.
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if fields[0] != "Z" and int(fields[2]) == pgid:
                found.append(int(entry.name))
    return found


def blocked_writing(pgid: int) -> bool:
    """True when an app of the group waits to write into a full pipe (its stdout)."""
    for pid in processes_in_group(pgid):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/wchan").read_text() == "anon_pipe_write":
                return True
    return False


def idle(pgid: int) -> bool:
    """True when every app of the group sleeps waiting for input, none writing or working."""
    apps = processes_in_group(pgid)
    for pid in apps:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/wchan").read_text() != "do_epoll_wait":
                return False
    return bool(apps)


def wait_until(what: str, done: Callable[[], bool], timeout: float = APP_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f}s")
        time.sleep(0.1)  # wall-clock poll for real processes, bounded by the deadline


# -- a WebSocket client small enough to misbehave on purpose ---------------------------------


def handshake(
    url: str, *, host: str | None = None, origin: str | None = None, query: str = ""
) -> tuple[socket.socket, str]:
    """Open /ws on the server at `url`; the socket and the status line of the answer."""
    address = url.removeprefix("http://").rstrip("/")
    name, port = address.rsplit(":", 1)
    lines = [
        f"GET /ws{query} HTTP/1.1",
        f"Host: {host or address}",
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(),
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    conn = socket.create_connection((name, int(port)), timeout=APP_TIMEOUT_S)
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(1)
        if not chunk:
            break
        head += chunk
    return conn, head.split(b"\r\n", 1)[0].decode()


def send_json(conn: socket.socket, message: object) -> None:
    """One masked text frame, as a browser sends it."""
    payload = json.dumps(message).encode()
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x81, 0x80 | size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", 0x81, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    conn.sendall(header + mask + masked)


def read_some(conn: socket.socket, at_least: int) -> int:
    """Read until `at_least` bytes came from the app (it is up and drawing); bytes read."""
    total = 0
    while total < at_least:
        chunk = conn.recv(65536)
        if not chunk:
            break
        total += len(chunk)
    return total


def unread(conn: socket.socket) -> int:
    """Bytes the server has sent that this client has not read yet."""
    return int(struct.unpack("i", fcntl.ioctl(conn, termios.FIONREAD, b"\0" * 4))[0])


def get(url: str, *, host: str | None = None) -> tuple[int, str]:
    """A plain GET (with a Host header of our choosing); status and body."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(req, timeout=APP_TIMEOUT_S) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()
