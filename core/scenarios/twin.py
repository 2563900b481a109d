"""The correct twin of a run: the same scenario, or the same fork, played again under the
correct mode through the same Session, so the report's correct figures are measured,
never written down ("正确做法" beside the mistake, the same faults with every safety on).
"""

import dataclasses
from collections import OrderedDict
from collections.abc import Hashable

from core.engine.config import Mode
from core.scenarios.format import Scenario
from core.scenarios.report import Bill, RunReport, Twin, bill_of, harm_against, run_report
from core.scenarios.session import Session
from core.sim.rules import MODE_HARM, Harm
from core.sim.simulation import ActionError
from core.sim.snapshot import Snapshot

# Twins already played, by what they replay: a screen asks for the twin on every frame.
_CACHE: "OrderedDict[Hashable, Twin]" = OrderedDict()
_CACHE_SIZE = 32


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


def session_twin(session: Session) -> Twin | None:
    """The correct run of what `session` has played so far: its script steps, then the
    acts recorded after a fork. None when the session's run is the correct one."""
    if session.mode is Mode.CORRECT:
        return None
    settings = dataclasses.replace(session.settings, mode=Mode.CORRECT)
    key = (
        id(session.scenario),
        settings,
        session.position,
        tuple(session.recorded),
        session.lang,
        session.database,
    )
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    twin = Session(
        session.scenario,
        settings=settings,
        mode=Mode.CORRECT,
        lang=session.lang,
        database=session.database,
    )
    try:
        skipped = list(_play(twin, session.position))
        for n, entry in enumerate(session.recorded, start=1):
            try:
                twin.sim.apply(entry.action)
            except ActionError:
                skipped.append(session.position + n)
        result = Twin(bill_of(twin.snapshot()), tuple(skipped))
    finally:
        twin.close()
    _CACHE[key] = result
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return result


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
    value = figures.wasted_steps if harm is Harm.STEPS_DONE_AGAIN else figures.recovery_time_ms
    if value <= 0:
        return None
    bill = Bill(steps_redone=figures.wasted_steps, out_of_reach_ms=figures.recovery_time_ms)
    return harm_against(session.mode, bill, session_twin(session))
