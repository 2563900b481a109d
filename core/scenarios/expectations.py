"""The checks of a step's expectations: each subject the file format knows (a task, a worker,
a page, refusals, an effect, violations, a metric) looked up in a snapshot, with what was
found in the file's own spelling and as a sentence the app shows.
"""

from collections.abc import Callable, Iterator
from typing import Any, Final

from core.engine.durations import format_duration
from core.scenarios.format import TIME_KEYS, Expectation, Subject, instant_text
from core.scenarios.glossary import Word, box_contents
from core.scenarios.sentences import expectation_sentence
from core.sim.snapshot import Snapshot


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
