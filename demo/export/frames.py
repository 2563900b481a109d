"""Play a scenario in the real app, headless, and keep the screen after every step.

The app is driven only by the keys a presenter would press (n, and v at a question), the
way the snapshot tests drive it; after each step the app opens the panel the step is about
by itself. Each frame is the app's own SVG export taken the way they take it; `keys` says
which keys led to each frame, so a test can press them into a fresh app and compare.
"""

from collections.abc import Callable
from dataclasses import dataclass

from textual.pilot import Pilot
from textual.widgets import TabbedContent

from core.scenarios import glossary
from core.scenarios.format import Question, Scenario
from core.scenarios.sentences import expectation_sentence
from core.scenarios.session import Session, StepOutcome
from core.sim.snapshot import SnapshotPart
from core.sim.timeline import TimelineView
from demo.app import BorrowedKeysApp
from demo.controls import TABS
from demo.export import DEFAULT_SIZE
from demo.widgets.narration import refusal_text

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
    # belief against truth at this instant, drawn beside the screen from the same data
    timeline: TimelineView | None = None


@dataclass(frozen=True, slots=True)
class Recording:
    lang: str
    size: tuple[int, int]
    frames: tuple[Frame, ...]


# What a recording says as it goes: its language, the frames taken, and how many it takes.
Progress = Callable[[str, int, int], None]


async def _settle(pilot: Pilot[int]) -> None:
    """Wait as the snapshot tests do before their screenshot: every key handled, animations
    (a tab's underline) finished."""
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()


def _frame(
    index: int,
    keys: list[str],
    panel: str,
    svg: str,
    outcome: StepOutcome | None,
    lang: str,
    timeline: TimelineView | None = None,
) -> Frame:
    if outcome is None:
        return Frame(index, tuple(keys), panel, svg, timeline=timeline)
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
    return Frame(index, tuple(keys), panel, svg, said, refusal, checks, step.question, timeline)


def _timeline(session: Session) -> TimelineView | None:
    return session.snapshot(_TIMELINE).timeline


_TIMELINE: frozenset[SnapshotPart] = frozenset({"timeline"})


async def record(
    scenario: Scenario,
    lang: str,
    size: tuple[int, int] = DEFAULT_SIZE,
    *,
    steps: int | None = None,
    progress: Progress | None = None,
) -> Recording:
    """Play `scenario` (its first `steps` steps, default all) in the app; one frame a step.

    Animations jump to their end (`animation_level`): headless, a tab's sliding underline
    was painted frame by frame for nobody, a fifth of a recording's CPU. The frame after the
    step is the same (a test compares frames with a fresh app's, taken after the animations).
    `progress` hears of each frame taken, with the number of steps to take."""
    app = BorrowedKeysApp(scenario, open_directly=True, lang=lang, live_clock=False)
    app.animation_level = "none"  # a public setting of Textual's App
    count = len(scenario.steps) if steps is None else min(steps, len(scenario.steps))
    frames: list[Frame] = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await _settle(pilot)
        screen = app.main_screen
        assert screen is not None, "a scenario opens on the main screen"
        session = screen.session
        panel = FIRST_PANEL
        shot = app.export_screenshot(simplify=True)
        frames.append(_frame(0, [], panel, shot, None, lang, _timeline(session)))
        if progress is not None:
            progress(lang, 0, count)
        for index in range(1, count + 1):
            step = session.steps[index - 1]
            # interview mode: n puts the question on screen, v reveals it and plays the step
            keys = ["n", "v"] if step.question is not None else ["n"]
            await pilot.press(*keys)
            outcome = session.last_outcome
            assert outcome is not None and outcome.index == index - 1, "the step was played"
            # the app opens the panel the step is about by itself (`StepOutcome.panel`)
            await _settle(pilot)
            panel = screen.query_one("#panels", TabbedContent).active
            svg = app.export_screenshot(simplify=True)
            frames.append(_frame(index, keys, panel, svg, outcome, lang, _timeline(session)))
            if progress is not None:
                progress(lang, index, count)
        app.exit(0)
    return Recording(lang, size, tuple(frames))
