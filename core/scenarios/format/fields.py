"""The values of the format: the checks and the annotated types the tables are built from."""

import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
)
from pydantic_core import PydanticCustomError

from core.engine.config import Mode
from core.engine.durations import DurationError, format_duration, parse_duration
from core.engine.ids import char_kind, id_problem, shown_text_problem, unshowable
from core.scenarios.format.model import (
    MAX_ATTEMPTS,
    MAX_CHOICE_LENGTH,
    MAX_CHOICES,
    MAX_DURATION_MS,
    MAX_FACTOR,
    MAX_ID_LENGTH,
    MAX_TASK_STEPS,
    MIN_CHOICES,
    said,
    show,
    suggest,
    suggest_word,
    type_name,
)
from core.scenarios.glossary import file_mistake, type_word
from core.sim.heavy import SizeError, parse_size
from core.sim.spec import TASK_KINDS

# -- the format, declared ----------------------------------------------------------------------
#
# The models say which keys each table has and what each value must be; pydantic checks a
# parsed document against them and reports every problem with its location, e.g.
# ("step", 3, "do", "kill", "by"). The explainer turns the first problem into this format's
# own words and `Lines` finds its line. What the models cannot see (ids used before they
# exist, timings that do not fit together, the size of the run) the loader checks after, in
# file order.


def field_error(rest: str, zh: str | None = None) -> PydanticCustomError:
    """A problem with one value; the text follows its key: `by` + ` must not be negative`.
    `zh` is the same rest in Chinese, where it is known."""
    return PydanticCustomError("scenario_field", "{rest}", {"rest": rest, "zh": zh})


def table_error(message: str | tuple[str, str], key: str | None = None) -> PydanticCustomError:
    """A problem with a whole table; `key` names the line it is about. The message may come
    in English and Chinese, as `said` gives it."""
    en, zh = (message, None) if isinstance(message, str) else message
    return PydanticCustomError("scenario", "{message}", {"message": en, "key": key, "zh": zh})


def field_error_whole(message: str, zh: str | None = None) -> PydanticCustomError:
    """A problem with one value, told in full (the key's name is not put in front)."""
    return PydanticCustomError("scenario_value", "{message}", {"message": message, "zh": zh})


def not_blank(value: str) -> str:
    if not value.strip():
        raise field_error(*said("not_empty"))
    return value


def _char_zh(ch: str) -> str:
    return file_mistake(f"char_{char_kind(ch)}", "zh", code=f"{ord(ch):04X}")


def printable_id(value: str) -> str:
    """The store's own rule for ids (one line of printable text), told on the id's line."""
    problem = id_problem(value)
    if problem is not None:
        bad = next((ch for ch in value if not ch.isprintable()), None)
        zh = None if bad is None else file_mistake("id_not_printable", "zh", char=_char_zh(bad))
        raise field_error(f" {problem}", zh)
    return value


def shown_line(value: str) -> str:
    """Text shown on a terminal and a page: one line of printable text (a line break in it
    would print a line that looks like the program's own, an event's or a check's)."""
    problem = shown_text_problem(value)
    if problem is not None:
        bad = unshowable(value)
        zh = None
        if bad is not None:
            rule = "text_one_line" if char_kind(bad) == "line_break" else "text_no_control"
            zh = file_mistake(rule, "zh", char=_char_zh(bad))
        raise field_error(f" {problem}", zh)
    return value


def member_of(valid: Sequence[str], what: str, listing: str = "use one of") -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in valid:
            close = suggest_word(value, valid, "zh")
            raise field_error_whole(
                f'unknown {what} "{value}"{suggest(value, valid)}; {listing} ' + ", ".join(valid),
                file_mistake(
                    "unknown_member",
                    "zh",
                    what=file_mistake(what, "zh"),
                    value=value,
                    hint=close,
                    listing="",
                    valid="、".join(valid),
                ),
            )
        return value

    return check


