"""The portfolio page's cost: `borrowed-keys export 01_fog` in both languages, timed.

First the command as a user types it, in a fresh process (start-up, the app's modules and
all), three times: the least and the median wall time, with the machine's load (the
machine is shared: a run that waited for a core is not the export's doing). Then the
whole export as the command runs it (the app played headless twice, one language each
in a process of its own, a screenshot per step, the page written) at the default 160 x 48:
wall time, the CPU time of this process and of the two recording processes, the machine's
load, and the page's size; then the preview GIF of the same frames, its time and size.
The targets: an export under 8 s of wall time on 2 cores, a page under 1.5 MB, a GIF
under 2 MB.

`python -m bench.export` (or `python -m bench export`) runs this section alone.
"""

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from bench.results import record

EXPORT_TARGET_S = 8.0
PAGE_LIMIT_BYTES = 1_500_000
PREVIEW_LIMIT_BYTES = 2_000_000
PAGE_LIMIT_MB = 1.5
COMMAND_ROUNDS = 3


def bench_command() -> str:
    """`borrowed-keys export 01_fog` in a fresh process, COMMAND_ROUNDS times."""
    command = [str(Path(sys.executable).with_name("borrowed-keys")), "export", "01_fog"]
    took: list[float] = []
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(COMMAND_ROUNDS):
            started = time.perf_counter()
            subprocess.run(
                [*command, "--out", str(Path(tmp) / str(n))],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            took.append(time.perf_counter() - started)
            loads.append(os.getloadavg()[0])
    least, median = min(took), statistics.median(took)
    what = f"borrowed-keys export 01_fog (en + zh, 160x48, a fresh process), {COMMAND_ROUNDS} runs"
    for key, name, value in (("command_min", "least", least), ("command_median", "median", median)):
        record(
            "export",
            key,
            f"{what}: the {name} wall time",
            round(value, 1),
            "s",
            target=EXPORT_TARGET_S,
            aim="under",
        )
    verdict = "ok" if median < EXPORT_TARGET_S else "over"
    return (
        f"borrowed-keys export 01_fog, {COMMAND_ROUNDS} runs: least {least:.1f} s, median "
        f"{median:.1f} s wall (target {EXPORT_TARGET_S:.0f} s: {verdict}; load average "
        f"{min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores)"
    )


def bench_export() -> str:
    from core.scenarios.library import open_scenario
    from demo.export.cli import export

    scenario = open_scenario("01_fog")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, cpu = time.perf_counter(), time.process_time()
        page = export(scenario, out / "page", name="01_fog")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        recorders = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
        verdict = "ok" if wall < EXPORT_TARGET_S else "over"
        size = "ok" if page.page_bytes < PAGE_LIMIT_BYTES else "over"
        what = f"export 01_fog, en + zh, {page.steps} steps at 160x48"
        record(
            "export",
            "wall",
            f"{what}, wall time",
            round(wall, 1),
            "s",
            target=EXPORT_TARGET_S,
            aim="under",
        )
        record(
            "export", "cpu", f"{what}, processor time of the command's process", round(cpu, 1), "s"
        )
        record(
            "export",
            "cpu_recorders",
            f"{what}, processor time of the two recording processes",
            round(recorders, 1),
            "s",
        )
        record(
            "export",
            "page",
            f"{what}: the page's size",
            round(page.page_bytes / 1e6, 2),
            "MB",
            target=PAGE_LIMIT_MB,
            aim="under",
        )
        lines = [
            f"export 01_fog, en + zh, {page.steps} steps at 160x48: {wall:.1f} s wall "
            f"(target {EXPORT_TARGET_S:.0f} s: {verdict}; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores), {cpu:.1f} s CPU here and "
            f"{recorders:.1f} s in the two recorders; index.html {page.page_bytes / 1e6:.2f} MB "
            f"(limit {PAGE_LIMIT_BYTES / 1e6:.1f} MB: {size})"
        ]
        try:
            from demo.export.preview import PreviewError, font_files

            font_files()
        except (ImportError, PreviewError) as exc:
            lines.append(f"preview: not measured ({exc})")
            return "\n".join(lines)
        started = time.perf_counter()
        shown = export(scenario, out / "p", name="01_fog", langs=("en",), preview=out / "fog.gif")
        took = time.perf_counter() - started
        gif = shown.preview_bytes
        verdict = "ok" if gif < PREVIEW_LIMIT_BYTES else "over"
        record(
            "export",
            "preview",
            "export 01_fog --lang en --preview: the GIF's size",
            round(gif / 1e6, 2),
            "MB",
            target=PREVIEW_LIMIT_BYTES / 1e6,
            aim="under",
        )
        lines.append(
            f"export 01_fog --lang en --preview: {took:.1f} s; the GIF {gif / 1e6:.2f} MB "
            f"(limit 2 MB: {verdict})"
        )
    return "\n".join(lines)


def export_bench(console: Console) -> None:
    console.print(bench_command())
    console.print(bench_export())


if __name__ == "__main__":
    print(bench_command())
    print(bench_export())
