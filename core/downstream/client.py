"""A worker's side of the downstream service: every write carries the lease's fence token,
every charge its idempotency key (unless the run leaves them out, on purpose)."""

import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from core.downstream.service import FENCE_HEADER, IDEMPOTENCY_HEADER, REPLAYED_HEADER
from core.engine.errors import BorrowedKeysError, Why


class DownstreamRefused(BorrowedKeysError):
    """The downstream service said no; `status` is its HTTP status, `error` its word for why
    (`stale_token`, `key_reused`, `bad_request`) and the message its sentence."""

    why = Why.DOWNSTREAM_REFUSED

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        message = str(body.get("message", body))
        super().__init__(f"the downstream service refused ({status}): {message}", message=message)
        self.status = status
        self.error = str(body.get("error", ""))
        self.body = body


@dataclass(frozen=True, slots=True)
class Charged:
    """A charge's reply: `replayed` when the service answered it from the idempotency key."""

    body: dict[str, Any]
    replayed: bool


async def _body(reply: aiohttp.ClientResponse) -> dict[str, Any]:
    """The reply's JSON object; a reply that is not one (a proxy's page) is its text."""
    text = await reply.text()
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return {"message": text.strip()[:200]}
    return body if isinstance(body, dict) else {"message": text.strip()[:200]}


class DownstreamClient:
    """Calls to one service over one aiohttp session (the caller's, closed by the caller)."""

    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url.rstrip("/")
        self._session = session

    async def before_write(self, key: str, token: int | None) -> bool:
        """Called before a write this client does not send itself (a browser's form
        submit); True if it was held on its way out and has just been let go. A plain
        client holds nothing."""
        return False

    async def write_artifact(
        self, key: str, value: str, *, token: int | None, writer: str
    ) -> dict[str, Any]:
        """Write an artifact with the fence token (None: send none, the no_fencing run)."""
        headers = {} if token is None else {FENCE_HEADER: str(token)}
        async with self._session.put(
            f"{self.url}/artifacts/{key}", json={"value": value, "writer": writer}, headers=headers
        ) as reply:
            body = await _body(reply)
            if reply.status != 200:
                raise DownstreamRefused(reply.status, body)
            return body

    async def charge(
        self,
        task: str,
        memo: str,
        amount: int,
        *,
        idempotency_key: str | None,
        caller: str | None = None,
    ) -> Charged:
        """Charge once per idempotency key (None: send none, the no_idempotency run).
        `caller` names who asks, for the service's history only: a redo by another worker
        under the same key is the same charge."""
        headers = {} if idempotency_key is None else {IDEMPOTENCY_HEADER: idempotency_key}
        body: dict[str, Any] = {"task": task, "memo": memo, "amount": amount}
        if caller is not None:
            body["caller"] = caller
        async with self._session.post(
            f"{self.url}/charges",
            json=body,
            headers=headers,
        ) as reply:
            body = await _body(reply)
            if reply.status != 200:
                raise DownstreamRefused(reply.status, body)
            return Charged(body, reply.headers.get(REPLAYED_HEADER) == "true")

    async def books(self) -> dict[str, Any]:
        async with self._session.get(f"{self.url}/books") as reply:
            body = await _body(reply)
            return body