def duration(*, allow_negative: bool = False, allow_zero: bool = False) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, float) and not math.isfinite(value):
            raise field_error(*said("duration_not_finite", value=value))
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise field_error(
                f' must be a duration like "10s", got {type_name(value)}',
                file_mistake("duration_type", "zh", got=type_word(value, "zh")),
            )
        if not isinstance(value, str):
            # A bare 1.5 is seconds to one reader and milliseconds to the next: a file says
            # which, as every duration the app and the help show does.
            raise field_error(*said("duration_bare_number", value=show(value)))
        try:
            ms = parse_duration(value, allow_negative=True)
        except DurationError as exc:
            # the only one left once the types are checked: a string not written as a duration
            raise field_error(
                f": {exc}", file_mistake("bad_duration", "zh", value=repr(value))
            ) from None
        except (OverflowError, ValueError):
            raise field_error(*said("duration_too_large", value=show(value))) from None
        if ms < 0 and not allow_negative:
            raise field_error(*said("duration_negative", value=show(value)))
        if ms == 0 and not allow_zero:
            raise field_error(*said("duration_zero", value=show(value)))
        if abs(ms) > MAX_DURATION_MS:
            shown = format_duration(ms) if abs(ms) < 10**15 else show(value)
            raise field_error(*said("duration_too_long", value=shown))
        return ms

    return check


def _instant(value: Any) -> int | str:
    """An instant of virtual time, as a duration since the start; "" for none."""
    return "" if value == "" else duration(allow_zero=True)(value)


def positive_factor(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise field_error(
            f" must be a number, got {type_name(value)}",
            file_mistake("number_type", "zh", got=type_word(value, "zh")),
        )
    if not math.isfinite(value) or value <= 0:
        raise field_error(*said("above_zero", value=value))
    if value > MAX_FACTOR:
        raise field_error(*said("too_large", value=value, high=f"{MAX_FACTOR:g}"))
    return float(value)


def size(value: Any) -> int:
    """A heartbeat's payload: `"2MB"`, `"512KB"`, `"0"` or a number of bytes."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise field_error(
            f' must be a size like "2MB", got {type_name(value)}',
            file_mistake("size_type", "zh", got=type_word(value, "zh")),
        )
    try:
        return parse_size(value)
    except SizeError as exc:
        raise field_error(f" {exc}", file_mistake(exc.rule, "zh", **exc.fill)) from None


def bounded(low: int, high: int) -> Any:
    return Field(ge=low, le=high, strict=True)


# Every text a file gives is shown on a terminal: none may hold a control character.
Text = Annotated[str, Strict(), AfterValidator(shown_line)]
Ident = Annotated[
    str,
    Strict(),
    StringConstraints(max_length=MAX_ID_LENGTH),
    AfterValidator(not_blank),
    AfterValidator(printable_id),
]
NonBlank = Annotated[str, Strict(), AfterValidator(not_blank), AfterValidator(shown_line)]
Flag = Annotated[bool, Strict()]
Duration = Annotated[int, BeforeValidator(duration())]
Instant = Annotated[int | str, BeforeValidator(_instant)]
Size = Annotated[int, BeforeValidator(size)]
SignedDuration = Annotated[int, BeforeValidator(duration(allow_negative=True, allow_zero=True))]
Count = Annotated[int, bounded(0, 2**62)]
TaskSteps = Annotated[int, bounded(1, MAX_TASK_STEPS)]
Attempts = Annotated[int, bounded(1, MAX_ATTEMPTS)]
Kind = Annotated[str, Strict(), AfterValidator(member_of(TASK_KINDS, "kind", "kinds are"))]
ModeName = Annotated[
    str, Strict(), AfterValidator(member_of([m.value for m in Mode], "mode", "modes are"))
]
Choice = Annotated[
    str,
    Strict(),
    StringConstraints(max_length=MAX_CHOICE_LENGTH),
    AfterValidator(not_blank),
    AfterValidator(shown_line),
]
Choices = Annotated[list[Choice], Field(min_length=MIN_CHOICES, max_length=MAX_CHOICES)]


class Table(BaseModel):
    """A TOML table: only the keys declared, each checked strictly (no "7" for 7)."""

    model_config = ConfigDict(extra="forbid")


def keys_of(model: type[BaseModel], *, leave_out: Sequence[str] = ()) -> tuple[str, ...]:
    """The keys a table of this model may have, as the file spells them, in order."""
    return tuple(
        key
        for name, info in model.model_fields.items()
        if (key := info.alias or name) not in leave_out
    )
