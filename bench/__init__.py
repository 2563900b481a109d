"""`make bench`: the lease store's speed, next to raw sqlite3 (not part of `make test`).

Other benchmarks join by appending to `BENCHES` (here, so `python -m bench` and an import
of `bench` share one list): each is a callable that takes the rich Console and prints its
own section. They run after the store's benchmarks and before the final ratio line, which
is always the last line of the output.
"""

from collections.abc import Callable

from rich.console import Console

Bench = Callable[[Console], None]

BENCHES: list[Bench] = []
