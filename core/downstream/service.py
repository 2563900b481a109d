"""The fenced downstream service over HTTP (aiohttp), on a loopback port chosen by the system.

- `PUT /artifacts/{key}` with a `Fence-Token` header and `{"value": ..., "writer": ...}`:
  taken only if the token is not older than the newest this service has seen for the key;
  409 with a sentence otherwise.
- `GET /artifacts/{key}`: what the artifact holds, and the token that wrote it.
- `POST /charges` with `{"task": ..., "memo": ..., "amount": ...}` and, if the caller sends
  one, an `Idempotency-Key` header: the same key returns the first reply (with
  `Idempotent-Replayed: true`, as Stripe's API does) and charges nothing.
- `GET /books`: the charges and every request's verdict, for the judge.
"""

import html
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from core.downstream.books import Books, Endpoint, Reply

FENCE_HEADER = "Fence-Token"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
_BOOKS: web.AppKey[Books] = web.AppKey("books", Books)


def _answer(reply: Reply) -> web.Response:
    headers = {REPLAYED_HEADER: "true"} if reply.replayed else {}
    return web.json_response(reply.body, status=reply.status, headers=headers)


async def _json_body(request: web.Request) -> dict[str, Any] | str:
    """The request's JSON object, or a sentence saying what is wrong with it."""
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "the body must be a JSON object"
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    return body


MAX_CALLER = 200  # a caller's name is kept in the history: a name, not a payload


def _text(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    return value if isinstance(value, str) and value and value.isprintable() else None


async def _put_artifact(request: web.Request) -> web.Response:
    books = request.app[_BOOKS]
    key = request.match_info["key"]
    body = await _json_body(request)
    if isinstance(body, str):
        return _answer(await books.refuse(Endpoint.ARTIFACT, body))
    value, writer = body.get("value"), _text(body, "writer")
    if not isinstance(value, str) or writer is None:
        return _answer(
            await books.refuse(Endpoint.ARTIFACT, "the body needs a text value and a writer's name")
        )
    raw = request.headers.get(FENCE_HEADER)
    token: int | None = None
    if raw is not None:
        if not raw.isdigit() or len(raw) > 18:
            said = f"the {FENCE_HEADER} header must be a whole number"
            return _answer(await books.refuse(Endpoint.ARTIFACT, said))
        token = int(raw)
    return _answer(await books.write_artifact(key, value, token, writer))


async def _get_artifact(request: web.Request) -> web.Response:
    key = request.match_info["key"]
    found = await request.app[_BOOKS].artifact(key)
    if found is None:
        return web.json_response(
            {"error": "not_found", "message": f"no artifact {key}"}, status=404
        )
    return web.json_response(found)


async def _post_charge(request: web.Request) -> web.Response:
    books = request.app[_BOOKS]
    body = await _json_body(request)
    if isinstance(body, str):
        return _answer(await books.refuse(Endpoint.CHARGE, body))
    task, memo, amount = _text(body, "task"), _text(body, "memo"), body.get("amount")
    if task is None or memo is None or not isinstance(amount, int) or isinstance(amount, bool):
        return _answer(
            await books.refuse(Endpoint.CHARGE, "the body needs a task, a memo and a whole amount")
        )
    if amount <= 0:
        return _answer(await books.refuse(Endpoint.CHARGE, "the amount must be positive"))
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is not None and not (key and key.isprintable() and len(key) <= 255):
        return _answer(
            await books.refuse(Endpoint.CHARGE, f"the {IDEMPOTENCY_HEADER} header is not a key")
        )
    caller = _text(body, "caller")
    if caller is not None and len(caller) > MAX_CALLER:
        said = f"the caller's name is longer than {MAX_CALLER} characters"
        return _answer(await books.refuse(Endpoint.CHARGE, said))
    return _answer(await books.charge(task, memo, amount, key, caller=caller))


# -- the pages a browser agent walks: a paginated list, a slow page, a form ----------------

LIST_PAGES = 3
SLOW_PAGE_S = 0.3


def _page(title: str, body: str, status: int = 200) -> web.Response:
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{body}</body></html>"
    )
    return web.Response(text=page, content_type="text/html", status=status)


