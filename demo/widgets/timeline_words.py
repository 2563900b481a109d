"""The timeline's words: its glyphs and the legend that says what each means, and the
sentences under the panel (each worker's lease as the store holds it and as the worker
believes it, two live leases at once, a write's token against the newest), in the screen's
language; shared with the exported page's drawing, so the page and the screen say the same.
"""

from core.engine.people import called
from core.scenarios import glossary
from core.sim.timeline import (
    BeliefBar,
    BeliefEnd,
    Call,
    CallOutcome,
    LeaseBar,
    LeaseEnd,
    Overlap,
    WorkerRow,
)
from demo.i18n import tr
from demo.widgets.timeline_scale import clock, span_words

# The glyphs, one cell each, and what each means (the legend's order).
STORE = "█"
FUTURE = "░"
BELIEF = "▒"
DEADLINE = "┊"
EXPIRY = "┃"
BEAT = "♥"
LOST = "✗"
OK = "✓"
REFUSED = "✕"
STALE = "!"
UNDELIVERED = "~"
NOW = "│"
FENCE = "━"  # the store lane: the newest fence token issued, as a step line
ARROW = "▼"  # a write arriving at the store
SHAFT = "┆"  # its way down from the writer's row
OVERLAP_STYLE = "bold red"


def who(worker_id: str, lang: str) -> str:
    return called(worker_id, lang)


def refusal_phrase(reason: str | None, mine: int | None, newest: int | None, lang: str) -> str:
    """Why a call was refused, as a phrase: "fence token 1 behind 2"."""
    if reason == "fenced":
        if mine is not None and newest is not None:
            return tr("tl_why_fenced", lang, mine=mine, newest=newest)
        return tr("tl_why_fenced_plain", lang)
    if reason in ("superseded", "expired", "not_running", "partitioned"):
        return tr(f"tl_why_{reason}", lang)
    return glossary.reason_word(reason, lang) if reason else ""


def _learned(row: WorkerRow, belief: BeliefBar, lang: str) -> str:
    if belief.ended_by is BeliefEnd.REFUSED:
        call = next(
            (
                c
                for c in row.calls
                if c.at == belief.end
                and c.outcome is CallOutcome.REFUSED
                and c.lease_token == belief.lease_token
            ),
            None,
        )
        op = tr(f"tl_op_{call.operation.value}", lang) if call is not None else ""
        why = refusal_phrase(
            belief.reason,
            call.fence_token if call else None,
            call.current_fence_token if call else None,
            lang,
        )
        return tr("tl_learn_refused", lang, op=op, why=why)
    assert belief.ended_by is not None
    return tr(f"tl_learn_{belief.ended_by.value}", lang)


def lease_of(row: WorkerRow, belief: BeliefBar) -> LeaseBar | None:
    return next(
        (
            lease
            for lease in row.leases
            if lease.task_id == belief.task_id and lease.lease_token == belief.lease_token
        ),
        None,
    )


def lease_name(lease: LeaseBar | BeliefBar, lang: str) -> str:
    """ "lease 2" / "租约号 2": the token is what tells two leases of a task apart."""
    return f"{glossary.token_word('lease', lang)} {lease.lease_token}"


def worker_sentence(row: WorkerRow, now: int, lang: str) -> str | None:
    """What the store holds for this worker and what it believes, in one sentence (about its
    latest lease); None for a worker that never held one."""
    if not row.beliefs:
        return None
    belief = row.beliefs[-1]
    lease = lease_of(row, belief)
    parts = []
    name = lease_name(belief, lang)
    person = who(row.worker_id, lang)
    if lease is not None:
        if lease.end is None:
            if lease.expires_at is None:
                parts.append(tr("tl_store_open_forever", lang, lease=name, who=person))
            else:
                until = clock(lease.expires_at)
                parts.append(tr("tl_store_open", lang, lease=name, until=until, who=person))
        elif lease.ended_by is LeaseEnd.OVERRIDDEN and lease.expires_at is not None:
            # not an end: a second live lease beside it
            until = clock(lease.expires_at)
            at = clock(lease.end)
            parts.append(tr("tl_store_overridden", lang, lease=name, at=at, until=until))
        else:
            assert lease.ended_by is not None
            why = tr(f"tl_end_{lease.ended_by.value}", lang)
            parts.append(tr("tl_store_ended", lang, lease=name, at=clock(lease.end), why=why))
    if belief.end is None:
        parts.append(tr("tl_believes_still", lang, who=person))
    else:
        learned = _learned(row, belief, lang)
        at = clock(belief.end)
        parts.append(tr("tl_believed_until", lang, who=person, at=at, how=learned))
    gap = gap_ms(row, belief, now)
    if gap > 0:
        parts.append(tr("tl_gap", lang, span=span_words(gap, lang), who=person))
    stale = sum(1 for c in row.calls if c.outcome is CallOutcome.STALE)
    if stale:
        parts.append(
            tr("tl_stale_call", lang, who=person)
            if stale == 1
            else tr("tl_stale_calls", lang, n=stale, who=person)
        )
    return tr("tl_sentence", lang, who=person, parts=tr("tl_join", lang).join(parts))


