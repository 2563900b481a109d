"""`borrowed-keys export SCENARIO`: a scenario as one self-contained web page.

The design's last advice is a demo for a portfolio, ending with "一个故障演示：worker A
卡死，worker B 接手，A 恢复后写入被拒。": this makes that demo a page an interviewer can
open before the call.

    borrowed-keys export 01_fog [--out DIR] [--lang en|zh|both] [--size COLSxROWS]
                                [--preview FILE.gif]

Plays the scenario (a bundled name, or any scenario file: a saved exploration, a chaos
reproducer) in the real app, headless, and writes DIR/index.html; with --preview, an
animated GIF of the frames as well. Bad input is one line and exit 2, and nothing is
written unless the whole export succeeded.
"""

import argparse
import re
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from core.tools.options import Parser
from demo.export import DEFAULT_SIZE

# The console script builds every command's parser on each run: this module stays light,
# and textual (the app, the frames) loads in the handler only.
if TYPE_CHECKING:
    from core.scenarios.format import Scenario
    from demo.export.frames import Recording

PROG = "borrowed-keys export"
DESCRIPTION = "A scenario as one self-contained web page, played in the real app."
LANG_CHOICES = ("en", "zh", "both")
MIN_SIZE = (80, 24)  # the smallest screen the app lays out for
MAX_SIZE = (400, 150)


def parse_size(text: str) -> tuple[int, int]:
    """COLSxROWS, within the sizes the app is drawn for."""
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip().lower())
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not COLSxROWS (for example 160x48)")
    cols, rows = int(m.group(1)), int(m.group(2))
    if not (MIN_SIZE[0] <= cols <= MAX_SIZE[0] and MIN_SIZE[1] <= rows <= MAX_SIZE[1]):
        raise argparse.ArgumentTypeError(
            f"{text} is outside {MIN_SIZE[0]}x{MIN_SIZE[1]} .. {MAX_SIZE[0]}x{MAX_SIZE[1]}"
        )
    return cols, rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        help="a scenario file, a bundled name, or a saved fleet run (.jsonl)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="the folder to write (default: borrowed-keys-out/SCENARIO, beside the app's saves)",
    )
    parser.add_argument(
        "--lang", choices=LANG_CHOICES, default="both", help="en, zh or both (default: both)"
    )
    parser.add_argument(
        "--size",
        type=parse_size,
        default=DEFAULT_SIZE,
        metavar="COLSxROWS",
        help=f"the app's screen (default {DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]})",
    )
    parser.add_argument(
        "--preview", type=Path, default=None, metavar="FILE.gif", help="also an animated GIF"
    )


def add_parser(subparsers: Any) -> None:
    """Register `export` on the console script's subcommands (its handler runs it)."""
    parser = subparsers.add_parser(
        "export", help="a scenario as a self-contained web page", description=DESCRIPTION
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=DESCRIPTION)
    add_arguments(parser)
    return parser


# a named tuple, not a dataclass: this module is loaded to build every command's parser
class Exported(NamedTuple):
    page: Path
    page_bytes: int
    preview: Path | None
    preview_bytes: int
    steps: int
    seconds: float


def langs_of(choice: str) -> tuple[str, ...]:
    return ("en", "zh") if choice == "both" else (choice,)


def command_line(name: str, langs: Sequence[str], size: tuple[int, int]) -> str:
    """How the page was made, as one would type it (the defaults left out)."""
    words = ["borrowed-keys", "export", name]
    if tuple(langs) != ("en", "zh"):
        words += ["--lang", langs[0]]
    if size != DEFAULT_SIZE:
        words += ["--size", f"{size[0]}x{size[1]}"]
    return shlex.join(words)


def _say_step(lang: str, done: int, count: int) -> None:
    print(f"{PROG}: {lang}: step {done} of {count} recorded", file=sys.stderr, flush=True)


def _record_one(
    scenario: "Scenario", lang: str, size: tuple[int, int], steps: int | None, per_step: bool
) -> "Recording":
    from demo.export.frames import record

    started = time.perf_counter()
    progress = _say_step if per_step else None
    import asyncio  # the event loop's modules load when a page is made, not for --help

    recording = asyncio.run(record(scenario, lang, size, steps=steps, progress=progress))
    if not per_step:
        took = time.perf_counter() - started
        count = len(recording.frames) - 1
        print(
            f"{PROG}: {lang}: {count} steps recorded in {took:.1f} s", file=sys.stderr, flush=True
        )
    return recording


