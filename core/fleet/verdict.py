"""The whole history of a fleet run checked again at the end, Jepsen-style.

While the run goes on the simulations' own safety checker watches each event as the
supervisor reads it from the events table. At the end the whole table is read once more,
from its first row, and judged by a fresh checker plus the rules that need every table:
every accepted page came from the task's current live lease with its newest fence token
("若某页已经见过更大的编号，较小编号的写入一律作废"), no two leases on one task were live
at once, each effect was applied once and each task completed once.
"""

import dataclasses
import enum
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine.people import called
from core.engine.records import EffectRow, EventRow, LedgerRow, TaskRow
from core.engine.vocabulary import EventKind, TaskStatus
from core.fleet.words import WORDS, word
from core.scenarios import glossary
from core.sim.checker import SafetyChecker, ViolationKind


class Verdict(enum.IntEnum):
    """The exit status of a headless run: what the history shows."""

    HELD = 0  # every rule held
    BROKEN = 1  # a safety rule was broken
    NOT_RUN = 2  # bad input, or the fleet could not run


class FleetRule(enum.StrEnum):
    """A rule of the final check beyond the running checker's (which names its own)."""

    PAGE_FROM_OLD_LEASE = "page_from_old_lease"
    PAGE_FROM_EXPIRED_LEASE = "page_from_expired_lease"
    EFFECT_COUNT = "effect_count"
    COMPLETION_COUNT = "completion_count"
    # A saved file can be edited: its history must explain itself and the rows it ends with.
    HISTORY_GAP = "history_gap"  # a seq missing, repeated or out of order; a count that differs
    ROW_UNEXPLAINED = "row_unexplained"  # a final row no event made, or an event no row shows
    AFTER_THE_END = "after_the_end"  # a line after the verdict, a second verdict


# The rules that compare the events with the store's final rows: a saved run without its
# rows (saved before they were kept) is judged without them, and says so.
ROW_RULES = (FleetRule.COMPLETION_COUNT, FleetRule.EFFECT_COUNT)

# A saved run keeps the store's final rows as `{"t": "row", "v": ROWS_VERSION, "table",
# "row"}` lines; a reader meeting a newer version refuses the file rather than misjudge it.
ROWS_VERSION = 1
ROW_TABLES: dict[str, type[TaskRow] | type[LedgerRow] | type[EffectRow]] = {
    "agent_tasks": TaskRow,
    "ledger": LedgerRow,
    "effects": EffectRow,
}