async def _list_page(request: web.Request) -> web.Response:
    raw = request.match_info["n"]
    n = int(raw) if raw.isdigit() else 0
    if not 1 <= n <= LIST_PAGES:
        return _page("No such page", f"<p>there are pages 1 to {LIST_PAGES}</p>", 404)
    after = f"/pages/list/{n + 1}" if n < LIST_PAGES else "/pages/slow"
    items = "".join(f"<li>item {(n - 1) * 5 + i}</li>" for i in range(1, 6))
    return _page(f"List, page {n}", f"<ul>{items}</ul><a id='next' href='{after}'>next</a>")


async def _slow_page(request: web.Request) -> web.Response:
    import asyncio

    await asyncio.sleep(SLOW_PAGE_S)  # a page that takes its time, as real ones do
    return _page("Slow page", "<p>loaded at last</p><a id='next' href='/pages/form'>the form</a>")


async def _form_page(request: web.Request) -> web.Response:
    form = (
        "<form method='post' action='/pages/form'>"
        "<input name='task' id='task'><input name='writer' id='writer'>"
        "<input name='token' id='token'><input name='note' id='note'>"
        "<button id='submit' type='submit'>send</button></form>"
    )
    return _page("The form", form)


async def _form_submit(request: web.Request) -> web.Response:
    """A form's submit is a fenced write too: the agent puts its fence token in the form."""
    books = request.app[_BOOKS]
    form = await request.post()
    task, writer, token, note = (str(form.get(k, "")) for k in ("task", "writer", "token", "note"))
    if not task or not writer or not token.isdigit() or len(token) > 18:
        reply = await books.refuse(Endpoint.ARTIFACT, "the form needs a task, a writer and a token")
    else:
        reply = await books.write_artifact(f"{task}/form", note, int(token), writer)
    said = reply.body.get("message", "accepted")
    # the refusal's word and the newest token seen, for the agent's page to read back
    error, newest = reply.body.get("error", ""), reply.body.get("newest")
    verdict = "accepted" if reply.status == 200 else "refused"
    return _page(
        "Accepted" if reply.status == 200 else "Refused",
        f"<p id='verdict' data-error='{html.escape(str(error))}'"
        f" data-newest='{'' if newest is None else int(newest)}'>{verdict}</p><p>{said}</p>",
        reply.status,
    )


async def _get_books(request: web.Request) -> web.Response:
    return web.json_response(await request.app[_BOOKS].export())


def make_app(books: Books) -> web.Application:
    app = web.Application()
    app[_BOOKS] = books
    app.router.add_put("/artifacts/{key:.+}", _put_artifact)
    app.router.add_get("/artifacts/{key:.+}", _get_artifact)
    app.router.add_post("/charges", _post_charge)
    app.router.add_get("/books", _get_books)
    app.router.add_get("/pages/list/{n}", _list_page)
    app.router.add_get("/pages/slow", _slow_page)
    app.router.add_get("/pages/form", _form_page)
    app.router.add_post("/pages/form", _form_submit)
    return app


@dataclass(frozen=True, slots=True)
class RunningService:
    """A service that answers on `url` until its block ends; `books` are its own."""

    url: str
    books: Books


@asynccontextmanager
async def serve_downstream(
    path: str | Path, *, fencing: bool = True, host: str = "127.0.0.1"
) -> AsyncIterator[RunningService]:
    """Run the service in this process's event loop on a free loopback port."""
    books = await Books.open(path, fencing=fencing)
    try:
        runner = web.AppRunner(make_app(books), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, host, 0)
            await site.start()
            port = int(runner.addresses[0][1])
            yield RunningService(f"http://{host}:{port}", books)
        finally:
            await runner.cleanup()
    finally:
        await books.close()