def record_langs(
    scenario: "Scenario",
    langs: Sequence[str],
    size: tuple[int, int],
    steps: int | None = None,
    *,
    per_step: bool = False,
) -> "list[Recording]":
    """One app a language, each in a process of its own, so the languages use two cores
    where there are two (one event loop for both had them take turns). Each says how far it
    is on stderr: a line a step (`per_step`, on a terminal), else a line when it is done.
    The processes are forked: the scenario and the loaded modules come for free."""
    import gc
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Textual and the app are loaded here, once, not in each process after the fork: on a
    # machine with two cores, two loads took as long as one and twice the processor time.
    import demo.export.frames  # noqa: F401

    if len(langs) == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_record_one(scenario, lang, size, steps, per_step) for lang in langs]
    # what is loaded before the fork, the collectors of the processes leave alone: it stays
    # as it is, and its pages of memory stay shared
    gc.freeze()
    try:
        fork = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=len(langs), mp_context=fork) as pool:
            jobs = [pool.submit(_record_one, scenario, lg, size, steps, per_step) for lg in langs]
            return [job.result() for job in jobs]
    finally:
        gc.unfreeze()


def export(
    scenario: "Scenario",
    out: Path,
    *,
    name: str,
    langs: Sequence[str] = ("en", "zh"),
    size: tuple[int, int] = DEFAULT_SIZE,
    preview: Path | None = None,
    steps: int | None = None,
    per_step: bool = False,
) -> Exported:
    """Play, render and write. `steps` keeps only the first steps (the tests' short pages);
    `per_step` says each step on stderr as it is recorded."""
    from core.scenarios.writer import write_whole
    from demo.export.page import build_page

    started = time.perf_counter()
    recordings = record_langs(scenario, langs, size, steps, per_step=per_step)
    html = build_page(scenario, recordings, command=command_line(name, langs, size))
    gif = b""
    if preview is not None:
        from demo.export.preview import preview_gif

        gif = preview_gif(recordings[0])
    page = out / "index.html"
    data = html.encode("utf-8")
    write_whole(page, data)
    if preview is not None:
        write_whole(preview, gif)
    return Exported(
        page,
        len(data),
        preview,
        len(gif),
        len(recordings[0].frames) - 1,
        time.perf_counter() - started,
    )


def _problem(args: argparse.Namespace, out: Path) -> str | None:
    """What is wrong with the places to write, before anything is played."""
    if out.exists() and not out.is_dir():
        return f"{out}: exists and is not a folder"
    if args.preview is not None:
        if args.preview.suffix.lower() != ".gif":
            return f"{args.preview}: the preview is a .gif file"
        if args.preview.is_dir():
            return f"{args.preview}: is a folder"
        from demo.export.preview import PreviewError, font_files

        try:
            font_files()
        except PreviewError as exc:
            return str(exc)
    return None


def run_fleet_export(args: argparse.Namespace) -> int:
    """A saved fleet run (JSON lines) as a page: its history replayed, with the fleet screen
    drawn from its saved frames at the moments that matter."""
    from core.fleet.history import HistoryError, load_history
    from core.scenarios.writer import write_whole
    from demo.export.fleet_page import build_fleet_page
    from demo.saves import SAVE_FOLDER

    path = Path(args.scenario)
    try:
        saved = load_history(path)
    except HistoryError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out if args.out is not None else Path(SAVE_FOLDER) / path.stem
    problem = _problem(args, out)
    if problem is None and args.preview is not None:
        problem = f"{args.preview}: a saved fleet run is exported as a page only, not a GIF"
    if problem is not None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    langs = langs_of(args.lang)
    words = ["borrowed-keys", "export", args.scenario]
    if tuple(langs) != ("en", "zh"):
        words += ["--lang", langs[0]]
    if args.size != DEFAULT_SIZE:
        words += ["--size", f"{args.size[0]}x{args.size[1]}"]
    page_text = build_fleet_page(saved, langs, command=shlex.join(words), size=args.size)
    data = page_text.encode("utf-8")
    page = out / "index.html"
    try:
        write_whole(page, data)
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(f"{page}: a saved fleet run, {len(saved.events)} events, {len(data) / 1e6:.2f} MB")
    return 0


def run(args: argparse.Namespace) -> int:
    from core.fleet.history import is_saved_fleet_run
    from core.scenarios.format import ScenarioError
    from core.scenarios.library import open_scenario
    from demo.saves import SAVE_FOLDER

    if is_saved_fleet_run(Path(args.scenario)):
        return run_fleet_export(args)
    try:
        scenario = open_scenario(args.scenario)
    except (ScenarioError, OSError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    stem = Path(args.scenario).name.removesuffix(".toml")
    out: Path = args.out if args.out is not None else Path(SAVE_FOLDER) / stem
    problem = _problem(args, out)
    if problem is not None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    try:
        done = export(
            scenario,
            out,
            name=args.scenario,
            langs=langs_of(args.lang),
            size=args.size,
            preview=args.preview,
            # a line a step is for someone watching; a log gets a line a language
            per_step=sys.stderr.isatty(),
        )
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(f"{done.page}: {done.steps} steps, {done.page_bytes / 1e6:.2f} MB, {done.seconds:.1f} s")
    if done.preview is not None:
        print(f"{done.preview}: {done.preview_bytes / 1e6:.2f} MB")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    return run(args)
