"""The correct twin of a run: the same scenario, or the same fork, played again under the
correct mode through the same Session, so the report's correct figures are measured,
never written down ("正确做法" beside the mistake, the same faults with every safety on).
"""

import dataclasses
import weakref
from dataclasses import dataclass, field

from core.engine.config import Mode
from core.scenarios.format import Scenario
from core.scenarios.report import (
    Bill,
    RunReport,
    Twin,
    bill_of,
    harm_against,
    run_report,
    steps_due_again,
)
from core.scenarios.session import Recorded, Session
from core.sim.rules import MODE_HARM, Harm
from core.sim.simulation import ActionError
from core.sim.snapshot import Snapshot
from core.sim.spec import Action, Advance, SimSettings


@dataclass
class _Live:
    """A session's twin kept open between frames: the script steps it played (and where),
    the acts after them it has applied, and the steps and acts the correct run refused."""

    key: tuple[object, ...]
    twin: Session
    applied: list[Recorded] = field(default_factory=list)
    skipped: tuple[int, ...] = ()
    refused_acts: int = 0
    result: Twin | None = None


# One twin per session, carried forward as its run goes on: a screen asks on every frame,
# and time that runs on (a sandbox, the free play after a script) is only the newest
# stretch of an `advance`, so only that stretch is played again.
_LIVE: "weakref.WeakKeyDictionary[Session, _Live]" = weakref.WeakKeyDictionary()


def _play(twin: Session, steps: int) -> tuple[int, ...]:
    """Play the first `steps` steps of the twin's script, questions revealed; the steps
    whose act does not fit the correct run (the twin goes on without them)."""
    skipped: list[int] = []
    while twin.position < steps:
        outcome = twin.next_step()
        if outcome is None:
            outcome = twin.reveal()
        if outcome is None:
            break
        if outcome.stopped is not None:
            skipped.append(outcome.index + 1)
    return tuple(skipped)


def _carried(live: _Live, recorded: list[Recorded]) -> bool:
    """Bring the twin's acts up to `recorded` if it is what the twin applied plus more (the
    last advance may have grown); False when it is not (an undo, a new fork)."""
    done = live.applied
    if len(recorded) < len(done) or recorded[: max(0, len(done) - 1)] != done[:-1]:
        return False
    todo: list[Action] = []
    if done:
        last, now = done[-1], recorded[len(done) - 1]
        if last != now:
            grown = (
                isinstance(last.action, Advance)
                and isinstance(now.action, Advance)
                and last.at_ms == now.at_ms
                and now.action.by_ms > last.action.by_ms
            )
            if not grown:
                return False
            todo.append(Advance(now.action.by_ms - last.action.by_ms))  # type: ignore[union-attr]
    todo.extend(entry.action for entry in recorded[len(done) :])
    for action in todo:
        try:
            live.twin.sim.apply(action)
        except ActionError:
            live.refused_acts += 1  # an act that does not fit the correct run: it goes on
    live.applied = list(recorded)
    return True


def _new_live(session: Session, key: tuple[object, ...], settings: SimSettings) -> _Live:
    twin = Session(
        session.scenario,
        settings=settings,
        mode=Mode.CORRECT,
        lang=session.lang,
        database=session.database,
    )
    live = _Live(key, twin, skipped=_play(twin, session.position))
    weakref.finalize(session, twin.close)
    return live


def session_twin(session: Session) -> Twin | None:
    """The correct run of what `session` has played so far: its script steps, then the
    acts recorded after a fork (or after the script's end). None when the session's run
    is the correct one."""
    if session.mode is Mode.CORRECT:
        return None
    settings = dataclasses.replace(session.settings, mode=Mode.CORRECT)
    key = (id(session.scenario), settings, session.position, session.lang, session.database)
    live = _LIVE.get(session)
    recorded = list(session.recorded)
    if live is not None and live.key == key and live.applied == recorded and live.result:
        return live.result
    if live is None or live.key != key or not _carried(live, recorded):
        if live is not None:
            live.twin.close()
        live = _new_live(session, key, settings)
        _carried(live, recorded)
        _LIVE[session] = live
    live.result = Twin(bill_of(live.twin.snapshot()), live.skipped, live.refused_acts)
    return live.result


def scenario_twin(scenario: Scenario, lang: str) -> Twin:
    """The correct run of a whole scenario, as `play` plays it to the end."""
    twin = Session(scenario, mode=Mode.CORRECT, lang=lang)
    try:
        skipped = _play(twin, twin.step_count)
        return Twin(bill_of(twin.snapshot()), skipped)
    finally:
        twin.close()


def session_report(session: Session) -> RunReport:
    """The report of the session's run as it stands, beside its correct twin."""
    return run_report(session.mode, session.snapshot(), session.events(0), session_twin(session))


def header_harm(session: Session, snap: Snapshot) -> tuple[Harm, int, int] | None:
    """The mode's harm that is not safety, as the header shows it: its figure now and the
    correct run's to the same point, once this run shows more of it (the twin is played
    only then)."""
    harm = MODE_HARM.get(session.mode)
    if harm is None:
        return None
    figures = snap.metrics
    # the steps due again are read from the ledger, which a frame may have left out (an
    # empty one is read again: the cost of a run before its first page)
    due = 0
    if harm is Harm.STEPS_DONE_AGAIN:
        due = steps_due_again(snap if snap.ledger else session.snapshot())
    bill = Bill(
        steps_redone=figures.wasted_steps, out_of_reach_ms=figures.out_of_reach_ms, steps_due=due
    )
    value = (
        bill.steps_redone + bill.steps_due
        if harm is Harm.STEPS_DONE_AGAIN
        else bill.out_of_reach_ms
    )
    if value <= 0:
        return None
    return harm_against(session.mode, bill, session_twin(session))
