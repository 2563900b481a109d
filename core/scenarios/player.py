"""The headless player: plays a scenario's steps through the simulation facade.

`play(scenario)` yields plain records (dicts, JSON-ready): a `scenario` header, the `event`s
each step caused, the `step`s, the `expect` results and a final `summary`. The CLI prints
them as JSON Lines or as a readable transcript (`render_line`, in `transcript`). Expectations
are checked by the pure function `check_expectation(exp, snapshot)` (in `expectations`); a
check carries the file's TOML form (`expect`) and the sentence the app shows for it in the
run's language (`said`).
"""

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from core.engine.config import Mode
from core.engine.errors import BorrowedKeysError
from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.scenarios.expectations import check_expectation as check_expectation
from core.scenarios.expectations import judge_expectation as judge_expectation
from core.scenarios.format import Question, Scenario, ScenarioError
from core.scenarios.glossary import ledger_value, pick
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
from core.scenarios.telling import act_sentence, event_sentence, run_stopped
from core.scenarios.transcript import Record as Record
from core.scenarios.transcript import event_label as event_label
from core.scenarios.transcript import event_of
from core.scenarios.transcript import event_record as event_record
from core.scenarios.transcript import event_style as event_style
from core.scenarios.transcript import reason_label as reason_label
from core.scenarios.transcript import render_line as render_line
from core.scenarios.transcript import word as word
from core.scenarios.writer import action_items
from core.sim.books import check_books, late_pages
from core.sim.rules import harm_figure
from core.sim.snapshot import Snapshot
from core.sim.spec import Action, SimSettings, Write, in_language


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


# -- playing ---------------------------------------------------------------------------------


@dataclass(slots=True)
class PlayResult:
    passed: int = 0
    failed: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


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
