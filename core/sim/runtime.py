"""A deterministic scheduler for coroutines on a virtual clock.

Workers are ordinary `async def` coroutines that await `runtime.sleep(ms)`. Here a sleep
yields a request up to this scheduler instead of to asyncio, so virtual time moves only
when `run_until` moves it, and every wake-up due at one instant runs in the order it was
scheduled. Store calls on the inline driver never suspend, so a whole step of a worker
runs to its next sleep without interleaving: the same inputs give the same history.

The same worker coroutines run under asyncio on the real clock (see core/sim/real.py),
where `sleep` is `asyncio.sleep`.
"""

import heapq
import itertools
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.engine.clock import VirtualClock

_CALLBACKS_FIRST = 1 << 62


class SleepRequest:
    """Awaited by a coroutine to pause for a span of virtual time."""

    __slots__ = ("ms",)

    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __await__(self) -> Generator["SleepRequest", None, None]:
        yield self


class CoroutineSuspendedElsewhere(RuntimeError):
    """A simulated coroutine awaited something other than the virtual clock."""


@dataclass(eq=False)
class Process:
    """One coroutine under the scheduler, owned by a worker."""

    owner: str
    name: str
    coro: Coroutine[Any, Any, None]
    wake_at: int = 0
    generation: int = 0
    done: bool = False
    suspended_left: int | None = None  # time still to sleep when it was suspended
    on_exit: list[Callable[["Process"], None]] = field(default_factory=list)


class VirtualRuntime:
    """Runs processes and timed callbacks in (time, order of scheduling) order."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._queue: list[tuple[int, int, int, Process | Callable[[], None]]] = []
        self._order = itertools.count()
        self._current: Process | None = None

    # -- scheduling -------------------------------------------------------------------------

    def sleep(self, ms: int) -> SleepRequest:
        return SleepRequest(max(0, ms))

    def spawn(self, coro: Coroutine[Any, Any, None], *, owner: str, name: str) -> Process:
        """Start a coroutine at the current instant (after what is already due now)."""
        process = Process(owner=owner, name=name, coro=coro)
        self._schedule(process, self.clock.now_ms())
        return process

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> None:
        """Run a plain callback at an instant (the looks at expiries and stuck tasks).

        Callbacks run before any worker due at the same instant: an expiry is noted
        before a poll at that instant can claim the task, whatever order they were booked in.
        """
        order = next(self._order) - _CALLBACKS_FIRST
        heapq.heappush(self._queue, (max(at_ms, self.clock.now_ms()), order, -1, callback))

    def _schedule(self, process: Process, at_ms: int) -> None:
        process.wake_at = at_ms
        process.generation += 1
        heapq.heappush(self._queue, (at_ms, next(self._order), process.generation, process))

    def cancel(self, process: Process) -> None:
        """Stop a process for good (a crash): its coroutine is closed, never resumed."""
        if process.done:
            return
        process.done = True
        process.generation += 1
        if process is not self._current:
            process.coro.close()
        for hook in process.on_exit:
            hook(process)

    def suspend(self, process: Process) -> None:
        """Freeze a process with its memory (a stall): it keeps the time it had left."""
        if process.done or process.suspended_left is not None:
            return
        process.suspended_left = max(0, process.wake_at - self.clock.now_ms())
        process.generation += 1

    def unsuspend(self, process: Process) -> None:
        """Carry on as if no time had passed: the remaining sleep starts again from now."""
        if process.done or process.suspended_left is None:
            return
        left = process.suspended_left
        process.suspended_left = None
        self._schedule(process, self.clock.now_ms() + left)

    # -- running ----------------------------------------------------------------------------

    def next_due(self) -> int | None:
        """The instant of the next live wake-up, dropping stale entries."""
        while self._queue:
            at, _, generation, item = self._queue[0]
            if isinstance(item, Process) and (item.done or generation != item.generation):
                heapq.heappop(self._queue)
                continue
            return at
        return None

    def run_until(self, end_ms: int, after_each: Callable[[], None] | None = None) -> None:
        """Run everything due up to and including end_ms, then stand the clock at end_ms."""
        while True:
            due = self.next_due()
            if due is None or due > end_ms:
                break
            at, _, _, item = heapq.heappop(self._queue)
            self.clock.advance_to(at)
            if isinstance(item, Process):
                self._step(item)
            else:
                item()
            if after_each is not None:
                after_each()
        self.clock.advance_to(max(end_ms, self.clock.now_ms()))

    def _step(self, process: Process) -> None:
        self._current = process
        try:
            request = process.coro.send(None)
        except StopIteration:
            process.done = True
            for hook in process.on_exit:
                hook(process)
            return
        finally:
            self._current = None
        if process.done:  # cancelled itself while running (a worker killed by its own act)
            process.coro.close()
            return
        if not isinstance(request, SleepRequest):
            raise CoroutineSuspendedElsewhere(
                f"{process.owner}/{process.name} awaited {request!r}; simulated workers may "
                "only await the virtual clock and inline store calls"
            )
        if process.suspended_left is not None:
            process.suspended_left = request.ms
            return
        self._schedule(process, self.clock.now_ms() + request.ms)


T = TypeVar("T")


def run_inline(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (store calls on the inline driver)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a store call suspended; the simulation needs the inline driver")
