"""A heavy heartbeat: a renewal that carries a payload, and what it costs on a loaded store.

The seed: "续约写入要足够轻。 心跳本身如果需要重数据库事务、跨区域 RPC 或大对象序列化，它会先把
自己变成新的瓶颈。" A correct renewal is the store's own UPDATE of one row, four BIGINT columns
(`lease_expires_at`, `renew_deadline`, `last_heartbeat_at`, `updated_at`) and no payload;
that statement never changes here. The mistake is a worker that sends more with each
heartbeat (its whole transcript, a status blob): the payload must be serialised, shipped and
swallowed before the renewal's statement runs, and that takes time in proportion to its size
and to how busy the store is. The statement then runs when the heartbeat lands, on the
store's clock, so a heavy heartbeat under load lands after the lease it meant to renew has
run out: the store refuses it (expired, or superseded by the next holder) while the worker
was healthy all along.

Only heartbeats are charged for the load: the lesson is about them, and every other call of
a worker writes a few bytes.
"""

import math
import re
from dataclasses import dataclass

MB = 1_000_000
# What one correct renewal writes: four BIGINT columns of one row.
RENEWAL_BYTES = 4 * 8
# A quiet store takes in a megabyte of heartbeat in a quarter of a second (serialising it,
# the round trip, the write and its log); at load N it takes N times as long.
QUIET_MS_PER_MB = 250
# A lesson, not a load test: at most a gigabyte on one heartbeat.
MAX_PAYLOAD_BYTES = 1_000 * MB

_UNITS = {"": 1, "b": 1, "kb": 1_000, "mb": MB, "gb": 1_000 * MB}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


class SizeError(ValueError):
    """A payload size that cannot be read; the text follows the key's name (`size must not
    be negative, got -5`). `rule` names the mistake and `fill` the values it shows, so a run
    in another language says it in its own words."""

    def __init__(self, message: str, rule: str, **fill: object) -> None:
        super().__init__(message)
        self.rule = rule
        self.fill = fill


@dataclass
class StoreLoad:
    """How busy the store is: 1 is quiet, 100 is a hundred times slower to take a big write.
    One object per run, shared by its workers."""

    factor: float = 1.0


def heartbeat_cost_ms(payload_bytes: int, load: float) -> int:
    """How long a heartbeat takes to land, in whole milliseconds of the store's clock: the
    renewal's own bytes and the payload, at QUIET_MS_PER_MB times the load. A cheap one (no
    payload) stays under a millisecond at any load the format allows."""
    return math.floor((RENEWAL_BYTES + payload_bytes) * QUIET_MS_PER_MB * load / MB)


def parse_size(value: str | int) -> int:
    """A payload size in bytes: `"2MB"`, `"512KB"`, `"1.5MB"`, `"300B"`, `0` (decimal units)."""
    if isinstance(value, bool):
        raise SizeError(f'must be a size like "2MB", got {value}', "size_type", got=value)
    if isinstance(value, int):
        if value < 0:
            raise SizeError(f"must not be negative, got {value}", "size_negative", value=value)
        size = value
    else:
        found = _SIZE.match(value)
        if found is None or found[2].lower() not in _UNITS:
            raise SizeError(
                f'must be a size like "2MB", "512KB" or "0", got "{value}"',
                "size_unread",
                value=value,
            )
        size = round(float(found[1]) * _UNITS[found[2].lower()])
    if size > MAX_PAYLOAD_BYTES:
        raise SizeError(
            f"is too large: {format_size(size)} (at most 1GB)",
            "size_too_large",
            value=format_size(size),
        )
    return size


def format_size(size: int) -> str:
    """A size as a file spells it, parse_size's inverse: 2000000 is "2MB", 0 is "0B"."""
    for unit, factor in (("GB", 1_000 * MB), ("MB", MB), ("KB", 1_000)):
        if size >= factor:
            return f"{size / factor:g}{unit}" if size % (factor // 1000 or 1) == 0 else f"{size}B"
    return f"{size}B"
