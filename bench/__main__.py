"""`python -m bench [SECTION...]`: the figures of docs/figures.md, measured.

`python -m bench --help` lists the sections; with none named, all of them run in order. Each
lives in its own module and runs alone as `python -m bench.NAME` too: the store on SQLite
against raw sqlite3 and claim cost vs history (bench/store.py), the portfolio export
(bench/export.py), the TUI's refresh (bench/tui.py), PostgreSQL (bench/postgres.py: the cycle,
claims beside pgqueuer and procrastinate, claim cost in history), heartbeats as the fleet grows
(bench/scale.py), the explorer (bench/explore.py), the simulation (bench/sim.py: an hour of
virtual time, one manual call), the fleet screen (bench/fleet.py) and the fuzzer
(bench/chaos.py). Each figure is recorded in bench/results/ (bench/results.py), and the run
ends by regenerating docs/figures.md from the newest results (bench/figures.py). A module is
imported only when its section runs. `--quick` (or `BK_BENCH_QUICK=1`) runs the smaller points
of the postgres, scale and chaos sections.
"""

import argparse
import importlib
import os
import sys
from pathlib import Path

from rich.console import Console

from bench import SECTIONS, Bench
from bench.figures import write_page
from bench.results import current, start_run

__all__ = ["SECTIONS", "main"]


def section_function(name: str) -> Bench:
    module = SECTIONS[name][1]
    bench: Bench = getattr(importlib.import_module(module), f"{name}_bench")
    return bench


def parse_args(argv: list[str]) -> argparse.Namespace:
    listing = "\n".join(f"  {name:<9} {what}" for name, (what, _) in SECTIONS.items())
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure the figures of docs/figures.md (not part of `make test`).",
        epilog=f"sections, in the order they run:\n{listing}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "sections",
        nargs="*",
        metavar="SECTION",
        help="the sections to run (default: all of them)",
    )
    parser.add_argument(
        "--no-page",
        dest="page",
        action="store_false",
        help="do not regenerate docs/figures.md from the results at the end",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the smaller points of the postgres, scale and chaos sections (BK_BENCH_QUICK=1)",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"no section named {', '.join(unknown)} (one of: {', '.join(SECTIONS)})")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.quick:
        # Fewer and smaller points where a section has a quick form.
        os.environ["BK_BENCH_QUICK"] = "1"
    # The named sections run in the listing's order, so `store` (its ratio line) comes first.
    chosen = [name for name in SECTIONS if not args.sections or name in args.sections]
    console = Console()
    command = " ".join(["python -m bench", *args.sections] + (["--quick"] if args.quick else []))
    path = start_run(command, args.quick)
    for name in chosen:
        section_function(name)(console)
    if not current().figures:
        return 0
    console.print(
        f"results: {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"
    )
    if args.page:
        written = write_page()
        console.print(f"figures page: {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
