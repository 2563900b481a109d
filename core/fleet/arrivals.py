"""A steady queue for the fleet: new tasks arrive at a rate, so a fault always finds a
worker at work ("Worker 可能在工具调用途中被 OOM 杀掉": the interesting moment is mid-task).

The rate is in tasks a minute and the presenter may change it (`+` / `-`). Arrivals pause
while enough tasks already wait, so a rate above what the workers can do grows no endless
backlog; they resume by themselves as the queue drains. Paced by the supervisor's monotonic
clock: arrivals judge nothing, the database's clock judges every lease.
"""

import math
from dataclasses import dataclass, field

# Each press of `+` or `-` multiplies or divides the rate by this.
STEP = 1.5
MOST_PER_MINUTE = 600.0
LEAST_PER_MINUTE = 1.0


def default_rate(workers: int, steps: int, step_ms: int) -> float:
    """Tasks a minute that keep `workers` busy: a little more than they can finish."""
    task_s = max(0.1, steps * step_ms / 1000)
    return clamp(math.ceil(1.25 * max(1, workers) * 60 / task_s))


def clamp(per_minute: float) -> float:
    return float(min(MOST_PER_MINUTE, max(LEAST_PER_MINUTE, round(per_minute))))


@dataclass
class Arrivals:
    """When the next tasks are due, at `per_minute`, while fewer than `most_waiting` wait."""

    per_minute: float
    most_waiting: int
    _next_at: float | None = field(default=None, repr=False)

    def due(self, now: float, waiting: int) -> int:
        """How many tasks arrive by `now` (monotonic seconds), `waiting` already queued."""
        gap = 60.0 / self.per_minute
        if self._next_at is None:  # the first look fills the queue: every worker starts busy
            self._next_at = now + gap
            return max(0, self.most_waiting - waiting)
        if waiting >= self.most_waiting:
            self._next_at = max(self._next_at, now)  # paused: no burst when it drains
            return 0
        n = 0
        while self._next_at <= now and waiting + n < self.most_waiting:
            n += 1
            self._next_at += gap
        self._next_at = max(self._next_at, now - gap)
        return n

    def faster(self) -> float:
        self.per_minute = clamp(self.per_minute * STEP)
        return self.per_minute

    def slower(self) -> float:
        self.per_minute = clamp(self.per_minute / STEP)
        return self.per_minute
