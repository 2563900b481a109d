"""The end of a run in words: what broke, the lines of the history that prove it, its bill,
and the same bill for the same faults in the correct run.

Written in the manner of a Jepsen analysis. The anomalies are the checker's own findings
(its `violation` lines in the register) and, where a mode's mistake is no safety rule, its
harm when the run shows more of it than the correct run does; the pages corrupted are the
books' own seams (`core/sim/books.py`). Nothing here judges a rule of its own: it picks the
lines that show what the judges found, and counts.

The correct run's figures are never written down: the caller plays the same scenario, or
the same fork, under the correct mode (`core/scenarios/twin.py`) and hands its bill in.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from core.engine.config import Mode
from core.engine.durations import format_clock
from core.engine.errors import RejectReason
from core.engine.records import EventRow
from core.engine.vocabulary import EventKind, Operation, TaskStatus
from core.scenarios.glossary import Word, harm_word, lookup, mode_name, violation_word
from core.scenarios.telling import event_sentence, spaced, span_words, task_words, who
from core.sim.books import broken_pages, check_books, page_step
from core.sim.rules import MODE_HARM, Harm, ViolationKind
from core.sim.snapshot import Snapshot
from core.sim.spec import WorkerState

# The report's words, in both languages (the app, `play` and the exported page say these).
REPORT: Final[dict[str, Word]] = {
    "title": ("The end of the run", "这一局的结论"),
    "none": (
        "Nothing broke: no safety rule, and no harm beyond the correct run's.",
        "什么也没坏：没有违反安全规则，害处也不比正确做法多。",
    ),
    "anomaly": ("What broke: {name}", "坏在哪里：{name}"),
    "proof": ("The history that proves it:", "证明它的历史记录："),
    "line": ("  {at}  {said}", "  {at}  {said}"),
    "bill": ("The bill of this run ({mode}): {figures}", "这一局（{mode}）的代价：{figures}"),
    "twin": (
        "The same faults in the correct run: {figures}",
        "同样的故障，正确做法下：{figures}",
    ),
    "harm_anomaly": (
        "What broke: {name} ({value}, against {correct} in the correct run)",
        "坏在哪里：{name}（{value}，正确做法下是 {correct}）",
    ),
    "twin_missing": (
        "The same faults in the correct run were not played here.",
        "这里没有用正确做法把同样的故障再走一遍。",
    ),
    "twin_stopped": (
        "(the correct run could not play steps {steps}, and went on without them)",
        "（正确做法下第 {steps} 步走不了，跳过它们接着走）",
    ),
    "twin_refused": (
        "(the correct run could not do {n} of the acts after the script, and went on)",
        "（正确做法下，剧本之后的动作有 {n} 个做不了，跳过接着走）",
    ),
    "twin_is_run": (
        "This is the correct run: its figures are the ones a mistake is measured against.",
        "这一局就是正确做法：别的模式的代价都拿它来比。",
    ),
    "pages": ("{n} pages corrupted", "{n} 页被写坏"),
    "pages_one": ("1 page corrupted", "1 页被写坏"),
    "pages_by": ("{n} pages corrupted (off by {by})", "{n} 页被写坏（差 {by}）"),
    "pages_by_one": ("1 page corrupted (off by {by})", "1 页被写坏（差 {by}）"),
    "effects": ("{n} effects doubled", "副作用多做 {n} 次"),
    "effects_one": ("1 effect doubled", "副作用多做 1 次"),
    "steps": ("{n} steps done again", "重做 {n} 步"),
    "steps_one": ("1 step done again", "重做 1 步"),
    "reach": ("{time} out of reach", "任务无人可接 {time}"),
    "reach_none": ("never out of reach", "任务从未无人可接"),
    # the header's light where the mode's harm happened and no safety rule broke
    # the steps already done again and those a holder must still do again: once the
    # work is lost the harm is certain, though the redo is still to come
    "header_steps_done_again": (
        "steps done or due again {value} (correct run: {correct})",
        "重做和待重做 {value} 步（正确做法 {correct} 步）",
    ),
    # steps already worked that will be worked again, said once the work is lost
    "due_held": (
        "{who} works {task} from step {start}: {steps}, already worked, must be done again.",
        "{who}从第 {start} 步做起 {task}：已经做过的{steps}还得再做一遍。",
    ),
    "due_next": (
        "Whoever takes {task} next starts at step {start}: {steps}, already worked, must be "
        "done again.",
        "下一个领到 {task} 的人从第 {start} 步做起：已经做过的{steps}还得再做一遍。",
    ),
    "due_step": ("step {steps}", "第 {steps} 步"),
    "due_steps": ("steps {steps}", "第 {steps} 步"),
    # a task out of reach now, said while its lease still holds it or it waits for a claim
    "held_until": (
        "{task} has been out of reach for {so_far}, since its holder's last sign of life: "
        "its lease holds it until {until}.",
        "{task} 已经无人可接 {so_far}，从持有人最后一次报平安算起：它的租约要到 {until} 才放手。",
    ),
    "held_for_ever": (
        "{task} has been out of reach for {so_far}, since its holder's last sign of life, "
        "and no lease end will let it go.",
        "{task} 已经无人可接 {so_far}，从持有人最后一次报平安算起，"
        "而且没有哪个到期时刻会放它出来。",
    ),
    "held_waiting": (
        "{task} has been out of reach for {so_far}, since its holder's last sign of life: "
        "its lease has run out, and it waits for a claim.",
        "{task} 已经无人可接 {so_far}，从持有人最后一次报平安算起：租约已经到期，等着有人来领。",
    ),
    "header_time_out_of_reach": (
        "out of reach {value} (correct run: {correct})",
        "无人可接 {value}（正确做法 {correct}）",
    ),
}

SEP: Final[Word] = (" · ", "，")


def word(key: str, lang: str, /, **fill: object) -> str:
    return lookup(REPORT, key, lang, **fill)


@dataclass(frozen=True, slots=True)
class Bill:
    """What a run cost, in the figures the report sets side by side."""

    pages_corrupted: int = 0
    # how far the totals of the broken pages are from what the pages before them add up to
    off_by: int = 0
    effects_doubled: int = 0  # applications beyond the first, over every idempotency key
    steps_redone: int = 0
    out_of_reach_ms: int = 0
    # steps a holder must still do again (pages of older leases, and pages refused, at or
    # past the step its worker is on, or past what the next claimant will read): a figure
    # of the moment, which the header counts with those done; not in the record
    steps_due: int = 0

    def as_record(self) -> dict[str, int]:
        return {
            "pages_corrupted": self.pages_corrupted,
            "off_by": self.off_by,
            "effects_doubled": self.effects_doubled,
            "steps_redone": self.steps_redone,
            "out_of_reach_ms": self.out_of_reach_ms,
        }


def bill_of(snap: Snapshot) -> Bill:
    """A run's bill: the pages the books blame (written under a lease that was not current:
    "账本看起来仍然整齐，却悄悄混进了两套互相覆盖的世界") and how far the breaks at them are off,
    the effects applied more than once, and the checker's two figures of harm that is not
    safety. A break with no stale page is a step done again, billed as such."""
    seams = [s for s in check_books(snap.ledger, snap.stale_pages) if s.stale is not None]
    return Bill(
        pages_corrupted=len(broken_pages(snap.ledger, snap.stale_pages)),
        off_by=sum(abs(s.before_total + s.after_amount - s.after_total) for s in seams),
        effects_doubled=sum(max(0, e.applied_count - 1) for e in snap.effects),
        steps_redone=snap.metrics.wasted_steps,
        # a task still out of reach at the end counts (a stuck one was said "never out of
        # reach", since no claim ever ended its wait)
        out_of_reach_ms=snap.metrics.out_of_reach_ms,
        steps_due=steps_due_again(snap),
    )


@dataclass(frozen=True, slots=True)
class Due:
    """Steps of a task already worked that will be worked again: who works the task on
    (None: whoever claims it next), from which step, and the steps due again."""

    task_id: str
    worker_id: str | None
    start: int
    steps: tuple[int, ...]


def due_again(snap: Snapshot) -> tuple[Due, ...]:
    """The steps already worked that a holder will have to work again: "下一位拿到的只是空白
    现场，成本会被重复执行吃掉". For a task its current holder works, each step at or past
    the one it is on with a page from an older lease in the ledger, or a page refused; for
    a task whose holder is down or whose lease ran out, each such step past what the next
    claimant will read (its box, none under mistake four, and under an unread box none
    either)."""
    workers = {w.id: w for w in snap.workers}
    out = []
    for view in snap.tasks:
        row = view.row
        if row.status != TaskStatus.RUNNING:
            continue
        holder = workers.get(row.owner_id or "")
        worker: str | None = None
        if (
            holder is not None
            and holder.task_id == row.task_id
            and holder.lease_token == row.lease_token
            and holder.state not in (WorkerState.DEAD, WorkerState.STALLED)
            and (view.remaining_ms is None or view.remaining_ms >= 0)
        ):
            worker, start = holder.id, holder.step or 1
            current: tuple[str | None, int] | None = (row.owner_id, row.fence_token)
        else:
            unread = snap.mode in (Mode.NO_CHECKPOINT, Mode.UNREAD_CHECKPOINT)
            start, current = 1 if unread else (view.checkpoint_step or 0) + 1, None
        steps = {
            n
            for p in snap.ledger
            if p.task_id == row.task_id
            and (n := page_step(p)) is not None
            and n >= start
            and _of_an_older_lease(p.writer, p.fence_token, current)
        }
        written = {p.key for p in snap.ledger if p.task_id == row.task_id}
        steps |= {
            n
            for r in snap.rejections
            if r.operation == Operation.WRITE
            and r.task_id == row.task_id
            and r.key is not None
            and r.key not in written
            and r.reason != RejectReason.PARTITIONED
            and (n := _key_step(r.key, row.task_id)) is not None
            and n >= start
        }
        if steps:
            out.append(Due(row.task_id, worker, start, tuple(sorted(steps))))
    return tuple(out)


def steps_due_again(snap: Snapshot) -> int:
    """How many steps already worked are due again, over every task (`due_again`)."""
    return sum(len(due.steps) for due in due_again(snap))


def due_sentence(due: Due, lang: str) -> str:
    """Steps due again, said: who works the task from which step, and which steps already
    worked it must work again."""
    numbers = ("、" if lang == "zh" else ", ").join(map(str, due.steps))
    fill = {
        "task": task_words(due.task_id, lang),
        "start": due.start,
        "steps": word("due_step" if len(due.steps) == 1 else "due_steps", lang, steps=numbers),
    }
    if due.worker_id is None:
        return spaced(word("due_next", lang, **fill), lang)
    return spaced(word("due_held", lang, **fill, who=who(due.worker_id, lang)), lang)


def _of_an_older_lease(writer: str, fence: int, current: tuple[str | None, int] | None) -> bool:
    """Whether a page was written under another lease than the holder's (`current`: its
    worker and fence token; None: no holder works the task, so any page is another's)."""
    if current is None:
        return True
    owner, token = current
    return fence < token if fence and token else writer != owner


def _key_step(key: str, task_id: str) -> int | None:
    prefix, _, step = key.rpartition("/")
    return int(step) if prefix == task_id and step.isdigit() and int(step) > 0 else None


@dataclass(frozen=True, slots=True)
class Twin:
    """The correct run of the same faults, as played: its bill, and the steps of the
    script it could not play (it went on without them)."""

    bill: Bill
    skipped: tuple[int, ...] = ()
    refused_acts: int = 0  # acts after the script the correct run could not do


@dataclass(frozen=True, slots=True)
class Finding:
    """One anomaly: a broken safety rule (`ViolationKind`) or a mode's harm (`Harm`), with
    the lines of the history that show it, oldest first."""

    anomaly: str
    proof: tuple[EventRow, ...]


@dataclass(frozen=True, slots=True)
class RunReport:
    mode: Mode
    findings: tuple[Finding, ...]
    bill: Bill
    twin: Twin | None  # None: the run is the correct one, or its twin was not played

    @property
    def is_correct(self) -> bool:
        return self.mode is Mode.CORRECT


# -- the lines that prove each anomaly --------------------------------------------------------

_SIGNS_OF_LIFE = frozenset({EventKind.CLAIMED, EventKind.RENEWED, EventKind.HEARTBEAT_NOTED})
_RELEASES = frozenset({EventKind.COMPLETED, EventKind.PARKED, EventKind.FAILED})
_FAULTS = frozenset(
    {
        EventKind.KILLED,
        EventKind.STALLED,
        EventKind.HEARTBEAT_FROZEN,
        EventKind.PARTITIONED,
        EventKind.RESTARTED,
        EventKind.SLOWED,
        EventKind.SKEWED,
        EventKind.LEASE_EXPIRED,
    }
)
MAX_LINES: Final = 5


