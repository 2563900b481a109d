"""The headless player: plays a scenario's steps through the simulation facade.

`play(scenario)` yields plain records (dicts, JSON-ready): a `scenario` header, the `event`s
each step caused, the `step`s, the `expect` results and a final `summary`. The CLI prints
them as JSON Lines or as a readable transcript (`render_line`). Expectations are checked by
the pure function `check_expectation(exp, snapshot)`; a check carries the file's TOML form
(`expect`) and the sentence the app shows for it in the run's language (`said`).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Protocol

from core.engine.durations import format_clock, format_duration
from core.engine.errors import BorrowedKeysError
from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.scenarios.format import (
    TIME_KEYS,
    Expectation,
    Question,
    Scenario,
    ScenarioError,
    Subject,
    instant_text,
)
from core.scenarios.glossary import (
    TRANSCRIPT,
    box_contents,
    concept_word,
    event_word,
    lookup,
    mode_word,
    reason_word,
    violation_word,
)
from core.scenarios.sentences import expectation_sentence, refused_page_sentence, seam_sentence
from core.scenarios.writer import action_items
from core.sim.books import check_books
from core.sim.snapshot import Snapshot
from core.sim.spec import Action, SimSettings, in_language

Record = dict[str, Any]


class SimulationLike(Protocol):
    """What the player needs of core.sim.simulation.Simulation."""

    def apply(self, action: Action) -> object: ...

    def snapshot(self) -> Snapshot: ...

    def events(self, since_seq: int = 0) -> list[EventRow]: ...

    @property
    def now_ms(self) -> int: ...


SimFactory = Callable[[SimSettings], SimulationLike]


def _default_factory(settings: SimSettings) -> SimulationLike:
    from core.sim.simulation import Simulation

    return Simulation(settings)


# -- expectations --------------------------------------------------------------------------


def _q(value: object) -> str:
    """A found value as the file would spell it."""
    if value is None:
        return '""'
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _compare(exp: Expectation, found: dict[str, object]) -> tuple[bool, str]:
    ok = True
    parts = []
    for key, want in exp.params:
        got = found.get(key)
        if got != want:
            ok = False
        shown = instant_text(got) if key in TIME_KEYS and isinstance(got, int) else got
        parts.append(f"{key} = {_q(shown)}")
    return ok, ", ".join(parts)


Check = Callable[[Expectation, Snapshot], tuple[bool, str]]


def _check_task(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    view = snap.task(exp.value)
    if view is None:
        return False, f'no task "{exp.value}"'
    row = view.row
    boxes = [c for c in snap.checkpoints if c.task_id == exp.value]
    newest = max(boxes, key=lambda c: c.seq) if boxes else None
    return _compare(
        exp,
        {
            "box": "" if newest is None else box_contents(newest.state, "en"),
            "status": row.status,
            "owner": row.owner_id or "",
            "attempt": row.attempt,
            "lease_token": row.lease_token,
            "fence_token": row.fence_token,
            "checkpoint_step": view.checkpoint_step or 0,
            # the virtual instants the lease ends and must be renewed by, by the store's
            # clock; "" for none
            "expires_at": "" if row.lease_expires_at is None else row.lease_expires_at,
            "renew_deadline": "" if row.renew_deadline is None else row.renew_deadline,
            "last_heartbeat_at": "" if row.last_heartbeat_at is None else row.last_heartbeat_at,
        },
    )


def _check_worker(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    worker = snap.worker(exp.value)
    if worker is None:
        return False, f'no worker "{exp.value}"'
    # the tokens are those the worker believes it holds, which may be stale
    return _compare(
        exp,
        {
            "state": worker.state,
            "holds": worker.task_id or "",
            "lease_token": worker.lease_token,
            "fence_token": worker.fence_token,
        },
    )


def _check_ledger(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    page = next((p for p in snap.ledger if p.key == exp.value), None)
    if page is None:
        return False, f'no page "{exp.value}" in the ledger'
    found: dict[str, object] = {
        "value": page.value,
        "value_zh": page.value,
        "fence_token": page.fence_token,
        "writer": page.writer,
    }
    if exp.has("value_zh") and page.value in (exp.get("value"), exp.get("value_zh")):
        # A Chinese run wrote the page's Chinese form, an English run its English one:
        # either is the page expected, whichever language this run is in.
        found.update(value=exp.get("value"), value_zh=exp.get("value_zh"))
    return _compare(exp, found)


def _check_rejected(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    value = exp.value
    worker_filter, task_filter = exp.get("worker"), exp.get("task")
    matching = [
        r
        for r in snap.rejections
        if (value == "any" or r.reason == value)
        and (worker_filter is None or (r.worker_id or "") == worker_filter)
        and (task_filter is None or (r.task_id or "") == task_filter)
    ]
    count = len(matching)
    want = exp.get("count")
    ok = count == want if want is not None else count >= 1
    found = f"count = {count}"
    if not ok and snap.rejections:
        found += "; all rejections so far: " + _tally(r.reason for r in snap.rejections)
    return ok, found


def _check_effect(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    effect = next((e for e in snap.effects if e.idempotency_key == exp.value), None)
    applied = effect.applied_count if effect is not None else 0
    want = exp.get("applied")
    ok = applied == want if want is not None else applied >= 1
    return ok, f"applied = {applied}"


def _check_violation(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    every = snap.violations
    count = sum(every.values()) if exp.value == "any" else every.get(exp.value, 0)
    want = exp.get("count")
    ok = count == want if want is not None else count >= 1
    found = f"count = {count}"
    if exp.value == "any" and count:
        found += f" ({_tally_counts(snap.violations)})"
    return ok, found


def _check_metric(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    if exp.value == "recovery_time":
        number = snap.metrics.recovery_time_ms
        shown = _q(format_duration(number))
    else:
        number = snap.metrics.wasted_steps
        shown = str(number)
    low, high = exp.get("min"), exp.get("max")
    ok = (not isinstance(low, int) or number >= low) and (
        not isinstance(high, int) or number <= high
    )
    return ok, f"{exp.value} = {shown}"


_CHECKS: Final[dict[Subject, Check]] = {
    Subject.TASK: _check_task,
    Subject.WORKER: _check_worker,
    Subject.LEDGER: _check_ledger,
    Subject.REJECTED: _check_rejected,
    Subject.EFFECT: _check_effect,
    Subject.VIOLATION: _check_violation,
    Subject.METRIC: _check_metric,
}


def check_expectation(exp: Expectation, snap: Snapshot) -> tuple[bool, str]:
    """Whether `exp` holds in `snap`, and what was found (in the file's own spelling)."""
    return _CHECKS[exp.subject](exp, snap)


def _tally(names: Iterator[str] | Any) -> str:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return _tally_counts(counts)


def _tally_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v)


