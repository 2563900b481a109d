"""The main screen's interview mode: the room answers by number before `v` reveals, and
guesses which mistake a run shows (a part of `MainScreen`, demo/screens/main.py).
"""

from functools import partial

from demo.i18n import tr
from demo.screens.main_part import MainPart


class Interview(MainPart):
    """Questions, answers, reveals and the guess round."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "guess":
            return self.session.guess is not None
        if action == "answer":
            # a number answers only while a question waits for one; otherwise the key's
            # next binding (its panel) has it
            return self._answer_waits()
        return True

    def _answer_waits(self) -> bool:
        return self.session.awaited is not None

    def action_reveal(self) -> None:
        """Interview mode: the step waits on its question until the presenter reveals it."""
        self._message = None
        self._work(self.session.reveal, self._revealed)

    def _revealed(self, outcome: object) -> None:
        if outcome is None:
            self.notify(tr("nothing_to_reveal", self.lang), timeout=3)
        else:
            self.app.clear_notifications()  # "press v" no longer stands beside the answer
            self.playing = False  # the presenter speaks to the answer before the run goes on
        self.changed()

    def action_answer(self, chosen: int) -> None:
        waiting = self.session.awaited

        def then(verdict: object) -> None:
            if verdict is None and waiting is not None:
                last = len(waiting.choices)
                self.notify(tr("no_such_choice", self.lang, n=chosen, last=last), timeout=3)
            self._answered = True  # the next frame shows what it said: scroll to it
            self.changed()

        self._work(partial(self.session.answer, chosen), then)

    def action_guess(self) -> None:
        """Which mistake is this? The five by number; once guessed, the header names it."""
        from demo.screens.guess import GuessScreen

        round_ = self.session.guess
        if round_ is not None:
            self.app.push_screen(GuessScreen(round_, self.lang), lambda _none: self.changed())

    def _guessing(self) -> bool:
        """A guess round the room has not answered: the mode list would say the answer."""
        round_ = self.session.guess
        if round_ is not None and not round_.revealed:
            self.notify(tr("guess_first", self.lang), timeout=4)
            return True
        return False

    def action_toggle_interview(self) -> None:
        on = not self.session.interview.on
        self.bk_app.interview = on  # the next run opened asks the same way
        self.session.interview.on = on
        if on:
            self.notify(tr("interview_on", self.lang), timeout=4)
        else:
            self.notify(tr("interview_off", self.lang), timeout=3)
        self.changed()
