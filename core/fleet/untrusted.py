"""A saved run read as untrusted input: what may be in a file before any of it is believed.

A saved run is a file anyone can edit, or a name that points anywhere: a symlink to
/dev/zero would be read for ever, a FIFO would never end, one line of a hundred thousand
`[` would exhaust the parser's stack, `1e400` is a float that is not a number, and an id
holding an escape sequence would clear the reader's screen when the check names it. Each of
these is one line, `FILE:LINE: what is wrong`, before anything is judged or printed.
"""

import json
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from core.engine.ids import shown_text_problem

# A saved run of the fleet app's longest session (its frames bounded, FRAME_ROWS rows a
# table) is a few megabytes; a file a hundred times that is not one of ours.
MAX_FILE_BYTES: Final = 256 * 1024 * 1024
# One frame of the screen is the longest line a run writes: a few hundred kilobytes.
MAX_LINE_BYTES: Final = 8 * 1024 * 1024
# A frame's snapshot nests a handful of levels (snap, table, row, detail, value).
MAX_DEPTH: Final = 16
# Instants are milliseconds since 1970; a run is not saved before then nor after 5000.
MAX_INSTANT_MS: Final = 95_617_584_000_000
# A lease's timing: at most a year, as a scenario's.
MAX_DURATION_MS: Final = 366 * 24 * 3600 * 1000
# Whole numbers a store keeps fit a BIGINT; a token or count past 2**53 is not ours.
MAX_WHOLE: Final = 2**53


class Unreadable(ValueError):
    """One line of a saved run that cannot be taken as it is: the sentence says why."""


def regular_file_text(path: Path) -> bytes:
    """The bytes of `path` if it is a regular file of a bounded size; Unreadable if not.

    The file is opened without blocking and checked as opened (not by its name, which
    could be swapped between a look and a read), so a FIFO or a device is refused at once."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(
                "is not a regular file (a device, a FIFO or a folder): not a saved run"
            )
        if info.st_size > MAX_FILE_BYTES:
            raise Unreadable(
                f"is {info.st_size} bytes, more than a saved run holds (at most {MAX_FILE_BYTES})"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_FILE_BYTES:  # it grew while being read
                raise Unreadable(f"grew past {MAX_FILE_BYTES} bytes while it was read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)


def _refuse_constant(name: str) -> Any:
    raise Unreadable(f"holds {name}, which is not a number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Unreadable(f"holds the number {text[:20]}, too large to be one")
    return value


def _check_value(value: Any, depth: int) -> None:
    """Every value of a line bounded in depth, every number finite, every text printable."""
    if depth > MAX_DEPTH:
        raise Unreadable(f"is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        problem = shown_text_problem(value)
        if problem is not None:
            shown = ascii(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise Unreadable(f"holds the text {shown}, which {problem}")
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if abs(value) > 2**63:
            raise Unreadable(f"holds a number of {len(str(abs(value)))} digits")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_value(key, depth + 1)
            _check_value(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_value(item, depth + 1)


def json_lines(data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; Unreadable (with its number in
    `args[1]`) for the first that is not a bounded JSON object of finite, printable values."""
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            if len(raw) > MAX_LINE_BYTES:
                raise Unreadable(
                    f"is {len(raw)} bytes long (a saved line is at most {MAX_LINE_BYTES})"
                )
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise Unreadable("is not UTF-8 text") from None
            try:
                # the parser's own depth guard ends deep nesting as a RecursionError, at
                # once; `_check_value` then holds what parsed to MAX_DEPTH
                line = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
            except RecursionError:
                raise Unreadable(f"is nested more than {MAX_DEPTH} levels deep") from None
            except json.JSONDecodeError as exc:
                raise Unreadable(f"is not JSON ({exc.msg}, column {exc.colno})") from None
            if not isinstance(line, dict):
                raise Unreadable("is not a JSON object")
            _check_value(line, 0)
        except Unreadable as exc:
            raise Unreadable(str(exc), n) from None
        yield n, line


def whole(line: dict[str, Any], key: str, *, low: int = 0, high: int = MAX_WHOLE) -> int:
    """`line[key]` if it is a whole number (not a boolean, not text) in [low, high]."""
    if key not in line:
        raise Unreadable(f"has no {key!r}")
    value = line[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unreadable(f"its {key!r} is not a whole number: {ascii(value)[:30]}")
    if not low <= value <= high:
        raise Unreadable(f"its {key!r} is {value}, outside {low} to {high}")
    return value


def maybe_whole(
    line: dict[str, Any], key: str, *, low: int = 0, high: int = MAX_WHOLE
) -> int | None:
    if line.get(key) is None:
        return None
    return whole(line, key, low=low, high=high)


def text(line: dict[str, Any], key: str) -> str:
    value = line.get(key)
    if not isinstance(value, str) or not value:
        raise Unreadable(f"its {key!r} is not text: {ascii(value)[:30]}")
    return value


def maybe_text(line: dict[str, Any], key: str) -> str | None:
    if line.get(key) is None:
        return None
    return text(line, key)


def version(line: dict[str, Any], known: int, what: str) -> None:
    """The line's `v` is the one version this program reads, a whole number."""
    value = line.get("v")
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unreadable(f"{what} without a version this program reads (v is {ascii(value)[:20]})")
    if value != known:
        newer = "newer than" if value > known else "not one"
        raise Unreadable(
            f"{what} of version {value}, {newer} this program reads (it reads {known})"
        )
