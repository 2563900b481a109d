"""The main screen's command palette: every control, every act on every worker and waiting
task, every mode and panel, by name, in the chosen language.

A palette entry runs exactly what its key or button runs; an act goes through
`MainScreen.act`, so it forks a playback and is recorded like a click. The controls and the
faults come from the tables in `demo.controls`. The main screen lists this provider, so the
palette knows the screen only as `PaletteScreen`.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from core.engine.config import Mode
from core.engine.vocabulary import TaskStatus
from core.scenarios import glossary
from core.sim.snapshot import Snapshot
from core.sim.spec import TASK_KINDS, WORKER_ACTIONS, Action, WorkerState
from demo.controls import CONTROLS, FAULT_KEY, worker_faults
from demo.i18n import label, mode_description, reason_word, tr, worker_name


@runtime_checkable
class PaletteScreen(Protocol):
    """What the palette runs on the main screen."""

    @property
    def lang(self) -> str: ...

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool: ...

    async def run_action(self, action: str) -> None: ...

    def shown_snapshot(self) -> Snapshot: ...

    def act(self, action: Action) -> None: ...

    def set_mode(self, mode: Mode) -> None: ...

    def explore(self, lang: str) -> None: ...

    def action_enqueue(self, kind: str = ...) -> None: ...

    def action_approve(self, task: str | None = ...) -> None: ...

    def action_reject(self, task: str | None = ...) -> None: ...

    def set_rejected_filter(self, reason: str | None) -> None: ...


@dataclass(frozen=True, slots=True)
class Command:
    title: str
    help: str
    callback: Callable[[], object]


def main_screen_commands(screen: PaletteScreen, lang: str) -> Iterator[Command]:
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
        dead = w.state == WorkerState.DEAD
        for fault, acts in worker_faults(dead=dead, partitioned=w.partitioned):
            if not acts:
                continue
            yield Command(
                f"{label(tr(fault.word, lang), lang)}{name}  [{FAULT_KEY[fault.action]}]",
                tr("palette_fault_help", lang, press=FAULT_KEY[fault.action]),
                partial(screen.act, WORKER_ACTIONS[fault.action](w.id)),
            )
    for mode in Mode:
        yield Command(
            tr("palette_mode", lang, mode=glossary.mode_name(mode.value, lang)),
            mode_description(mode.value, lang),
            partial(screen.set_mode, mode),
        )
    yield Command(tr("explore", lang), tr("tip_explore", lang), partial(screen.explore, lang))
    for kind in TASK_KINDS:
        # the kind in words ("pages into the master ledger"), never its id ("ledger")
        yield Command(
            tr("palette_enqueue", lang, kind=tr(f"kind_{kind}", lang)),
            tr("palette_enqueue_help", lang),
            partial(screen.action_enqueue, kind),
        )
    for t in snap.tasks:
        if t.row.status != TaskStatus.WAITING:
            continue
        named = glossary.task_name(t.task_id, lang)
        waits = tr("palette_waiting", lang, task=named)
        yield Command(
            tr("palette_approve", lang, task=named),
            waits,
            partial(screen.action_approve, t.task_id),
        )
        yield Command(
            tr("palette_reject", lang, task=named),
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


class MainCommands(Provider):
    """The palette's entries for the main screen it was opened on."""

    def _commands(self) -> list[Command]:
        screen = self.screen
        if not isinstance(screen, PaletteScreen):
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
