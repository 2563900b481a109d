"""The narration panel in playback: the step's text, step k of N, its checks with ✓ / ✗."""

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from core.scenarios import glossary
from core.scenarios.format import Question
from core.scenarios.interview import Verdict, answerable
from core.scenarios.report import report_lines
from core.scenarios.sentences import expectation_sentence, timing_warnings
from core.scenarios.session import Mark, Session, StepOutcome
from core.scenarios.telling import act_sentence, error_sentence, refusal_sentence, run_stopped
from core.scenarios.twin import session_report
from core.sim.simulation import ActionResult
from demo.i18n import acts_words, label, mode_word, tr
from demo.widgets.cjk_wrap import wrap_text


def refusal_text(result: ActionResult, lang: str) -> str:
    """A refused act in the chosen language, from the refusal's own reason and tokens.

    A refusal the store wrote carries its Rejected row (`result.rejection`); other refusals
    (an unknown worker, a call that never got there) are said from the core's error by name.
    """
    r = result.rejection
    if r is None:
        said = result.message if result.error is None else error_sentence(result.error, lang)
        return tr("refused", lang, msg=said)
    return refusal_sentence(
        worker=r.worker_id,
        task=r.task_id,
        operation=r.operation,
        reason=r.reason,
        lang=lang,
        key=r.key,
        its=(r.lease_token, r.fence_token),
        current=(r.current_lease_token, r.current_fence_token),
    )


def ignored_text(result: ActionResult, lang: str) -> str:
    """An act that had nothing to act on (approve a task that is not waiting), in `lang`:
    the English as the core says it, the Chinese from the core's error by name."""
    said = result.message
    if lang == "zh" and result.error is not None:
        said = error_sentence(result.error, lang)
    return tr("ignored", lang, msg=said)


def mode_notice(session: Session, lang: str) -> str | None:
    """When the run's mode is not the scenario's own (switched with m), a line saying that
    the narration describes the scenario's own run, so a ✗ below reads as the lesson, not
    as a broken script."""
    if session.scenario is None:
        return None
    if session.guess is not None and not session.guess.revealed:
        return None  # the room is guessing which mode this is
    own = session.scenario.settings.mode.value
    mode = session.mode.value
    if mode == own:
        return None
    return tr(
        "mode_notice",
        lang,
        mode=glossary.mode_name(mode, lang),
        meaning=mode_word(mode, lang),
        own=glossary.mode_name(own, lang),
        own_meaning=mode_word(own, lang),
    )


def narration_text(
    session: Session, lang: str, message: str | None = None, *, toml: bool = False
) -> Text:
    """What the narration box says now; `toml` shows each expectation in the file's form
    instead of as a sentence."""
    text = Text()
    outcome: StepOutcome | None = session.last_outcome
    n = session.step_count
    asked = session.question
    if session.is_sandbox:
        text.append(
            tr("sandbox_note", lang, acts=acts_words(session.acts_count, lang)), style="italic"
        )
    else:
        # a question belongs to the step it asks about: "Step 14 of 17" above step 14's
        k = session.position + (1 if asked is not None else 0)
        text.append(tr("step_k_of_n", lang, k=k, n=n), style="bold")
        if session.forked:
            text.append("  ")
            note = "forked_note" if session.dropped_script else "after_script_note"
            text.append(
                tr(note, lang, acts=acts_words(session.acts_count, lang)), style="bold yellow"
            )
        text.append("\n")
        at_end = k >= n and asked is None and outcome is not None and not session.forked
        if session.interview.on and at_end:
            # the score is what the room waits for at the end: first, never folded away
            text.append(score_line(session, lang), style="bold")
            text.append("\n")
        notice = mode_notice(session, lang)
        if notice:
            text.append(notice, style="bold yellow")
            text.append("\n")
        if k <= 1 and session.scenario is not None:
            # a timing rule the file breaks, told where the run starts (a toast says it too)
            for warning in timing_warnings(session.scenario, lang):
                text.append(warning, style="bold yellow")
                text.append("\n")
        if asked is not None:
            _question(text, session, asked, lang)
        elif k == 0 and session.forked:
            pass  # the script was dropped before its first step: nothing of it to narrate
        elif k == 0:
            text.append(tr("before_start", lang), style="italic")
        elif outcome is not None:
            _outcome(text, session, outcome, lang, toml=toml)
            if k >= n and not session.forked:
                text.append("\n")
                text.append(tr("end_of_script", lang), style="dim")
            if k >= n and not session.dropped_script:
                # the script played to its end (time may run on after it): the report
                _report(text, session, lang)
        if session.dropped_script and session.work_over:
            # a fork off the script ends when its work does: the same report, by the same
            # checker, beside its correct twin (the script's steps to the fork, then the
            # presenter's acts, played again in the correct mode)
            text.append("\n\n")
            text.append(tr("fork_over", lang), style="bold")
            _report(text, session, lang)
    if message:
        text.append("\n")
        text.append(message, style="red")
    return text


