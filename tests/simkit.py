"""Small helpers for simulation tests: build a run, act, and read its history."""

from core.engine.config import LeaseConfig, Mode
from core.engine.records import EventRow
from core.sim.simulation import ActionResult, Simulation
from core.sim.spec import ACTION_TYPES, Advance, SimSettings, TaskSpec, WorkerSpec


def make_sim(
    workers: tuple[str, ...] = ("acheng", "linzhou"),
    tasks: tuple[TaskSpec, ...] = (TaskSpec("floor6", steps=12),),
    *,
    mode: Mode = Mode.CORRECT,
    config: LeaseConfig | None = None,
    self_fencing: bool = False,
    manual: tuple[str, ...] = (),
    skew: dict[str, int] | None = None,
) -> Simulation:
    skew = skew or {}
    specs = tuple(WorkerSpec(w, autopilot=w not in manual, skew_ms=skew.get(w, 0)) for w in workers)
    return Simulation(
        SimSettings(
            mode=mode,
            config=config or LeaseConfig(),
            self_fencing=self_fencing,
            workers=specs,
            tasks=tasks,
        )
    )


def act(sim: Simulation, name: str, **kw: object) -> ActionResult:
    """Apply an action that must succeed (a refusal fails the test: use `refused`)."""
    result = sim.apply(ACTION_TYPES[name](**kw))
    assert result.ok, f"{name} {kw} was refused: {result.message}"
    return result


def refused(sim: Simulation, name: str, **kw: object) -> ActionResult:
    """Apply an action that must be refused; the result says how."""
    result = sim.apply(ACTION_TYPES[name](**kw))
    assert not result.ok, f"{name} {kw} was expected to be refused, and it was not"
    return result


def advance(sim: Simulation, seconds: float) -> None:
    sim.apply(Advance(by_ms=round(seconds * 1000)))


def named(sim: Simulation, event: str, **match: object) -> list[EventRow]:
    return [
        e
        for e in sim.events()
        if e.event == event and all(getattr(e, k) == v for k, v in match.items())
    ]


def history(sim: Simulation) -> list[dict[str, object]]:
    return [e.to_json_dict() for e in sim.events()]


def modules_loaded_by(code: str) -> list[str]:
    """Every module a fresh interpreter has loaded after running `code` (at the repository's
    root): what a run costs to start is what it imports."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    probe = code + "\nimport json as _json, sys as _sys\nprint(_json.dumps(sorted(_sys.modules)))\n"
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root
    )
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded
