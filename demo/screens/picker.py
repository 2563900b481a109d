"""The scenario picker: the bundled scenarios (title and summary in the chosen language)
plus the sandbox."""

from dataclasses import dataclass
from typing import ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.scenarios.format import Scenario, ScenarioError, parse_scenario
from demo.host import Host, host
from demo.i18n import tr
from demo.widgets.cjk_wrap import wrap_text
from demo.widgets.keybar import Hint, KeyBar

SANDBOX_ID = "sandbox"


@dataclass(frozen=True, slots=True)
class Picked:
    """What the picker opened from a run chose: a scenario, or the sandbox (None)."""

    scenario: Scenario | None


def bundled_scenarios() -> list[Scenario]:
    """Every bundled scenario that parses (a broken file is left out, not fatal)."""
    from core.scenarios.library import bundled_files

    out = []
    for f in bundled_files():
        try:
            out.append(parse_scenario(f.read_bytes(), f"scenarios/{f.name}"))
        except ScenarioError:
            continue
    return out


def option_text(title: str, summary: str | None) -> Text:
    text = Text(title, style="bold")
    if summary:
        text.append("\n")
        text.append(summary, style="dim")
    return text


class Wrapped:
    """A title and summary broken into lines by Chinese rules (`cjk_wrap`, as the narration
    is) at whatever width the list draws them: the list's own wrap, Rich's, splits a number
    from its unit ("30 / 秒") and a glossary word in two."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wrapped = wrap_text(self.text, options.max_width)
        wrapped.end = "\n"  # the list counts an option's lines by their line ends
        yield wrapped

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)


class PickerScreen(Screen[Picked | None]):
    """The first screen; or, opened from a run (`back`), the way to another scenario: it
    is dismissed with the choice (the run decides whether to leave), or None on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "language", "Language", tooltip="English / 中文", id="picker.language"),
        Binding("question_mark", "help", "Help", id="picker.help"),
        Binding("q", "quit", "Quit", id="picker.quit"),
        Binding("s", "save", "Save", id="picker.save"),
        Binding("escape", "back", "Back", id="picker.back"),
    ]

    def __init__(self, *, back: bool = False) -> None:
        super().__init__()
        self.scenarios = bundled_scenarios()
        self.back = back

    @property
    def bk_app(self) -> Host:
        return host(self.app)

    def compose(self) -> ComposeResult:
        yield Static("", id="picker-title")
        yield OptionList(id="picker-list")
        yield Static("", id="picker-hint")
        yield KeyBar(id="keybar")

    def on_mount(self) -> None:
        self.fill()
        self.query_one(OptionList).focus()

    def fill(self) -> None:
        lang = self.bk_app.lang
        self.query_one("#picker-title", Static).update(Text(tr("pick_title", lang), style="bold"))
        hint = "pick_hint_back" if self.back else "pick_hint"
        self.query_one("#picker-hint", Static).update(tr(hint, lang))
        last = Hint("esc", tr("back", lang), 3) if self.back else Hint("q", tr("quit", lang), 3)
        self.query_one("#keybar", KeyBar).set_items(
            [
                Hint("⏎", tr("open", lang), 0),
                Hint("l", tr("language", lang), 1),
                Hint("?", tr("help", lang), 2),
                last,
            ]
        )
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        options.clear_options()
        for i, sc in enumerate(self.scenarios):
            options.add_option(
                Option(Wrapped(option_text(sc.title_in(lang), sc.summary_in(lang))), id=str(i))
            )
        options.add_option(
            Option(
                Wrapped(option_text(tr("sandbox", lang), tr("sandbox_summary", lang))),
                id=SANDBOX_ID,
            )
        )
        options.highlighted = highlighted if highlighted is not None else 0

    def action_language(self) -> None:
        self.bk_app.lang = "en" if self.bk_app.lang == "zh" else "zh"

    def on_language_changed(self) -> None:
        self.fill()

    def action_save(self) -> None:
        """`s` saves a run; the picker has none yet, and says so rather than nothing."""
        self.notify(tr("save_picker", self.bk_app.lang), severity="warning", timeout=5)

    def action_help(self) -> None:
        from demo.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.bk_app.lang))

    def action_back(self) -> None:
        """Back to the run the picker was opened from (the first picker has none)."""
        if self.back:
            self.dismiss(None)

    def action_quit(self) -> None:
        """q leaves the app from the first picker; from a run's picker, back to the run
        (whose q asks first when acts would be lost)."""
        if self.back:
            self.dismiss(None)
        else:
            self.app.exit()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chosen = event.option.id
        scenario = None if chosen == SANDBOX_ID or chosen is None else self.scenarios[int(chosen)]
        if self.back:
            self.dismiss(Picked(scenario))
        else:
            self.bk_app.open_session(scenario)
