"""The service's own books: the newest fence token it has seen per key, the artifacts it
took, the charges it made, the first reply to each idempotency key, and every request's
verdict. One SQLite file, never the lease store's: the service knows leases only by the
tokens its callers show it.

"所有下游写入都必须携带这个 token；存储层或状态机只接受当前最大的 token": a write is taken
only with a token not older than the newest this service has seen for its key.
"""

import asyncio
import contextlib
import enum
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fences (key TEXT PRIMARY KEY, newest INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS artifacts (
  key TEXT PRIMARY KEY, value TEXT NOT NULL, token INTEGER, writer TEXT, at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS charges (
  id INTEGER PRIMARY KEY, task TEXT NOT NULL, memo TEXT NOT NULL, amount INTEGER NOT NULL,
  idempotency_key TEXT, at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS replies (
  idempotency_key TEXT PRIMARY KEY, request TEXT NOT NULL, status INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS history (
  seq INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, endpoint TEXT NOT NULL, key TEXT,
  token INTEGER, newest INTEGER, idempotency_key TEXT, verdict TEXT NOT NULL,
  detail TEXT NOT NULL
);
"""


class Endpoint(enum.StrEnum):
    ARTIFACT = "artifact"
    CHARGE = "charge"


class Verdict(enum.StrEnum):
    """What the service answered one request."""

    ACCEPTED = "accepted"  # an artifact written
    STALE_TOKEN = "stale_token"  # 409: a token older than the newest seen for the key
    CHARGED = "charged"  # a new charge
    REPLAYED = "replayed"  # the first reply to this idempotency key, again
    KEY_REUSED = "key_reused"  # 409: the key came with other parameters
    BAD_REQUEST = "bad_request"  # 400: what is missing or wrong, in words


class ServiceRule(enum.StrEnum):
    """What the judge checks in the service's books."""

    # "存储层或状态机只接受当前最大的 token"
    NO_STALE_WRITE = "no_stale_write"  # no write taken with a token older than one seen
    # "Idempotency Key 让重放调用不炸副作用"
    NO_CHARGE_TWICE = "no_charge_twice"  # no task charged twice for the same thing


# The judge's sentences, in English and Chinese: a finding keeps its facts and is said in
# the reader's language ("No English words, ids or unit letters on Chinese screens": a
# charge's id is said by its number there).
FINDING_WORDS: dict[str, tuple[str, str]] = {
    "stale_write": (
        "the service took a write to {key} with fence token {token} after it had seen {seen}"
        " (request {seq})",
        "下游服务已经见过围栏令牌 {seen}，却仍接受了对 {key} 的写入，所带令牌是更旧的 {token}"
        "（第 {seq} 次请求）",
    ),
    "unfenced_write": (
        "the service took a write to {key} with no fence token after it had seen {seen}"
        " (request {seq})",
        "下游服务已经见过围栏令牌 {seen}，却仍接受了对 {key} 的一次不带令牌的写入"
        "（第 {seq} 次请求）",
    ),
    "charged_twice": (
        "{task} was charged {n} times for {memo} ({ids})",
        "{task} 为同一件事（{memo}）被扣了 {n} 次款（第 {numbers} 笔扣款）",
    ),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken rule: its facts, said in either language (`sentence`)."""

    rule: ServiceRule
    words: str  # its sentence's key in FINDING_WORDS
    facts: tuple[tuple[str, Any], ...]

    def sentence(self, lang: str = "en") -> str:
        en, zh = FINDING_WORDS[self.words]
        facts = dict(self.facts)
        if "ids" in facts:
            facts["numbers"] = "、".join(i.removeprefix("ch_") for i in facts["ids"].split(", "))
        return (zh if lang == "zh" else en).format(**facts)

    @property
    def message(self) -> str:
        """The sentence in English."""
        return self.sentence("en")


@dataclass(frozen=True, slots=True)
class Reply:
    """What the service answers: an HTTP status and a JSON body."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class Books:
    """The service's books in one SQLite file, on aiosqlite: a request waits for the file on
    aiosqlite's thread, never on the event loop the service answers on. Each request is one
    transaction (BEGIN IMMEDIATE); one request's transaction at a time holds the connection.

    Open with `await Books.open(path)`; `await books.close()` when done.
    """

    def __init__(self, conn: aiosqlite.Connection, path: Path, *, fencing: bool) -> None:
        self.path = path
        # fencing=False is the mistake "只有心跳，没有围栏" on the downstream's side: it
        # takes every write, and only its history shows the stale ones.
        self.fencing = fencing
        self._conn = conn
        # One connection for all the service's requests: a transaction's statements must not
        # have another request's statements land between them.
        self._turn = asyncio.Lock()

    @classmethod
    async def open(cls, path: str | Path, *, fencing: bool = True) -> "Books":
        conn = await aiosqlite.connect(Path(path), isolation_level=None)
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            await conn.execute("PRAGMA busy_timeout = 2000")
            await conn.executescript(_SCHEMA)
        except BaseException:
            await conn.close()
            raise
        return cls(conn, Path(path), fencing=fencing)

    async def close(self) -> None:
        await self._conn.close()

    @asynccontextmanager
    async def _txn(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._turn:
            conn = self._conn
            try:
                await conn.execute("BEGIN IMMEDIATE")
                yield conn
            except BaseException:
                # Statements run in the order asked: a BEGIN whose wait was cancelled still
                # runs before this, and is rolled back by it.
                with contextlib.suppress(sqlite3.OperationalError):
                    await conn.execute("ROLLBACK")
                raise
            await conn.execute("COMMIT")

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._turn:
            yield self._conn

    async def _log(
        self,
        conn: aiosqlite.Connection,
        endpoint: Endpoint,
        verdict: Verdict,
        detail: dict[str, Any],
        *,
        key: str | None = None,
        token: int | None = None,
        newest: int | None = None,
        idempotency_key: str | None = None,
    ) -> None:
        await conn.execute(
            "INSERT INTO history (at_ms, endpoint, key, token, newest, idempotency_key,"
            " verdict, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                _now_ms(),
                endpoint,
                key,
                token,
                newest,
                idempotency_key,
                verdict,
                json.dumps(detail, sort_keys=True, ensure_ascii=False),
            ),
        )

    # -- the artifact store ------------------------------------------------------------------

    async def write_artifact(self, key: str, value: str, token: int | None, writer: str) -> Reply:
        async with self._txn() as conn:
            row = await _one(conn, "SELECT newest FROM fences WHERE key = ?", (key,))
            newest = None if row is None else int(row[0])
            if self.fencing and token is None:
                message = f"a write to {key} must carry a fence token (the Fence-Token header)"
                await self._log(
                    conn,
                    Endpoint.ARTIFACT,
                    Verdict.BAD_REQUEST,
                    {"message": message},
                    key=key,
                    newest=newest,
                )
                return Reply(400, {"error": Verdict.BAD_REQUEST, "message": message})
            if self.fencing and token is not None and newest is not None and token < newest:
                message = (
                    f"fence token {token} is older than {newest}, the newest this service "
                    f"has seen for {key}: the write is refused"
                )
                await self._log(
                    conn,
                    Endpoint.ARTIFACT,
                    Verdict.STALE_TOKEN,
                    {"message": message, "writer": writer},
                    key=key,
                    token=token,
                    newest=newest,
                )
                return Reply(
                    409,
                    {
                        "error": Verdict.STALE_TOKEN,
                        "message": message,
                        "token": token,
                        "newest": newest,
                    },
                )
            if token is not None and (newest is None or token > newest):
                await conn.execute(
                    "INSERT INTO fences (key, newest) VALUES (?, ?) ON CONFLICT (key) DO UPDATE"
                    " SET newest = excluded.newest",
                    (key, token),
                )
            await conn.execute(
                "INSERT INTO artifacts (key, value, token, writer, at_ms) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value,"
                " token = excluded.token, writer = excluded.writer, at_ms = excluded.at_ms",
                (key, value, token, writer, _now_ms()),
            )
            await self._log(
                conn,
                Endpoint.ARTIFACT,
                Verdict.ACCEPTED,
                {"writer": writer},
                key=key,
                token=token,
                newest=newest,
            )
            return Reply(200, {"key": key, "value": value, "token": token, "writer": writer})

    async def artifact(self, key: str) -> dict[str, Any] | None:
        async with self._reading() as conn:
            row = await _one(
                conn, "SELECT key, value, token, writer FROM artifacts WHERE key = ?", (key,)
            )
        if row is None:
            return None
        return {"key": row[0], "value": row[1], "token": row[2], "writer": row[3]}

    # -- the payments-like tool ---------------------------------------------------------------

    async def charge(
        self,
        task: str,
        memo: str,
        amount: int,
        idempotency_key: str | None,
        *,
        caller: str | None = None,
    ) -> Reply:
        """A charge; with an idempotency key, as Stripe does: the same key returns the first
        reply and charges nothing, and the key with other parameters is refused. `caller`
        (who asked) is kept in the history only, never compared: a redo by another worker
        under the same key is the same request."""
        who = {} if caller is None else {"caller": caller}
        request = json.dumps({"task": task, "memo": memo, "amount": amount}, sort_keys=True)
        async with self._txn() as conn:
            if idempotency_key is not None:
                found = await _one(
                    conn,
                    "SELECT request, status, body FROM replies WHERE idempotency_key = ?",
                    (idempotency_key,),
                )
                if found is not None and found[0] != request:
                    message = (
                        f"idempotency key {idempotency_key} was first used with other "
                        f"parameters ({found[0]}); nothing was charged"
                    )
                    await self._log(
                        conn,
                        Endpoint.CHARGE,
                        Verdict.KEY_REUSED,
                        {"message": message},
                        idempotency_key=idempotency_key,
                    )
                    return Reply(409, {"error": Verdict.KEY_REUSED, "message": message})
                if found is not None:
                    await self._log(
                        conn,
                        Endpoint.CHARGE,
                        Verdict.REPLAYED,
                        {"task": task, "memo": memo, "amount": amount, **who},
                        idempotency_key=idempotency_key,
                    )
                    return Reply(int(found[1]), json.loads(found[2]), replayed=True)
            cur = await conn.execute(
                "INSERT INTO charges (task, memo, amount, idempotency_key, at_ms)"
                " VALUES (?, ?, ?, ?, ?)",
                (task, memo, amount, idempotency_key, _now_ms()),
            )
            charge_id = cur.lastrowid
            body = {"id": f"ch_{charge_id}", "task": task, "memo": memo, "amount": amount}
            if idempotency_key is not None:
                await conn.execute(
                    "INSERT INTO replies (idempotency_key, request, status, body)"
                    " VALUES (?, ?, ?, ?)",
                    (idempotency_key, request, 200, json.dumps(body, sort_keys=True)),
                )
            await self._log(
                conn,
                Endpoint.CHARGE,
                Verdict.CHARGED,
                {**body, **who},
                idempotency_key=idempotency_key,
            )
            return Reply(200, body)

    async def refuse(self, endpoint: Endpoint, message: str) -> Reply:
        async with self._txn() as conn:
            await self._log(conn, endpoint, Verdict.BAD_REQUEST, {"message": message})
        return Reply(400, {"error": Verdict.BAD_REQUEST, "message": message})

    # -- what the judge reads ----------------------------------------------------------------

    async def charges(self) -> list[dict[str, Any]]:
        async with self._reading() as conn:
            return await _charges(conn)

    async def history(self) -> list[dict[str, Any]]:
        async with self._reading() as conn:
            return await _history(conn)

    async def export(self) -> dict[str, Any]:
        """Everything the judge reads and a saved run keeps, read in one turn, and the
        artifacts as they stand (what a screen's ledger of the service shows)."""
        async with self._reading() as conn:
            charges, history = await _charges(conn), await _history(conn)
            artifacts = await _artifacts(conn)
        return {
            "fencing": self.fencing,
            "charges": charges,
            "history": history,
            "artifacts": artifacts,
        }


async def read_books(path: str | Path, *, fencing: bool = True) -> dict[str, Any]:
    """The books in the file `path` as they stand (`Books.export`), on a connection of the
    caller's own: a reader beside the running service."""
    books = await Books.open(path, fencing=fencing)
    try:
        return await books.export()
    finally:
        await books.close()


# Every call below is one trip to aiosqlite's thread and back (`execute_fetchall`, not a
# cursor's execute, fetch and close: three): a request's transaction is five or six trips.


async def _one(conn: aiosqlite.Connection, sql: str, params: tuple[object, ...]) -> Any:
    rows = list(await conn.execute_fetchall(sql, params))
    return rows[0] if rows else None


async def _all(conn: aiosqlite.Connection, sql: str) -> list[Any]:
    return list(await conn.execute_fetchall(sql))


async def _artifacts(conn: aiosqlite.Connection) -> list[dict[str, Any]]:
    rows = await _all(conn, "SELECT key, value, token, writer, at_ms FROM artifacts ORDER BY at_ms")
    names = ("key", "value", "token", "writer", "at_ms")
    return [dict(zip(names, r, strict=True)) for r in rows]


async def _charges(conn: aiosqlite.Connection) -> list[dict[str, Any]]:
    rows = await _all(
        conn, "SELECT id, task, memo, amount, idempotency_key FROM charges ORDER BY id"
    )
    return [
        {
            "id": f"ch_{r[0]}",
            "task": r[1],
            "memo": r[2],
            "amount": r[3],
            "idempotency_key": r[4],
        }
        for r in rows
    ]


async def _history(conn: aiosqlite.Connection) -> list[dict[str, Any]]:
    rows = await _all(
        conn,
        "SELECT seq, at_ms, endpoint, key, token, newest, idempotency_key, verdict, detail"
        " FROM history ORDER BY seq",
    )
    names = (
        "seq",
        "at_ms",
        "endpoint",
        "key",
        "token",
        "newest",
        "idempotency_key",
        "verdict",
        "detail",
    )
    return [
        {**dict(zip(names[:-1], r[:-1], strict=True)), "detail": json.loads(r[-1])} for r in rows
    ]


def judge(history: list[dict[str, Any]], charges: list[dict[str, Any]]) -> list[Finding]:
    """The service's rules over its own books: what it took, whatever it was told."""
    found: list[Finding] = []
    newest: dict[str, int] = {}
    for entry in history:
        if entry["endpoint"] != Endpoint.ARTIFACT or entry["verdict"] != Verdict.ACCEPTED:
            continue
        key, token = entry["key"], entry["token"]
        seen = newest.get(key)
        if seen is not None and (token is None or token < seen):
            facts = {"key": key, "token": token, "seen": seen, "seq": entry["seq"]}
            said = "unfenced_write" if token is None else "stale_write"
            found.append(Finding(ServiceRule.NO_STALE_WRITE, said, tuple(facts.items())))
        if token is not None and (seen is None or token > seen):
            newest[key] = token
    by_purpose: dict[tuple[str, str], list[str]] = {}
    for charge in charges:
        by_purpose.setdefault((charge["task"], charge["memo"]), []).append(charge["id"])
    for (task, memo), ids in by_purpose.items():
        if len(ids) > 1:
            facts = {"task": task, "memo": memo, "n": len(ids), "ids": ", ".join(ids)}
            found.append(
                Finding(ServiceRule.NO_CHARGE_TWICE, "charged_twice", tuple(facts.items()))
            )
    return found
