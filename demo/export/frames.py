"""Play a scenario in the real app, headless, and keep the screen after every step.

The app is driven only by the keys a presenter would press (n, and v at a question), the
way the snapshot tests drive it; after each step the app opens the panel the step is about
by itself. Each frame is the app's own SVG export taken the way they take it; `keys` says
which keys led to each frame, so a test can press them into a fresh app and compare.
"""

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.app import App
from textual.message_pump import MessagePump
from textual.widgets import TabbedContent

from core.scenarios import glossary
from core.scenarios.format import Question, Scenario
from core.scenarios.report import report_lines
from core.scenarios.sentences import expectation_sentence
from core.scenarios.session import Session, StepOutcome
from core.scenarios.twin import session_report
from core.sim.snapshot import SnapshotPart
from core.sim.timeline import TimelineView
from demo.app import BorrowedKeysApp
from demo.controls import TABS
from demo.export import DEFAULT_SIZE
from demo.widgets.narration import step_refusal

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
    # at the end of the script, the run's report as (line, kind) pairs (core/scenarios/report)
    report: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Recording:
    lang: str
    size: tuple[int, int]
    frames: tuple[Frame, ...]


# What a recording says as it goes: its language, the frames taken, and how many it takes.
Progress = Callable[[str, int, int], None]


# Turns of the event loop a screen may take to come to rest after a key or a refresh: a
# step takes a few dozen; this keeps a screen that never rests from hanging a recording.
MAX_TURNS = 1000
MAX_REFRESHES = 50


def _pumps(app: App[int]) -> list[MessagePump]:
    return [app, *app.screen.walk_children(with_self=True)]


async def _quiet(app: App[int]) -> None:
    """Until no message pump of the screen has a message waiting, twice in a row.

    Textual's Pilot waits instead until the process has been idle for 20 ms, several times
    a key: a third of a recording's wall time went to sleeping. This sends the pumps
    nothing (Pilot queues a callback behind each pump's messages): the order in which they
    take their turns stays the app's own, as on a terminal."""
    waited = 0
    for _ in range(MAX_TURNS):
        await asyncio.sleep(0)
        waited = 0 if any(pump.message_queue_size for pump in _pumps(app)) else waited + 1
        if waited == 2:
            return


class _Layouts:
    """How many times the screen has been laid out: Textual says so after each layout."""

    def __init__(self, app: App[int]) -> None:
        self.count = 0
        app.screen.screen_layout_refresh_signal.subscribe(app, self._one, immediate=True)

    def _one(self, _screen: object) -> None:
        self.count += 1


async def _settle(app: App[int], layouts: _Layouts) -> None:
    """The screen at rest: every message handled, and refreshed until a refresh lays out
    nothing and sets nothing off. A step takes a few: a panel's note or the narration is
    laid out, then the panel scrolls or the narration folds to fit it, and is laid out
    again (`MainScreen.refresh_view`). Each refresh is the screen's own, on its timer, as on
    a terminal; a screen with nothing to paint does not wait. The snapshot tests wait as
    long with Pilot: a test compares a frame with a fresh app's, driven by Pilot."""
    for _ in range(MAX_REFRESHES):
        await _quiet(app)
        before = layouts.count
        await app.screen.wait_for_refresh()
        if layouts.count == before and not any(p.message_queue_size for p in _pumps(app)):
            return


async def _press(app: App[int], keys: list[str]) -> None:
    """The keys as a terminal sends them, each handled before the next."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))
        await _quiet(app)


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
    refusal = step_refusal(outcome, lang)
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
    step is the same (a test compares frames with a fresh app's, driven by Pilot and taken
    after the animations).
    `progress` hears of each frame taken, with the number of steps to take."""
    app = BorrowedKeysApp(scenario, open_directly=True, lang=lang, live_clock=False)
    app.animation_level = "none"  # a public setting of Textual's App
    count = len(scenario.steps) if steps is None else min(steps, len(scenario.steps))
    frames: list[Frame] = []
    async with app.run_test(size=size):
        layouts = _Layouts(app)
        await _settle(app, layouts)
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
            await _press(app, keys)
            outcome = session.last_outcome
            assert outcome is not None and outcome.index == index - 1, "the step was played"
            # the app opens the panel the step is about by itself (`StepOutcome.panel`)
            await _settle(app, layouts)
            panel = screen.query_one("#panels", TabbedContent).active
            svg = app.export_screenshot(simplify=True)
            frame = _frame(index, keys, panel, svg, outcome, lang, _timeline(session))
            if index == len(scenario.steps):
                # the end of the run: what broke, the proof, the bill beside the correct twin's
                lines = report_lines(session_report(session), lang)
                frame = dataclasses.replace(frame, report=tuple(lines))
            frames.append(frame)
            if progress is not None:
                progress(lang, index, count)
        app.exit(0)
    return Recording(lang, size, tuple(frames))
