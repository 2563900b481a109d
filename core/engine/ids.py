"""What an id is: one line of printable text, the same rule for every backend and file.

Ids (of tasks, workers, ledger keys, effects and reasons) are written into the register
and printed one per line in transcripts and worker logs: a line break in one would forge a
line of the log, a NUL is refused by PostgreSQL but kept by SQLite, a lone surrogate (the
bytes a terminal could not decode) cannot be encoded at all, and bytes are not text. The
store checks every id it is given here, before anything is written; the scenario files
check theirs with the same rule.
"""

import unicodedata
from typing import Final

from core.engine.errors import InvalidArgument, InvalidId

MAX_ID_LENGTH: Final = 200
# Whole numbers the store keeps fit a BIGINT with room to spare; a step is a count of steps.
MAX_STEP: Final = 2**53
MAX_ATTEMPTS: Final = 1_000_000
# Tokens, counts and instants (ms) fit a signed BIGINT; a token past 2**53 is no token the
# store issued, and a JavaScript reader of an export would round it.
MAX_TOKEN: Final = 2**53
# How many tasks one batch call takes at most: one transaction, one statement.
MAX_BATCH: Final = 10_000


_LINE_BREAKS: Final = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def char_kind(ch: str) -> str:
    """What kind of unshowable character `ch` is, by name: a message in another language
    says it in its own words (line_break, nul, escape, surrogate or unprintable)."""
    if ch in _LINE_BREAKS:
        return "line_break"
    if ch == "\x00":
        return "nul"
    if ch == "\x1b":
        return "escape"
    if "\ud800" <= ch <= "\udfff":
        return "surrogate"
    return "unprintable"


def _describe(ch: str) -> str:
    kind = char_kind(ch)
    if kind == "line_break":
        return f"a line break (U+{ord(ch):04X})"
    if kind == "nul":
        return "a NUL character (U+0000)"
    if kind == "escape":
        return "an escape character (U+001B, which starts a terminal's control sequence)"
    if kind == "surrogate":
        return f"a lone surrogate (U+{ord(ch):04X}, bytes that are not UTF-8 text)"
    return f"a character that is not printable (U+{ord(ch):04X})"


def id_problem(value: object) -> str | None:
    """Why `value` is not an id, as the end of a sentence; None if it is one."""
    if not isinstance(value, str):
        return f"must be text, got {type(value).__name__}"
    if not value.strip():
        return "must not be empty"
    if len(value) > MAX_ID_LENGTH:
        return f"is too long: {len(value)} characters (at most {MAX_ID_LENGTH})"
    if not value.isprintable():  # one C call for the common case
        bad = next(ch for ch in value if not ch.isprintable())
        return f"must be one line of printable text; it holds {_describe(bad)}"
    return None


def check_id(value: object, what: str) -> str:
    """`value` if it is an id; InvalidId, in one line that shows it safely, if not."""
    problem = id_problem(value)
    if problem is not None:
        shown = ascii(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        raise InvalidId(f"{what} {shown} {problem}")
    assert isinstance(value, str)
    return value


def unshowable(value: str) -> str | None:
    """The first character of `value` a terminal would not simply print, or None. Spaces
    other than " " (a no-break space, the ideographic one of Chinese text) are not
    "printable" to Python, yet print as space."""
    if value.isprintable():
        return None
    return next(
        (ch for ch in value if not ch.isprintable() and unicodedata.category(ch) != "Zs"), None
    )


def shown_text_problem(value: str) -> str | None:
    """Why text from a file cannot be shown on a terminal as it is, as the end of a
    sentence; None if it can.

    A terminal obeys what it prints: an escape sequence in a title would set the window's
    title or clear the screen, a carriage return would write over the line before it, and
    a line break would print a line identical to one of the program's own (an event, a
    check). Text from a file is one line of printable characters.
    """
    bad = unshowable(value)
    if bad is None:
        return None
    if bad in _LINE_BREAKS:
        return f"must be one line; it holds {_describe(bad)}"
    return f"must hold no control characters; it holds {_describe(bad)}"


MAX_TEXT_LENGTH: Final = 1_000_000


def check_text(value: object, what: str) -> str:
    """`value` if it is text both backends store alike (line breaks allowed, at most
    MAX_TEXT_LENGTH characters); InvalidId if it is not text, holds a NUL (PostgreSQL
    refuses it, SQLite keeps it) or a lone surrogate (no database can encode it)."""
    if not isinstance(value, str):
        raise InvalidId(f"{what} must be text, got {type(value).__name__}")
    if len(value) > MAX_TEXT_LENGTH:
        raise InvalidId(f"{what} is too long: {len(value)} characters (at most {MAX_TEXT_LENGTH})")
    bad = next((ch for ch in value if ch == "\x00" or "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise InvalidId(f"{what} holds {_describe(bad)}")
    return value


def check_whole(value: object, what: str, low: int, high: int) -> int:
    """`value` if it is a whole number in [low, high]; InvalidArgument naming it if not
    (a float, a string of digits or a number past the column's range never reaches SQL)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(
            f"{what} must be a whole number, got {type(value).__name__} {ascii(value)[:40]}"
        )
    if not low <= value <= high:
        shown = str(value) if abs(value) < 10**18 else f"a number of {len(str(abs(value)))} digits"
        raise InvalidArgument(f"{what} must be between {low} and {high}, got {shown}")
    return value
