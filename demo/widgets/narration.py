"""The narration panel in playback: the step's text, step k of N, its checks with ✓ / ✗."""

from rich.text import Text
from textual.widgets import Static

from core.scenarios import glossary
from core.scenarios.format import Question
from core.scenarios.session import Session, StepOutcome
from core.sim.simulation import ActionResult
from demo.i18n import mode_word, operation_word, reason_word, tr


def refusal_text(result: ActionResult, lang: str) -> str:
    """A refused act in the chosen language, from the refusal's own reason and tokens.

    A refusal the store wrote carries its Rejected row (`result.rejection`); other refusals
    (an unknown worker, a task that does not wait) keep the core's message.
    """
    r = result.rejection
    if r is None:
        return tr("refused", lang, msg=result.message)
    from demo.widgets.panels import tokens

    return tr(
        "refusal",
        lang,
        # the story's people by their names in the chosen language (阿澄, not acheng)
        worker=(glossary.person_name(r.worker_id, lang) or r.worker_id) if r.worker_id else "",
        op=operation_word(r.operation, lang),
        task=r.task_id or "",
        reason=reason_word(r.reason, lang),
        its=tokens(r.lease_token, r.fence_token) + (f" {r.key}" if r.key else ""),
        current=tokens(r.current_lease_token, r.current_fence_token) or "-",
    )


def mode_notice(session: Session, lang: str) -> str | None:
    """When the run's mode is not the scenario's own (switched with m), a line saying that
    the narration describes the scenario's own run, so a ✗ below reads as the lesson, not
    as a broken script."""
    if session.scenario is None:
        return None
    own = session.scenario.settings.mode.value
    mode = session.mode.value
    if mode == own:
        return None
    return tr(
        "mode_notice",
        lang,
        mode=mode,
        meaning=mode_word(mode, lang),
        own=own,
        own_meaning=mode_word(own, lang),
    )


def narration_text(session: Session, lang: str, message: str | None = None) -> Text:
    text = Text()
    outcome: StepOutcome | None = session.last_outcome
    n = session.step_count
    if session.is_sandbox:
        text.append(tr("sandbox_note", lang, n=session.acts_count), style="italic")
    else:
        k = session.position
        text.append(tr("step_k_of_n", lang, k=k, n=n), style="bold")
        if session.forked:
            text.append("  ")
            note = "forked_note" if session.dropped_script else "after_script_note"
            text.append(tr(note, lang, n=session.acts_count), style="bold yellow")
        text.append("\n")
        notice = mode_notice(session, lang)
        if notice:
            text.append(notice, style="bold yellow")
            text.append("\n")
        asked = session.question
        if asked is not None:
            _question(text, asked, lang, revealed=False)
        elif k == 0 and session.forked:
            pass  # the script was dropped before its first step: nothing of it to narrate
        elif k == 0:
            text.append(tr("before_start", lang), style="italic")
        elif outcome is not None:
            said = outcome.step.narration(lang)
            if said:
                text.append(said, style="italic")
            elif outcome.step.action is not None:
                text.append(f"→ {outcome.step.action.name}", style="italic dim")
            if outcome.result is not None and not outcome.result.ok:
                text.append("\n")
                refused = refusal_text(outcome.result, lang)
                text.append(refused, style="red")
            elif outcome.result is not None and outcome.result.ignored:
                text.append("\n")
                text.append(tr("ignored", lang, msg=outcome.result.message), style="yellow")
            for check in outcome.checks:
                text.append("\n")
                if check.ok:
                    text.append(" ✓ ", style="bold green")
                else:
                    text.append(" ✗ ", style="bold red")
                text.append(check.expectation.to_toml())
                if not check.ok:
                    text.append(f"  ({check.found})", style="red")
            if outcome.step.question is not None:
                text.append("\n")
                _answer(text, outcome.step.question, lang, said=bool(outcome.step.narration(lang)))
            if k >= n and not session.forked:
                text.append("\n")
                text.append(tr("end_of_script", lang), style="dim")
    if message:
        text.append("\n")
        text.append(message, style="red")
    return text


def _answer(text: Text, question: Question, lang: str, *, said: bool) -> None:
    """A revealed question in one line after the ✓ lines (they must stay in sight on a small
    screen): the right choice, and why only when the step's own narration does not explain."""
    text.append(f"{tr('answer', lang)}: ", style="bold green")
    choices = question.choices_in(lang)
    if choices and question.answer is not None:
        text.append(f"{question.answer}. {choices[question.answer - 1]}", style="bold green")
    why = question.why_in(lang)
    if why and not (said and choices):
        text.append(f" — {why}" if choices else why)


def _question(text: Text, question: Question, lang: str, *, revealed: bool) -> None:
    """Interview mode: the question and its choices, before the step plays."""
    text.append(f"{tr('question', lang)}: {question.text(lang)}", style="bold cyan")
    if not revealed:  # on the question's own line: the narration box may be short
        text.append(f"  {tr('question_hint', lang)}", style="dim")
    choices = question.choices_in(lang)
    for n, choice in enumerate(choices, start=1):
        right = revealed and n == question.answer
        text.append(f"\n  {n}. {choice}", style="bold green" if right else "cyan")
        if right:
            text.append(" ✓", style="bold green")
    if not revealed:
        return
    why = question.why_in(lang)
    if why:
        text.append(f"\n{tr('answer', lang)}: ", style="bold green")
        text.append(why)


class NarrationPanel(Static):
    """Shows the current step; updated after every step, not on every tick."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._shown: Text | None = None

    def show(self, text: Text) -> None:
        if self._shown is not None and text.plain == self._shown.plain:
            return
        self._shown = text
        self.update(text)
