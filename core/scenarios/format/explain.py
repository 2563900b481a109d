"""From pydantic's first problem to one line of this format's own words, and its line."""

from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from core.scenarios.format.model import (
    MAX_CHOICES,
    MIN_CHOICES,
    Subject,
    show,
    suggest,
    suggest_word,
    type_name,
)
from core.scenarios.format.schema import (
    ACTION_KEYS,
    ARRAYS,
    EXPECT_SUBJECTS,
    STEP_KEYS,
    TASK_KEYS,
    TOP_KEYS,
    WORKER_KEYS,
)
from core.scenarios.format.source import Lines
from core.scenarios.glossary import file_mistake, type_word
from core.sim.spec import ACTION_TYPES

# -- from pydantic's problem to one line -------------------------------------------------------

_CHOICE_KEYS = ("choices", "choices_zh", "follow_up_choices", "follow_up_choices_zh")


def _explain(err: ErrorDetails, lines: Lines) -> tuple[int, str]:
    """The line and the message for one validation problem, in this format's words."""
    loc = err["loc"]
    kind = err["type"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    raw = err["input"]
    names = [part for part in loc if isinstance(part, str)]
    key = names[-1] if names else ""
    line = _line_of(loc, lines, ctx.get("key") if kind == "scenario" else None)

    if len(loc) == 1 and key in ARRAYS and kind in ("list_type", "too_long"):
        if kind == "too_long":
            count = ctx.get("actual_length")
            return lines.entry_key(key, ctx["max_length"]), (
                f"too many {key if key != 'step' else 'steps'}: {count} "
                f"(at most {ctx['max_length']})"
            )
        return line, f"{key} must be an array of tables, written [[{key}]]"
    if len(loc) == 2 and loc[0] in ARRAYS and kind in ("model_type", "model_attributes_type"):
        return lines.top_key(str(loc[0])), (
            f"{loc[0]} must be an array of tables, written [[{loc[0]}]]"
        )

    in_action = len(loc) >= 3 and loc[0] == "step" and loc[2] == "do"
    in_expect = len(loc) >= 3 and loc[0] == "step" and loc[2] == "expect"
    if in_action and kind in ("union_tag_invalid", "union_tag_not_found"):
        do = raw.get("do") if isinstance(raw, dict) else raw
        if not isinstance(do, str):
            return line, f"do must be a string, got {type_name(do)}"
        return line, f'unknown action "{do}"{suggest(do, list(ACTION_TYPES))}'
    if in_expect and len(loc) == 3 and kind == "list_type":
        return line, (
            "expect must be an array of inline tables, like expect = "
            f'[{{ task = "t1", status = "done" }}], got {type_name(raw)}'
        )

    if kind == "extra_forbidden":
        if in_action:
            return line, f'action "{loc[3]}" takes no key "{key}"'
        if in_expect:
            subject = Subject(str(loc[-2]))
            valid = EXPECT_SUBJECTS[subject]
            return line, (
                f'unknown key "{key}" in a {subject} expectation{suggest(key, valid)}; '
                "it may have " + ", ".join(valid)
            )
        if loc[0] == "step" and key in ACTION_KEYS:
            return line, f'"{key}" without an action: add do = "..."'
        table, valid = "the scenario", TOP_KEYS
        if len(loc) > 1:
            table = f"[[{loc[0]}]]"
            valid = {"workers": WORKER_KEYS, "tasks": TASK_KEYS}.get(str(loc[0]), STEP_KEYS)
        return line, f'unknown key "{key}" in {table}{suggest(key, valid)}'
    if kind == "missing":
        if loc == ("title",):
            return 1, 'missing title: add a line like title = "The fog"'
        if in_action:
            return lines.entry_key("step", int(loc[1]), "do"), (f'action "{loc[3]}" needs "{key}"')
        if loc[0] == "workers":
            return line, 'a worker needs an id, like id = "acheng"'
        if loc[0] == "tasks":
            return line, 'a task needs an id, like id = "sixth-floor"'

    name = key
    if len(loc) == 3 and loc[0] in ("workers", "tasks") and key == "id":
        name = f"{ARRAYS[str(loc[0])]} id"
    if key in _CHOICE_KEYS and isinstance(loc[-1], int):
        name = f"choice {loc[-1] + 1}" + (f" in {key}" if key != "choices" else "")
    if kind in ("scenario", "scenario_value"):
        return line, str(ctx["message"])
    if kind == "scenario_field":
        return line, f"{name}{ctx['rest']}"
    if kind == "string_type":
        return line, f"{name} must be a string, got {type_name(raw)}"
    if kind == "bool_type":
        return line, f"{name} must be true or false, got {type_name(raw)}"
    if kind == "int_type":
        return line, f"{name} must be an integer, got {show(raw)}"
    if kind == "greater_than_equal":
        return line, f"{name} must be at least {ctx['ge']}, got {raw}"
    if kind == "less_than_equal":
        return line, f"{name} is too large: {raw} (at most {ctx['le']})"
    if kind == "string_too_long":
        return line, f"{name} is too long (at most {ctx['max_length']} characters)"
    if kind == "list_type" and key in _CHOICE_KEYS:
        return line, f'{key} must be an array of short answers, like ["yes", "no"]'
    if kind in ("too_short", "too_long") and key in _CHOICE_KEYS:
        return line, (
            f"{key} must have {MIN_CHOICES} to {MAX_CHOICES} answers, "
            f"got {ctx.get('actual_length')}"
        )
    return line, f"{name}: {err['msg'][:1].lower()}{err['msg'][1:]}"


def _zh(name: str, /, **fill: object) -> str:
    return file_mistake(name, "zh", **fill)


def _explain_zh(err: ErrorDetails) -> str | None:
    """The same problem as `_explain` tells, in Chinese; None where none is written yet
    (the run then says it in English)."""
    loc = err["loc"]
    kind = err["type"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    raw = err["input"]
    names = [part for part in loc if isinstance(part, str)]
    key = names[-1] if names else ""

    if len(loc) == 1 and key in ARRAYS and kind == "too_long":
        what = _zh(key if key != "step" else "steps")
        return _zh("too_many", what=what, count=ctx.get("actual_length"), high=ctx["max_length"])
    if len(loc) == 1 and key in ARRAYS and kind == "list_type":
        return _zh("must_be_tables", key=key)
    if len(loc) == 2 and loc[0] in ARRAYS and kind in ("model_type", "model_attributes_type"):
        return _zh("must_be_tables", key=loc[0])

    in_action = len(loc) >= 3 and loc[0] == "step" and loc[2] == "do"
    in_expect = len(loc) >= 3 and loc[0] == "step" and loc[2] == "expect"
    if in_action and kind in ("union_tag_invalid", "union_tag_not_found"):
        do = raw.get("do") if isinstance(raw, dict) else raw
        if not isinstance(do, str):
            return _zh("do_not_string", got=type_word(do, "zh"))
        return _zh("unknown_action", action=do, hint=suggest_word(do, list(ACTION_TYPES), "zh"))
    if in_expect and len(loc) == 3 and kind == "list_type":
        return _zh("expect_not_array", got=type_word(raw, "zh"))

    if kind == "extra_forbidden":
        if in_action:
            return _zh("action_takes_no_key", action=loc[3], key=key)
        if in_expect:
            subject = Subject(str(loc[-2]))
            valid = EXPECT_SUBJECTS[subject]
            return _zh(
                "unknown_expect_key",
                key=key,
                subject=file_mistake(str(subject), "zh"),
                hint=suggest_word(key, valid, "zh"),
                valid="、".join(valid),
            )
        if loc[0] == "step" and key in ACTION_KEYS:
            return _zh("key_without_action", key=key)
        table, valid = _zh("the_scenario"), TOP_KEYS
        if len(loc) > 1:
            table = _zh("table", name=loc[0])
            valid = {"workers": WORKER_KEYS, "tasks": TASK_KEYS}.get(str(loc[0]), STEP_KEYS)
        return _zh("unknown_key", key=key, table=table, hint=suggest_word(key, valid, "zh"))
    if kind == "missing":
        if loc == ("title",):
            return _zh("missing_title")
        if in_action:
            return _zh("action_needs", action=loc[3], key=key)
        if loc[0] == "workers":
            return _zh("worker_needs_id")
        if loc[0] == "tasks":
            return _zh("task_needs_id")

    name = key
    if len(loc) == 3 and loc[0] in ("workers", "tasks") and key == "id":
        name = f"{ARRAYS[str(loc[0])]} id"
    if kind in ("scenario", "scenario_value") and ctx.get("zh"):
        return str(ctx["zh"])
    if kind == "scenario_field" and ctx.get("zh"):
        return f"{name}{ctx['zh']}"
    if key in _CHOICE_KEYS and isinstance(loc[-1], int):
        n = loc[-1] + 1
        name = _zh("choice_n", n=n) if key == "choices" else _zh("choice_n_in", n=n, key=key)
    if kind == "string_too_long":
        return _zh("too_long_text", name=name, high=ctx["max_length"])
    if kind == "list_type" and key in _CHOICE_KEYS:
        return _zh("choices_not_array", key=key)
    if kind in ("too_short", "too_long") and key in _CHOICE_KEYS:
        return _zh(
            "choices_count",
            key=key,
            low=MIN_CHOICES,
            high=MAX_CHOICES,
            count=ctx.get("actual_length"),
        )
    if kind == "string_type":
        return _zh("must_be_string", name=name, got=type_word(raw, "zh"))
    if kind == "bool_type":
        return _zh("must_be_bool", name=name, got=type_word(raw, "zh"))
    if kind == "int_type":
        shown = isinstance(raw, str | int | float) and not isinstance(raw, bool)
        return _zh("must_be_int", name=name, got=show(raw) if shown else type_word(raw, "zh"))
    if kind == "greater_than_equal":
        return _zh("at_least", name=name, low=ctx["ge"], got=raw)
    if kind == "less_than_equal":
        return _zh("at_most", name=name, high=ctx["le"], got=raw)
    return None


def _line_of(loc: tuple[int | str, ...], lines: Lines, key: str | None) -> int:
    """The line a location points at: the key in its table, else the table's header."""
    if not loc:
        return lines.top_key(key) if key else 1
    top = str(loc[0])
    if len(loc) == 1 or top not in ARRAYS or not isinstance(loc[1], int):
        return lines.top_key(top)
    index = loc[1]
    if len(loc) >= 4 and loc[2] == "expect" and isinstance(loc[3], int):
        return expect_line(lines, index, loc[3])
    if key is None:
        inner = [part for part in loc[2:] if isinstance(part, str)]
        key = inner[-1] if inner else None
    return lines.entry_key(top, index, key)


def expect_line(lines: Lines, step: int, n: int) -> int:
    """The line of a step's n-th expectation: its inline table, or its `[[step.expect]]`."""
    at = lines.entry_key("step", step, "expect")
    block = lines.block("step", step)
    if block is None:
        return at
    found = lines.nth_brace(at, block[1], n)
    if found is None:
        found = lines.nth_sub_block("step", step, "expect", n)
    return found if found is not None else at


def first_problem(exc: ValidationError, lines: Lines) -> tuple[int, str, str | None]:
    """The problem to report: an unknown top-level key first (it may explain the rest),
    then the one nearest the top of the file; its line, and its message in English and (where
    written) in Chinese."""
    found = []
    for err in exc.errors(include_url=False):
        line, message = _explain(err, lines)
        unknown_top = err["type"] == "extra_forbidden" and len(err["loc"]) == 1
        found.append((0 if unknown_top else 1, line, message, _explain_zh(err)))
    _rank, line, message, zh = min(found, key=lambda f: (f[0], f[1]))
    return line, message, zh
