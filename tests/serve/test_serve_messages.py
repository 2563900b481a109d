"""serve's relay drops what it cannot read, with one line in the log, and goes on.

One websocket message of 100,000 `[` used to end the session with a RecursionError
traceback: the relay caught ValueError and TypeError only."""

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import WSMsgType

from demo.serve import read_message, relay


class _Message:
    def __init__(self, data: Any, kind: WSMsgType = WSMsgType.TEXT) -> None:
        self.type = kind
        self.data = data


class _Socket:
    def __init__(self, *texts: Any) -> None:
        self.texts = texts
        self.sent: list[Any] = []

    async def __aiter__(self) -> AsyncIterator[_Message]:
        for text in self.texts:
            yield _Message(text)

    async def send_json(self, value: Any) -> None:
        self.sent.append(value)


class _Service:
    def __init__(self) -> None:
        self.keys: list[bytes] = []

    async def send_bytes(self, data: bytes) -> None:
        self.keys.append(data)


@pytest.mark.parametrize(
    "text", ["[" * 100_000, "{" * 100_000, "", "nul", "5", '["stdin"', "[]", "x" * 2_000_000]
)
def test_a_message_it_cannot_read_is_none(text: str) -> None:
    assert read_message(text) is None


async def test_an_unreadable_message_is_dropped_with_one_log_line_and_the_session_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    socket = _Socket("[" * 100_000, '["stdin", "q"]', "not json", '["ping", 1]')
    service = _Service()
    with caplog.at_level(logging.WARNING):
        await relay(socket, service)  # type: ignore[arg-type]
    assert service.keys == [b"q"] and socket.sent == [["pong", 1]]
    dropped = [r for r in caplog.records if "dropped a websocket message" in r.getMessage()]
    assert len(dropped) == 2 and not any(r.exc_info for r in caplog.records)
    assert "(100000 characters)" in dropped[0].getMessage()