# -- playing ---------------------------------------------------------------------------------


@dataclass(slots=True)
class PlayResult:
    passed: int = 0
    failed: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def event_record(ev: EventRow) -> Record:
    return {"type": "event", **ev.to_json_dict()}


def play(
    scenario: Scenario,
    *,
    lang: str = "en",
    make_sim: SimFactory | None = None,
    result: PlayResult | None = None,
) -> Iterator[Record]:
    """Play every step, yielding records as they happen. ScenarioError if a step cannot run
    (e.g. a manual call by a worker that holds no lease); its line is the step's `do`."""
    result = result if result is not None else PlayResult()
    factory = make_sim or _default_factory
    try:
        sim = factory(scenario.settings)
    except BorrowedKeysError as exc:
        raise ScenarioError(scenario.path, 1, f"cannot start the run: {exc}") from None
    yield {
        "type": "scenario",
        "title": scenario.title_in(lang),
        "summary": scenario.summary_in(lang),
        "mode": scenario.settings.mode.value,
        "seed": scenario.settings.seed,
        "steps": len(scenario.steps),
    }
    seen = 0
    for ev in sim.events(0):
        seen = max(seen, ev.seq)
        yield event_record(ev)
    books = _Books(lang)
    for number, step in enumerate(scenario.steps, start=1):
        record: Record = {
            "type": "step",
            "step": number,
            "line": step.line,
            "t": sim.now_ms / 1000,
            "say": step.narration(lang),
            "do": dict(action_items(step.action)) if step.action is not None else None,
        }
        if step.question is not None:  # only then: files without questions print as before
            record.update(question_record(step.question, lang))
        yield record
        if step.action is not None:
            try:
                sim.apply(in_language(step.action, lang))
            except BorrowedKeysError as exc:
                raise ScenarioError(
                    scenario.path,
                    step.action_line or step.line,
                    f"step {number} cannot run: {exc}",
                ) from None
            refused: list[EventRow] = []
            for ev in sim.events(seen):
                if ev.seq <= seen:
                    continue
                seen = ev.seq
                yield event_record(ev)
                if ev.event == EventKind.WRITE_REJECTED and ev.detail.get("value"):
                    refused.append(ev)
            yield from books.after_step(number, sim.snapshot(), refused)
        if step.expects:
            snap = sim.snapshot()
            for exp in step.expects:
                ok, found = check_expectation(exp, snap)
                if ok:
                    result.passed += 1
                else:
                    result.failed += 1
                yield {
                    "type": "expect",
                    "step": number,
                    "line": exp.line,
                    "ok": ok,
                    "expect": exp.to_toml(),
                    "said": expectation_sentence(exp, lang),
                    "found": found,
                }
    snap = sim.snapshot()
    yield {
        "type": "summary",
        "t": sim.now_ms / 1000,
        "passed": result.passed,
        "failed": result.failed,
        "violations": {k: v for k, v in sorted(snap.violations.items())},
    }
    close = getattr(sim, "close", None)
    if callable(close):
        close()


