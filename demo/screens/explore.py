"""Explore this mode: every interleaving of a small world, searched in a worker thread,
with a progress bar, and each mistake's shortest counterexample listed to play.

The search is core/search/explore/bfs.py; this screen only starts it, shows its levels as
they finish and opens a chosen counterexample like any scenario.
"""

import asyncio
import threading
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from core.engine.config import Mode
from core.scenarios.format import ScenarioError
from core.scenarios.harm import harm_line
from core.scenarios.library import open_scenario
from core.search.explore.bfs import (
    ENGINE_ERROR,
    Counterexample,
    ExploreParams,
    ExploreReport,
    Level,
)
from core.search.explore.bfs import explore as run_explore
from core.search.explore.story import rule_word, write_counterexamples
from demo.host import host
from demo.i18n import WORDS, mode_word, tr

# Deep enough for every mistake's shortest trace in the default world (the longest is 5).
APP_DEPTH = 5

WORDS.update(
    {
        "explore_title": ("Exploring every interleaving ({meaning})", "穷举所有交错（{meaning}）"),
        "explore_level": (
            "depth {depth}/{bound} · {states:,} states · {rate:,.0f} states/s",
            "深度 {depth}/{bound} · {states:,} 个状态 · 每秒 {rate:,.0f} 个",
        ),
        "explore_none": (
            "No rule broken within {bound} steps ({states:,} states)",
            "{bound} 步之内没有违反任何规则（{states:,} 个状态）",
        ),
        "explore_found": ("{rule} · {length} steps", "{rule} · {length} 步"),
        "explore_crash": (
            "{rule} · {length} steps (not playable)",
            "{rule} · {length} 步（不能播放）",
        ),
        "explore_hint": (
            "Enter plays the chosen trace · Esc closes",
            "回车播放所选路径 · Esc 关闭",
        ),
        "explore_searching": ("searching…", "搜索中…"),
        "explore_unwritable": (
            "Cannot write the traces to {folder}: {why}",
            "无法把路径写进 {folder}：{why}",
        ),
        # the result's line says only what the inputs decide (the rate was the machine's)
        "explore_bounded": (
            "{states:,} states, {transitions:,} transitions: bounded at depth {bound}",
            "{states:,} 个状态、{transitions:,} 次转移：搜到深度 {bound} 为止，未穷尽",
        ),
        "explore_exhausted": (
            "{states:,} states, {transitions:,} transitions: every interleaving (exhausted)",
            "{states:,} 个状态、{transitions:,} 次转移：所有交错都已穷尽",
        ),
    }
)


Found = tuple[ExploreReport, list[Counterexample]]


