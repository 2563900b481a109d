"""Write scenarios back as TOML in the public format (docs/scenario-format.md).

Used by the TUI's "save as scenario" and by the fuzzer's reproducers; the output always
parses back to the same settings and steps (`parse_scenario(dump_scenario(...))`).

tomli-w writes every key and value. The writer only lays the file out the way the format
document shows it: each worker, task and step under its own `[[...]]` header (tomli-w would
fold short ones into one inline array), and a step's `expect` one inline table per line.
"""

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import tomli_w

from core.engine.durations import format_clock, format_duration
from core.engine.people import called
from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.scenarios import glossary
from core.scenarios.format import Expectation, Scenario, Step, toml_value
from core.scenarios.telling import act_sentence, event_sentence, span_words
from core.sim.heavy import format_size
from core.sim.spec import Action, Advance, SimSettings, action_fields

__all__ = [
    "action_items",
    "action_step",
    "dump",
    "dump_scenario",
    "recorded_say",
    "toml_value",
    "write_whole",
]

ScalarValue = str | int | float | bool


def action_items(action: Action) -> list[tuple[str, ScalarValue]]:
    """The keys of a [[step]] table that spell this action, `do` first, then its own fields
    in their declared order; a field still at its default is left out."""
    items: list[tuple[str, ScalarValue]] = [("do", action.name)]
    for name, value in action_fields(action).items():
        if name == "lang":
            continue  # the language a run writes a page in is the run's, not the script's
        if name.endswith("_ms"):  # a duration: `by_ms` is spelled `by = "10s"`
            items.append((name.removesuffix("_ms"), format_duration(value)))
        elif name.endswith("_bytes"):  # a size: `size_bytes` is spelled `size = "2MB"`
            items.append((name.removesuffix("_bytes"), format_size(value)))
        elif name == "factor":
            items.append((name, float(value)))
        else:
            items.append((name, value))
    return items


# A recorded act's narration, in a saved run: what happened, at what time, in sentences.
SAY_FORMS: Final[dict[str, glossary.Word]] = {
    "at": ("At {at}, {act}.", "{at}，{act}。"),
    "span": ("From {at} to {until}, {span} pass.", "从 {at} 到 {until}，过了 {span}。"),
    "meanwhile": (" Meanwhile: {what}.", "其间：{what}。"),
    "more": ("; and {n} more lines in the register", "；登记簿里还有 {n} 行"),
    "handed_over": (
        "At {at}, the script is dropped and {who} goes on unscripted.",
        "{at}，脚本放下了，{who}自己接着干。",
    ),
}

# The lines of the register worth telling in a saved run's narration (not every renewal).
_TOLD = frozenset(
    {
        EventKind.CLAIMED,
        EventKind.LEASE_EXPIRED,
        EventKind.COMPLETED,
        EventKind.FAILED,
        EventKind.DEAD_LETTERED,
        EventKind.VIOLATION,
        EventKind.SELF_FENCED,
        EventKind.PARKED,
        *REJECTIONS,
    }
)
_TOLD_AT_MOST = 4


def recorded_say(
    at_ms: int,
    action: Action,
    lang: str,
    *,
    happened: Sequence[EventRow] = (),
    handed_over: bool = False,
) -> str:
    """A recorded act as the narration of its step, in `lang`: "At 0:00:30, Acheng's
    heartbeat freezes."; time that passed says from when to when, and what the register
    noted meanwhile (claims, expiries, refusals, a violation), the first few of them."""
    at = format_clock(at_ms).removesuffix(".000")
    pick = glossary.pick
    if handed_over:
        worker = str(getattr(action, "worker", ""))
        who = called(worker, lang)
        return pick(SAY_FORMS["handed_over"], lang).format(at=at, who=who)
    if not isinstance(action, Advance):
        act = act_sentence(action, lang, capital=False)
        return pick(SAY_FORMS["at"], lang).format(at=at, act=act)
    until = format_clock(at_ms + action.by_ms).removesuffix(".000")
    said = pick(SAY_FORMS["span"], lang).format(
        at=at, until=until, span=span_words(action.by_ms, lang)
    )
    told = [ev for ev in happened if ev.event in _TOLD]
    if told:
        what = pick(("; ", "；"), lang).join(
            event_sentence(ev, lang) for ev in told[:_TOLD_AT_MOST]
        )
        if len(told) > _TOLD_AT_MOST:
            what += pick(SAY_FORMS["more"], lang).format(n=len(told) - _TOLD_AT_MOST)
        said += pick(SAY_FORMS["meanwhile"], lang).format(what=what)
    return said


