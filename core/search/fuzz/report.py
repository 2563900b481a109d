"""What a chaos invocation hands back: totals over all runs, the runs that failed and
their reproducers."""

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from core.search.fuzz.generate import ChaosParams, RunResult


@dataclass
class Reproducer:
    failure: str
    run: int
    seed: int
    path: str | None
    faults_before: int
    faults_after: int
    replays: int
    verified: bool


@dataclass
class ChaosReport:
    """Totals over all runs, plus the runs that failed and their reproducers."""

    params: ChaosParams
    runs: int
    seed: int
    results: list[RunResult] = field(default_factory=list)
    reproducers: list[Reproducer] = field(default_factory=list)
    elapsed_s: float = 0.0
    jobs: int = 1

    @property
    def violation_runs(self) -> list[RunResult]:
        return [r for r in self.results if r.violations]

    @property
    def liveness_runs(self) -> list[RunResult]:
        return [r for r in self.results if r.stuck]

    @property
    def ok(self) -> bool:
        return not self.violation_runs and not self.liveness_runs

    def summary(self) -> dict[str, Any]:
        """Everything that depends only on the inputs (identical for any --jobs)."""
        violations: Counter[str] = Counter()
        violation_runs: Counter[str] = Counter()
        rejections: Counter[str] = Counter()
        settles = [r.settle_ms for r in self.results if r.settle_ms is not None]
        for r in self.results:
            violations.update(r.violations)
            violation_runs.update(r.violations.keys())
            rejections.update(r.rejections)
        p = self.params
        return {
            "runs": self.runs,
            "seed": self.seed,
            "mode": p.mode.value,
            "workers": p.workers,
            "tasks_per_run": p.tasks,
            "lease_ttl_ms": p.ttl_ms,
            "faults_injected": sum(r.faults for r in self.results),
            "tasks": sum(p.tasks for _ in self.results),
            "tasks_done": sum(r.done for r in self.results),
            "tasks_dead": sum(r.dead for r in self.results),
            "tasks_waiting": sum(r.waiting for r in self.results),
            "rejections": dict(sorted(rejections.items())),
            "violations": dict(sorted(violations.items())),
            "violation_runs": dict(sorted(violation_runs.items())),
            "violation_share": {
                k: round(v / max(1, self.runs), 4) for k, v in sorted(violation_runs.items())
            },
            "liveness_failures": len(self.liveness_runs),
            "worst_recovery_time_ms": max((r.recovery_time_ms for r in self.results), default=0),
            "worst_settle_ms": max(settles, default=0),
            "wasted_steps": sum(r.wasted_steps for r in self.results),
            "failing_runs": [
                {
                    "run": r.index,
                    "seed": r.seed,
                    "failures": [f.label for f in r.failures],
                }
                for r in self.results
                if r.failures
            ],
            "reproducers": [asdict(x) for x in self.reproducers],
            "ok": self.ok,
        }
