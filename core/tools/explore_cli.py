"""`borrowed-keys explore` on the command line: its options, its progress and its result.

The search is core/search/explore/bfs.py; the counterexample files are
core/search/explore/story.py.
Exit 0 when no rule is broken, 1 when one is, 2 for bad options (as `chaos`), 130 when
interrupted (Ctrl-C), as a shell reports a command ended by SIGINT.
The search loads when the command runs, not when the parser is built.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from core.engine.modes import Mode
from core.search.explore import DEFAULT_DEPTH
from core.tools.options import out_dir_problem, out_of_range, run_one_command

if TYPE_CHECKING:
    from core.search.explore.bfs import ExploreParams, ExploreReport, Level

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_BAD_ARGS = 2
EXIT_INTERRUPTED = 130


def add_parser(subparsers: Any) -> None:
    """Register `explore` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "explore",
        help="enumerate every interleaving of a small world; write each mistake's shortest "
        "counterexample as a scenario",
        description=(
            "Breadth-first search of every state a small world of manual workers reaches on "
            "the real engine, judged by the safety checker and the seed's rules. Exit 0 if "
            "no rule is broken within the bound, 1 if one is (its shortest trace is written "
            "to --out), 2 for bad options."
        ),
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--mode",
        # None, not "correct": argparse calls two exclusive options given together only
        # when a value is not the default object, so `--mode correct --all-modes` passed.
        default=None,
        choices=[m.value for m in Mode],
        help="the engine's mode (default correct)",
    )
    which.add_argument("--all-modes", action="store_true", help="explore every mode in turn")
    p.add_argument("--workers", type=int, default=2, help="manual workers (default 2)")
    p.add_argument("--tasks", type=int, default=1, help="tasks (default 1)")
    p.add_argument("--steps", type=int, default=2, help="steps per task (default 2)")
    p.add_argument(
        "--depth",
        type=int,
        default=DEFAULT_DEPTH,
        help=f"the most choices in a trace (default {DEFAULT_DEPTH})",
    )
    p.add_argument("--jobs", type=int, default=1, help="processes to use (default 1)")
    p.add_argument(
        "--max-states",
        type=int,
        default=None,
        metavar="N",
        help="stop (not exhausted) once N distinct states are found: a bound on memory, "
        "which grows with them (about 20 KB a state); default none",
    )
    p.add_argument(
        "--out",
        default="explore-out",
        help="folder for counterexample scenario files (default ./explore-out)",
    )
    p.add_argument(
        "--no-memo",
        action="store_true",
        help="send every call to the store, even one a state alike for its caller has "
        "already refused (slower; the same result)",
    )
    p.add_argument(
        "--no-reduction",
        action="store_true",
        help="try every choice at every state, even calls on two tasks in both orders "
        "(slower; the same states and the same shortest traces)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.set_defaults(handler=command)


def _check_args(args: Any) -> str | None:
    # The folder is judged before the search, not when its first file is written after
    # minutes of it.
    return out_of_range(
        (
            ("workers", args.workers, 1, 4),
            ("tasks", args.tasks, 1, 4),
            ("steps", args.steps, 1, 6),
            ("depth", args.depth, 1, 200),
            ("jobs", args.jobs, 1, 64),
            *(
                (("max-states", args.max_states, 1, 100_000_000),)
                if args.max_states is not None
                else ()
            ),
        )
    ) or out_dir_problem(args.out)


def command(args: Any) -> int:
    """`borrowed-keys explore`: 0 no rule broken, 1 one is, 2 bad options."""
    from rich.console import Console

    problem = _check_args(args)
    if problem is not None:
        print(f"borrowed-keys explore: {problem}", file=sys.stderr)
        return EXIT_BAD_ARGS
    modes = list(Mode) if args.all_modes else [Mode(args.mode or Mode.CORRECT.value)]
    err = Console(stderr=True, highlight=False)
    written: list[str] = []
    try:
        reports = [_run(args, mode, err, written.append) for mode in modes]
    except KeyboardInterrupt:
        # Each file is written whole or not at all, so what is named here is all there is.
        kept = (
            f"{len(written)} whole file(s) written to {args.out}, of the modes searched to the end"
            if written
            else "nothing written"
        )
        print(f"borrowed-keys explore: interrupted: {kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:  # the folder changed under the search (removed, made read-only)
        print(f"borrowed-keys explore: --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_ARGS
    if args.json:
        doc: Any = [_with_harm(r) for r in reports]
        import json  # here: the parser is built for every command

        print(json.dumps(doc if args.all_modes else doc[0], indent=2, ensure_ascii=False))
    else:
        out = Console(highlight=False, soft_wrap=True)
        for r in reports:
            _print(out, r)
    return EXIT_OK if all(r.ok for r in reports) else EXIT_FOUND


def explore(params: ExploreParams, jobs: int, on_level: Callable[[Level], None]) -> ExploreReport:
    """The search (core/search/explore/bfs.py), loaded when it is run."""
    from core.search.explore.bfs import explore as search

    return search(params, jobs=jobs, on_level=on_level)


def _run(args: Any, mode: Mode, err: Any, on_written: Callable[[str], None]) -> ExploreReport:
    from core.search.explore.bfs import ExploreParams
    from core.search.explore.story import write_counterexamples

    params = ExploreParams(
        mode=mode,
        workers=args.workers,
        tasks=args.tasks,
        steps=args.steps,
        depth=args.depth,
        memo=not args.no_memo,
        reduction=not args.no_reduction,
        max_states=args.max_states,
    )

    def progress(lv: Level) -> None:
        rate = lv.states / lv.elapsed_s if lv.elapsed_s > 0 else 0.0
        err.print(
            f"explore {mode.value}: depth {lv.depth}, {lv.states} states, "
            f"{lv.transitions} transitions, {rate:,.0f} states/s, {lv.elapsed_s:.1f} s"
        )

    report = explore(params, jobs=args.jobs, on_level=progress)
    report.counterexamples = write_counterexamples(
        params, report.counterexamples, args.out, on_written=on_written
    )
    return report


def _with_harm(report: ExploreReport) -> dict[str, Any]:
    from core.scenarios.harm import harm_shown

    doc = report.summary()
    shown = harm_shown(report.params.mode)
    if shown is not None:
        doc["harm"] = {
            "name": str(shown.harm),
            "scenario": shown.scenario,
            "value": shown.value,
            "correct": shown.correct,
        }
    return doc


def _print(console: Any, report: ExploreReport) -> None:
    from core.scenarios.glossary import violation_word
    from core.scenarios.harm import harm_line

    p = report.params
    console.print(f"borrowed-keys explore: {p.mode.value} mode")
    console.print(f"  {report.claim()}")
    if report.ok:
        harm = harm_line(p.mode, "en")
        if harm is not None:
            console.print(f"  {harm}")
    console.print(
        f"  {report.elapsed_s:.1f} s with {report.jobs} job(s) ({report.cpu_s:.1f} s of "
        f"processor time): {report.states_per_s:,.0f} distinct states/s, "
        f"{report.states_per_cpu_s:,.0f} per processor second"
    )
    for c in report.counterexamples:
        where = c.path or "(not written)"
        state = {True: "verified", False: "NOT VERIFIED", None: ""}[c.verified]
        steps = f"{c.length} step" + ("" if c.length == 1 else "s")
        console.print(
            f"  {violation_word(c.rule, 'en')}: {steps}, after {c.states_before} states, "
            f"{c.elapsed_s:.1f} s: {where} {state}".rstrip()
        )
        if c.detail:
            console.print(f"    {c.detail}")
            console.print(f"    trace: {', '.join(repr(a) for a in c.actions)}")


def main(argv: Sequence[str] | None = None) -> int:
    return run_one_command(add_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
