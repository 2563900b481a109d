"""The main screen's keys for the run as a whole: another scenario, another mode, the
explorer, the language, help, saving, quitting (a part of `MainScreen`,
demo/screens/main.py).
"""

import os
from functools import partial
from typing import TYPE_CHECKING

from core.engine.config import Mode
from core.scenarios import glossary
from demo.i18n import tr
from demo.saves import MAX_SAVES, SaveLimitReached
from demo.screens.main_part import MainPart
from demo.screens.session_runner import TranscriptSaved

if TYPE_CHECKING:
    from demo.screens.picker import Picked


class Runs(MainPart):
    """The run opened, switched, saved or left."""

    def action_open_scenario(self) -> None:
        """Another scenario, from the picker, without leaving the app; Esc comes back."""
        from demo.screens.picker import Picked, PickerScreen

        def picked(choice: Picked | None) -> None:
            if choice is not None:
                self._discard_then(tr("open_other", self.lang), partial(self._open, choice))

        self.app.push_screen(PickerScreen(back=True), picked)

    def _open(self, choice: "Picked") -> None:
        app = self.bk_app
        self.app.pop_screen()  # this run ends with its screen (on_unmount closes it)
        app.open_session(choice.scenario)

    def action_choose_mode(self) -> None:
        """The modes in a list, the one `m` used to switch to highlighted."""
        from demo.screens.modes import ModeScreen

        if self._guessing():
            return
        session = self.session
        own = session.scenario.settings.mode if session.scenario is not None else None
        screen = ModeScreen(session.mode, session.next_mode(), own, self.lang)

        def chosen(mode: Mode | None) -> None:
            if mode is not None:
                self.set_mode(mode)

        self.app.push_screen(screen, chosen)

    def set_mode(self, mode: Mode) -> None:
        """The run in another mode, replayed to the step it stood at (the Session decides
        how far the new mode lets it go, and the toast says so)."""
        if self._guessing():
            return
        session = self.session
        was = session.position

        def switched(reached: object) -> None:
            assert isinstance(reached, int)
            lang = self.lang
            meaning = glossary.mode_word(mode.value, lang).replace("`", "")
            if was == 0:
                said = tr("mode_from_start", lang, meaning=meaning)
            elif reached == was:
                said = tr("mode_kept", lang, meaning=meaning, k=was)
            else:
                said = tr("mode_cut", lang, meaning=meaning, k=reached, was=was, next=reached + 1)
            self.notify(said, timeout=6)
            self.changed()

        def switch() -> None:
            self._message = None
            self.playing = False
            self._work(partial(session.set_mode, mode, keep_step=True), switched)
            self.changed()

        self._discard_then(tr("mode", self.lang), switch)

    def explore(self, lang: str) -> None:
        """Explore this mode: every interleaving of a small world, on a screen of its own."""
        from demo.screens.explore import open_explore  # the search loads when it is asked for

        if self._guessing():
            return
        open_explore(self, self.session.mode, lang)

    def action_language(self) -> None:
        self.bk_app.lang = "en" if self.lang == "zh" else "zh"

    def on_language_changed(self) -> None:
        """Called by the app after a language switch."""
        self.session.lang = self.lang  # the script's next pages are written in it
        self.relabel()
        seen = self._rejections_seen
        self._generation = 0  # rewrite the event log in the new language
        self.runner.forget_events()
        self.refresh_view(force=True)
        # the same run: rejections already looked at stay seen
        self._rejections_seen = max(seen, self._rejections_seen)

    def action_help(self) -> None:
        from demo.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))

    def action_save(self) -> None:
        """Save the run: the screenshot now, the transcript read and the files written by
        the session's runner (on its thread on PostgreSQL: the whole transcript comes over
        the network); the toast once they are written (`TranscriptSaved`)."""
        try:
            write = self.bk_app.prepare_save(self.session)
        except SaveLimitReached:
            self.notify(tr("save_limit", self.lang, n=MAX_SAVES), severity="warning")
            return
        self.runner.save(write)

    def on_transcript_saved(self, message: TranscriptSaved) -> None:
        paths, error = message.paths, message.error
        if isinstance(error, OSError):  # a folder one cannot write, a full disk: one line
            self.notify(tr("save_failed", self.lang, why=error), severity="warning", timeout=8)
            return
        if error is not None:
            raise error
        folder = f"{paths[0].parent}{os.sep}"
        roles = ("saved_transcript", "saved_screenshot", "saved_scenario")
        names = "\n".join(
            f"  {p.name}  ({tr(role, self.lang)})" for p, role in zip(paths, roles, strict=True)
        )
        self.notify(tr("saved", self.lang, folder=folder, names=names), timeout=8)
        self.changed()

    def action_quit(self) -> None:
        self._discard_then(tr("quit", self.lang), self.app.exit)
