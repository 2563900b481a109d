"""Simulation speed: one hour of virtual time with 10 workers and 50 tasks (target < 1 s),
and the processor time of one manual call through `Simulation.apply`.

Stepping back in the TUI and fuzzing thousands of runs both replay from the start, so the
hour is what makes them usable. The explorer (bench/explore.py) makes one manual call per
transition, most of them refused: the cost of one call is what bounds its states per second.
"""

import statistics
import time
from collections.abc import Callable

from rich.console import Console

from bench.results import record
from core.engine.config import LeaseConfig
from core.sim.simulation import SavedRun, Simulation
from core.sim.spec import (
    Action,
    Advance,
    Claim,
    Heartbeat,
    SimSettings,
    TaskSpec,
    WorkerSpec,
    Write,
)

WORKERS = 10
TASKS = 50
HOUR_MS = 3_600_000
ROUNDS = 5
TARGET_S = 1.0
# One manual call: this many calls a round, the median of the rounds' means.
CALLS = 2_000


def one_hour() -> tuple[float, float]:
    kinds = ("ledger", "browser", "tools", "approval")
    settings = SimSettings(
        workers=tuple(WorkerSpec(f"w{i}") for i in range(WORKERS)),
        tasks=tuple(TaskSpec(f"t{i:02d}", kind=kinds[i % 4]) for i in range(TASKS)),
    )
    start, start_cpu = time.perf_counter(), time.process_time()
    sim = Simulation(settings)
    sim.apply(Advance(by_ms=HOUR_MS))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    sim.close()
    return elapsed, cpu


def bench_sim_hour(console: Console) -> None:
    runs = [one_hour() for _ in range(ROUNDS)]
    times, cpu = [wall for wall, _ in runs], [cpu for _, cpu in runs]
    median = statistics.median(times)
    verdict = "ok" if median < TARGET_S else "TOO SLOW"
    record(
        "sim",
        "hour",
        f"one hour of virtual time, {WORKERS} workers, {TASKS} tasks, wall time (median)",
        round(median, 3),
        "s",
        target=TARGET_S,
        aim="under",
    )
    # Processor time beside it: on a loaded machine the wall time also counts waits for a core.
    record(
        "sim",
        "hour_cpu",
        f"one hour of virtual time, {WORKERS} workers, {TASKS} tasks, processor time (median)",
        round(statistics.median(cpu), 3),
        "s",
    )
    console.print(
        f"simulation: 1 h virtual, {WORKERS} workers, {TASKS} tasks: median {median:.3f} s "
        f"over {ROUNDS} runs (processor time {statistics.median(cpu):.3f} s; "
        f"target < {TARGET_S:.0f} s) {verdict}"
    )


# -- one manual call --------------------------------------------------------------------------


def _explored_world() -> Simulation:
    """The explorer's smallest world: two manual workers, one task of two steps."""
    config = LeaseConfig()
    return Simulation(
        SimSettings(
            config=config,
            workers=(WorkerSpec("a", autopilot=False), WorkerSpec("b", autopilot=False)),
            tasks=(TaskSpec("t1", steps=2, step_time_ms=config.heartbeat_ms),),
        )
    )


def _per_call_us(sim: Simulation, action: Action, before: Callable[[], None] | None) -> float:
    """The median over ROUNDS of the mean processor time of `sim.apply(action)`, in us;
    `before` (untimed) puts the run back where the call starts from."""
    means = []
    for _ in range(ROUNDS):
        spent = 0
        for _ in range(CALLS):
            if before is not None:
                before()
            start = time.process_time_ns()
            sim.apply(action)
            spent += time.process_time_ns() - start
        means.append(spent / CALLS / 1_000)
    return statistics.median(means)


def call_costs() -> dict[str, float]:
    """Processor time of one call through `Simulation.apply`, in us: a claim of a queued
    task, and two refusals of a lease taken over (a heartbeat, a page)."""
    sim = _explored_world()
    try:
        start: SavedRun = sim.save()
        claim = _per_call_us(sim, Claim("a"), lambda: sim.restore(start))
        sim.restore(start)
        sim.apply(Claim("a"))
        sim.apply(Advance(by_ms=sim.config.ttl_ms + 1))
        sim.apply(Claim("b"))
        refused_beat = _per_call_us(sim, Heartbeat("a"), None)
        refused_page = _per_call_us(sim, Write("a", "t1/1", "1 dan"), None)
        assert not sim.apply(Heartbeat("a")).ok, "the heartbeat was meant to be refused"
    finally:
        sim.close()
    return {"claim": claim, "refused heartbeat": refused_beat, "refused page": refused_page}


def bench_sim_call(console: Console) -> None:
    costs = call_costs()
    for name, us in costs.items():
        record(
            "sim",
            "call_" + name.replace(" ", "_"),
            f"one manual call through Simulation.apply: {name}, processor time",
            round(us),
            "us",
        )
    figures = ", ".join(f"{name} {us:.0f} us" for name, us in costs.items())
    console.print(
        f"simulation: one manual call through Simulation.apply (processor time, median of "
        f"{ROUNDS} x {CALLS}): {figures}"
    )


def sim_bench(console: Console) -> None:
    bench_sim_hour(console)
    bench_sim_call(console)


if __name__ == "__main__":
    sim_bench(Console())