@dataclass(frozen=True, slots=True)
class FinalRows:
    """The store's rows at the end of a run: what the events are compared with."""

    tasks: tuple[TaskRow, ...] = ()
    ledger: tuple[LedgerRow, ...] = ()
    effects: tuple[EffectRow, ...] = ()

    def lines(self) -> list[dict[str, Any]]:
        """The rows as a saved run keeps them, one line each."""
        tables: list[tuple[str, Sequence[Any]]] = [
            ("agent_tasks", self.tasks),
            ("ledger", self.ledger),
            ("effects", self.effects),
        ]
        return [
            {"t": "row", "v": ROWS_VERSION, "table": name, "row": dataclasses.asdict(row)}
            for name, rows in tables
            for row in rows
        ]


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken rule: which, where, and what the history shows."""

    rule: str
    task_id: str | None
    worker_id: str | None
    at: int
    detail: str  # in figures, in English: the history's own words for the saved file

    def what(self, lang: str) -> str:
        """The broken rule in words."""
        if self.rule in WORDS:
            return word(self.rule, lang)
        return glossary.violation_word(self.rule, lang)

    def who(self, lang: str) -> str:
        """Whose act broke it: a worker by name, or the store."""
        worker = self.worker_id
        return called(worker, lang) if worker else word("nobody", lang)

    def sentence(self, lang: str) -> str:
        """Who broke which rule on which task, in `lang` (English adds the figures)."""
        key = "finding_en" if lang != "zh" else "finding"
        task = self.task_id or "-"
        return word(
            key, lang, who=self.who(lang), task=task, what=self.what(lang), detail=self.detail
        )


@dataclass
class HistoryCheck:
    """What the final check found, and what it looked at."""

    events: int = 0
    accepted_pages: int = 0
    refused_pages: int = 0
    claims: int = 0
    completed: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        return Verdict.BROKEN if self.findings else Verdict.HELD


@dataclass
class _Current:
    worker_id: str
    lease_token: int
    fence_token: int
    expires_at: int | None
    released: bool = False


def check_history(
    events: Sequence[EventRow],
    *,
    ttl_ms: int,
    tasks: Iterable[TaskRow] = (),
    effects: Iterable[EffectRow] = (),
) -> HistoryCheck:
    """Judge a whole history (events in `seq` order) and the store's final rows."""
    out = HistoryCheck(events=len(events))
    checker = SafetyChecker(ttl_ms=ttl_ms)
    current: dict[str, _Current] = {}
    completions: Counter[str] = Counter()
    applied: Counter[str] = Counter()
    for ev in events:
        for v in checker.observe(ev):
            out.findings.append(Finding(v.name.value, v.task_id, v.worker_id, v.at, v.detail))
        task = ev.task_id or ""
        if ev.event == EventKind.CLAIMED:
            out.claims += 1
            expires = ev.detail.get("expires_at")
            current[task] = _Current(
                ev.worker_id or "",
                ev.lease_token or 0,
                ev.fence_token or 0,
                int(expires) if expires is not None else None,
            )
        elif ev.event in (EventKind.RENEWED, EventKind.HEARTBEAT_NOTED):
            held = current.get(task)
            expires = ev.detail.get("expires_at")
            if held is not None and held.lease_token == ev.lease_token and expires is not None:
                held.expires_at = int(expires)
        elif ev.event in (
            EventKind.COMPLETED,
            EventKind.PARKED,
            EventKind.FAILED,
            EventKind.DEAD_LETTERED,
        ):
            held = current.get(task)
            if held is not None:
                held.released = True
            if ev.event == EventKind.COMPLETED:
                out.completed += 1
                completions[task] += 1
        elif ev.event == EventKind.EFFECT_APPLIED:
            applied[str(ev.detail.get("key"))] += 1
        elif ev.event == EventKind.WRITE_REJECTED:
            out.refused_pages += 1
        elif ev.event == EventKind.WRITE_ACCEPTED:
            out.accepted_pages += 1
            out.findings.extend(_page_rule(ev, current.get(task)))
    for task, n in completions.items():
        if n > 1 and not any(f.rule == ViolationKind.COMPLETED_TWICE for f in out.findings):
            out.findings.append(
                Finding(FleetRule.COMPLETION_COUNT, task, None, 0, f"{task} completed {n} times")
            )
    for row in tasks:
        n = completions.get(row.task_id, 0)
        if (row.status == TaskStatus.DONE) != (n == 1):
            out.findings.append(
                Finding(
                    FleetRule.COMPLETION_COUNT,
                    row.task_id,
                    row.owner_id,
                    row.updated_at,
                    f"{row.task_id} is {row.status} and was completed {n} times",
                )
            )
    for effect in effects:
        key = effect.idempotency_key
        times = max(effect.applied_count, applied.get(key, 0))
        if times != 1:
            out.findings.append(
                Finding(
                    FleetRule.EFFECT_COUNT,
                    effect.task_id,
                    None,
                    effect.applied_at,
                    f"{key} applied {times} times",
                )
            )
    return out


def unexplained(
    events: Sequence[EventRow],
    rows: FinalRows | None,
    *,
    said_events: int,
    gaps_allowed: bool = False,
) -> list[Finding]:
    """What a saved history fails to explain: a seq missing, repeated or out of order, an
    event count unlike the verdict's, a final row no event made, an event no row shows.

    Held is a claim about the whole register; a file whose register has holes (a deleted
    accepted write, relabelled as refused) proves nothing, so it is not held. On PostgreSQL
    a sequence skips the numbers of rolled-back transactions (a retried serialization
    failure), so there a gap is not a hole; a repeat still is."""
    out: list[Finding] = []
    previous = 0
    for ev in events:
        if ev.seq <= previous:
            out.append(
                Finding(
                    FleetRule.HISTORY_GAP,
                    ev.task_id,
                    ev.worker_id,
                    ev.at,
                    f"seq {ev.seq} comes after seq {previous}: repeated or out of order",
                )
            )
            continue
        if ev.seq != previous + 1 and not gaps_allowed:
            missing = (
                f"seq {previous + 1}"
                if ev.seq == previous + 2
                else f"seq {previous + 1}-{ev.seq - 1}"
            )
            out.append(
                Finding(
                    FleetRule.HISTORY_GAP,
                    ev.task_id,
                    ev.worker_id,
                    ev.at,
                    f"{missing} is missing from the history",
                )
            )
        previous = ev.seq
    if said_events != len(events):
        out.append(
            Finding(
                FleetRule.HISTORY_GAP,
                None,
                None,
                0,
                f"the verdict line counts {said_events} events and the file holds {len(events)}",
            )
        )
    if rows is None:
        return out
    written: dict[str, EventRow] = {}  # each page's last accepted write
    claimed: dict[str, set[int]] = {}  # the lease tokens each task's events issued
    named: set[str] = set()  # every task an event names
    enqueued: set[str] = set()
    applied: set[str] = set()
    for ev in events:
        if ev.task_id is not None:
            named.add(ev.task_id)
        if ev.event == EventKind.WRITE_ACCEPTED:
            written[str(ev.detail.get("key"))] = ev
        elif ev.event in (EventKind.CLAIMED, EventKind.DEAD_LETTERED):
            claimed.setdefault(ev.task_id or "", set()).add(ev.lease_token or 0)
        elif ev.event == EventKind.ENQUEUED and ev.task_id is not None:
            enqueued.add(ev.task_id)
        elif ev.event == EventKind.EFFECT_APPLIED:
            applied.add(str(ev.detail.get("key", ev.detail.get("call"))))

    def finding(row_task: str | None, worker: str | None, at: int, detail: str) -> None:
        out.append(Finding(FleetRule.ROW_UNEXPLAINED, row_task, worker, at, detail))

    pages = {page.key: page for page in rows.ledger}
    for page in rows.ledger:
        last = written.get(page.key)
        if last is None:
            finding(
                page.task_id,
                page.writer,
                page.updated_at,
                f"the ledger's row {page.key} has no accepted write in the history",
            )
        elif (last.task_id, last.worker_id, last.fence_token) != (
            page.task_id,
            page.writer,
            page.fence_token,
        ):
            finding(
                page.task_id,
                page.writer,
                page.updated_at,
                f"the ledger's row {page.key} is {page.writer}'s with fence {page.fence_token}; "
                f"its last accepted write in the history is {last.worker_id}'s with fence "
                f"{last.fence_token}",
            )
    for key, ev in written.items():
        if key not in pages:
            finding(
                ev.task_id,
                ev.worker_id,
                ev.at,
                f"the accepted write of {key} (seq {ev.seq}) left no row in the ledger",
            )
    tasks = {row.task_id for row in rows.tasks}
    for row in rows.tasks:
        if row.task_id not in enqueued:
            finding(
                row.task_id,
                None,
                row.updated_at,
                f"the task row {row.task_id} was never enqueued in the history",
            )
        elif row.lease_token > 0 and row.lease_token not in claimed.get(row.task_id, set()):
            finding(
                row.task_id,
                row.owner_id,
                row.updated_at,
                f"the task row {row.task_id} holds lease {row.lease_token}, which no claim "
                f"in the history issued",
            )
    for task in sorted(named - tasks):
        finding(task, None, 0, f"the history names {task}, which has no row in the store")
    for effect in rows.effects:
        if effect.idempotency_key not in applied:
            finding(
                effect.task_id,
                None,
                effect.applied_at,
                f"the effect row {effect.idempotency_key} has no applied effect in the history",
            )
    return out


