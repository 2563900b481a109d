"""`python -m bench fleet` (or `python -m bench.fleet`): how many real workers one fleet view
follows within a refresh.

For each fleet size, N real `borrowed-keys worker` processes work 4 x N tasks on a SQLite
file (every worker holding a lease once they are at work); the fleet screen (headless,
160 x 48) then shows SAMPLES frames, each read exactly as the app's timer reads it (the
events since the last frame into the safety checker, the store's rows, every process's
belief) and brought onto every widget. The wall time of one frame, read and render, is
reported as median and p90, with the CPU time the app's own thread spent on it: that must stay
under 100 ms, the app's refresh interval (the wall time also counts the waits for a core
that the worker processes and every other job on the machine keep busy).
"""

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from bench.results import record
from bench.tui import settle
from core.fleet.supervisor import Fleet, FleetSettings

SIZES = (4, 8, 16, 24)
SAMPLES = 30
TARGET_MS = 100.0
REFRESH_S = 0.1


async def _frames(fleet: Fleet, samples: int) -> tuple[list[float], list[float]]:
    from demo.fleet_app import FleetApp
    from demo.screens.fleet import FleetScreen

    app = FleetApp(fleet, "en", Path(tempfile.mkdtemp()), live=False)
    wall: list[float] = []
    cpu: list[float] = []
    async with app.run_test(size=(160, 48)):
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        for _ in range(samples):
            start, start_cpu = time.perf_counter(), time.thread_time()
            frame = screen.maker.frame()
            screen.show_frame(frame)
            await settle(app)  # laid out and painted
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.thread_time() - start_cpu) * 1000)
            await asyncio.sleep(REFRESH_S)  # the app's pace between two frames
    return wall, cpu


def measure(workers: int, samples: int = SAMPLES) -> tuple[float, float, float, int]:
    """Median and p90 of one frame's wall time, the median of its CPU time on the app's
    thread (ms), with `workers` processes; and the leases they held."""
    folder = Path(tempfile.mkdtemp(prefix="bk-bench-fleet-"))
    settings = FleetSettings(db=str(folder / "fleet.db"), ttl_ms=6_000, steps=50, step_ms=500)
    fleet = Fleet(settings, folder / "logs")
    try:
        fleet.enqueue(4 * workers)
        procs = [fleet.add_worker() for _ in range(workers)]
        for w in procs:  # at work: each holds a lease (bounded: a start can be slow)
            w.wait_for(lambda line: bool(line.get("lease")), 120.0)
        times, cpu = asyncio.run(_frames(fleet, samples))
        leases = sum(1 for w in procs if w.belief.task is not None)
    finally:
        fleet.close()
    times.sort()
    p90 = times[int(0.9 * (len(times) - 1))]
    return statistics.median(times), p90, statistics.median(cpu), leases


def fleet_bench(console: Console) -> None:
    console.print(f"one fleet frame (read + render), target < {TARGET_MS:.0f} ms")
    for n in SIZES:
        median, p90, cpu, leases = measure(n)
        mark = "ok" if cpu < TARGET_MS else "over"
        what = f"one frame of the fleet screen, {n} real workers, {leases} leases held"
        record(
            "fleet",
            f"cpu_{n}",
            f"{what}: the app thread's CPU, median",
            round(cpu, 1),
            "ms",
            target=TARGET_MS,
            aim="under",
        )
        record("fleet", f"wall_{n}", f"{what}: wall time, median", round(median, 1), "ms")
        console.print(
            f"{n:3d} workers, {leases:3d} leases: wall median {median:6.1f} ms, "
            f"p90 {p90:6.1f} ms, app thread CPU median {cpu:5.1f} ms: {mark}"
        )


def main() -> int:
    fleet_bench(Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