def _last(events: Sequence[EventRow], test: Any) -> EventRow | None:
    return next((ev for ev in reversed(events) if test(ev)), None)


def _first(events: Sequence[EventRow], test: Any) -> EventRow | None:
    return next((ev for ev in events if test(ev)), None)


def _key(ev: EventRow) -> str:
    return str(ev.detail.get("key") or ev.detail.get("call") or "")


def _kept(*lines: EventRow | None) -> tuple[EventRow, ...]:
    """The lines found, each once, in the register's order, at most MAX_LINES (the verdict
    itself, the last, always kept)."""
    found = sorted({ev.seq: ev for ev in lines if ev is not None}.values(), key=lambda e: e.seq)
    if len(found) > MAX_LINES:
        found = found[: MAX_LINES - 1] + found[-1:]
    return tuple(found)


def _violation_proof(verdict: EventRow, events: Sequence[EventRow]) -> tuple[EventRow, ...]:
    """The lines before a verdict that show it: who held the task, how the holder lost it,
    and the act the checker judged."""
    task, worker = verdict.task_id, verdict.worker_id
    before = [ev for ev in events if ev.seq < verdict.seq and ev.task_id == task]
    kind = verdict.reason

    def by(name: EventKind, who: str | None = worker) -> Any:
        return lambda ev: ev.event == name and (who is None or ev.worker_id == who)

    if kind in (ViolationKind.STALE_WRITE_ACCEPTED, ViolationKind.PAGE_WITHOUT_LIVE_LEASE):
        write = _last(before, by(EventKind.WRITE_ACCEPTED))
        lost = _last(
            before,
            lambda ev: (
                ev.worker_id == worker
                and ev.event in (_FAULTS | _RELEASES)
                and (write is None or ev.seq < write.seq)
            ),
        )
        taken = _last(
            before,
            lambda ev: (
                ev.event == EventKind.CLAIMED
                and ev.worker_id != worker
                and (write is None or ev.seq < write.seq)
            ),
        )
        own = _last(before, by(EventKind.CLAIMED)) if taken is None else None
        return _kept(own, lost, taken, write, verdict)
    if kind in (ViolationKind.DOUBLE_OWNER, ViolationKind.FENCE_NOT_NEWER):
        claims = [ev for ev in before if ev.event == EventKind.CLAIMED]
        now = claims[-1] if claims else None
        earlier = claims[-2] if len(claims) > 1 else None
        fault = _last(
            before,
            lambda ev: (
                ev.event in _FAULTS
                and earlier is not None
                and earlier.seq < ev.seq
                and (now is None or ev.seq < now.seq)
            ),
        )
        return _kept(earlier, fault, now, verdict)
    if kind == ViolationKind.DUPLICATE_EFFECT:
        again = _last(before, lambda ev: ev.event == EventKind.EFFECT_APPLIED)
        key = _key(again) if again is not None else ""
        once = _first(before, lambda ev: ev.event == EventKind.EFFECT_APPLIED and _key(ev) == key)
        low = once.seq if once is not None else 0
        high = again.seq if again is not None else 0
        between = [ev for ev in before if low < ev.seq < high]
        fault = _first(between, lambda ev: ev.event in _FAULTS)
        claim = _first(between, lambda ev: ev.event == EventKind.CLAIMED)
        return _kept(once, fault, claim, again, verdict)
    if kind in (ViolationKind.COMPLETED_TWICE, ViolationKind.RECLAIMED_AFTER_END):
        ended = _first(before, lambda ev: ev.event in (EventKind.COMPLETED, EventKind.PARKED))
        claim = _last(
            before,
            lambda ev: ev.event == EventKind.CLAIMED and ended is not None and ev.seq > ended.seq,
        )
        last = _last(before, lambda ev: ev.event == EventKind.COMPLETED)
        return _kept(ended, claim, last if last is not ended else None, verdict)
    if kind == ViolationKind.STUCK_TASK:
        alive = _last(before, lambda ev: ev.event in _SIGNS_OF_LIFE and ev.worker_id == worker)
        down = _last(
            events,
            lambda ev: (
                ev.seq < verdict.seq
                and ev.worker_id == worker
                and ev.event in (EventKind.KILLED, EventKind.STALLED)
            ),
        )
        return _kept(alive, down, verdict)
    return _kept(verdict)


def _redone_proof(events: Sequence[EventRow]) -> tuple[EventRow, ...]:
    """A page worked twice: its first write, what lost the work in between, the claim that
    started over, and the write again."""
    seen: dict[str, EventRow] = {}
    for ev in events:
        # the steps the checker counts: a page written, or worked and refused (a call that
        # never reached the store was not worked through)
        worked = ev.event == EventKind.WRITE_ACCEPTED or (
            ev.event == EventKind.WRITE_REJECTED and ev.reason != RejectReason.PARTITIONED
        )
        if not worked or not _key(ev):
            continue
        first = seen.get(_key(ev))
        if first is None:
            seen[_key(ev)] = ev
            continue
        between = [e for e in events if first.seq < e.seq < ev.seq]
        fault = _first(between, lambda e: e.event in _FAULTS)
        claims = [e for e in between if e.event == EventKind.CLAIMED and e.task_id == first.task_id]
        claim = claims[-1] if claims else None
        return _kept(first, fault, claim, ev)
    return ()


def _reach_proof(events: Sequence[EventRow]) -> tuple[EventRow, ...]:
    """The longest a task waited between its holder's last sign of life and the next claim
    (the figure the checker counts): that sign, what silenced it, the expiry and the claim."""
    last_sign: dict[str, EventRow] = {}
    best: tuple[int, EventRow, EventRow] | None = None
    for ev in events:
        task = ev.task_id or ""
        if ev.event == EventKind.CLAIMED:
            sign = last_sign.get(task)
            if sign is not None and (best is None or ev.at - sign.at > best[0]):
                best = (ev.at - sign.at, sign, ev)
            last_sign[task] = ev
        elif ev.event in _SIGNS_OF_LIFE:
            held = last_sign.get(task)
            if held is not None and held.worker_id == ev.worker_id:
                last_sign[task] = ev
        elif ev.event in _RELEASES or ev.event == EventKind.DEAD_LETTERED:
            last_sign.pop(task, None)
    if best is None:
        return ()
    _gap, sign, claim = best
    between = [e for e in events if sign.seq < e.seq < claim.seq]
    fault = _first(between, lambda e: e.event in _FAULTS and e.event != EventKind.LEASE_EXPIRED)
    expired = _last(
        between, lambda e: e.event == EventKind.LEASE_EXPIRED and e.task_id == claim.task_id
    )
    return _kept(sign, fault, expired, claim)


def _held_proof(events: Sequence[EventRow], task: str | None) -> tuple[EventRow, ...]:
    """A task out of reach still, at the end: the claim its holder took it by, the holder's
    last sign of life, what silenced it, and the expiry if its lease has run out since (no
    claim has ended the wait yet)."""
    sign = _last(events, lambda ev: ev.task_id == task and ev.event in _SIGNS_OF_LIFE)
    if sign is None:
        return ()
    claim = _last(
        [e for e in events if e.seq <= sign.seq],
        lambda e: e.event == EventKind.CLAIMED and e.task_id == task,
    )
    after = [e for e in events if e.seq > sign.seq]
    fault = _first(after, lambda e: e.event in _FAULTS and e.worker_id == sign.worker_id)
    expired = _first(after, lambda e: e.event == EventKind.LEASE_EXPIRED and e.task_id == task)
    return _kept(claim, sign, fault, expired)


def _harm_shown(mode: Mode, bill: Bill, twin: Twin | None) -> Harm | None:
    """The mode's harm that is not safety, if this run shows more of it than the correct
    run does (with no correct run to set it beside, any of it)."""
    harm = MODE_HARM.get(mode)
    if harm is None:
        return None
    value = bill.steps_redone if harm is Harm.STEPS_DONE_AGAIN else bill.out_of_reach_ms
    correct = 0
    if twin is not None:
        correct = (
            twin.bill.steps_redone if harm is Harm.STEPS_DONE_AGAIN else twin.bill.out_of_reach_ms
        )
    return harm if value > correct else None


