"""Durations as people write them ("250ms", "10s", "2m", "1h", or seconds) and back."""

import re

_UNITS_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000}
# ASCII digits and spaces only: `\d` alone also takes "１０" (full-width) and "١٠"
# (Arabic-Indic), which `float` reads as 10, so a file would say one thing and play another.
_PATTERN = re.compile(r"^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$", re.ASCII)


class DurationError(ValueError):
    """A duration that cannot be read."""


def parse_duration(value: object, *, allow_negative: bool = False) -> int:
    """Return milliseconds for "250ms", "10s", "2m", "1h" or a number of seconds."""
    if isinstance(value, bool):
        raise DurationError(f'expected a duration like "10s", got {value!r}')
    if isinstance(value, int | float):
        ms = round(float(value) * 1000)
    elif isinstance(value, str):
        match = _PATTERN.match(value)
        if not match:
            raise DurationError(
                f'bad duration {value!r}: write it like "250ms", "10s", "2m" or "1h"'
            )
        number, unit = match.groups()
        ms = round(float(number) * _UNITS_MS[unit or "s"])
    else:
        raise DurationError(f'expected a duration like "10s", got {type(value).__name__}')
    if ms < 0 and not allow_negative:
        raise DurationError(f"duration {value!r} is negative")
    return ms


def format_duration(ms: int) -> str:
    """The shortest exact spelling of a duration: 90000 -> "90s", 3600000 -> "1h"."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    for unit in ("h", "m", "s"):
        size = _UNITS_MS[unit]
        if ms and ms % size == 0:
            return f"{sign}{ms // size}{unit}"
    return f"{sign}{ms}ms"


def format_clock(ms: int) -> str:
    """Virtual time as H:MM:SS.mmm, for transcripts and the header."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{sign}{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"
