"""Many machines on one box: each worker process in a network namespace of its own.

Every worker reaches PostgreSQL over TCP on a veth pair of its own (addresses in
169.254.213.0/24, on links this test makes and removes; nothing leaves the machine). The
server listens on a Unix socket, so a small forwarder in this process accepts each link's
TCP connections and relays them to it. Then:
- one worker's link is cut while it holds a lease (a real partition: its packets vanish, its
  calls hang), long enough for another worker to take the task over, then healed;
- one worker runs under a clock skewed by minutes (libfaketime): nothing changes, because the
  database's clock judges every lease.
Afterwards every task is done exactly once and the safety checker finds nothing.

It needs root, `ip netns` and libfaketime (`.ci/run` installs it when missing); elsewhere it
is skipped with the reason.
"""

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from core.engine.backends import postgresql as backend
from core.engine.records import EventRow
from core.sim.checker import SafetyChecker
from tests.pgserver_kit import with_schema
from tests.real.test_real_workers import (
    ROOT,
    TASKS,
    TTL_MS,
    Fleet,
    approve_waiting,
    check_consistent,
    read_state,
    seed_db,
    task_rows,
)

pytestmark = pytest.mark.slow

WORKERS = ("w1", "w2", "w3")
PARTITIONED, SKEWED = "w1", "w3"
SKEW = "+5m"  # the skewed worker's clock runs five minutes ahead
PORT = 15432
PREFIX = f"bk{os.getpid() % 100000}"


def _why_not() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root on Linux to make network namespaces"
    if shutil.which("ip") is None:
        return "needs iproute2 (`ip`)"
    if shutil.which("faketime") is None:
        return "needs libfaketime (`apt-get install faketime`; .ci/run installs it)"
    probe = f"{PREFIX}probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` is not allowed here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", "netns", "exec", ns, "ip", *args] if ns else ["ip", *args]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