def run_report(
    mode: Mode, snap: Snapshot, events: Sequence[EventRow], twin: Twin | None
) -> RunReport:
    """The report of a run from its final snapshot and its whole register, beside the
    correct run's twin (None for the correct run itself, or when it was not played)."""
    bill = bill_of(snap)
    findings: list[Finding] = []
    named: set[str] = set()
    for ev in events:
        if ev.event == EventKind.VIOLATION and ev.reason and ev.reason not in named:
            named.add(ev.reason)
            findings.append(Finding(ev.reason, _violation_proof(ev, events)))
    for kind in ViolationKind:  # a count whose register line this history does not hold
        if snap.violations.get(kind, 0) and kind not in named:
            findings.append(Finding(kind.value, ()))
    harm = _harm_shown(mode, bill, None if mode is Mode.CORRECT else twin)
    if harm is not None:
        m = snap.metrics
        if harm is Harm.STEPS_DONE_AGAIN:
            proof = _redone_proof(events)
        elif m.out_of_reach_now_ms > m.recovery_time_ms:  # still out of reach at the end
            proof = _held_proof(events, m.out_of_reach_task)
        else:
            proof = _reach_proof(events)
        findings.append(Finding(harm.value, proof))
    return RunReport(mode, tuple(findings), bill, None if mode is Mode.CORRECT else twin)


# -- in words ---------------------------------------------------------------------------------


def _counted(n: int, name: str, lang: str, **fill: object) -> str:
    return word(f"{name}_one" if n == 1 else name, lang, n=n, **fill)


def figures_text(bill: Bill, lang: str) -> str:
    """A bill as one line: "1 page corrupted (off by 44) · 0 effects doubled · ..."."""
    if bill.pages_corrupted and bill.off_by:
        pages = _counted(bill.pages_corrupted, "pages_by", lang, by=bill.off_by)
    else:
        pages = _counted(bill.pages_corrupted, "pages", lang)
    reach = (
        word("reach", lang, time=span_words(bill.out_of_reach_ms, lang))
        if bill.out_of_reach_ms
        else word("reach_none", lang)
    )
    return (SEP[1] if lang == "zh" else SEP[0]).join(
        (
            pages,
            _counted(bill.effects_doubled, "effects", lang),
            _counted(bill.steps_redone, "steps", lang),
            reach,
        )
    )


def anomaly_name(name: str, lang: str) -> str:
    return harm_word(name, lang) if name in set(Harm) else violation_word(name, lang)


def harm_value(harm: Harm, bill: Bill, lang: str) -> str:
    """A bill's figure of one harm: steps, or a time to read."""
    if harm is Harm.STEPS_DONE_AGAIN:
        return str(bill.steps_redone)
    return span_words(bill.out_of_reach_ms, lang)


def anomaly_line(report: RunReport, name: str, lang: str) -> str:
    """ "What broke: stale write accepted"; a harm with its figure beside the correct run's."""
    if name in set(Harm) and report.twin is not None:
        harm = Harm(name)
        return word(
            "harm_anomaly",
            lang,
            name=harm_word(name, lang),
            value=harm_value(harm, report.bill, lang),
            correct=harm_value(harm, report.twin.bill, lang),
        )
    return word("anomaly", lang, name=anomaly_name(name, lang))


def proof_line(ev: EventRow, lang: str) -> str:
    return word(
        "line", lang, at=format_clock(ev.at).removesuffix(".000"), said=event_sentence(ev, lang)
    )


