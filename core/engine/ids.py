"""What an id is: one line of printable text, the same rule for every backend and file.

Ids (of tasks, workers, ledger keys, effects and reasons) are written into the register
and printed one per line in transcripts and worker logs: a line break in one would forge a
line of the log, a NUL is refused by PostgreSQL but kept by SQLite, a lone surrogate (the
bytes a terminal could not decode) cannot be encoded at all, and bytes are not text. The
store checks every id it is given here, before anything is written; the scenario files
check theirs with the same rule.
"""

from typing import Final

from core.engine.errors import InvalidId

MAX_ID_LENGTH: Final = 200


def _describe(ch: str) -> str:
    if ch in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029":
        return f"a line break (U+{ord(ch):04X})"
    if ch == "\x00":
        return "a NUL character (U+0000)"
    if "\ud800" <= ch <= "\udfff":
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


def check_text(value: object, what: str) -> str:
    """`value` if it is text both backends store alike (any length, line breaks allowed);
    InvalidId if it is not text, holds a NUL (PostgreSQL refuses it, SQLite keeps it) or
    a lone surrogate (no database can encode it)."""
    if not isinstance(value, str):
        raise InvalidId(f"{what} must be text, got {type(value).__name__}")
    bad = next((ch for ch in value if ch == "\x00" or "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise InvalidId(f"{what} holds {_describe(bad)}")
    return value
