"""The fleet screen of a saved run, drawn again at the moments that matter.

A saved fleet run keeps frames of its screen (what the screen read from the store and the
processes, `core/fleet/history.py`). Here the real fleet screen is run headless with no
fleet behind it and fed those frames instead of the store: at each fault the supervisor
caused, each refused or stale write and the end, it shows the frame read then, opens the
panel that moment is about, and its SVG export is kept, the way a scenario's frames are.
"""

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.fleet.frame import FleetFrame
from core.fleet.history import SavedFrame, SavedRun, merged, shifted
from core.fleet.verdict import FleetRule, HistoryCheck
from core.scenarios.telling import event_sentence
from core.sim.checker import ViolationKind
from demo.export import DEFAULT_SIZE
from demo.screens.fleet import FleetScreen
from demo.widgets.timeline_scale import clock

# The page stops at this many moments at most (evenly chosen, the end always among them):
# each is a screen, about 60 kB on the page.
MAX_MOMENTS = 24
# The findings that are a stale page accepted: a moment that matters.
_STALE = frozenset(
    {
        FleetRule.PAGE_FROM_OLD_LEASE.value,
        FleetRule.PAGE_FROM_EXPIRED_LEASE.value,
        ViolationKind.STALE_WRITE_ACCEPTED.value,
    }
)


class Kind:
    """What a moment is, and the panel the screen opens for it."""

    FAULT = "tab-events"  # the register: the supervisor's line beside the store's
    REFUSED = "tab-rejected"
    STALE = "tab-ledger"  # the page it took
    END = "tab-ledger"


@dataclass(frozen=True, slots=True)
class Moment:
    """An instant the page stops at (the screen's clock), with what happened then."""

    at: int
    said: tuple[str, ...]  # what happened, in words; empty at the end
    panel: str
    end: bool = False


def moments(run: SavedRun, check: HistoryCheck, lang: str) -> list[Moment]:
    """Each fault signal, each refused or stale write, and the end; moments that fall on
    one saved frame of the screen are one (the screen cannot tell them apart)."""
    o = run.origin
    found: list[Moment] = [
        Moment(s.at - o, (event_sentence(s.row(o), lang),), Kind.FAULT) for s in run.signals
    ]
    for ev in run.events:
        if ev.event == EventKind.WRITE_REJECTED:
            found.append(Moment(ev.at - o, (event_sentence(shifted(ev, o), lang),), Kind.REFUSED))
    for f in check.findings:
        if f.rule in _STALE and f.at:
            found.append(Moment(f.at - o, (f"{f.who(lang)}: {f.what(lang)}",), Kind.STALE))
    found.sort(key=lambda m: m.at)
    if len(found) > MAX_MOMENTS - 1:
        n = MAX_MOMENTS - 1
        found = [found[k * len(found) // n] for k in range(n)]
    out: list[Moment] = []
    for m in found:
        last = out[-1] if out else None
        if last is not None and run.frames and run.frame_at(last.at) is run.frame_at(m.at):
            # the later one's panel: a refusal after a resume is what the resume led to
            out[-1] = Moment(last.at, last.said + m.said, m.panel)
        else:
            out.append(m)
    return [*out, Moment(run.end, (), Kind.END, end=True)]


@dataclass(frozen=True, slots=True)
class Shot:
    """The screen at one moment, as the app exported it."""

    moment: Moment
    frame: SavedFrame
    svg: str


class _ReplayApp(App[int]):
    TITLE = "Borrowed Keys"  # as the fleet app's: the title bar of each exported screen
    CSS_PATH = str(Path(__file__).resolve().parent.parent / "app.tcss")

    def __init__(self, screen: FleetScreen) -> None:
        super().__init__()
        self._fleet_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._fleet_screen)


async def _settle(pilot: Pilot[int]) -> None:
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()


def _lines_between(run: SavedRun, after: int | None, upto: int) -> list[EventRow]:
    """The register's lines and the supervisor's signals in (after, upto], screen clock."""
    o = run.origin
    lo = -(10**15) if after is None else after
    events = [e for e in (shifted(ev, o) for ev in run.events) if lo < e.at <= upto]
    signals = [s.row(o) for s in run.signals if lo < s.at - o <= upto]
    return list(merged(events, signals))


async def _record(
    run: SavedRun, check: HistoryCheck, lang: str, size: tuple[int, int]
) -> list[Shot]:
    screen = FleetScreen(
        None,
        lang,
        Path("."),
        live=False,
        config=run.config(),
        on_postgresql=run.on_postgresql,
    )
    app = _ReplayApp(screen)
    app.animation_level = "none"
    shots: list[Shot] = []
    async with app.run_test(size=size) as pilot:
        await _settle(pilot)
        shown: int | None = None
        for moment in moments(run, check, lang):
            saved = run.frame_at(moment.at)
            if saved is None:
                break
            at = saved.at
            fresh = _lines_between(run, shown, at) if shown is None or at > shown else []
            shown = at if shown is None else max(shown, at)
            screen.query_one("#panels", TabbedContent).active = moment.panel
            await _settle(pilot)
            frame = FleetFrame(
                snap=dataclasses.replace(saved.snap, timeline=None),
                pids=saved.pids,
                ours=saved.ours,
                exit_status=saved.exit_status,
                said=dict(saved.said),
                findings=(),
                fresh=tuple(fresh),
                faults=(),
            )
            screen.show_frame(frame)
            await _settle(pilot)
            shots.append(Shot(moment, saved, app.export_screenshot(simplify=True)))
        app.exit(0)
    return shots


def record_fleet(
    run: SavedRun, check: HistoryCheck, langs: Sequence[str], size: tuple[int, int] = DEFAULT_SIZE
) -> dict[str, list[Shot]]:
    """The screen at each moment that matters, in each language (none for a run saved
    without frames)."""
    if not run.frames:
        return {lang: [] for lang in langs}
    return {lang: asyncio.run(_record(run, check, lang, size)) for lang in langs}


def heading(moment: Moment, lang: str) -> str:
    """The moment in words, with its instant."""
    at = clock(max(0, moment.at))
    if moment.end:
        return ("最后，{at}" if lang == "zh" else "At the end, {at}").format(at=at)
    what = ("；" if lang == "zh" else "; ").join(moment.said)
    return ("{at}：{what}" if lang == "zh" else "At {at}: {what}").format(at=at, what=what)
