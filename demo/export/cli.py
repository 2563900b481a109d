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

# What export says while it works and when it is done, (en, zh). The page records the
# languages asked for; these lines are in `--lang` when it names one, English for both.
# `PROG:` and `FILE:` before them stay as they are: scripts and editors read them.
SAYS: dict[str, tuple[str, str]] = {
    # the page being recorded, by its language
    "en": ("en", "英文"),
    "zh": ("zh", "中文"),
    "step": (
        "{prog}: {lang}: step {done} of {count} recorded",
        "{prog}: {lang}页面已录下第 {done} 步，共 {count} 步",
    ),
    "recorded": (
        "{prog}: {lang}: {count} steps recorded in {took:.1f} s",
        "{prog}: {lang}页面的 {count} 步已录完，用时 {took:.1f} 秒",
    ),
    "written": (
        "{page}: {steps} steps, {mb:.2f} MB, {took:.1f} s",
        "{page}: {steps} 步，{mb:.2f} MB，用时 {took:.1f} 秒",
    ),
    "preview": ("{preview}: {mb:.2f} MB", "{preview}: {mb:.2f} MB"),
    "fleet_written": (
        "{page}: a saved fleet run, {events} events, {mb:.2f} MB",
        "{page}: 一次保存下来的集群运行，{events} 条事件，{mb:.2f} MB",
    ),
    "not_a_folder": ("{out}: exists and is not a folder", "{out}: 已经存在，却不是文件夹"),
    "preview_not_gif": ("{preview}: the preview is a .gif file", "{preview}: 预览要存成 .gif 文件"),
    "preview_is_folder": ("{preview}: is a folder", "{preview}: 这是一个文件夹"),
    "fleet_no_preview": (
        "{preview}: a saved fleet run is exported as a page only, not a GIF",
        "{preview}: 保存下来的集群运行只导出为网页，不做动图",
    ),
}


def says(name: str, lang: str, /, **fill: object) -> str:
    """One of export's lines in `lang` (en or zh)."""
    return SAYS[name][1 if lang == "zh" else 0].format(**fill)


def said_in(choice: str) -> str:
    """The language export speaks in for `--lang CHOICE`: that one, English for both."""
    return "zh" if choice == "zh" else "en"


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
        "--lang",
        choices=LANG_CHOICES,
        default="both",
        help="the page's language: en, zh or both (default: both); what export prints while "
        "it works and when it is done is in that language, in English for both",
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


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _record_one(
    scenario: "Scenario",
    lang: str,
    size: tuple[int, int],
    steps: int | None,
    per_step: bool,
    speak: str = "en",
) -> "Recording":
    from demo.export.frames import record

    started = time.perf_counter()
    named = says(lang, speak)

    def say_step(_lang: str, done: int, count: int) -> None:
        _say(says("step", speak, prog=PROG, lang=named, done=done, count=count))

    progress = say_step if per_step else None
    import asyncio  # the event loop's modules load when a page is made, not for --help

    recording = asyncio.run(record(scenario, lang, size, steps=steps, progress=progress))
    if not per_step:
        took = time.perf_counter() - started
        count = len(recording.frames) - 1
        _say(says("recorded", speak, prog=PROG, lang=named, count=count, took=took))
    return recording


def record_langs(
    scenario: "Scenario",
    langs: Sequence[str],
    size: tuple[int, int],
    steps: int | None = None,
    *,
    per_step: bool = False,
    speak: str = "en",
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
        return [_record_one(scenario, lang, size, steps, per_step, speak) for lang in langs]
    # what is loaded before the fork, the collectors of the processes leave alone: it stays
    # as it is, and its pages of memory stay shared
    gc.freeze()
    try:
        fork = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=len(langs), mp_context=fork) as pool:
            jobs = [
                pool.submit(_record_one, scenario, lg, size, steps, per_step, speak) for lg in langs
            ]
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
    speak: str | None = None,
) -> Exported:
    """Play, render and write. `steps` keeps only the first steps (the tests' short pages);
    `per_step` says each step on stderr as it is recorded, in `speak` (by default the
    page's one language, English for both)."""
    from core.scenarios.writer import write_whole
    from demo.export.page import build_page

    started = time.perf_counter()
    if speak is None:
        speak = langs[0] if len(langs) == 1 else "en"
    recordings = record_langs(scenario, langs, size, steps, per_step=per_step, speak=speak)
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
    speak = said_in(args.lang)
    if out.exists() and not out.is_dir():
        return says("not_a_folder", speak, out=out)
    if args.preview is not None:
        if args.preview.suffix.lower() != ".gif":
            return says("preview_not_gif", speak, preview=args.preview)
        if args.preview.is_dir():
            return says("preview_is_folder", speak, preview=args.preview)
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
        problem = says("fleet_no_preview", said_in(args.lang), preview=args.preview)
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
    mb = len(data) / 1e6
    print(says("fleet_written", said_in(args.lang), page=page, events=len(saved.events), mb=mb))
    return 0


def run(args: argparse.Namespace) -> int:
    from core.fleet.history import is_saved_fleet_run
    from core.scenarios.format import ScenarioError
    from core.scenarios.library import open_scenario
    from demo.saves import SAVE_FOLDER

    if is_saved_fleet_run(Path(args.scenario)):
        return run_fleet_export(args)
    speak = said_in(args.lang)
    try:
        scenario = open_scenario(args.scenario)
    except (ScenarioError, OSError) as exc:
        told = exc.in_language(speak) if isinstance(exc, ScenarioError) else exc
        print(f"{PROG}: {told}", file=sys.stderr)
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
            speak=speak,
        )
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    mb = done.page_bytes / 1e6
    print(says("written", speak, page=done.page, steps=done.steps, mb=mb, took=done.seconds))
    if done.preview is not None:
        print(says("preview", speak, preview=done.preview, mb=done.preview_bytes / 1e6))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    return run(args)
