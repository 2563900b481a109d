"""Write scenarios back as TOML in the public format (docs/scenario-format.md).

Used by the TUI's "save as scenario" and by the fuzzer's reproducers; the output always
parses back to the same settings and steps (`parse_scenario(dump_scenario(...))`).
"""

import math
from collections.abc import Iterable, Sequence

from core.engine.durations import format_duration
from core.scenarios.format import Expectation, Scenario, Step, toml_string
from core.sim.spec import Action, SimSettings, action_fields

ScalarValue = str | int | float | bool


def toml_value(value: ScalarValue) -> str:
    """A TOML scalar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return toml_string(value)


def action_items(action: Action) -> list[tuple[str, ScalarValue]]:
    """The keys of a [[step]] table that spell this action, `do` first, then its own fields
    in their declared order; a field still at its default is left out."""
    items: list[tuple[str, ScalarValue]] = [("do", action.name)]
    for name, value in action_fields(action).items():
        if name.endswith("_ms"):  # a duration: `by_ms` is spelled `by = "10s"`
            items.append((name.removesuffix("_ms"), format_duration(value)))
        elif name == "factor":
            items.append((name, float(value)))
        else:
            items.append((name, value))
    return items


def _line(key: str, value: ScalarValue) -> str:
    return f"{key} = {toml_value(value)}"


def _settings_lines(settings: SimSettings) -> list[str]:
    config = settings.config
    lines = [
        _line("mode", settings.mode.value),
        _line("seed", settings.seed),
        _line("lease_ttl", format_duration(config.ttl_ms)),
    ]
    if config.heartbeat_every_ms is not None:
        lines.append(_line("heartbeat_every", format_duration(config.heartbeat_every_ms)))
    if config.renew_deadline_ms is not None:
        lines.append(_line("renew_deadline", format_duration(config.renew_deadline_ms)))
    lines.append(_line("poll_every", format_duration(config.poll_every_ms)))
    if settings.self_fencing:
        lines.append(_line("self_fencing", True))
    return lines


def _workers_lines(settings: SimSettings) -> list[str]:
    lines: list[str] = []
    for worker in settings.workers:
        lines += ["", "[[workers]]", _line("id", worker.id)]
        if not worker.autopilot:
            lines.append(_line("autopilot", False))
        if worker.skew_ms:
            lines.append(_line("skew", format_duration(worker.skew_ms)))
    return lines


def _tasks_lines(settings: SimSettings) -> list[str]:
    lines: list[str] = []
    for task in settings.tasks:
        lines += ["", "[[tasks]]", _line("id", task.id), _line("kind", task.kind)]
        lines.append(_line("steps", task.steps))
        lines.append(_line("step_time", format_duration(task.step_time_ms)))
        lines.append(_line("max_attempts", task.max_attempts))
    return lines


def _step_lines(step: Step) -> list[str]:
    lines = ["", "[[step]]"]
    if step.say is not None:
        lines.append(_line("say", step.say))
    if step.say_zh is not None:
        lines.append(_line("say_zh", step.say_zh))
    if step.action is not None:
        lines += [_line(k, v) for k, v in action_items(step.action)]
    if step.expects:
        lines.append("expect = [")
        lines += [f"  {exp.to_toml()}," for exp in step.expects]
        lines.append("]")
    if len(lines) == 2:  # a step with nothing in it cannot be read back; say so instead
        lines.append(_line("say", ""))
    return lines


def dump_scenario(
    title: str,
    settings: SimSettings,
    steps: Iterable[Step] = (),
    *,
    title_zh: str | None = None,
    summary: str | None = None,
    summary_zh: str | None = None,
    comments: Sequence[str] = (),
) -> str:
    """A scenario file's text. `comments` become `#` lines at the top (e.g. a fuzz seed)."""
    lines = [f"# {c}".rstrip() for text in comments for c in text.splitlines() or [""]]
    lines.append(_line("title", title))
    if title_zh is not None:
        lines.append(_line("title_zh", title_zh))
    if summary is not None:
        lines.append(_line("summary", summary))
    if summary_zh is not None:
        lines.append(_line("summary_zh", summary_zh))
    lines += _settings_lines(settings)
    lines += _workers_lines(settings)
    lines += _tasks_lines(settings)
    for step in steps:
        lines += _step_lines(step)
    return "\n".join(lines) + "\n"


def dump(scenario: Scenario, *, comments: Sequence[str] = ()) -> str:
    """A parsed Scenario's text (its warnings are derived, so they are not written)."""
    return dump_scenario(
        scenario.title,
        scenario.settings,
        scenario.steps,
        title_zh=scenario.title_zh,
        summary=scenario.summary,
        summary_zh=scenario.summary_zh,
        comments=comments,
    )


def action_step(action: Action, *expects: Expectation, say: str | None = None) -> Step:
    """A Step for one action (a convenience for reproducers and the TUI's recorder)."""
    return Step(say=say, action=action, expects=tuple(expects))
