"""The notes over the Ledger, the Rejected table and the Checkpoints are brought up to date
every refresh; a note whose text did not change gives Textual nothing to do, and one whose
lines did not change asks for no new layout of the screen (each one cost a whole layout,
which doubled a refresh)."""

from textual.app import App, ComposeResult
from textual.visual import VisualType

from demo.widgets.panels import Note

Update = tuple[str, bool]


class Spied(Note):
    updates: list[Update]

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        self.updates.append((str(content), layout))
        super().update(content, layout=layout)


class OneNote(App[None]):
    def compose(self) -> ComposeResult:
        note = Spied()
        note.updates = []
        yield note


async def test_a_note_draws_again_only_what_changed() -> None:
    from rich.text import Text

    app = OneNote()
    async with app.run_test(size=(40, 10)) as pilot:
        note = app.query_one(Spied)
        note.say(None)
        await pilot.pause()
        assert not note.display
        note.updates.clear()
        note.say(None)  # still nothing to say: already hidden
        assert note.updates == []

        note.say(Text("The books break at page 3."))
        await pilot.pause()
        assert note.display and note.updates
        note.updates.clear()
        note.say(Text("The books break at page 3."))  # the same words: nothing to do
        await pilot.pause()
        assert note.updates == []

        note.say(Text("The books break at page 4."))  # new words, still one line
        assert note.updates == [("The books break at page 4.", False)]
        note.updates.clear()
        longer = "The books break at page 4, where two holders' worlds meet."
        note.say(Text(longer))  # a second line: its height changes
        assert len(note.updates) == 1 and note.updates[0][1] is True
        await pilot.pause()
        assert note.size.height == 2

        note.updates.clear()
        note.say(None)
        await pilot.pause()
        assert not note.display and note.updates == [("", True)]
