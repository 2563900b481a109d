"""The headless player: plays a scenario's steps through the simulation facade.

`play(scenario)` yields plain records (dicts, JSON-ready): a `scenario` header, the `event`s
each step caused, the `step`s, the `expect` results and a final `summary`. The CLI prints
them as JSON Lines or as a readable transcript (`render_line`). Expectations are checked by
the pure function `check_expectation(exp, snapshot)`; a check carries the file's TOML form
(`expect`) and the sentence the app shows for it in the run's language (`said`).
"""

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Protocol

from core.engine.config import Mode
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
    Word,
    box_contents,
    event_word,
    harm_word,
    ledger_value,
    lookup,
    mode_word,
    pick,
    reason_word,
    violations_phrase,
)
from core.scenarios.report import (
    Twin,
    due_again,
    due_sentence,
    held_sentence,
    report_record,
    run_report,
)
from core.scenarios.sentences import (
    expectation_sentence,
    late_page_sentence,
    overlap_sentence,
    refused_page_sentence,
    repeat_sentence,
    seam_sentence,
)
from core.scenarios.telling import act_sentence, event_sentence, run_stopped, span_words
from core.scenarios.writer import action_items
from core.sim.books import check_books, late_pages
from core.sim.rules import Harm, harm_figure
from core.sim.snapshot import Snapshot
from core.sim.spec import Action, SimSettings, Write, in_language

Record = dict[str, Any]


class SimulationLike(Protocol):
    """What the player needs of core.sim.simulation.Simulation."""

    def apply(self, action: Action) -> object: ...

    def snapshot(self) -> Snapshot: ...

    def events(self, since_seq: int = 0) -> list[EventRow]: ...

    @property
    def now_ms(self) -> int: ...


SimFactory = Callable[[SimSettings], SimulationLike]
# Plays the same scenario under the correct mode and hands back its bill (the report's
# correct figures come from a run, never from a table).
TwinFactory = Callable[[Scenario, str], Twin]


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


# What a check found: the expectation as the run has it (its keys with the values found),
# or, when what it names is not there at all, that in words (en, zh).
Seen = Expectation | Word
Found = tuple[bool, str, Seen]

MISSING: Final[dict[str, Word]] = {
    "task": ("there is no task {v}", "没有任务 {v}"),
    "worker": ("there is no worker {v}", "没有执行者 {v}"),
    "ledger": ("page {v} is not in the ledger", "总册里没有 {v} 页"),
}


def _missing(exp: Expectation) -> Found:
    subject = exp.subject.value
    en, zh = MISSING[subject]
    code = (
        f'no page "{exp.value}" in the ledger'
        if subject == "ledger"
        else f'no {subject} "{exp.value}"'
    )
    return False, code, (en.format(v=exp.value), zh.format(v=exp.value))


def _as_seen(exp: Expectation, found: dict[str, object]) -> Expectation:
    """`exp` with the values the run has for the keys it got wrong (all of them if none)."""
    params = tuple((k, found.get(k, v)) for k, v in exp.params if k in found)
    wrong = tuple((k, v) for k, v in params if v != exp.get(k))
    pointed = exp.subject in (Subject.TASK, Subject.WORKER, Subject.LEDGER)
    if wrong and pointed and not exp.has("value_zh"):
        params = wrong
    return Expectation(exp.subject, exp.value, params, exp.line)  # type: ignore[arg-type]


def _compare(exp: Expectation, found: dict[str, object]) -> Found:
    ok = True
    parts = []
    for key, want in exp.params:
        got = found.get(key)
        if got != want:
            ok = False
        shown = instant_text(got) if key in TIME_KEYS and isinstance(got, int) else got
        parts.append(f"{key} = {_q(shown)}")
    return ok, ", ".join(parts), _as_seen(exp, found)


Check = Callable[[Expectation, Snapshot], Found]


def _check_task(exp: Expectation, snap: Snapshot) -> Found:
    view = snap.task(exp.value)
    if view is None:
        return _missing(exp)
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


def _check_worker(exp: Expectation, snap: Snapshot) -> Found:
    worker = snap.worker(exp.value)
    if worker is None:
        return _missing(exp)
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


def _check_ledger(exp: Expectation, snap: Snapshot) -> Found:
    page = next((p for p in snap.ledger if p.key == exp.value), None)
    if page is None:
        return _missing(exp)
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


def _check_rejected(exp: Expectation, snap: Snapshot) -> Found:
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
    return ok, found, _as_seen(exp, {"count": count, "worker": worker_filter, "task": task_filter})


def _check_effect(exp: Expectation, snap: Snapshot) -> Found:
    effect = next((e for e in snap.effects if e.idempotency_key == exp.value), None)
    applied = effect.applied_count if effect is not None else 0
    want = exp.get("applied")
    ok = applied == want if want is not None else applied >= 1
    return ok, f"applied = {applied}", _as_seen(exp, {"applied": applied})


