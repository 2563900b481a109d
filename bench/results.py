"""The bench's figures as data: one record per figure, one JSON file per run in bench/results/.

A section calls `record` beside each figure it prints. `python -m bench` opens the run's file
first (`start_run`) and rewrites it after every record, so a run stopped halfway keeps what it
measured. A section run alone (`python -m bench.tui`) records nothing to disk.

Each record carries what docs/figures.md shows and what a reader needs to judge it: the target
and whether it is met, the machine's load average when it was measured (the machine is shared:
a figure taken at a load of 9 on 2 cores waited for a core), the date, and the command that
measures it again.
"""

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal


def quick() -> bool:
    """`BK_BENCH_QUICK=1` (`python -m bench --quick`): each section's smaller points."""
    return os.environ.get("BK_BENCH_QUICK", "") not in ("", "0")


RESULTS = Path(__file__).parent / "results"

Aim = Literal["at least", "at most", "under"]


@dataclass(frozen=True)
class Figure:
    name: str  # stable key across runs: "section.what", e.g. "store.ratio"
    section: str
    what: str  # one sentence: what was measured
    value: float
    unit: str  # "x", "ms", "us", "s", "per s", "MB", "" for a bare count
    target: float | None
    aim: Aim | None  # how `value` must stand to `target`
    met: bool | None
    load: float  # the 1-minute load average just after the measurement
    cpus: int
    date: str  # UTC, ISO 8601 to the second
    command: str


def is_met(value: float, aim: Aim | None, target: float | None) -> bool | None:
    if aim is None or target is None:
        return None
    if aim == "at least":
        return value >= target
    if aim == "at most":
        return value <= target
    return value < target


@dataclass
class Run:
    path: Path | None
    command: str
    started: str
    figures: list[Figure] = field(default_factory=list)

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One figure a line: small, and a diff between two runs reads figure by figure.
        head = json.dumps({"started": self.started, "command": self.command})[:-1]
        rows = ",\n".join(json.dumps(asdict(f), ensure_ascii=False) for f in self.figures)
        self.path.write_text(f'{head}, "figures": [\n{rows}\n]}}\n')


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


_run = Run(path=None, command="python -m bench", started=_now())
_quick = False


def start_run(command: str, quick: bool, folder: Path = RESULTS) -> Path:
    """Open this run's file (named by its start, UTC) and return its path."""
    global _run, _quick
    started = _now()
    path = folder / f"{started.replace(':', '-')}.json"
    _run = Run(path=path, command=command, started=started)
    _quick = quick
    return path


def current() -> Run:
    return _run


def record(
    section: str,
    key: str,
    what: str,
    value: float,
    unit: str,
    *,
    target: float | None = None,
    aim: Aim | None = None,
    command: str | None = None,
    met: bool | None = None,
) -> Figure:
    """Keep one figure of this run (and write the run's file, when there is one). `met`
    overrides the comparison with the target where the value alone cannot tell."""
    again = command or f"python -m bench {section}" + (" --quick" if _quick else "")
    figure = Figure(
        name=f"{section}.{key}",
        section=section,
        what=what,
        value=float(value),
        unit=unit,
        target=target,
        aim=aim,
        met=is_met(value, aim, target) if met is None else met,
        load=round(os.getloadavg()[0], 2),
        cpus=os.cpu_count() or 1,
        date=_now(),
        command=again,
    )
    _run.figures.append(figure)
    _run.save()
    return figure


def read(path: Path) -> list[Figure]:
    data = json.loads(path.read_text())
    return [Figure(**f) for f in data["figures"]]