def _settings(settings: SimSettings) -> dict[str, Any]:
    config = settings.config
    table: dict[str, Any] = {
        "mode": settings.mode.value,
        "seed": settings.seed,
        "lease_ttl": format_duration(config.ttl_ms),
    }
    if config.heartbeat_every_ms is not None:
        table["heartbeat_every"] = format_duration(config.heartbeat_every_ms)
    if config.renew_deadline_ms is not None:
        table["renew_deadline"] = format_duration(config.renew_deadline_ms)
    table["poll_every"] = format_duration(config.poll_every_ms)
    if settings.self_fencing:
        table["self_fencing"] = True
    return table


def _workers(settings: SimSettings) -> list[dict[str, Any]]:
    out = []
    for worker in settings.workers:
        table: dict[str, Any] = {"id": worker.id}
        if not worker.autopilot:
            table["autopilot"] = False
        if worker.skew_ms:
            table["skew"] = format_duration(worker.skew_ms)
        if worker.self_fencing:
            table["self_fencing"] = True
        if worker.heartbeat_payload_bytes:
            table["heartbeat_payload"] = format_size(worker.heartbeat_payload_bytes)
        out.append(table)
    return out


def _tasks(settings: SimSettings) -> list[dict[str, Any]]:
    return [
        {
            "id": task.id,
            "kind": task.kind,
            "steps": task.steps,
            "step_time": format_duration(task.step_time_ms),
            "max_attempts": task.max_attempts,
        }
        for task in settings.tasks
    ]


def _step(step: Step) -> dict[str, Any]:
    table: dict[str, Any] = {}
    if step.say is not None:
        table["say"] = step.say
    if step.say_zh is not None:
        table["say_zh"] = step.say_zh
    if step.action is not None:
        table.update(action_items(step.action))
    question = step.question
    if question is not None:
        for key, value in (
            ("ask", question.ask),
            ("ask_zh", question.ask_zh),
            ("choices", list(question.choices) or None),
            ("choices_zh", list(question.choices_zh) or None),
            ("answer", question.answer),
            ("why", question.why),
            ("why_zh", question.why_zh),
        ):
            if value is not None:
                table[key] = value
        follow = question.follow_up
        if follow is not None:
            for key, value in (
                ("follow_up", follow.ask),
                ("follow_up_zh", follow.ask_zh),
                ("follow_up_choices", list(follow.choices) or None),
                ("follow_up_choices_zh", list(follow.choices_zh) or None),
                ("follow_up_answer", follow.answer),
                ("follow_up_why", follow.why),
                ("follow_up_why_zh", follow.why_zh),
            ):
                if value is not None:
                    table[key] = value
    if step.panel is not None:
        table["panel"] = step.panel.value
    if not table and not step.expects:  # a step with nothing in it cannot be read back
        table["say"] = ""
    return table


def _array_table(name: str, table: dict[str, Any], expects: Sequence[Expectation] = ()) -> str:
    text = f"\n[[{name}]]\n" + tomli_w.dumps(table)
    if expects:
        text += "expect = [\n" + "".join(f"  {exp.to_toml()},\n" for exp in expects) + "]\n"
    return text


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
    head: dict[str, Any] = {"title": title}
    for key, value in (("title_zh", title_zh), ("summary", summary), ("summary_zh", summary_zh)):
        if value is not None:
            head[key] = value
    head.update(_settings(settings))
    lines = [f"# {c}".rstrip() + "\n" for text in comments for c in text.splitlines() or [""]]
    parts = ["".join(lines), tomli_w.dumps(head)]
    parts += [_array_table("workers", table) for table in _workers(settings)]
    parts += [_array_table("tasks", table) for table in _tasks(settings)]
    parts += [_array_table("step", _step(step), step.expects) for step in steps]
    return "".join(parts)


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


def write_whole(target: Path, text: str | bytes) -> None:
    """Write `text` (UTF-8 if a string) to `target` whole or not at all, making its folder
    only now.

    Nothing half-written and nothing empty: the text goes to a temporary file beside the
    target, renamed over it once complete; if anything stops the write (an error, Ctrl-C),
    the temporary file and any folder made for it are removed.
    """
    folder = target.parent
    made: list[Path] = []
    probe = folder
    while not probe.exists():
        made.append(probe)
        probe = probe.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(target, exc) from None
    # Named by the process (not mkstemp, whose file is private): the file keeps the
    # permissions any file written here would have.
    temporary = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        temporary.write_bytes(text.encode() if isinstance(text, str) else text)
        os.replace(temporary, target)
    except BaseException as exc:
        temporary.unlink(missing_ok=True)
        for path in made:  # the deepest first
            path.rmdir()
        if isinstance(exc, OSError):
            raise WriteError(target, exc) from None
        raise


class WriteError(OSError):
    """A file that could not be written, in one line that names it: a full disk's own
    words ("[Errno 28] No space left on device") name no file."""

    def __init__(self, target: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.message = f"{target}: cannot write: {cause.strerror or cause}"

    def __str__(self) -> str:
        return self.message
