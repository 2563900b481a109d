"""A real process's control channel: lines on stdin from whoever started it (the fleet's
supervisor, a test), read on a thread of its own and handed to the event loop one by one.

Both kinds of worker process take it: the simulated worker (`borrowed-keys worker
--control`) and the agent worker (`borrowed-keys agent --control`). The end of the stream
is a `stop`: whoever controlled the process is gone, and it must not wait for a SIGKILL.
"""

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TextIO

STOP = "stop"


def listen_for_control(
    loop: asyncio.AbstractEventLoop, on_line: Callable[[str], None], stream: TextIO
) -> threading.Thread:
    """Call `on_line(line)` on `loop` for each line of `stream` (stripped), then once with
    `stop` when the stream ends. stdin has no portable asyncio reader, so a daemon thread
    reads it; a loop that has closed meanwhile is no error."""

    def read() -> None:
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            for line in stream:
                loop.call_soon_threadsafe(on_line, line.strip())
        with contextlib.suppress(RuntimeError):  # the loop may have closed already
            loop.call_soon_threadsafe(on_line, STOP)

    thread = threading.Thread(target=read, name="control", daemon=True)
    thread.start()
    return thread
