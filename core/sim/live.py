"""Live mode: the virtual clock runs at a chosen multiple of real time (the TUI's sandbox).

The pacer only converts elapsed wall time into virtual milliseconds to advance; the
simulation itself never reads the wall clock, so a live session stays replayable.
"""

from dataclasses import dataclass

SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)


@dataclass
class LivePacer:
    """Turns wall-clock ticks into virtual time at `speed` x real time."""

    speed: float = 1.0
    paused: bool = True
    _carry: float = 0.0
    _last_wall: float | None = None

    def tick(self, wall_now_s: float) -> int:
        """Virtual milliseconds to advance for the wall time since the last tick."""
        last, self._last_wall = self._last_wall, wall_now_s
        if self.paused or last is None:
            self._carry = 0.0
            return 0
        exact = (wall_now_s - last) * 1000 * self.speed + self._carry
        whole = int(exact)
        self._carry = exact - whole
        return max(0, whole)

    def faster(self) -> float:
        self.speed = next((s for s in SPEEDS if s > self.speed), self.speed)
        return self.speed

    def slower(self) -> float:
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), self.speed)
        return self.speed
