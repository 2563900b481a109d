"""Checks shared by the commands' options (one line to say what is wrong, as the CLI does)."""

from collections.abc import Iterable


def out_of_range(limits: Iterable[tuple[str, int, int, int]]) -> str | None:
    """The first `(option, value, low, high)` whose value is outside [low, high], said in
    one line; None when every value is in range."""
    for name, value, low, high in limits:
        if not low <= value <= high:
            return f"--{name} must be between {low} and {high}, got {value}"
    return None
