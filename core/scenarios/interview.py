"""Interview mode: the room answers a step's question by its number before the step is played,
is told whether that was right and why, then answers the follow-up the same way; the run ends
with a score.

The answers are kept by step, so stepping back and forth shows them again; a restart forgets
them. The app turns a key into `answer`, and shows what `answers_to` and `score` return.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from core.scenarios.format import Question, Step


@dataclass(frozen=True, slots=True)
class Verdict:
    """One answer given: to which question (the step's or its follow-up), which choice."""

    question: Question
    chosen: int  # counting from 1, as the choices are shown

    @property
    def right(self) -> bool:
        return self.question.is_right(self.chosen)


@dataclass(frozen=True, slots=True)
class Score:
    """How the room did: the questions with choices in the script, and those answered right;
    the same for their follow-ups. A question revealed without an answer is not right."""

    questions: int
    right: int
    follow_ups: int
    follow_ups_right: int


def answerable(question: Question | None) -> bool:
    """A question the room can answer by a key: it has choices and a right one."""
    return question is not None and bool(question.choices) and question.answer is not None


class Interview:
    """The room's answers in one run, by step index; off until the presenter turns it on."""

    def __init__(self, *, on: bool = False) -> None:
        self.on = on
        self._answers: dict[int, list[Verdict]] = {}

    def answers_to(self, index: int) -> tuple[Verdict, ...]:
        """The answers given at step `index`: none, the question's, then the follow-up's."""
        return tuple(self._answers.get(index, ()))

    def waiting(self, index: int, question: Question) -> Question | None:
        """What the next number key answers at step `index`: the question, then its
        follow-up, then nothing."""
        given = self._answers.get(index, [])
        if not given:
            return question if answerable(question) else None
        if len(given) == 1 and answerable(question.follow_up):
            return question.follow_up
        return None

    def answer(self, index: int, question: Question, chosen: int) -> Verdict | None:
        """Record choice `chosen` for what waits at step `index`; None if nothing waits or
        there is no such choice (the key is then not an answer)."""
        target = self.waiting(index, question)
        if target is None or not 1 <= chosen <= len(target.choices):
            return None
        verdict = Verdict(target, chosen)
        self._answers.setdefault(index, []).append(verdict)
        return verdict

    def score(self, steps: Sequence[Step]) -> Score:
        asked = [(i, s.question) for i, s in enumerate(steps) if answerable(s.question)]
        follow = [(i, q) for i, q in asked if q is not None and answerable(q.follow_up)]
        right = sum(1 for i, _q in asked if self._right(i, 0))
        follow_right = sum(1 for i, _q in follow if self._right(i, 1))
        return Score(len(asked), right, len(follow), follow_right)

    def _right(self, index: int, nth: int) -> bool:
        given = self._answers.get(index, [])
        return len(given) > nth and given[nth].right

    def clear(self) -> None:
        self._answers.clear()