# How each line of the end-of-run report is written: what broke in red (a folded panel
# keeps the first red sentence in sight), the correct run's figures in green.
_REPORT_STYLES = {
    "title": "bold",
    "anomaly": "bold red",
    "proof": "",
    "line": "",
    "bill": "bold",
    "twin": "bold green",
    "note": "dim",
}


def _report(text: Text, session: Session, lang: str) -> None:
    """The end of the run: what broke, the proof, the bill beside the correct run's."""
    for line, kind in report_lines(session_report(session), lang):
        text.append("\n")
        text.append(line, style=_REPORT_STYLES[kind])


def step_refusal(outcome: StepOutcome, lang: str) -> str | None:
    """What went wrong with a step's own act, said as `play` says it: a step this run cannot
    play ("step 14 cannot run: ..."), or the store's refusal; None when nothing did."""
    if outcome.stopped is not None:
        return run_stopped("step_cannot_run", lang, outcome.stopped, number=outcome.index + 1)
    if outcome.result is not None and not outcome.result.ok:
        return refusal_text(outcome.result, lang)
    return None


def _in_red(line: Text) -> bool:
    """Whether a line of the narration says something went wrong: it is written in red, all
    of it (a refusal, a step this run cannot play, what a failed check found; a ✗ alone is
    not a sentence)."""
    if "red" in str(line.style):
        return True
    text = line.plain.rstrip()
    return bool(text) and any(
        "red" in str(span.style)
        and span.start <= len(text) - len(text.lstrip())
        and span.end >= len(text)
        for span in line.spans
    )


def _failed_check_above(lines: Sequence[Text], at: int) -> int | None:
    """The line where the ✗ check that line `at` (what it found) belongs to begins, if the
    lines just above are one."""
    for i in range(at - 1, max(-1, at - 4), -1):
        head = lines[i].plain.lstrip()
        if head.startswith("✗"):
            return i
        if head[:1] in ("✓", "○") or _in_red(lines[i]):
            return None
    return None


def _outcome(text: Text, session: Session, outcome: StepOutcome, lang: str, *, toml: bool) -> None:
    """The step just played: what it says (or its act), a refusal, its marks, the answer."""
    said = outcome.step.narration(lang)
    if said:
        text.append(said, style="italic")
    elif outcome.step.action is not None:
        text.append(f"→ {act_sentence(outcome.step.action, lang)}", style="italic")
    refused = step_refusal(outcome, lang)
    if refused is not None:
        text.append("\n")
        text.append(refused, style="red")
    elif outcome.result is not None and outcome.result.ignored:
        text.append("\n")
        text.append(ignored_text(outcome.result, lang), style="yellow")
    for mark in session.marks():
        text.append("\n")
        _mark(text, mark, lang, toml=toml)
    if outcome.step.question is not None:
        text.append("\n")
        _answer(text, outcome.step.question, lang)


def _mark(text: Text, mark: Mark, lang: str, *, toml: bool) -> None:
    """One expectation: ✓ / ✗ while the run stands where its step left it (or while it
    still holds); once the run has moved on and it no longer holds, dated and dim."""
    exp = mark.check.expectation
    said = exp.to_toml() if toml else expectation_sentence(exp, lang)
    if mark.now is not None and not mark.now.ok and mark.check.ok:
        # no stale ✓: it held at its step, the panes now say otherwise (a ✗ still false
        # now stays a ✗, with what is found now: dimmed, it would hide this run's harm)
        was = "✓" if mark.check.ok else "✗"
        dated = tr("at_step", lang, k=mark.step, mark=was)
        text.append(f" ○ {dated}" + ("" if dated.endswith("：") else " "), style="dim")
        text.append(said, style="dim")
        return
    if mark.holds:
        text.append(" ✓ ", style="bold green")
        text.append(said)
        return
    text.append(" ✗ ", style="bold red")
    text.append(said)
    check = mark.check if mark.now is None else mark.now
    seen = check.found if toml else glossary.pick(check.seen, lang)
    text.append(f"\n   {label(tr('found', lang), lang)}{seen}", style="red")


def _answer(text: Text, question: Question, lang: str) -> None:
    """A revealed question: the right choice, then why, as the presenter reveals them. (Its
    follow-up is asked in interview mode, before v: here it would push the step's checks
    off a small screen.)"""
    text.append(label(tr("answer", lang), lang), style="bold green")
    right = question.right_choice(lang)
    if right is not None and question.answer is not None:
        text.append(f"{question.answer}. {right}", style="bold green")
    why = question.why_in(lang)
    if why:
        if right is not None:
            text.append("\n")
        text.append(why, style="green")