class Links:
    """One namespace per worker, each joined to this namespace by a veth pair."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str]] = []  # (namespace, host-side link)

    def add(self, index: int) -> tuple[str, str, str]:
        """(namespace, the server's address as the namespace sees it, the ns-side link)."""
        ns, host_if, ns_if = f"{PREFIX}n{index}", f"{PREFIX}h{index}", f"{PREFIX}p{index}"
        host_ip, ns_ip = f"169.254.213.{4 * index + 1}", f"169.254.213.{4 * index + 2}"
        _ip("netns", "add", ns)
        self.made.append((ns, host_if))
        _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _ip("link", "set", ns_if, "netns", ns)
        _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("addr", "add", f"{ns_ip}/30", "dev", ns_if, ns=ns)
        _ip("link", "set", ns_if, "up", ns=ns)
        _ip("link", "set", "lo", "up", ns=ns)
        return ns, host_ip, ns_if

    def remove(self) -> None:
        for ns, host_if in self.made:
            subprocess.run(["ip", "link", "del", host_if], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class Forwarder:
    """Accepts TCP connections on the links' host addresses and relays them to the server."""

    def __init__(self, server_url: str) -> None:
        info = psycopg.conninfo.conninfo_to_dict(backend.Target.parse(server_url).conninfo)
        host = str(info.get("host") or "localhost")
        port = int(str(info.get("port") or 5432))
        self.unix = f"{host}/.s.PGSQL.{port}" if host.startswith("/") else None
        self.tcp = (host, port)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.servers: list[asyncio.Server] = []

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(OSError):
            writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.unix is not None:
            up_reader, up_writer = await asyncio.open_unix_connection(self.unix)
        else:
            up_reader, up_writer = await asyncio.open_connection(*self.tcp)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    def listen(self, address: str) -> None:
        async def start() -> None:
            self.servers.append(await asyncio.start_server(self._client, address, PORT))

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(timeout=10)

    def close(self) -> None:
        async def stop() -> None:
            for server in self.servers:
                server.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


class NetnsFleet(Fleet):
    """Worker processes, each in its namespace, reaching the server at its own address."""

    def __init__(self, schema_url: str, logs: Path, homes: dict[str, tuple[str, str]]) -> None:
        super().__init__(schema_url, logs)  # type: ignore[arg-type]
        self.homes = homes  # worker -> (namespace, URL as seen from there)

    def start(self, wid: str, *extra: str) -> None:
        ns, url = self.homes[wid]
        skew = ["faketime", "-f", SKEW] if wid == SKEWED else []
        cmd = [
            *("ip", "netns", "exec", ns, *skew, sys.executable, "-m", "core.tools.realworker"),
            *("worker", "--db", url, "--id", wid, "--ttl", "1500ms"),
            *("--heartbeat-every", "400ms", "--poll-every", "150ms", "--exit-when-idle"),
            *("--max-seconds", "90", *extra),
        ]
        out = (self.logs / f"{wid}.out").open("ab")
        err = (self.logs / f"{wid}.err").open("ab")
        self.procs[wid] = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        out.close()
        err.close()


def _holders(url: str) -> dict[str, str]:
    schema = backend.Target.parse(url).schema
    with psycopg.connect(backend.Target.parse(url).conninfo, autocommit=True) as conn:
        rows = conn.execute(
            f"SELECT owner_id, task_id FROM \"{schema}\".agent_tasks WHERE status = 'running'"
        ).fetchall()
    return {owner: task for owner, task in rows if owner}


@pytest.fixture
def netns_fleet(postgres_url: str, tmp_path: Path) -> Iterator[NetnsFleet]:
    reason = _why_not()
    if reason is not None:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    url = with_schema(postgres_url)
    schema = backend.Target.parse(url).schema
    seed_db(url)  # type: ignore[arg-type]
    links = Links()
    forwarder = Forwarder(postgres_url)
    try:
        homes: dict[str, tuple[str, str]] = {}
        for index, wid in enumerate(WORKERS, start=1):
            ns, host_ip, _ns_if = links.add(index)
            forwarder.listen(host_ip)
            homes[wid] = (
                ns,
                f"postgresql://postgres@{host_ip}:{PORT}/postgres?schema={schema}"
                "&connect_timeout=5",
            )
        logs = tmp_path / "logs"
        logs.mkdir()
        fleet = NetnsFleet(url, logs, homes)
        yield fleet
        fleet.stop_all()
    finally:
        forwarder.close()
        links.remove()
        with psycopg.connect(backend.Target.parse(url).conninfo, autocommit=True) as conn:
            backend.drop_schema(conn, schema)


def _moved_on(url: str, task: str) -> bool:
    """Whether the task is done, or its latest holder (not the partitioned worker) has
    written a line of the register for it after its claim."""
    state = read_state(url)  # type: ignore[arg-type]
    if task_rows(state)[task].status == "done":
        return True
    lines = [e for e in state["events"] if e.task_id == task]
    claims = [e for e in lines if e.event == "claimed"]
    if not claims or claims[-1].worker_id == PARTITIONED:
        return False
    holder, since = claims[-1].worker_id, claims[-1].seq
    return any(e.seq > since and e.worker_id == holder for e in lines)


def test_a_partitioned_and_a_skewed_worker_change_nothing(netns_fleet: NetnsFleet) -> None:
    fleet = netns_fleet
    url = str(fleet.db)
    started = time.monotonic()
    for wid in WORKERS:
        fleet.start(wid)
    # Cut the partitioned worker's link while it holds a lease; heal it once another worker
    # has taken that task over.
    cut_task: str | None = None
    while time.monotonic() - started < 30:
        cut_task = _holders(url).get(PARTITIONED)
        if cut_task is not None:
            break
        time.sleep(0.05)
    assert cut_task is not None, "the worker to partition never held a lease"
    ns = fleet.homes[PARTITIONED][0]
    ns_if = f"{PREFIX}p{WORKERS.index(PARTITIONED) + 1}"
    _ip("link", "set", ns_if, "down", ns=ns)
    cut_at = time.monotonic()
    taken_over = False
    while time.monotonic() - cut_at < 30:
        owner = {task: who for who, task in _holders(url).items()}.get(cut_task)
        state = task_rows(read_state(url))  # type: ignore[arg-type]
        if (owner not in (None, PARTITIONED)) or state[cut_task].status == "done":
            taken_over = True
            break
        time.sleep(0.1)
    # Healed once the new holder has worked under its lease (the register says so), so the
    # partitioned worker comes back to a task that has moved on.
    while taken_over and time.monotonic() - cut_at < 30 and not _moved_on(url, cut_task):
        time.sleep(0.1)
    _ip("link", "set", ns_if, "up", ns=ns)
    assert taken_over, f"nobody took {cut_task} over from the partitioned worker"

    while time.monotonic() - started < 90:
        approve_waiting(url)  # type: ignore[arg-type]
        state = read_state(url)  # type: ignore[arg-type]
        if all(r.status == "done" for r in task_rows(state).values()):
            break
        time.sleep(0.3)
    deadline = time.monotonic() + 30
    while fleet.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    codes = fleet.stop_all()
    errors = fleet.stderr()
    assert "Traceback" not in errors, errors
    assert set(codes.values()) == {0}, (codes, errors)

    state = read_state(url)  # type: ignore[arg-type]
    check_consistent(state)
    events: list[EventRow] = state["events"]
    tasks = task_rows(state)
    assert {t: r.status for t, r in tasks.items()} == {t: "done" for t, *_ in TASKS}
    completed = Counter(e.task_id for e in events if e.event == "completed")
    assert completed == Counter({t: 1 for t, *_ in TASKS})
    claims = [e for e in events if e.event == "claimed"]
    fences = [e.fence_token for e in claims]
    assert len(fences) == len(set(fences))
    # The cut task changed hands; the skewed worker worked like the others.
    assert len([e for e in claims if e.task_id == cut_task]) >= 2
    assert any(e.worker_id == SKEWED for e in claims)
    # Every event was judged by the database's clock: the skewed worker's are not minutes
    # ahead of the others'.
    assert max(e.at for e in events) - min(e.at for e in events) < 120_000
    checker = SafetyChecker(ttl_ms=TTL_MS)
    for e in events:
        checker.observe(e)
    assert dict(checker.violations) == {}
    for key, *_rest, count in state["effects"]:
        assert count == 1, key
