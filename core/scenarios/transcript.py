"""The readable transcript: a played record as (text, rich style) pieces in the run's
language, and the record form of a register line (`--json`'s lines, read back for words).
"""

from typing import Any

from core.engine.durations import format_clock
from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.scenarios.glossary import (
    TRANSCRIPT,
    event_word,
    harm_word,
    lookup,
    mode_word,
    reason_word,
    violations_phrase,
)
from core.scenarios.telling import event_sentence, span_words
from core.sim.rules import Harm

Record = dict[str, Any]


def event_record(ev: EventRow) -> Record:
    return {"type": "event", **ev.to_json_dict()}


def event_of(record: Record) -> EventRow:
    """An event record read back into its register line."""
    return EventRow(
        seq=int(record.get("seq") or 0),
        at=round(record["t"] * 1000),
        event=str(record["event"]),
        task_id=record.get("task"),
        worker_id=record.get("worker"),
        lease_token=record.get("lease_token"),
        fence_token=record.get("fence_token"),
        reason=record.get("reason"),
        detail=dict(record.get("detail") or {}),
    )


_GOOD = {
    EventKind.CLAIMED,
    EventKind.RENEWED,
    EventKind.HEARTBEAT_NOTED,
    EventKind.CHECKPOINT_SAVED,
    EventKind.WRITE_ACCEPTED,
    EventKind.EFFECT_APPLIED,
    EventKind.COMPLETED,
    EventKind.APPROVED,
}
_NOTE = {
    EventKind.EFFECT_DEDUPLICATED,
    EventKind.LEASE_EXPIRED,
    EventKind.PARKED,
    EventKind.ENQUEUED,
    EventKind.APPROVE_IGNORED,
    EventKind.REJECT_IGNORED,
}


def word(key: str, lang: str, **fmt: object) -> str:
    """A word of the transcript's table, by the glossary's one lookup."""
    return lookup(TRANSCRIPT, key, lang, **fmt)


def labelled(key: str, lang: str) -> str:
    """A word of the table as a label: "mode: ", "模式：" (Chinese takes the full-width colon)."""
    return word(key, lang) + ("：" if lang == "zh" else ": ")


def harm_text(name: str, value: int, lang: str) -> str:
    """A harm that is not safety, with its figure: "this mode's harm is not safety but
    steps done again: 3" (a time is a duration, in the units of the run's language: "60 分
    5 秒", never "3605s" in a Chinese line)."""
    if not value:
        return word("harm_not_shown", lang, harm=harm_word(name, lang))
    shown = span_words(value, lang) if name == Harm.TIME_OUT_OF_REACH else str(value)
    return word("harm_not_safety", lang, harm=harm_word(name, lang), value=shown)


def event_label(name: str, lang: str) -> str:
    return event_word(name, lang)


def reason_label(name: str, lang: str) -> str:
    return reason_word(name, lang)


def event_style(name: str) -> str:
    if name == EventKind.VIOLATION:
        return "bold red"
    if name in REJECTIONS or name == EventKind.DEAD_LETTERED:
        return "red"
    if name in _GOOD:
        return "green"
    if name in _NOTE:
        return "cyan"
    return "yellow"  # faults and operator acts


def _question_lines(record: Record, lang: str, asked: str = "ask") -> list[tuple[str, str]]:
    """The question, its numbered choices, then the answer and why (the player reveals at
    once: there is no audience to wait for); then its follow-up the same way."""
    pieces = [(f"  {word(asked, lang)} {record['ask']}\n", "bold cyan")]
    choices = record.get("choices") or []
    for n, choice in enumerate(choices, start=1):
        pieces.append((f"     {n}. {choice}\n", "cyan"))
    answer = record.get("answer")
    said = f"{answer}. {choices[answer - 1]}" if answer and choices else ""
    why = record.get("why")
    if said or why:
        text = said + (" — " if said and why else "") + (why or "")
        pieces.append((f"  {word('answer', lang)} {text}\n", "bold green"))
    follow_up = record.get("follow_up")
    if follow_up:
        pieces += _question_lines(follow_up, lang, "follow_up")
    return pieces