def _question(text: Text, session: Session, question: Question, lang: str) -> None:
    """The question and its choices, before the step plays. In interview mode, each answer
    the room gave with right or not and why, then the follow-up the same way."""
    interview = session.interview
    given = interview.answers_to(session.position) if interview.on else ()
    waiting = session.awaited
    text.append(label(tr("question", lang), lang) + question.text(lang), style="bold cyan")
    if not given:
        # on the question's own line: the narration box may be short
        text.append(f"  {_hint(waiting, lang)}", style="dim")
    if not given:
        _choices(text, question, lang, None)
        return
    # answered: the room's choice and the right one stay, so the follow-up fits below
    _choices(text, question, lang, given[0].chosen, keep={given[0].chosen, question.answer})
    _verdict(text, given[0], lang)
    follow = question.follow_up
    if follow is not None and answerable(follow):  # an open one is told after v
        text.append("\n")
        text.append(label(tr("follow_up", lang), lang) + follow.text(lang), style="bold cyan")
        if len(given) == 1:
            text.append(f"  {_hint(waiting, lang)}", style="dim")
        _choices(text, follow, lang, given[1].chosen if len(given) > 1 else None)
        if len(given) > 1:
            _verdict(text, given[1], lang)
    if waiting is None:
        text.append("\n")
        text.append(tr("reveal_hint", lang), style="dim")


def _hint(waiting: Question | None, lang: str) -> str:
    if waiting is None:
        return tr("question_hint", lang)
    return tr("answer_hint", lang, n=len(waiting.choices))


def _choices(
    text: Text,
    question: Question,
    lang: str,
    chosen: int | None,
    keep: set[int | None] | None = None,
) -> None:
    for n, choice in enumerate(question.choices_in(lang), start=1):
        if keep is not None and n not in keep:
            continue
        mark = "▸" if n == chosen else " "
        text.append(f"\n{mark} {n}. {choice}", style="bold cyan" if n == chosen else "cyan")


def _verdict(text: Text, verdict: Verdict, lang: str) -> None:
    """Right or not, and why: said as soon as the room has answered."""
    text.append("\n")
    if verdict.right:
        text.append("✓ " + tr("chosen_right", lang), style="bold green")
    else:
        answer = verdict.question.answer
        text.append("✗ " + tr("chosen_wrong", lang, n=answer), style="bold red")
    why = verdict.question.why_in(lang)
    if why:
        text.append(" " + why if lang == "en" else why, style="green" if verdict.right else "")


def score_line(session: Session, lang: str) -> str:
    """How the room did, in the run's language: questions right, follow-ups right."""
    score = session.interview.score(session.steps)
    if not score.follow_ups:
        return tr("interview_score_short", lang, right=score.right, questions=score.questions)
    return tr(
        "interview_score",
        lang,
        right=score.right,
        questions=score.questions,
        follow_right=score.follow_ups_right,
        follow_ups=score.follow_ups,
    )


class NarrationPanel(Static):
    """Shows the current step, wrapped by Chinese rules (`cjk_wrap`) to its width; redrawn
    only when what it says, its width or its fold changed.

    Folded (`fold` lines), a step longer than that shows its first lines and a last one
    saying how many more there are and that `d` opens them: on a small screen the panel
    the step is about stays in sight below it.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._text: Text | None = None
        self._fold: int | None = None
        self._lang = "en"
        self._shown: tuple[str, int, int | None, str] | None = None
        self.hidden_lines = 0  # lines the fold leaves out now (0: the step is whole)

    def show(self, text: Text, *, fold: int | None = None, lang: str = "en") -> None:
        """`fold`: at most this many lines, the last saying what is left out (None: all)."""
        self._text = text
        self._fold = fold
        self._lang = lang
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        text = self._text
        if text is None:
            return
        width = self.content_region.width or self.size.width or 80
        key = (text.plain, width, self._fold, self._lang)
        if self._shown == key:
            return
        self._shown = key
        wrapped = wrap_text(text, width)
        lines = wrapped.split("\n", allow_blank=True)
        fold = self._fold
        if fold is None or len(lines) <= fold:
            self.hidden_lines = 0
            self.update(wrapped)
            return
        room = max(1, fold - 1)
        chosen = list(range(room))
        # What went wrong (a refusal, a step this run cannot play, what a failed check found)
        # is in red, and is the sentence the room must not miss: the first such sentence,
        # whole, takes the place of the last lines kept (the step's first lines as many as
        # still fit before it).
        red = [i for i, line in enumerate(lines) if _in_red(line)]
        if red:
            run = [red[0]]
            while run[-1] + 1 in red and len(run) < room:
                run.append(run[-1] + 1)
            # what a failed check found is no sentence without the check: its ✗ line (wrapped,
            # perhaps, over more than one) comes with it
            check = _failed_check_above(list(lines), red[0])
            if check is not None and red[0] - check + len(run) <= room:
                run = list(range(check, red[0])) + run
            if run[-1] >= room:
                chosen = list(range(room - len(run))) + run
        kept = [lines[i] for i in chosen]
        self.hidden_lines = len(lines) - len(kept)
        folded = Text("\n").join(kept)
        folded.append("\n")
        folded.append(tr("narration_more", self._lang, n=self.hidden_lines), style="bold dim")
        self.update(folded)
