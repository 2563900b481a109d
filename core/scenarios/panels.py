"""Which panel a step is about: the one the app opens after it and the exported page shows.

A step's own `panel` says it first. Otherwise what the step did decides, in the order of
what the room must see: a refusal it checks, the instant belief and truth part, a successor
reading the box by the stairs, then the first page, effect or checkpoint it checks or made.
The app and the export both ask here, so they cannot disagree.
"""

from collections.abc import Collection, Sequence

from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.scenarios.format import Panel, Step
from core.sim.rules import ViolationKind
from core.sim.timeline import BeliefEnd, TimelineView


def _claims_after_a_checkpoint(events: Sequence[EventRow], history: Sequence[EventRow]) -> bool:
    """Whether a claim in this step took over a task that already had a checkpoint."""
    for ev in events:
        if ev.event != EventKind.CLAIMED:
            continue
        if any(
            h.event == EventKind.CHECKPOINT_SAVED and h.task_id == ev.task_id and h.seq < ev.seq
            for h in history
        ):
            return True
    return False


def parted(view: TimelineView | None, since_ms: int) -> bool:
    """Whether belief and truth parted at or after `since_ms`: the store stopped holding a
    lease its worker still believed in. The seed's first lesson is that gap:
    "是别人能不能相信这把钥匙现在确实在你手里". (A stale page accepted later is the Ledger's
    lesson: the books look neat and are wrong.)"""
    if view is None:
        return False
    for row in view.rows:
        for belief in row.beliefs:
            if belief.ended_by in (BeliefEnd.RELEASED, BeliefEnd.KILLED):
                continue  # it let go (or died) with the store: no gap
            lease = row.holds_at(belief.start)
            if lease is None or lease.lease_token != belief.lease_token or lease.end is None:
                continue
            believed_past = belief.end is None or belief.end > lease.end
            if believed_past and lease.end >= since_ms:
                return True
    return False


# Where each broken rule is seen: the harm of a mistake, drawn rather than told.
_HARM_PANELS = {
    ViolationKind.STALE_WRITE_ACCEPTED: Panel.LEDGER,
    ViolationKind.PAGE_WITHOUT_LIVE_LEASE: Panel.LEDGER,
    ViolationKind.DUPLICATE_EFFECT: Panel.EFFECTS,
    ViolationKind.DOUBLE_OWNER: Panel.TIMELINE,
    # a finished task lent out again: the register says it in order, claim after completion
    ViolationKind.RECLAIMED_AFTER_END: Panel.EVENTS,
    ViolationKind.COMPLETED_TWICE: Panel.EVENTS,
    # a holder gone and its lease never ending: the store's bar runs on without it
    ViolationKind.STUCK_TASK: Panel.TIMELINE,
}

# What a Ledger or Effects check expects to find in the step's own events: a page taken, an
# effect applied (or answered from its first call).
_LANDED = {
    Panel.LEDGER: frozenset({EventKind.WRITE_ACCEPTED}),
    Panel.EFFECTS: frozenset({EventKind.EFFECT_APPLIED, EventKind.EFFECT_DEDUPLICATED}),
}

# The panels an expectation's subject is shown in (a refusal counted as none is not one).
_SUBJECT_PANELS = {"rejected": Panel.REJECTED, "ledger": Panel.LEDGER, "effect": Panel.EFFECTS}


def panel_for(
    step: Step,
    events: Sequence[EventRow],
    history: Sequence[EventRow],
    view: TimelineView | None = None,
    since_ms: int = 0,
    broken: Collection[ViolationKind] = (),
) -> Panel | None:
    """The panel a step is about, or None to leave the one on screen.

    `events` are the step's own register lines, `history` all of them; `view` the timeline
    after the step and `since_ms` when the step began (to see belief and truth part);
    `broken` the safety rules this step broke.
    """
    if step.panel is not None:
        return Panel(step.panel)
    # A rule broken in this step is what the room must see first, wherever the script looks:
    # a mistake's harm is "两套互相覆盖的世界", and it is seen where they overlap.
    for rule, panel in _HARM_PANELS.items():
        if rule in broken:
            return panel
    checked = None
    for e in step.expects:
        subject = str(e.subject)
        if subject in _SUBJECT_PANELS and not (subject == "rejected" and e.get("count") == 0):
            checked = _SUBJECT_PANELS[subject]
            break
    kinds = {ev.event for ev in events}
    # The refusal is the lesson: "旧 worker 即使复活，也只能成为“过期知识的携带者”，
    # 无法成为“当前世界的改写者”。"
    if checked is Panel.REJECTED:
        if kinds & REJECTIONS:
            return checked
        # Under a mistake the refusal the step expects may not come: the stale page went into
        # the books, the effect went out, or the call simply held. An empty Rejected table
        # would hide what happened instead ("两套互相覆盖的世界" is seen where the page
        # landed), so what the step did decides, as for a step that checks nothing.
        checked = None
    # The same the other way round: a page or an effect the step expects, refused in this mode.
    if checked in _LANDED and kinds & REJECTIONS and not kinds & _LANDED[checked]:
        checked = None
    if events and parted(view, since_ms):
        return Panel.TIMELINE
    # "Lease 只决定谁能接手任务，Checkpoint 决定接手之后从哪里继续。": a successor's claim
    # is about where it goes on from.
    if _claims_after_a_checkpoint(events, history):
        return Panel.CHECKPOINTS
    if checked is not None:
        return checked
    if any(str(e.subject) == "task" and e.has("checkpoint_step") for e in step.expects):
        return Panel.CHECKPOINTS
    if kinds & REJECTIONS:
        return Panel.REJECTED
    if EventKind.CHECKPOINT_SAVED in kinds:
        return Panel.CHECKPOINTS
    if EventKind.WRITE_ACCEPTED in kinds:
        return Panel.LEDGER
    if kinds & {EventKind.EFFECT_APPLIED, EventKind.EFFECT_DEDUPLICATED}:
        return Panel.EFFECTS
    return None
