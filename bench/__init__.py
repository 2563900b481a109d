"""`make bench`: the figures of docs/figures.md, measured (not part of `make test`).

A section is a callable that takes the rich Console and prints its own part; `python -m bench`
lists them by name (`SECTIONS`).
"""

from collections.abc import Callable

from rich.console import Console

Bench = Callable[[Console], None]


# Each section: what it measures (for --help), and where its function lives, imported only
# when the section runs (the explorer's and PostgreSQL's imports alone take seconds).
SECTIONS: dict[str, tuple[str, str]] = {
    "store": ("the store's cycle against raw sqlite3; one claim against history", "bench.store"),
    "aiosqlite": (
        "aiosqlite beside the store's own driver: the cycle, heartbeats due at once",
        "bench.aiosqlite_cost",
    ),
    "export": ("the portfolio export of 01_fog, both languages, and its preview", "bench.export"),
    "tui": ("one refresh of the main screen, 12 workers and 200 tasks", "bench.tui"),
    "postgres": (
        "PostgreSQL: the cycle; claims beside pgqueuer and procrastinate",
        "bench.postgres",
    ),
    "scale": ("heartbeats as the fleet grows, SQLite and PostgreSQL", "bench.scale"),
    "explore": ("the explorer's rates and the worlds it exhausts", "bench.explore"),
    "reduction": (
        "the explorer's partial-order reduction: 2 workers x 2 tasks x 1 step",
        "bench.explore",
    ),
    "sim": ("an hour of virtual time; one manual call through the simulation", "bench.sim"),
    "fleet": ("one frame of the fleet screen with 4 to 24 real workers", "bench.fleet"),
    "chaos": ("random fault schedules: correct mode clean, each mistake exposed", "bench.chaos"),
    "agents": (
        "the lease library's overhead per call; tasks/s of the tools, approval, browser work",
        "bench.agents",
    ),
    "soak": (
        "memory over a long session: the app and the fleet app at their fastest",
        "bench.soak",
    ),
    "startup": (
        "each command and the app's first frame beside a bare interpreter",
        "bench.startup",
    ),
}
