"""The last items of a list that only grows, each still known by its place in the whole.

A fleet runs as long as the presenter likes: what it reads and notes (the register's lines,
the running checker's findings, the supervisor's signals, what each process said it held)
would grow without end. The screen shows the newest, a frame asks for what came since the
last one, and a save reads the whole history from the store and the journal on disk; so in
memory only a tail is kept, and the count of all that came.
"""

import itertools
import threading
from collections import deque
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Tail(Generic[T]):
    """The last `keep` items appended, and how many were appended in all. Threads may
    append and read at once (the fleet's reader, a fault sent from the screen)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._items: deque[T] = deque(maxlen=keep)
        self.count = 0  # every item appended, those no longer kept included
        self._lock = threading.Lock()

    def append(self, item: T) -> None:
        with self._lock:
            self._items.append(item)
            self.count += 1

    def since(self, n: int) -> list[T]:
        """The items from the `n`th on (counted from the first ever appended); those no
        longer kept are not returned."""
        return self.read(n)[1]

    def read(self, n: int) -> tuple[int, list[T]]:
        """How many were appended in all, and the items from the `n`th on, read together
        (another thread may append in between two separate looks)."""
        with self._lock:
            first = self.count - len(self._items)
            return self.count, list(itertools.islice(self._items, max(0, n - first), None))

    @property
    def last(self) -> T | None:
        with self._lock:
            return self._items[-1] if self._items else None

    def __iter__(self) -> Iterator[T]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        """How many are kept (at most `keep`)."""
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)