class ExploreScreen(ModalScreen[None]):
    """The search of one mode; choosing a counterexample plays it on a new main screen.

    The search runs in a thread that never waits for the app: its levels reach the screen
    through the event loop's own queue, its result as the worker's, and `stop_search` (set
    by Esc and whenever the screen goes away) stops it after the state it is expanding, so
    the thread ends at once, files unwritten (`stopped`). `search_done` is set when the
    thread has.
    """

    DEFAULT_CSS = """
    ExploreScreen { align: center middle; }
    #explore-box {
        width: 76; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    #explore-progress { margin: 1 0 0 0; }
    #explore-found { height: auto; max-height: 10; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="explore.close"),
    ]

    def __init__(self, mode: Mode, lang: str, out_dir: Path, *, depth: int = APP_DEPTH) -> None:
        super().__init__()
        self.mode = mode
        self.lang = lang
        self.out_dir = out_dir
        self.params = ExploreParams(mode=mode, depth=depth)
        self.found: list[Counterexample] = []
        self.report: ExploreReport | None = None
        self.levels: list[Level] = []
        self.stopped = False  # the search ended by `stop_search`, before its bound
        self.stop_search = threading.Event()
        self.search_done = threading.Event()

    def compose(self) -> ComposeResult:
        lang = self.lang
        meaning = mode_word(self.mode.value, lang)
        with Vertical(id="explore-box"):
            yield Static(tr("explore_title", lang, meaning=meaning))
            yield ProgressBar(total=self.params.depth, show_eta=False, id="explore-progress")
            yield Static(tr("explore_searching", lang), id="explore-status")
            yield OptionList(id="explore-found")
            yield Static(tr("explore_hint", lang), id="explore-hint")

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        self.run_worker(
            partial(self._search, loop),
            thread=True,
            exclusive=True,
            group="explore",
            exit_on_error=False,
        )

    def on_unmount(self) -> None:
        self.stop_search.set()

    # -- the search, on its own thread ----------------------------------------------------------

    def _search(self, loop: asyncio.AbstractEventLoop) -> Found | None:
        """Run the search; None when stopped. It hands each level to the app's loop without
        waiting (`call_from_thread` would wait, and an app shutting down never answers)."""

        def level(lv: Level) -> None:
            if not self.stop_search.is_set():
                loop.call_soon_threadsafe(self._show_level, lv)

        try:
            report = run_explore(self.params, on_level=level, stop=self.stop_search.is_set)
            if report.stopped or self.stop_search.is_set():
                self.stopped = report.stopped
                return None
            found = write_counterexamples(self.params, report.counterexamples, self.out_dir)
            return report, found
        finally:
            self.search_done.set()

    # -- back on the app's thread ---------------------------------------------------------------

    def _show_level(self, lv: Level) -> None:
        if self.stop_search.is_set() or not self.is_attached:
            return
        self.levels.append(lv)
        rate = lv.states / lv.elapsed_s if lv.elapsed_s > 0 else 0.0
        self.query_one(ProgressBar).update(progress=lv.depth)
        status = tr(
            "explore_level",
            self.lang,
            depth=lv.depth,
            bound=self.params.depth,
            states=lv.states,
            rate=rate,
        )
        self.query_one("#explore-status", Static).update(status)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "explore" or self.stop_search.is_set():
            return
        if event.state is WorkerState.SUCCESS and worker.result is not None:
            report, found = worker.result
            self._show_result(report, found)
        elif event.state is WorkerState.ERROR:
            # the search itself is tested; what fails here is the out folder (full, read-only)
            error = worker.error
            why = error.strerror if isinstance(error, OSError) and error.strerror else error
            line = tr("explore_unwritable", self.lang, folder=self.out_dir, why=why)
            self.query_one("#explore-status", Static).update(line)

    def _show_result(self, report: ExploreReport, found: list[Counterexample]) -> None:
        self.report = report
        self.found = found
        self.query_one(ProgressBar).update(progress=self.params.depth)
        done = "explore_exhausted" if report.exhausted else "explore_bounded"
        line = tr(
            done,
            self.lang,
            states=report.states,
            transitions=report.transitions,
            bound=self.params.depth,
        )
        self.query_one("#explore-status", Static).update(line)
        options = self.query_one(OptionList)
        options.clear_options()
        if not found:
            none = tr("explore_none", self.lang, bound=self.params.depth, states=report.states)
            options.add_option(Option(none, disabled=True))
            harm = harm_line(self.params.mode, self.lang)
            if harm is not None:  # "no rule broken" alone would read as a pass
                options.add_option(Option(harm, disabled=True))
            return
        for i, c in enumerate(found):
            key = "explore_crash" if c.path is None else "explore_found"
            label = tr(key, self.lang, rule=rule_word(c.rule, self.lang), length=c.length)
            options.add_option(Option(label, id=str(i), disabled=c.path is None))
        options.highlighted = 0  # the shortest first, ready for Enter
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        index = event.option.id
        if index is None:
            return
        chosen = self.found[int(index)]
        if chosen.path is None or chosen.rule == ENGINE_ERROR:
            return
        try:
            scenario = open_scenario(chosen.path)
        except ScenarioError as exc:
            self.notify(exc.in_language(self.lang), severity="error")
            return
        self.dismiss()
        host(self.app).open_session(scenario)

    def action_close(self) -> None:
        # Not `_closed`: that name is Textual's own (a message pump's "I am closed"), and
        # setting it before dismissing left the screen's removal waiting for ever.
        self.stop_search.set()
        self.dismiss()


def open_explore(main: Screen[Any], mode: Mode, lang: str) -> None:
    """Push the Explore screen over `main`, for the mode the session runs now; its files go
    where the app saves (`s`), in a folder of their own."""
    saves = getattr(main.app, "save_dir", None)
    out = (Path(saves) if saves is not None else Path.cwd()) / "explore"
    main.app.push_screen(ExploreScreen(mode, lang, out))