_REPORT_STYLES = {
    "title": "bold underline",
    "anomaly": "bold red",
    "proof": "bold",
    "line": "",
    "bill": "bold",
    "twin": "bold green",
    "note": "dim",
}


def _report_pieces(report: Record | None, lang: str) -> list[tuple[str, str]]:
    """The report at the end of the transcript, before the counts: its own sentences."""
    if not report:
        return []
    kinds = list(report.get("kinds") or [])
    said = list(report.get("said") or [])
    return [
        *(
            (f"{line}\n", _REPORT_STYLES.get(kind, ""))
            for line, kind in zip(said, kinds, strict=False)
        ),
        ("\n", ""),
    ]


def render_line(record: Record, lang: str = "en", *, toml: bool = False) -> list[tuple[str, str]]:
    """One record as (text, rich style) pieces of one or more lines; "\\n" ends a line. A
    check reads as the app's sentence, or (`toml`) in the file's own form."""
    kind = record["type"]
    if kind == "scenario":
        pieces = [(f"{record['title']}\n", "bold")]
        if record.get("summary"):
            pieces.append((f"{record['summary']}\n", "italic"))
        mode = mode_word(str(record["mode"]), lang)  # the mode in words, never its id
        pieces.append(
            (f"{labelled('mode', lang)}{mode}  {labelled('seed', lang)}{record['seed']}\n", "dim")
        )
        return pieces
    if kind == "step":
        n = record["step"]
        head = f"Step {n}" if lang != "zh" else word("step", lang, n=n)
        pieces = [("\n", ""), (f"{head} · {format_clock(round(record['t'] * 1000))}", "bold")]
        action = record.get("act")
        if action:
            pieces.append((f"  → {action}", "bold magenta"))
        pieces.append(("\n", ""))
        if record.get("say"):
            for text in str(record["say"]).splitlines() or [""]:
                pieces.append((f"  {text}\n", "italic"))
        if "ask" in record:
            pieces += _question_lines(record, lang)
        return pieces
    if kind == "event":
        name = str(record["event"])
        at = format_clock(round(record["t"] * 1000))
        pieces = [(f"  {at}  ", "dim"), (event_sentence(event_of(record), lang), event_style(name))]
        if record.get("times", 1) > 1:
            until = format_clock(round(record["until"] * 1000)).removesuffix(".000")
            pieces.append((word("times", lang, n=record["times"], until=until), "bold"))
        return [*pieces, ("\n", "")]
    if kind == "expect":
        ok = bool(record["ok"])
        mark = ("✓ " + word("pass", lang)) if ok else ("✗ " + word("fail", lang))
        pieces = [
            (f"  {mark}", "bold green" if ok else "bold red"),
            (f"  {record['expect'] if toml else record.get('said', record['expect'])}\n", ""),
        ]
        if not ok:
            seen = record["found"] if toml else record.get("seen", record["found"])
            pieces.append((f"      {labelled('found', lang)}{seen}\n", "red"))
        return pieces
    if kind == "books":
        style = "bold red" if "broken" in record else "bold"  # a redo is no second world
        return [(f"  {'✗' if 'broken' in record else '•'} {record['say']}\n", style)]
    if kind in ("overlap", "repeat"):
        return [(f"  ✗ {record['say']}\n", "bold red")]
    if kind in ("reach", "due"):
        return [(f"  • {record['say']}\n", "bold yellow")]
    if kind == "summary":
        violations = record["violations"]
        shown = violations_phrase(violations, lang) or word("none", lang)
        harm = record.get("harm")
        if harm and not any(violations.values()):
            shown += ("；" if lang == "zh" else "; ") + harm_text(
                str(harm["name"]), int(harm["value"]), lang
            )
        failed = record["failed"]
        return [
            ("\n", ""),
            *_report_pieces(record.get("report"), lang),
            (f"{labelled('passed', lang)}{record['passed']}", "bold green"),
            ("  ", ""),
            (f"{labelled('failed', lang)}{failed}", "bold red" if failed else "bold"),
            ("  ", ""),
            (
                f"{labelled('violations', lang)}{shown}\n",
                "bold red" if any(violations.values()) else "",
            ),
        ]
    return [(f"{record}\n", "")]