class _Books:
    """The check of the books as the transcript says it: a line when a step breaks them at
    a page, and for each page the fence refused what it would have written (the screen's
    notes, said here: "账本看起来仍然整齐，却悄悄混进了两套互相覆盖的世界")."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.broken: frozenset[str] = frozenset()

    def after_step(self, step: int, snap: Snapshot, refused: list[EventRow]) -> Iterator[Record]:
        for ev in refused:
            key, value = str(ev.detail.get("key")), str(ev.detail.get("value"))
            yield {
                "type": "books",
                "step": step,
                "refused": key,
                "worker": ev.worker_id,
                "value": value,
                "say": refused_page_sentence(
                    ev.worker_id, key, ev.task_id, value, snap.ledger, self.lang
                ),
            }
        seams = check_books(snap.ledger, {t.task_id: t.row.owner_id for t in snap.tasks})
        broken = frozenset(seam.key for seam in seams)
        if broken == self.broken:
            return
        self.broken = broken
        for seam in seams:
            yield {
                "type": "books",
                "step": step,
                "broken": seam.key,
                "writer": seam.stale.writer,
                "meets": seam.other.key,
                "sum": [seam.before_total, seam.after_amount, seam.after_total],
                "say": seam_sentence(seam, self.lang),
            }


def question_record(question: Question, lang: str = "en") -> Record:
    """A step's question as the step record carries it: asked, the choices, the answer."""
    out: Record = {"ask": question.text(lang)}
    if question.choices:
        out["choices"] = list(question.choices_in(lang))
        out["answer"] = question.answer
    why = question.why_in(lang)
    if why is not None:
        out["why"] = why
    return out


# -- the readable transcript -----------------------------------------------------------------

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


