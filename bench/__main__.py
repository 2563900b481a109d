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
of the postgres, scale and chaos sections. `--verify` runs again only the sections whose figures
claim a target on docs/figures.md, and says of each such figure whether it still holds (exit 1
when one no longer does).
"""

import argparse
import importlib
import os
import sys
from pathlib import Path

from rich.console import Console

from bench import SECTIONS, Bench
from bench.figures import claims_target, load_results, newest, write_page
from bench.results import Figure, current, start_run

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
    parser.add_argument(
        "--verify",
        action="store_true",
        help="measure again each figure that claims its target, and say which no longer hold",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"no section named {', '.join(unknown)} (one of: {', '.join(SECTIONS)})")
    return args


def claimed(figures: list[Figure], sections: list[str]) -> list[Figure]:
    """The figures the page shows as meeting their target, in the named sections (all if none)."""
    return [
        f for f in newest(figures) if claims_target(f) and (not sections or f.section in sections)
    ]


def verdicts(before: list[Figure], after: list[Figure]) -> list[tuple[Figure, Figure | None]]:
    """Each claimed figure beside its new measurement (None: the new run did not measure it)."""
    again = {f.name: f for f in after}
    return [(old, again.get(old.name)) for old in before]


def verify_line(old: Figure, new: Figure | None) -> str:
    if new is None:
        return f"not measured again  {old.what}"
    if claims_target(new):
        return (
            f"holds               {old.what}: {new.value:g} {new.unit} ({new.aim} {new.target:g})"
        )
    why = "under load, not claimed" if new.met else "no longer holds"
    return (
        f"{why:<20}{old.what}: {new.value:g} {new.unit} ({new.aim} {new.target:g}),"
        f" load {new.load:.1f} on {new.cpus} cores"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.verify:
        return verify(args)
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


def verify(args: argparse.Namespace) -> int:
    before = claimed(load_results(), args.sections)
    console = Console()
    if not before:
        console.print("no figure on docs/figures.md claims its target: nothing to verify")
        return 0
    if args.quick:
        os.environ["BK_BENCH_QUICK"] = "1"
    sections = [name for name in SECTIONS if any(f.section == name for f in before)]
    console.print(f"verifying {len(before)} figures in: {', '.join(sections)}")
    command = " ".join(["python -m bench", *sections, "--verify"])
    start_run(command, args.quick)
    for name in sections:
        section_function(name)(console)
    lines = [verify_line(old, new) for old, new in verdicts(before, current().figures)]
    for line in lines:
        console.print(line, markup=False, highlight=False)
    if args.page:
        write_page()
    return 0 if all(line.startswith("holds") for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
