"""Textual's own words in the command palette, in the app's language: its search box and
its system commands (quit, keys, a screenshot), for both apps.

Light on purpose: the app imports it before its first frame, so it reads only Textual and
the word tables (the palette's providers, demo.commands, come with the screens).
"""

from collections.abc import Iterable
from typing import Any, cast

from textual.app import App, SystemCommand
from textual.command import CommandPalette
from textual.screen import Screen

from demo.i18n import tr


class SpokenPalette(App[int]):
    """An app whose command palette and Textual's own commands in it (quit, keys, a
    screenshot) are said in the app's language: a Chinese screen's palette held "Search for
    commands…", "Theme" and "Maximize". Theme and maximize are left out, not translated:
    neither is part of a walkthrough, and a theme changed mid-talk changes every colour
    the lesson points at."""

    lang: str

    def action_command_palette(self) -> None:
        if self.use_command_palette and not CommandPalette.is_open(cast(Any, self)):
            placeholder = tr("palette_search", self.lang)
            self.push_screen(CommandPalette(placeholder=placeholder, id="--command-palette"))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        lang = self.lang
        yield SystemCommand(tr("sys_quit", lang), tr("sys_quit_help", lang), self.action_quit)
        if screen.query("HelpPanel"):
            yield SystemCommand(
                tr("sys_keys", lang), tr("sys_keys_hide", lang), self.action_hide_help_panel
            )
        else:
            yield SystemCommand(
                tr("sys_keys", lang), tr("sys_keys_show", lang), self.action_show_help_panel
            )
        yield SystemCommand(
            tr("sys_screenshot", lang),
            tr("sys_screenshot_help", lang),
            lambda: self.set_timer(0.1, self.deliver_screenshot),
        )
