"""Simulation speed: one hour of virtual time with 10 workers and 50 tasks (target < 1 s).

Stepping back in the TUI and fuzzing thousands of runs both replay from the start, so this
figure is what makes them usable.
"""

import statistics
import time

from rich.console import Console

from core.sim.simulation import Simulation
from core.sim.spec import Advance, SimSettings, TaskSpec, WorkerSpec

WORKERS = 10
TASKS = 50
HOUR_MS = 3_600_000
ROUNDS = 5
TARGET_S = 1.0


def one_hour() -> float:
    kinds = ("ledger", "browser", "tools", "approval")
    settings = SimSettings(
        workers=tuple(WorkerSpec(f"w{i}") for i in range(WORKERS)),
        tasks=tuple(TaskSpec(f"t{i:02d}", kind=kinds[i % 4]) for i in range(TASKS)),
    )
    start = time.perf_counter()
    sim = Simulation(settings)
    sim.apply(Advance(by_ms=HOUR_MS))
    elapsed = time.perf_counter() - start
    sim.close()
    return elapsed


def bench_sim_hour(console: Console) -> None:
    times = [one_hour() for _ in range(ROUNDS)]
    median = statistics.median(times)
    verdict = "ok" if median < TARGET_S else "TOO SLOW"
    console.print(
        f"simulation: 1 h virtual, {WORKERS} workers, {TASKS} tasks: median {median:.3f} s "
        f"over {ROUNDS} runs (target < {TARGET_S:.0f} s) {verdict}"
    )


if __name__ == "__main__":
    bench_sim_hour(Console())