def report_lines(report: RunReport, lang: str) -> list[tuple[str, str]]:
    """The report as (line, kind) pairs: kind is "title", "anomaly", "proof", "line",
    "bill", "twin" or "note", for a screen to style."""
    out: list[tuple[str, str]] = [(word("title", lang), "title")]
    if not report.findings:
        out.append((word("none", lang), "note"))
    for finding in report.findings:
        out.append((anomaly_line(report, finding.anomaly, lang), "anomaly"))
        if finding.proof:
            out.append((word("proof", lang), "proof"))
            out.extend((proof_line(ev, lang), "line") for ev in finding.proof)
    mode = mode_name(report.mode.value, lang)
    out.append((word("bill", lang, mode=mode, figures=figures_text(report.bill, lang)), "bill"))
    if report.is_correct:
        out.append((word("twin_is_run", lang), "note"))
    elif report.twin is None:
        out.append((word("twin_missing", lang), "note"))
    else:
        out.append((word("twin", lang, figures=figures_text(report.twin.bill, lang)), "twin"))
        if report.twin.skipped:
            steps = ("、" if lang == "zh" else ", ").join(map(str, report.twin.skipped))
            out.append((word("twin_stopped", lang, steps=steps), "note"))
        if report.twin.refused_acts:
            out.append((word("twin_refused", lang, n=report.twin.refused_acts), "note"))
    return out


def report_record(report: RunReport, lang: str) -> dict[str, Any]:
    """The report as `play --json` carries it: the anomalies with their proof (the register
    lines, as `event` records carry them), both bills, and the sentences in `lang` (each
    with its kind: title, anomaly, proof, line, bill, twin or note)."""
    lines = report_lines(report, lang)
    return {
        "mode": report.mode.value,
        "anomalies": [
            {"name": f.anomaly, "proof": [ev.to_json_dict() for ev in f.proof]}
            for f in report.findings
        ],
        "bill": report.bill.as_record(),
        "correct": None
        if report.twin is None
        else {
            **report.twin.bill.as_record(),
            "skipped_steps": list(report.twin.skipped),
            "refused_acts": report.twin.refused_acts,
        },
        "said": [line for line, _kind in lines],
        "kinds": [kind for _line, kind in lines],
    }


def header_words(harm: Harm, value: int, correct: int, lang: str) -> str:
    """The header's light for a harm that is not safety, beside the correct run's figure."""
    if harm is Harm.STEPS_DONE_AGAIN:
        shown, against = str(value), str(correct)
    else:
        shown, against = span_words(value, lang), span_words(correct, lang)
    return word(f"header_{harm.value}", lang, value=shown, correct=against)


def _at_this_moment(harm: Harm, bill: Bill) -> int:
    """A harm's figure as the header says it now: the steps done again and those due again
    (the work is lost and must be done again, though the redo is to come), or the longest a
    task was or is out of reach."""
    if harm is Harm.STEPS_DONE_AGAIN:
        return bill.steps_redone + bill.steps_due
    return bill.out_of_reach_ms


def harm_against(mode: Mode, bill: Bill, twin: Twin | None) -> tuple[Harm, int, int] | None:
    """For the header: the mode's harm that is not safety, its figure in this run and in the
    correct run to the same point, when this run shows more of it (None otherwise): never a
    green "safe" while the mode's harm is under way."""
    harm = MODE_HARM.get(mode)
    if harm is None or twin is None:
        return None
    value, correct = _at_this_moment(harm, bill), _at_this_moment(harm, twin.bill)
    return (harm, value, correct) if value > correct else None


def held_sentence(snap: Snapshot, lang: str) -> str | None:
    """A task out of reach right now, said: for how long so far, and until when its lease
    holds it (or that nothing will let it go, or that it waits for a claim); None when no
    task is. "租期太长会把恢复时间也一起拉长。一个已经死掉的 worker 会霸占任务很久" """
    m = snap.metrics
    if not m.out_of_reach_now_ms or m.out_of_reach_task is None:
        return None
    fill: dict[str, object] = {
        "task": task_words(m.out_of_reach_task, lang),
        "so_far": span_words(m.out_of_reach_now_ms, lang),
    }
    if m.out_of_reach_until is not None:
        until = format_clock(m.out_of_reach_until).removesuffix(".000")
        return spaced(word("held_until", lang, **fill, until=until), lang)
    expired = any(
        t.task_id == m.out_of_reach_task and t.remaining_ms is not None and t.remaining_ms < 0
        for t in snap.tasks
    )
    return spaced(word("held_waiting" if expired else "held_for_ever", lang, **fill), lang)
