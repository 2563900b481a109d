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
from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
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
        assert isinstance(screen, FleetScreen) and screen.maker is not None
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
    timeline_bench(console)
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


def _history(workers: int, seconds: int) -> list[EventRow]:
    """A fleet's register: every worker holding a lease for `seconds`, a page every half
    second and a renewal every two (a 6 s lease), as the fleet feeds the timeline."""
    events = [
        EventRow(w + 1, 0, EventKind.CLAIMED, f"t{w}", f"w{w}", 1, 1, None, {"expires_at": 6000})
        for w in range(workers)
    ]
    for at in range(500, seconds * 1000, 500):
        for w in range(workers):
            kind = EventKind.RENEWED if at % 2000 == 0 else EventKind.WRITE_ACCEPTED
            detail = {"expires_at": at + 6000, "key": f"t{w}/{at}"}
            events.append(EventRow(len(events) + 1, at, kind, f"t{w}", f"w{w}", 1, 1, None, detail))
    return events


def timeline_bench(console: Console, samples: int = 10) -> None:
    """Belief vs truth on the fleet screen: the picture of one frame (the fleet's reading
    thread) and its drawing (the app's thread, at most twice a second, 156 cells wide)."""
    from core.fleet.history import FleetTimeline
    from demo.widgets.timeline_view import render_timeline

    for workers, seconds in ((8, 60), (24, 60), (24, 300)):
        timeline = FleetTimeline(2000, 6000, 4000)
        timeline.take(_history(workers, seconds))
        view_ms: list[float] = []
        draw_ms: list[float] = []
        for n in range(samples):
            start = time.perf_counter()
            picture = timeline.view(seconds * 1000 + n)  # a new instant: a new picture
            middle = time.perf_counter()
            render_timeline(picture, 156, "en", {})
            view_ms.append((middle - start) * 1000)
            draw_ms.append((time.perf_counter() - middle) * 1000)
        view, draw = statistics.median(view_ms), statistics.median(draw_ms)
        what = f"Belief vs truth, {workers} workers, {seconds} s of history"
        record(
            "fleet",
            f"timeline_view_{workers}_{seconds}",
            f"{what}: the picture",
            round(view, 1),
            "ms",
        )
        record(
            "fleet",
            f"timeline_draw_{workers}_{seconds}",
            f"{what}: the drawing",
            round(draw, 1),
            "ms",
        )
        console.print(f"{what}: picture {view:5.1f} ms, drawing {draw:6.1f} ms (median)")


def main() -> int:
    fleet_bench(Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
