"""`python -m bench soak` (or `python -m bench.soak [--minutes M]`): memory over a long session.

The app plays at its fastest (x50, a step every refresh) a long scenario on a loop: the
portfolio demo's script, then the run carried on live as the app carries a finished script
on, then back to its start, again and again, for SOAK_MINUTES. The fleet app does the same
with FLEET_WORKERS real worker processes working a queue that is refilled when it runs dry.
Resident memory (RSS) is sampled every SAMPLE_S; the figure is the growth after the first
WARMUP_MINUTES (the imports, the first frames, the caches filling), the target under
TARGET_MB: what a long session keeps is bounded (the undo depth, the event log, the
recorded frames, the timeline's marks), not its memory at start. `--minutes 2` (or
BK_SOAK_MINUTES=2, or `make bench ARGS="soak --quick"`) tries it in two minutes; its growth
is then measured after a quarter of the run.
"""

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from bench.figures import write_page
from bench.results import current, record, start_run
from bench.tui import settle

SOAK_MINUTES = 20.0
WARMUP_MINUTES = 2.0
SAMPLE_S = 5.0
TARGET_MB = 20.0
FLEET_WORKERS = 8
SPEED = 50.0
SCENARIO = "13_portfolio_demo"


QUICK_MINUTES = 2.0


def _minutes() -> float:
    """BK_SOAK_MINUTES if set, else two minutes under --quick (BK_BENCH_QUICK), else 20."""
    if os.environ.get("BK_SOAK_MINUTES"):
        return float(os.environ["BK_SOAK_MINUTES"])
    quick = os.environ.get("BK_BENCH_QUICK", "") not in ("", "0")
    return QUICK_MINUTES if quick else SOAK_MINUTES


def _warmup(minutes: float) -> float:
    """The warm-up a run of `minutes` leaves out: two minutes, a quarter of a short run."""
    return min(WARMUP_MINUTES, minutes / 4)


