"""Lease timing and the run's mode (correct, or one of the mistakes the seed warns about).

The timing rules follow Kubernetes' leader election (leaseDuration > renewDeadline >
retryPeriod), in the seed's words:
- the lease ttl bounds how long a silent holder keeps the task (recovery time);
- the renew deadline is when a holder that has not renewed must stop working by itself
  (self-fencing), so it has to come before the ttl runs out;
- heartbeats must come more often than the renew deadline, or a healthy holder would
  miss its own deadline; the seed asks for at most half the ttl, so one lost heartbeat
  still leaves time for the next.
"""

import warnings
from dataclasses import dataclass

from core.engine.durations import format_duration
from core.engine.errors import ConfigError, InvalidArgument
from core.engine.modes import Mode

__all__ = ["LONG_LEASE_TTL_MS", "LeaseConfig", "Mode", "TimingWarning"]


LONG_LEASE_TTL_MS = 3_600_000
# The longest timing a config takes: a year. An expiry is `now + ttl` in a BIGINT column,
# and a ttl of 10**30 ms would overflow the driver at the first claim.
MAX_TIMING_MS = 366 * 24 * 3600 * 1000


class TimingWarning(UserWarning):
    """A configuration that works but breaks one of the seed's rules of thumb."""


@dataclass(frozen=True, slots=True)
class LeaseConfig:
    """How long a lease lasts and how often it is renewed, in milliseconds."""

    ttl_ms: int = 60_000
    heartbeat_every_ms: int | None = None
    renew_deadline_ms: int | None = None
    poll_every_ms: int = 5_000

    def __post_init__(self) -> None:
        # Whole milliseconds within a year, refused as they are given (a "5s" or a float
        # would be taken until the first claim); their order is `validated`'s to judge.
        for name in ("ttl_ms", "heartbeat_every_ms", "renew_deadline_ms", "poll_every_ms"):
            value = getattr(self, name)
            if value is None and name not in ("ttl_ms", "poll_every_ms"):
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidArgument(
                    f"{name} must be a whole number of milliseconds, got "
                    f"{type(value).__name__} {ascii(value)[:40]}"
                )
            if abs(value) > MAX_TIMING_MS:
                raise InvalidArgument(
                    f"{name} must be between {-MAX_TIMING_MS} and {MAX_TIMING_MS} ms (a year)"
                )

    @property
    def heartbeat_ms(self) -> int:
        return self.heartbeat_every_ms if self.heartbeat_every_ms is not None else self.ttl_ms // 3

    @property
    def deadline_ms(self) -> int:
        if self.renew_deadline_ms is not None:
            return self.renew_deadline_ms
        return self.ttl_ms * 2 // 3

    def validated(self) -> "LeaseConfig":
        """Return self if the timing rules hold; raise ConfigError (naming the key) otherwise."""
        if self.ttl_ms <= 0:
            raise ConfigError(
                f"lease_ttl must be positive, got {format_duration(self.ttl_ms)}",
                "lease_ttl",
                rule="ttl_positive",
                fill={"ttl": format_duration(self.ttl_ms)},
            )
        if self.heartbeat_every_ms is not None and self.heartbeat_every_ms <= 0:
            raise ConfigError(
                "heartbeat_every must be positive", "heartbeat_every", rule="heartbeat_positive"
            )
        if self.renew_deadline_ms is not None and self.renew_deadline_ms <= 0:
            raise ConfigError(
                "renew_deadline must be positive", "renew_deadline", rule="deadline_positive"
            )
        if self.poll_every_ms <= 0:
            raise ConfigError("poll_every must be positive", "poll_every", rule="poll_positive")
        if self.heartbeat_ms <= 0 or self.deadline_ms <= 0:
            # A ttl of a millisecond or two leaves a third or two thirds of it at zero.
            raise ConfigError(
                "lease_ttl is too short to divide into beats", "lease_ttl", rule="ttl_too_short"
            )
        # The seed: "renew_deadline   下一次续约必须发生在什么时候" (when the next renewal
        # must happen): before the lease runs out, or the deadline protects nothing.
        if not self.ttl_ms > self.deadline_ms:
            raise ConfigError(
                f"lease_ttl ({format_duration(self.ttl_ms)}) must be longer than "
                f"renew_deadline ({format_duration(self.deadline_ms)})",
                "renew_deadline",
                "lease_ttl",
                rule="ttl_above_deadline",
                fill={
                    "ttl": format_duration(self.ttl_ms),
                    "deadline": format_duration(self.deadline_ms),
                },
            )
        if not self.deadline_ms > self.heartbeat_ms:
            raise ConfigError(
                f"renew_deadline ({format_duration(self.deadline_ms)}) must be longer than "
                f"heartbeat_every ({format_duration(self.heartbeat_ms)})",
                "heartbeat_every",
                "renew_deadline",
                "lease_ttl",
                rule="deadline_above_heartbeat",
                fill={
                    "deadline": format_duration(self.deadline_ms),
                    "heartbeat": format_duration(self.heartbeat_ms),
                },
            )
        return self

    def in_mode(self, mode: Mode) -> "LeaseConfig":
        """The validated timing a run in `mode` uses: long_lease swaps in a one-hour ttl.

        The seed: "租期太长会把恢复时间也一起拉长" (a lease too long stretches the recovery
        time with it) — mistake two keeps this config's heartbeat and poll under that ttl."""
        self.validated()
        if mode is not Mode.LONG_LEASE:
            return self
        long = LeaseConfig(
            ttl_ms=LONG_LEASE_TTL_MS,
            heartbeat_every_ms=self.heartbeat_ms,
            renew_deadline_ms=None,
            poll_every_ms=self.poll_every_ms,
        )
        if long.heartbeat_ms >= long.deadline_ms:
            raise ConfigError(
                f"heartbeat_every ({format_duration(long.heartbeat_ms)}) must be shorter "
                f"than long_lease's renew deadline ({format_duration(long.deadline_ms)})",
                "heartbeat_every",
                "lease_ttl",
                rule="heartbeat_below_long_deadline",
                fill={
                    "heartbeat": format_duration(long.heartbeat_ms),
                    "deadline": format_duration(long.deadline_ms),
                },
            )
        return long.validated()

    @property
    def renews_too_slowly(self) -> bool:
        """Whether the heartbeat comes slower than half the ttl.

        The seed: "续约频率快于租期的一半。 例如租期 60 秒，worker 每 20 秒发一次 heartbeat。这样
        即使丢一两次包，系统还有补救窗口。" (renew faster than half the ttl)."""
        return self.heartbeat_ms * 2 > self.ttl_ms

    def timing_warnings(self) -> list[str]:
        """Rules of thumb this configuration breaks (it still runs)."""
        found = []
        if self.renews_too_slowly:
            found.append(
                f"heartbeat_every ({format_duration(self.heartbeat_ms)}) is more than half of "
                f"lease_ttl ({format_duration(self.ttl_ms)}): one lost heartbeat can cost the lease"
            )
        return found

    def warn(self) -> None:
        for message in self.timing_warnings():
            warnings.warn(message, TimingWarning, stacklevel=2)