def _check_violation(exp: Expectation, snap: Snapshot) -> Found:
    every = snap.violations
    count = sum(every.values()) if exp.value == "any" else every.get(exp.value, 0)
    want = exp.get("count")
    ok = count == want if want is not None else count >= 1
    found = f"count = {count}"
    if exp.value == "any" and count:
        found += f" ({_tally_counts(snap.violations)})"
    if exp.value == "any" and count:
        # which ones, each by its name and count
        named = [Expectation(Subject.VIOLATION, k, (("count", v),)) for k, v in every.items() if v]
        if len(named) == 1:
            return ok, found, named[0]
    return ok, found, _as_seen(exp, {"count": count})


def _check_metric(exp: Expectation, snap: Snapshot) -> Found:
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
    return ok, f"{exp.value} = {shown}", _as_seen(exp, {"min": number, "max": number})


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
    ok, found, _seen = _CHECKS[exp.subject](exp, snap)
    return ok, found


def judge_expectation(exp: Expectation, snap: Snapshot) -> tuple[bool, str, Word]:
    """Whether `exp` holds in `snap`, what was found in the file's spelling (for `--json`),
    and what was found as a sentence (en, zh): "floor6 is running, held by Acheng"."""
    ok, found, seen = _CHECKS[exp.subject](exp, snap)
    if isinstance(seen, tuple):
        return ok, found, seen
    return ok, found, (expectation_sentence(seen, "en"), expectation_sentence(seen, "zh"))


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


def as_played(action: Action, sim: object, lang: str) -> Action:
    """A step's act as this run applies it, in the run's language: a write that gives no
    page writes the one its worker's memory makes now (the sim's `own_page`), said in both
    languages as a scripted page is, so the step's record shows what is written."""
    if isinstance(action, Write) and action.value is None:
        own = getattr(sim, "own_page", None)
        page = own(action.worker, action.key) if callable(own) else None
        if isinstance(page, str):
            action = dataclasses.replace(action, value=page, value_zh=ledger_value(page, "zh"))
    return in_language(action, lang)


def play(
    scenario: Scenario,
    *,
    lang: str = "en",
    make_sim: SimFactory | None = None,
    result: PlayResult | None = None,
    twin: TwinFactory | None = None,
) -> Iterator[Record]:
    """Play every step, yielding records as they happen. ScenarioError if a step cannot run
    (e.g. a manual call by a worker that holds no lease); its line is the step's `do`.

    The summary ends with the report of the run (`report`): what broke, the proof and the
    bill, beside the correct run's, which `twin` plays (without it, the report says the
    correct run was not played)."""
    result = result if result is not None else PlayResult()
    factory = make_sim or _default_factory
    try:
        sim = factory(scenario.settings)
    except BorrowedKeysError as exc:
        raise ScenarioError(
            scenario.path,
            1,
            run_stopped("cannot_start", "en", exc),
            run_stopped("cannot_start", "zh", exc),
        ) from None
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
    seen_harm = _Seen(lang)
    for number, step in enumerate(scenario.steps, start=1):
        action = None if step.action is None else as_played(step.action, sim, lang)
        record: Record = {
            "type": "step",
            "step": number,
            "line": step.line,
            "t": sim.now_ms / 1000,
            "say": step.narration(lang),
            "do": dict(action_items(action)) if action is not None else None,
        }
        if action is not None:  # the act in words, for the readable transcript
            record["act"] = act_sentence(action, lang)
        if step.question is not None:  # only then: files without questions print as before
            record.update(question_record(step.question, lang))
        yield record
        if action is not None:
            try:
                sim.apply(action)
            except BorrowedKeysError as exc:
                raise ScenarioError(
                    scenario.path,
                    step.action_line or step.line,
                    run_stopped("step_cannot_run", "en", exc, number=number),
                    run_stopped("step_cannot_run", "zh", exc, number=number),
                ) from None
            refused: list[EventRow] = []
            for ev in sim.events(seen):
                if ev.seq <= seen:
                    continue
                seen = ev.seq
                yield event_record(ev)
                if ev.event == EventKind.WRITE_REJECTED and ev.detail.get("value"):
                    refused.append(ev)
            after = sim.snapshot()
            yield from books.after_step(number, after, refused)
            yield from seen_harm.after_step(number, after)
        if step.expects:
            snap = sim.snapshot()
            for exp in step.expects:
                ok, found, said_found = judge_expectation(exp, snap)
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
                    "seen": pick(said_found, lang),
                }
    snap = sim.snapshot()
    mode = scenario.settings.mode
    harm = harm_figure(mode, snap.metrics.wasted_steps, snap.metrics.out_of_reach_ms)
    correct = twin(scenario, lang) if twin is not None and mode is not Mode.CORRECT else None
    yield {
        "type": "summary",
        "t": sim.now_ms / 1000,
        "passed": result.passed,
        "failed": result.failed,
        "violations": {k: v for k, v in sorted(snap.violations.items())},
        "harm": None if harm is None else {"name": str(harm[0]), "value": harm[1]},
        "report": report_record(run_report(mode, snap, sim.events(0), correct), lang),
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
                    ev.worker_id,
                    key,
                    ev.task_id,
                    value,
                    snap.ledger,
                    self.lang,
                    reason=str(ev.reason or "fenced"),
                    fence_token=ev.fence_token,
                ),
            }
        stale = snap.stale_pages
        seams = check_books(snap.ledger, stale)
        late = late_pages(snap.ledger, stale, seams)
        named = frozenset(seam.key for seam in seams) | {row.key for row in late}
        if named == self.broken:
            return
        self.broken = named
        newest = {t.task_id: t.row.fence_token for t in snap.tasks}
        for seam in seams:
            said = seam_sentence(seam, self.lang, snap.pages_redone, snap.ledger)
            if seam.stale is None:  # a step done again, not a page of another world
                yield {
                    "type": "books",
                    "step": step,
                    "redone": seam.key,
                    "writer": seam.redo.writer,
                    "meets": seam.other.key,
                    "sum": [seam.before_total, seam.after_amount, seam.after_total],
                    "say": said,
                }
                continue
            yield {
                "type": "books",
                "step": step,
                "broken": seam.key,
                "writer": seam.stale.writer,
                "meets": seam.other.key,
                "sum": [seam.before_total, seam.after_amount, seam.after_total],
                "say": said,
            }
        for row in late:
            yield {
                "type": "books",
                "step": step,
                "broken": row.key,
                "writer": row.writer,
                "meets": None,
                "sum": None,
                "say": late_page_sentence(
                    row, newest.get(row.task_id), self.lang, snap.stale_over.get(row.key)
                ),
            }