def rss_mb(pids: list[int]) -> float:
    """The resident memory of `pids` together, in MB (Linux: /proc; a process gone counts 0)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e6


class Samples:
    """RSS over time: (seconds since start, MB)."""

    def __init__(self, warmup_s: float) -> None:
        self.start = time.monotonic()
        self.warmup_s = warmup_s
        self.points: list[tuple[float, float]] = []

    def take(self, mb: float) -> None:
        self.points.append((time.monotonic() - self.start, mb))

    @property
    def growth(self) -> float:
        """The growth after the warm-up: the last sample against the first one past it."""
        after = [mb for t, mb in self.points if t >= self.warmup_s]
        return round(after[-1] - after[0], 1) if len(after) > 1 else 0.0

    def line(self) -> str:
        first, last = self.points[0][1], self.points[-1][1]
        peak = max(mb for _t, mb in self.points)
        return (
            f"start {first:.0f} MB, end {last:.0f} MB, peak {peak:.0f} MB, "
            f"growth after {self.warmup_s / 60:.1f} min {self.growth:+.1f} MB"
        )


async def _app_soak(seconds: float, samples: Samples, say: Callable[[str], None]) -> str:
    from core.scenarios.library import open_scenario
    from core.scenarios.session import Session
    from demo.app import BorrowedKeysApp
    from demo.screens.main import MainScreen

    app = BorrowedKeysApp(open_directly=True, live_clock=True)
    me = [os.getpid()]
    passes = 0
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        screen.session.close()  # its workers' coroutines end here, not unawaited in the GC
        screen.session = Session(open_scenario(SCENARIO))
        screen.pacer.speed = SPEED
        screen.playing = True
        screen.refresh_view(force=True)
        end = time.monotonic() + seconds
        next_sample = 0.0
        live_since: float | None = None
        while time.monotonic() < end:
            await pilot.pause(0.1)
            session = screen.session
            if session.question is not None:
                screen.action_reveal()  # the room answers: the loop goes on by itself
            if not screen.playing:
                screen.playing = True
            if session.at_end:
                # carried on live for a while, as a finished script is, then from the start
                live_since = live_since or time.monotonic()
                if time.monotonic() - live_since > 20.0:
                    session.restart()
                    screen.refresh_view(force=True)
                    live_since = None
                    passes += 1
            if time.monotonic() >= next_sample:
                samples.take(rss_mb(me))
                say(f"  app {samples.points[-1][0]:6.0f} s: {samples.points[-1][1]:6.1f} MB")
                next_sample = time.monotonic() + SAMPLE_S
        await settle(app)
    return f"{passes} passes of {SCENARIO}"


def app_soak(minutes: float, say: Callable[[str], None]) -> Samples:
    samples = Samples(_warmup(minutes) * 60)
    asyncio.run(_app_soak(minutes * 60, samples, say))
    return samples


async def _fleet_soak(
    seconds: float, app_samples: Samples, worker_samples: Samples, say: Callable[[str], None]
) -> None:
    from core.fleet.supervisor import Fleet, FleetSettings
    from demo.fleet_app import FleetApp
    from demo.screens.fleet import FleetScreen

    folder = Path(tempfile.mkdtemp(prefix="bk-bench-soak-"))
    settings = FleetSettings(db=str(folder / "fleet.db"), ttl_ms=6_000, steps=5, step_ms=200)
    with Fleet(settings, folder / "logs") as fleet:
        fleet.enqueue(4 * FLEET_WORKERS)
        for _ in range(FLEET_WORKERS):
            fleet.add_worker()
        app = FleetApp(fleet, "en", folder / "saves", live=True)
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            end = time.monotonic() + seconds
            next_sample = 0.0
            while time.monotonic() < end:
                await pilot.pause(0.5)
                if time.monotonic() < next_sample:
                    continue
                next_sample = time.monotonic() + SAMPLE_S
                if fleet.waiting() < FLEET_WORKERS:
                    fleet.enqueue(2 * FLEET_WORKERS)  # the queue never runs dry
                pids = [w.pid for w in fleet.workers.values() if w.pid is not None]
                app_samples.take(rss_mb([os.getpid()]))
                worker_samples.take(rss_mb(pids) / max(1, len(pids)))
                say(
                    f"  fleet {app_samples.points[-1][0]:6.0f} s: app "
                    f"{app_samples.points[-1][1]:6.1f} MB, each worker "
                    f"{worker_samples.points[-1][1]:5.1f} MB"
                )


def fleet_soak(minutes: float, say: Callable[[str], None]) -> tuple[Samples, Samples]:
    warmup = _warmup(minutes) * 60
    app_samples, worker_samples = Samples(warmup), Samples(warmup)
    asyncio.run(_fleet_soak(minutes * 60, app_samples, worker_samples, say))
    return app_samples, worker_samples


def soak_bench(
    console: Console, minutes: float | None = None, fleet: bool = True, app: bool = True
) -> None:
    minutes = minutes if minutes is not None else _minutes()
    quiet = not console.is_terminal

    def say(text: str) -> None:
        if not quiet:
            console.print(text)

    console.print(
        f"memory over {minutes:g} minutes at x{SPEED:g}: growth after the warm-up, "
        f"target < {TARGET_MB:g} MB"
    )
    command = f"python -m bench.soak --minutes {minutes:g}"
    if app:
        _app_bench(console, minutes, say, command)
    if not fleet:
        return
    command += " --fleet-only" if not app else ""
    fleet_app, workers = fleet_soak(minutes, say)
    for key, what, samples in (
        ("fleet_app_growth", "the fleet app's RSS growth", fleet_app),
        ("fleet_worker_growth", "each fleet worker's RSS growth", workers),
    ):
        record(
            "soak",
            key,
            f"{what} after {samples.warmup_s / 60:g} min of {minutes:g} min, "
            f"{FLEET_WORKERS} workers",
            samples.growth,
            "MB",
            target=TARGET_MB,
            aim="under",
            command=command,
        )
    console.print(f"the fleet app, {FLEET_WORKERS} workers: {fleet_app.line()}")
    console.print(f"each fleet worker (mean): {workers.line()}")


def _app_bench(console: Console, minutes: float, say: Callable[[str], None], command: str) -> None:
    app = app_soak(minutes, say)
    record(
        "soak",
        "app_growth",
        f"the app's RSS growth after {app.warmup_s / 60:g} min of {minutes:g} min at x{SPEED:g}",
        app.growth,
        "MB",
        target=TARGET_MB,
        aim="under",
        command=command,
    )
    console.print(f"the app, {SCENARIO} on a loop: {app.line()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=None, help="how long (default 20)")
    parser.add_argument("--app-only", action="store_true", help="leave the fleet app out")
    parser.add_argument("--fleet-only", action="store_true", help="leave the simulated app out")
    args = parser.parse_args(argv)
    # Run alone, its figures are a run of their own (a file in bench/results/ and the figures
    # page made again), as `python -m bench soak` keeps them: twenty minutes measured and
    # then forgotten helps nobody.
    command = " ".join(["python -m bench.soak", *(argv if argv is not None else sys.argv[1:])])
    path = start_run(command, quick=False)
    soak_bench(Console(), args.minutes, fleet=not args.app_only, app=not args.fleet_only)
    if current().figures:
        print(f"results: {path}")
        print(f"figures page: {write_page()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