def _page_rule(ev: EventRow, held: _Current | None) -> list[Finding]:
    """An accepted page must come from the task's current lease, live when it was written."""
    key = str(ev.detail.get("key"))
    if held is None or held.released or held.lease_token != ev.lease_token:
        now = "none" if held is None or held.released else f"lease {held.lease_token}"
        return [
            Finding(
                FleetRule.PAGE_FROM_OLD_LEASE,
                ev.task_id,
                ev.worker_id,
                ev.at,
                f"{key} accepted from lease {ev.lease_token} while the current one is {now}",
            )
        ]
    if held.expires_at is not None and ev.at > held.expires_at:
        return [
            Finding(
                FleetRule.PAGE_FROM_EXPIRED_LEASE,
                ev.task_id,
                ev.worker_id,
                ev.at,
                f"{key} accepted {ev.at - held.expires_at} ms after its lease expired",
            )
        ]
    return []


def save_history(
    path: Path,
    events: Sequence[EventRow],
    check: HistoryCheck,
    *,
    rows: FinalRows | None = None,
    extra: Iterable[dict[str, Any]] = (),
    timing: dict[str, Any] | None = None,
) -> None:
    """The run's history as JSON lines (one event each), then the store's final `rows`
    that `check` compared the events with (so that a check of the file applies every rule
    the live one did), then `extra` lines (the supervisor's signals, the workers' beliefs,
    the screen's frames, each with its kind in "t"), then its verdict as the last line, with
    the run's `timing` (ttl_ms, heartbeat_ms, deadline_ms) so that a replay draws the leases
    as they were."""
    with path.open("w", encoding="utf-8") as f:
        for ev in events:
            line = {
                "seq": ev.seq,
                "at": ev.at,
                "event": ev.event,
                "task": ev.task_id,
                "worker": ev.worker_id,
                "lease_token": ev.lease_token,
                "fence_token": ev.fence_token,
                "reason": ev.reason,
                "detail": ev.detail,
            }
            f.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        for row in rows.lines() if rows is not None else ():
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
        for other in extra:
            f.write(json.dumps(other, ensure_ascii=False, sort_keys=True) + "\n")
        verdict: dict[str, Any] = {
            **(timing or {}),
            # the rows' version: the file holds the store's final rows (even none)
            **({"rows": ROWS_VERSION} if rows is not None else {}),
            "verdict": check.verdict.name.lower(),
            "events": check.events,
            "findings": [
                {
                    "rule": x.rule,
                    "task": x.task_id,
                    "worker": x.worker_id,
                    "at": x.at,
                    "detail": x.detail,
                }
                for x in check.findings
            ],
        }
        f.write(json.dumps(verdict, ensure_ascii=False, sort_keys=True) + "\n")