def _question_lines(record: Record, lang: str) -> list[tuple[str, str]]:
    """The question, its numbered choices, then the answer and why (the player reveals at
    once: there is no audience to wait for)."""
    pieces = [(f"  {word('ask', lang)} {record['ask']}\n", "bold cyan")]
    choices = record.get("choices") or []
    for n, choice in enumerate(choices, start=1):
        pieces.append((f"     {n}. {choice}\n", "cyan"))
    answer = record.get("answer")
    said = f"{answer}. {choices[answer - 1]}" if answer and choices else ""
    why = record.get("why")
    if said or why:
        text = said + (" — " if said and why else "") + (why or "")
        pieces.append((f"  {word('answer', lang)} {text}\n", "bold green"))
    return pieces


def render_line(record: Record, lang: str = "en", *, toml: bool = False) -> list[tuple[str, str]]:
    """One record as (text, rich style) pieces of one or more lines; "\\n" ends a line. A
    check reads as the app's sentence, or (`toml`) in the file's own form."""
    kind = record["type"]
    if kind == "scenario":
        pieces = [(f"{record['title']}\n", "bold")]
        if record.get("summary"):
            pieces.append((f"{record['summary']}\n", "italic"))
        mode = str(record["mode"])
        if lang == "zh":
            mode = f"{mode}（{mode_word(mode, lang)}）"
        pieces.append(
            (f"{labelled('mode', lang)}{mode}  {labelled('seed', lang)}{record['seed']}\n", "dim")
        )
        return pieces
    if kind == "step":
        n = record["step"]
        head = f"Step {n}" if lang != "zh" else word("step", lang, n=n)
        pieces = [("\n", ""), (f"{head} · {format_clock(round(record['t'] * 1000))}", "bold")]
        action = record.get("do")
        if action:
            spelled = " ".join(
                f"{k}={v}" if k != "do" else str(v)
                for k, v in action.items()
                if not isinstance(v, bool) or k != "do"
            )
            pieces.append((f"  → {spelled}", "bold magenta"))
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
        label = event_label(name, lang)
        parts = [f"  {at}  ", label]
        rest: list[str] = []
        if record.get("task"):
            rest.append(str(record["task"]))
        if record.get("worker"):
            rest.append(str(record["worker"]))
        # Token 0 is no token: a task with no version (no_expiry mode) was never issued one.
        if record.get("lease_token"):
            rest.append(f"{word('lease', lang)} {record['lease_token']}")
        if record.get("fence_token"):
            rest.append(f"{word('fence', lang)} {record['fence_token']}")
        detail = record.get("detail") or {}
        for key in ("key", "call", "step", "payload", "load"):
            if key in detail and detail[key] is not None:
                rest.append(f"{key}={detail[key]}")
        if detail.get("lands_at") is not None:
            # a heavy heartbeat: when it reaches the store, by the store's clock
            rest.append(f"→ {format_clock(int(detail['lands_at']))}")
        reason = record.get("reason")
        if reason:
            reason = str(reason)
            rest.append(reason_label(reason, lang))
        if name == EventKind.LEASE_EXPIRED:
            # the task is claimable from this instant until someone claims it
            rest.append(f"→ {concept_word('lendable', lang)}")
        return [
            (parts[0], "dim"),
            (parts[1], event_style(name)),
            ("  " + "  ".join(rest) + "\n" if rest else "\n", ""),
        ]
    if kind == "expect":
        ok = bool(record["ok"])
        mark = ("✓ " + word("pass", lang)) if ok else ("✗ " + word("fail", lang))
        pieces = [
            (f"  {mark}", "bold green" if ok else "bold red"),
            (f"  {record['expect'] if toml else record.get('said', record['expect'])}\n", ""),
        ]
        if not ok:
            pieces.append((f"      {labelled('found', lang)}{record['found']}\n", "red"))
        return pieces
    if kind == "books":
        style = "bold red" if "broken" in record else "bold"
        return [(f"  {'✗' if 'broken' in record else '•'} {record['say']}\n", style)]
    if kind == "summary":
        violations = record["violations"]
        named = {violation_word(k, lang): v for k, v in violations.items()}
        shown = _tally_counts(named) or word("none", lang)
        failed = record["failed"]
        return [
            ("\n", ""),
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