def gap_ms(row: WorkerRow, belief: BeliefBar, now: int) -> int:
    """How long the worker believed `belief` while the store no longer held it."""
    lease = lease_of(row, belief)
    if lease is None or lease.end is None:
        return 0
    if lease.ended_by is LeaseEnd.OVERRIDDEN:
        return 0  # by the store's clock it was live: the harm is the second lease, not a gap
    believed_until = now if belief.end is None else belief.end
    return max(0, believed_until - lease.end)


def overlap_sentence(overlap: Overlap, now: int, lang: str) -> str:
    """Two live leases at once, said: whose, from when to when, and the store's own expiry."""
    end = now if overlap.end is None else overlap.end
    words = {
        "first": who(overlap.older_worker, lang),
        "second": who(overlap.newer_worker, lang),
        "old": overlap.older_lease_token,
        "new": overlap.newer_lease_token,
        "start": clock(overlap.start),
        "end": clock(end),
        "span": span_words(end - overlap.start, lang),
        "until": "—" if overlap.older_live_until is None else clock(overlap.older_live_until),
    }
    key = "tl_overlap_now" if overlap.end is None else "tl_overlap"
    return tr(key, lang, **words) + ("." if lang == "en" else "。")


def write_words(call: Call, lang: str) -> str:
    """A write's token against the newest issued for its task: "1 < 2: refused"."""
    mine = call.fence_token
    newest = call.current_fence_token or call.newest_fence_token
    if call.outcome is CallOutcome.LOST:
        return tr("tl_write_lost", lang, mine=mine)
    if newest is None or mine is None or mine >= newest:
        if call.outcome is CallOutcome.REFUSED:
            return tr("tl_write_refused", lang, mine=mine, newest=newest)
        # accepted, or stale though its token was the newest (its lease was not live)
        return tr("tl_write_accepted", lang, mine=mine)
    key = "tl_write_refused" if call.outcome is CallOutcome.REFUSED else "tl_write_stale"
    return tr(key, lang, mine=mine, newest=newest)


def write_style(call: Call) -> str:
    return {
        CallOutcome.ACCEPTED: "green",
        CallOutcome.REFUSED: "bold yellow",
        CallOutcome.STALE: "bold white on red",
    }.get(call.outcome, "dim")


def legend_items(lang: str) -> list[tuple[str, str, str]]:
    """(glyph, style, words) of each mark, in the order the legend shows them."""
    return [
        (STORE, "bold", tr("tl_legend_store", lang)),
        (FUTURE, "dim", tr("tl_legend_future", lang)),
        (BELIEF, "", tr("tl_legend_belief", lang)),
        (BELIEF, "bold red", tr("tl_legend_gap", lang)),
        (DEADLINE, "yellow", tr("tl_legend_deadline", lang)),
        (EXPIRY, "bold yellow", tr("tl_legend_expiry", lang)),
        (BEAT, "green", tr("tl_legend_beat", lang)),
        (LOST, "bold yellow", tr("tl_legend_lost", lang)),
        (OK, "green", tr("tl_legend_ok", lang)),
        (REFUSED, "bold yellow", tr("tl_legend_refused", lang)),
        (STALE, "bold white on red", tr("tl_legend_stale", lang)),
        (UNDELIVERED, "dim", tr("tl_legend_undelivered", lang)),
        (STORE, OVERLAP_STYLE, tr("tl_legend_overlap", lang)),
        (ARROW, "green", tr("tl_legend_write", lang)),
        (NOW, "bold", tr("tl_legend_now", lang)),
    ]


def task_words(task_id: str, lang: str) -> str:
    """A task as a store lane is named: its id, or on a Chinese screen its name."""
    return glossary.task_name(task_id, lang)
