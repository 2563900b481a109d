"""Play a scenario in the real app, headless, and keep the screen after every step.

The app is driven only by the keys a presenter would press (n, v, and 1-6 for a panel), the
way the snapshot tests drive it, and each frame is the app's own SVG export taken the way
they take it; `keys` says which keys led to each frame, so a test can press them into a
fresh app and compare.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from textual.pilot import Pilot

from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.scenarios import glossary
from core.scenarios.format import Question, Scenario, Step
from core.scenarios.sentences import expectation_sentence
from core.scenarios.session import StepOutcome
from demo.app import BorrowedKeysApp
from demo.controls import CONTROLS, TABS
from demo.export import DEFAULT_SIZE
from demo.widgets.narration import refusal_text

# The key that opens each panel, from the one table of keys ("show_tab('tab-rejected')": 3).
PANEL_KEYS: dict[str, str] = {
    m.group(1): c.keys
    for c in CONTROLS
    if (m := re.fullmatch(r"show_tab\('([a-z-]+)'\)", c.action))
}
FIRST_PANEL = TABS[0][0]  # the panel the main screen opens on


@dataclass(frozen=True, slots=True)
class Check:
    """One expectation of a step as the page says it."""

    ok: bool
    sentence: str
    found: str  # what the run had instead, when not ok


@dataclass(frozen=True, slots=True)
class Frame:
    """The screen after `index` steps (0: before the first), with what the step said."""

    index: int
    keys: tuple[str, ...]  # pressed since the previous frame
    panel: str  # the tab on screen
    svg: str
    narration: str | None = None
    refusal: str | None = None
    checks: tuple[Check, ...] = ()
    question: Question | None = None


@dataclass(frozen=True, slots=True)
class Recording:
    lang: str
    size: tuple[int, int]
    frames: tuple[Frame, ...]


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


# The panels an expectation's subject is shown in (a refusal counted as none is not one).
_SUBJECT_PANELS = {"rejected": "tab-rejected", "ledger": "tab-ledger", "effect": "tab-effects"}


def _first_checked_panel(step: Step) -> str | None:
    """The panel of the first expectation that is about a refusal, a page or an effect."""
    for e in step.expects:
        if e.subject in _SUBJECT_PANELS and not (e.subject == "rejected" and e.get("count") == 0):
            return _SUBJECT_PANELS[e.subject]
    return None


def panel_for(step: Step, events: Sequence[EventRow], history: Sequence[EventRow]) -> str | None:
    """The panel a step is about, or None to leave the one on screen.

    The step's own checks say it first: when the first of them that a panel shows is a
    refusal, the Rejected panel. Then a successor's claim of a task with a checkpoint (it
    reads the box by the stairs) shows the Checkpoints panel; then the first checked page,
    effect or refusal its panel, a checked checkpoint the Checkpoints panel; and a step that
    checks none of these shows what it did: a refusal, a checkpoint, a page, an effect.
    """
    checked = _first_checked_panel(step)
    # The refusal is the lesson: "旧 worker 即使复活，也只能成为“过期知识的携带者”，
    # 无法成为“当前世界的改写者”。"
    if checked == "tab-rejected":
        return checked
    # "Lease 只决定谁能接手任务，Checkpoint 决定接手之后从哪里继续。": a successor's claim
    # is about where it goes on from.
    if _claims_after_a_checkpoint(events, history):
        return "tab-checkpoints"
    if checked is not None:
        return checked
    if any(e.subject == "task" and e.has("checkpoint_step") for e in step.expects):
        return "tab-checkpoints"
    kinds = {ev.event for ev in events}
    if kinds & REJECTIONS:
        return "tab-rejected"
    if EventKind.CHECKPOINT_SAVED in kinds:
        return "tab-checkpoints"
    if EventKind.WRITE_ACCEPTED in kinds:
        return "tab-ledger"
    if kinds & {EventKind.EFFECT_APPLIED, EventKind.EFFECT_DEDUPLICATED}:
        return "tab-effects"
    return None


async def _settle(pilot: Pilot[int]) -> None:
    """Wait as the snapshot tests do before their screenshot: every key handled, animations
    (a tab's underline) finished."""
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()


def _frame(
    index: int, keys: list[str], panel: str, svg: str, outcome: StepOutcome | None, lang: str
) -> Frame:
    if outcome is None:
        return Frame(index, tuple(keys), panel, svg)
    step = outcome.step
    said = step.narration(lang)
    if not said and step.action is not None:
        said = f"→ {glossary.action_word(step.action.name, lang)}"
    result = outcome.result
    refusal = refusal_text(result, lang) if result is not None and not result.ok else None
    checks = tuple(
        Check(
            c.ok,
            expectation_sentence(c.expectation, lang),
            "" if c.ok else glossary.pick(c.seen, lang),
        )
        for c in outcome.checks
    )
    return Frame(index, tuple(keys), panel, svg, said, refusal, checks, step.question)


async def record(
    scenario: Scenario,
    lang: str,
    size: tuple[int, int] = DEFAULT_SIZE,
    *,
    steps: int | None = None,
) -> Recording:
    """Play `scenario` (its first `steps` steps, default all) in the app; one frame a step."""
    app = BorrowedKeysApp(scenario, open_directly=True, lang=lang, live_clock=False)
    count = len(scenario.steps) if steps is None else min(steps, len(scenario.steps))
    frames: list[Frame] = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await _settle(pilot)
        screen = app.main_screen
        assert screen is not None, "a scenario opens on the main screen"
        session = screen.session
        panel = FIRST_PANEL
        frames.append(_frame(0, [], panel, app.export_screenshot(simplify=True), None, lang))
        for index in range(1, count + 1):
            step = session.steps[index - 1]
            before = session.last_event_seq
            # interview mode: n puts the question on screen, v reveals it and plays the step
            keys = ["n", "v"] if step.question is not None else ["n"]
            await pilot.press(*keys)
            outcome = session.last_outcome
            assert outcome is not None and outcome.index == index - 1, "the step was played"
            history = session.events(0)
            wanted = panel_for(step, [ev for ev in history if ev.seq > before], history)
            if wanted is not None and wanted != panel:
                panel = wanted
                keys.append(PANEL_KEYS[panel])
                await pilot.press(PANEL_KEYS[panel])
            await _settle(pilot)
            svg = app.export_screenshot(simplify=True)
            frames.append(_frame(index, keys, panel, svg, outcome, lang))
        app.exit(0)
    return Recording(lang, size, tuple(frames))