class _Seen:
    """What the books cannot show, as the app shows it, said here in the same words: two
    live leases of one task at once (who, which leases, from when to when), each
    application of a side effect beyond its first, with what it cost, a task out of reach
    while it still is (for how long so far, until when its lease holds it), and the steps
    already worked that are due again once the work is lost."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.overlaps: dict[tuple[str, int, int], int | None] = {}
        self.calls = 0
        self.held: str | None = None
        self.due: dict[str, set[int]] = {}

    def after_step(self, step: int, snap: Snapshot) -> Iterator[Record]:
        for o in snap.overlaps:
            key = (o.task_id, o.older_lease_token, o.newer_lease_token)
            if key in self.overlaps and self.overlaps[key] == o.end:
                continue
            self.overlaps[key] = o.end
            yield {
                "type": "overlap",
                "step": step,
                "task": o.task_id,
                "workers": [o.older_worker, o.newer_worker],
                "lease_tokens": [o.older_lease_token, o.newer_lease_token],
                "from": o.start / 1000,
                "until": None if o.end is None else o.end / 1000,
                "say": overlap_sentence(o, snap.now_ms, self.lang),
            }
        calls = snap.effect_calls
        for call in calls[self.calls :]:
            said = repeat_sentence(call, self.lang)
            if said is None:
                continue
            yield {
                "type": "repeat",
                "step": step,
                "key": call.key,
                "worker": call.worker_id,
                "t": call.at / 1000,
                "times": call.applied_times,
                "fence_token": call.fence_token,
                "amount": call.amount,
                "say": said,
            }
        self.calls = max(self.calls, len(calls))
        held = held_sentence(snap, self.lang)
        if held is not None and held != self.held:
            m = snap.metrics
            yield {
                "type": "reach",
                "step": step,
                "task": m.out_of_reach_task,
                "so_far": m.out_of_reach_now_ms / 1000,
                "until": None if m.out_of_reach_until is None else m.out_of_reach_until / 1000,
                "say": held,
            }
        self.held = held
        for due in due_again(snap):
            said_before = self.due.setdefault(due.task_id, set())
            if set(due.steps) <= said_before:
                continue  # a redo under way says nothing new
            said_before.update(due.steps)
            yield {
                "type": "due",
                "step": step,
                "task": due.task_id,
                "worker": due.worker_id,
                "from_step": due.start,
                "steps": list(due.steps),
                "say": due_sentence(due, self.lang),
            }


def folded(records: Iterator[Record], lang: str = "en") -> Iterator[Record]:
    """The records with each run of events folded for people: a line said again in the same
    run (a partitioned worker's writes every 5 s) is one line at its first time, with how
    many times and until when. `--json` keeps every line."""
    run: dict[str, Record] = {}

    def flush() -> Iterator[Record]:
        yield from run.values()
        run.clear()

    for record in records:
        if record["type"] != "event":
            yield from flush()
            yield record
            continue
        said = event_sentence(event_of(record), lang)
        first = run.get(said)
        if first is None:
            run[said] = dict(record)
        else:
            first["times"] = first.get("times", 1) + 1
            first["until"] = record["t"]
    yield from flush()


def question_record(question: Question, lang: str = "en") -> Record:
    """A step's question as the step record carries it: asked, the choices, the answer."""
    out: Record = {"ask": question.text(lang)}
    if question.choices:
        out["choices"] = list(question.choices_in(lang))
        out["answer"] = question.answer
    why = question.why_in(lang)
    if why is not None:
        out["why"] = why
    if question.follow_up is not None:
        out["follow_up"] = question_record(question.follow_up, lang)
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
