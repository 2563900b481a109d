"""The main screen's command palette: every control, every act on every worker and waiting
task, every mode and panel, by name, in the chosen language.

A palette entry runs exactly what its key or button runs; an act goes through
`MainScreen.act`, so it forks a playback and is recorded like a click. The controls come
from the one table in `demo.controls`.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from core.engine.config import Mode
from core.engine.vocabulary import TaskStatus
from core.sim.spec import TASK_KINDS, WORKER_ACTIONS, WorkerState
from demo.controls import CONTROLS, FAULT_KEY
from demo.i18n import WORDS, mode_description, reason_word, tr, worker_name
from demo.screens.explore import open_explore

if TYPE_CHECKING:
    from demo.screens.main import MainScreen

FAULTS = ("freeze_heartbeat", "stall", "kill", "resume", "restart", "partition", "heal")
FAULT_WORDS = {"restart": "restart_worker"}


@dataclass(frozen=True, slots=True)
class Command:
    title: str
    help: str
    callback: Callable[[], object]


def main_screen_commands(screen: "MainScreen", lang: str) -> Iterator[Command]:
    """Every entry of the palette, in the order it lists them."""
    for c in CONTROLS:
        if c.palette is None:
            continue
        yield Command(
            c.palette_title(lang),
            tr(c.tip, lang),
            partial(screen.call_later, screen.run_action, c.action),
        )
    snap = screen.shown_snapshot()  # the frame on screen: no store call on the loop
    for w in snap.workers:
        name = worker_name(w.id, lang)
        for fault in FAULTS:
            if fault == "heal" and not w.partitioned:
                continue
            if fault == "partition" and w.partitioned:
                continue
            if (fault == "restart") != (w.state == WorkerState.DEAD):
                continue
            yield Command(
                f"{tr(FAULT_WORDS.get(fault, fault), lang)}: {name}  [{FAULT_KEY[fault]}]",
                tr("palette_fault_help", lang, press=FAULT_KEY[fault]),
                partial(screen.act, WORKER_ACTIONS[fault](w.id)),
            )
    for mode in Mode:
        yield Command(
            tr("palette_mode", lang, mode=mode.value),
            mode_description(mode.value, lang),
            partial(screen.set_mode, mode),
        )
    yield Command(tr("explore", lang), tr("tip_explore", lang), partial(_explore, screen, lang))
    for kind in TASK_KINDS:
        yield Command(
            tr("palette_enqueue", lang, kind=kind),
            tr(f"kind_{kind}", lang) if f"kind_{kind}" in WORDS else kind,
            partial(screen.action_enqueue, kind),
        )
    for t in snap.tasks:
        if t.row.status != TaskStatus.WAITING:
            continue
        waits = tr("palette_waiting", lang, task=t.task_id)
        yield Command(
            tr("palette_approve", lang, task=t.task_id),
            waits,
            partial(screen.action_approve, t.task_id),
        )
        yield Command(
            tr("palette_reject", lang, task=t.task_id),
            waits,
            partial(screen.action_reject, t.task_id),
        )
    reasons = sorted({r.reason for r in snap.rejections})
    for reason in reasons:
        yield Command(
            tr("palette_filter", lang, reason=reason_word(reason, lang)),
            tr("palette_filter_help", lang),
            partial(screen.set_rejected_filter, reason),
        )
    if reasons:
        yield Command(
            tr("palette_filter_all", lang),
            tr("palette_filter_help", lang),
            partial(screen.set_rejected_filter, None),
        )


def _explore(screen: "MainScreen", lang: str) -> None:
    open_explore(screen, screen.session.mode, lang)


class MainCommands(Provider):
    """The palette's entries for the main screen it was opened on."""

    def _commands(self) -> list[Command]:
        from demo.screens.main import MainScreen

        screen = self.screen
        if not isinstance(screen, MainScreen):
            return []
        return list(main_screen_commands(screen, screen.lang))

    async def discover(self) -> Hits:
        for c in self._commands():
            yield DiscoveryHit(c.title, c.callback, help=c.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for c in self._commands():
            score = matcher.match(c.title)
            if score > 0:
                yield Hit(score, matcher.highlight(c.title), c.callback, text=c.title, help=c.help)
