"""An expectation as a sentence an audience reads, in English or Chinese.

`{ rejected = "fenced", worker = "acheng", count = 1 }` is the file's form; on screen (and
in anything exported for people) it reads "Acheng was refused once: fenced" /
"阿澄被拒收一次：围栏令牌落后". The words are the glossary's (names, statuses, states,
reasons, violations); the sentence forms are below. The TOML form stays what the file
holds, and the app shows it on demand.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from core.engine.durations import format_clock, format_duration
from core.engine.people import called
from core.engine.records import LedgerRow
from core.scenarios import glossary
from core.scenarios.format import Expectation, ExpectValue, Scenario
from core.scenarios.glossary import BOOKS, SEEN, Word, ledger_value, page_words
from core.scenarios.telling import spaced, span_words, task_words
from core.sim.books import Seam, check_books, figures, late_pages, page_step, refused_page
from core.sim.snapshot import EffectCall, Snapshot
from core.sim.spec import Action, Advance
from core.sim.timeline import Overlap

FORMS: Final[dict[str, Word]] = {
    # a task: "{task} is running, held by Acheng, fence token 2"
    "task_status": ("{task} is {status}", "{task} {status}"),
    "task_head": ("{task}:", "{task}："),
    "task_owner": ("held by {who}", "由{who}持有"),
    # a finished task's owner_id keeps who finished it: nobody holds a done task
    "task_done_by": ("finished by {who}", "由{who}完成"),
    "task_no_owner": ("held by nobody", "无人持有"),
    "task_attempt": ("attempt {n}", "第 {n} 次尝试"),
    "task_lease_token": ("lease token {n}", "租约号 {n}"),
    "task_fence_token": ("fence token {n}", "围栏令牌 {n}"),
    "task_checkpoint_step": ("checkpoint at step {n}", "检查点在第 {n} 步"),
    "task_no_checkpoint": ("no checkpoint", "还没有检查点"),
    "task_box": ("its newest checkpoint holds {box}", "最新的检查点里是 {box}"),
    "task_expires_at": ("lease ends at {at}", "租约 {at} 到期"),
    "task_renew_deadline": ("renew by {at}", "须在 {at} 前续约"),
    "task_last_heartbeat_at": ("last heartbeat at {at}", "上次心跳在 {at}"),
    "task_no_expires_at": ("no lease end", "没有到期时刻"),
    "task_no_renew_deadline": ("no renew deadline", "没有续约截止时刻"),
    "task_no_last_heartbeat_at": ("no heartbeat yet", "还没有心跳"),
    "task_no_lease_token": ("no lease token", "没有租约号"),
    "task_no_fence_token": ("no fence token", "没有围栏令牌"),
    # a worker: "Acheng is working, holds river-tax"
    "worker_state": ("{who} is {state}", "{who}{state}"),
    "worker_head": ("{who}", "{who}"),
    "worker_holds": ("holds {task}", "持有 {task}"),
    "worker_holds_nothing": ("holds nothing", "手里没有任务"),
    "worker_lease_token": ("remembers lease token {n}", "记得租约号 {n}"),
    "worker_fence_token": ("remembers fence token {n}", "记得围栏令牌 {n}"),
    "worker_no_lease_token": ("remembers no lease token", "不记得任何租约号"),
    "worker_no_fence_token": ("remembers no fence token", "不记得任何围栏令牌"),
    # a ledger page: "Page floor6/1: written by Acheng, fence token 1"
    "ledger_head": ("page {page}:", "{page} 页："),
    "ledger_page": ("page {page} is in the ledger", "总册里有 {page} 页"),
    "ledger_writer": ("written by {who}", "由{who}写下"),
    "ledger_value": ("says “{value}”", "写着“{value}”"),
    "ledger_fence_token": ("fence token {n}", "围栏令牌 {n}"),
    # refusals: "Acheng was refused once: fenced"
    "rejected_who": ("{who} was refused {times}: {reason}", "{who}被拒收{times}：{reason}"),
    "rejected_some": ("{who} was refused: {reason}", "{who}被拒收：{reason}"),
    "rejected_task": ("a call on {task}", "对 {task} 的调用"),
    "rejected_anyone": ("a call", "有调用"),
    "rejected_none": ("{who} was never refused ({reason})", "{who}没有被拒收过（{reason}）"),
    "rejected_nothing": ("nothing was refused", "没有任何调用被拒收"),
    "rejected_nothing_for": ("nothing was refused ({reason})", "没有调用被拒收（{reason}）"),
    "any_reason": ("any reason", "任何原因"),
    # effects: "Effect grant/3/pay was applied once"
    "effect_applied": ("effect {page} was applied {times}", "副作用 {page} 执行了{times}"),
    "effect_never": ("effect {page} was never applied", "副作用 {page} 从未执行"),
    "effect_some": ("effect {page} was applied", "副作用 {page} 已执行"),
    # the safety checker: "No safety violation"
    "violation_none": ("no safety violation", "没有安全违规"),
    "violation_none_of": ("no {name}", "没有“{name}”"),
    "violation_count": ("{name}: {times}", "{name}：{times}"),
    "violation_some": ("at least one {name}", "至少一次“{name}”"),
    "any_violation": ("safety violation", "安全违规"),
    "recovery_time": ("recovery took {bounds}", "恢复用时{bounds}"),
    "wasted_steps": ("steps done twice: {bounds}", "重做的步数：{bounds}"),
    "at_least": ("at least {low}", "至少 {low}"),
    "at_most": ("at most {high}", "至多 {high}"),
    "between": ("between {low} and {high}", "在 {low} 到 {high} 之间"),
    "exactly": ("exactly {low}", "正好 {low}"),
    "once": ("once", "一次"),
    "twice": ("twice", "两次"),
    "times": ("{n} times", " {n} 次"),
    "and": (", ", "，"),
}


_LATIN_CJK = re.compile(r"([A-Za-z0-9])([\u4e00-\u9fff])")
_CJK_LATIN = re.compile(r"([\u4e00-\u9fff])([A-Za-z0-9])")


def _form(key: str, lang: str, **fill: object) -> str:
    return glossary.pick(FORMS[key], lang).format(**fill)


def _who(worker_id: str, lang: str) -> str:
    """The story's people by their names (阿澄, Acheng); other workers by their ids."""
    return called(worker_id, lang)


def _times(n: int, lang: str) -> str:
    if n == 1:
        return _form("once", lang)
    if n == 2 and lang != "zh":
        return _form("twice", lang)
    return _form("times", lang, n=n)


def _bounds(low: ExpectValue | None, high: ExpectValue | None, lang: str, timed: bool) -> str:
    def shown(v: ExpectValue | None) -> str:
        if timed and isinstance(v, int):
            # in Chinese units in a Chinese sentence: "至多 70 秒", never "至多 70s"
            return span_words(v, lang) if lang == "zh" else format_duration(v)
        return str(v)

    if low is not None and low == high:
        return _form("exactly", lang, low=shown(low))
    if low is not None and high is not None:
        return _form("between", lang, low=shown(low), high=shown(high))
    if high is not None:
        return _form("at_most", lang, high=shown(high))
    return _form("at_least", lang, low=shown(low))


def _clock(ms: int) -> str:
    """An instant as the header shows it, without milliseconds when there are none."""
    text = format_clock(ms)
    return text.removesuffix(".000")


def _sentence(head: str | None, tails: list[str], lang: str, *, after: str) -> str:
    """`head` and the phrases after it: "X is running, held by Acheng"; with no head,
    `after` (ending in ":" or a name) leads: "X: held by Acheng"."""
    joiner = _form("and", lang)
    if head is not None:
        return joiner.join([head, *tails])
    gap = "" if lang == "zh" or after.endswith("：") else " "
    return after + gap + joiner.join(tails)


def _task(exp: Expectation, lang: str) -> str:
    task = task_words(exp.value, lang)
    head: str | None = None
    tails = []
    done = dict(exp.params).get("status") == "done"
    for key, v in exp.params:
        if key == "status":
            head = _form("task_status", lang, task=task, status=glossary.status_word(str(v), lang))
        elif key == "owner" and v and done:
            tails.append(_form("task_done_by", lang, who=_who(str(v), lang)))
        elif key == "owner":
            who = _who(str(v), lang)
            tails.append(_form("task_owner", lang, who=who) if v else _form("task_no_owner", lang))
        elif (key == "checkpoint_step" and v == 0) or (key == "box" and v == ""):
            tails.append(_form("task_no_checkpoint", lang))
        elif key == "box":
            tails.append(_form("task_box", lang, box=f"“{glossary.box_line(str(v), lang)}”"))
        elif key in ("expires_at", "renew_deadline", "last_heartbeat_at"):
            if isinstance(v, int):
                tails.append(_form(f"task_{key}", lang, at=_clock(v)))
            else:
                tails.append(_form(f"task_no_{key}", lang))
        elif key in ("lease_token", "fence_token") and v == 0:
            tails.append(_form(f"task_no_{key}", lang))  # token 0 is never issued
        else:
            tails.append(_form(f"task_{key}", lang, n=v))
    tails = list(dict.fromkeys(tails))  # no step and an empty box are one "no checkpoint"
    return _sentence(head, tails, lang, after=_form("task_head", lang, task=task))


def _worker(exp: Expectation, lang: str) -> str:
    who = _who(exp.value, lang)
    head: str | None = None
    tails = []
    for key, v in exp.params:
        if key == "state":
            head = _form("worker_state", lang, who=who, state=glossary.state_word(str(v), lang))
        elif key == "holds":
            tails.append(
                _form("worker_holds", lang, task=task_words(str(v), lang))
                if v
                else _form("worker_holds_nothing", lang)
            )
        elif v is None or v == 0:
            tails.append(_form(f"worker_no_{key}", lang))  # a token never issued to it
        else:
            tails.append(_form(f"worker_{key}", lang, n=v))
    return _sentence(head, tails, lang, after=_form("worker_head", lang, who=who))


def _ledger(exp: Expectation, lang: str) -> str:
    page = _page_key(exp.value, lang)
    tails = []
    for name, v in exp.params:
        if name == "writer":
            tails.append(_form("ledger_writer", lang, who=_who(str(v), lang)))
        elif name == "value":
            zh = exp.get("value_zh")
            # a page the worker made itself has no value_zh: said as the Ledger panel shows it
            shown = zh if lang == "zh" and zh else ledger_value(str(v), lang)
            tails.append(_form("ledger_value", lang, value=shown))
        elif name == "value_zh":
            continue  # said with value, in the language of the sentence
        elif v == 0:
            tails.append(_form("task_no_fence_token", lang))  # a page written with no token
        else:
            tails.append(_form("ledger_fence_token", lang, n=v))
    if not tails:
        return _form("ledger_page", lang, page=page)
    return _sentence(None, tails, lang, after=_form("ledger_head", lang, page=page))


def _page_key(key: str, lang: str) -> str:
    """A page's key as a sentence names it: "floor6/3" in English, 第六层第 3 in Chinese."""
    task, sep, n = key.rpartition("/")
    if lang != "zh" or not sep or not n.isdigit():
        return key
    return f"{task_words(task, lang)}第 {n}"


def _rejected(exp: Expectation, lang: str) -> str:
    reason = (
        _form("any_reason", lang) if exp.value == "any" else glossary.reason_word(exp.value, lang)
    )
    worker, task, count = exp.get("worker"), exp.get("task"), exp.get("count")
    if worker is not None:
        who = _who(str(worker), lang)
    elif task is not None:
        who = _form("rejected_task", lang, task=task_words(str(task), lang))
    else:
        who = _form("rejected_anyone", lang)
    if count == 0 and worker is None and task is None:
        if exp.value == "any":
            return _form("rejected_nothing", lang)
        return _form("rejected_nothing_for", lang, reason=reason)
    if count == 0:
        return _form("rejected_none", lang, who=who, reason=reason)
    if isinstance(count, int):
        return _form("rejected_who", lang, who=who, times=_times(count, lang), reason=reason)
    return _form("rejected_some", lang, who=who, reason=reason)


def _effect(exp: Expectation, lang: str) -> str:
    applied = exp.get("applied")
    if applied == 0:
        return _form("effect_never", lang, page=exp.value)
    if isinstance(applied, int):
        return _form("effect_applied", lang, page=exp.value, times=_times(applied, lang))
    return _form("effect_some", lang, page=exp.value)


def _violation(exp: Expectation, lang: str) -> str:
    count = exp.get("count")
    if exp.value == "any":
        if count == 0:
            return _form("violation_none", lang)
        name = _form("any_violation", lang)
    else:
        name = glossary.violation_word(exp.value, lang)
        if count == 0:
            return _form("violation_none_of", lang, name=name)
    if isinstance(count, int):
        return _form("violation_count", lang, name=name, times=_times(count, lang).strip())
    return _form("violation_some", lang, name=name)


def _metric(exp: Expectation, lang: str) -> str:
    timed = exp.value == "recovery_time"
    bounds = _bounds(exp.get("min"), exp.get("max"), lang, timed)
    return _form("recovery_time" if timed else "wasted_steps", lang, bounds=bounds)


# One sentence maker for each subject of `expect`.
SUBJECTS: Final[dict[str, Callable[[Expectation, str], str]]] = {
    "task": _task,
    "worker": _worker,
    "ledger": _ledger,
    "rejected": _rejected,
    "effect": _effect,
    "violation": _violation,
    "metric": _metric,
}


def expectation_sentence(exp: Expectation, lang: str = "en") -> str:
    """The expectation as one sentence in `lang` (en or zh); its TOML form for a subject
    this module does not know."""
    make = SUBJECTS.get(str(exp.subject))
    if make is None:
        return exp.to_toml()
    sentence = spaced(make(exp, lang), lang)  # a task named in characters placed
    if lang == "zh":
        # a space between Latin letters or digits and Chinese ("A 被拒收", not "A被拒收")
        sentence = _LATIN_CJK.sub(r"\1 \2", _CJK_LATIN.sub(r"\1 \2", sentence))
    ids = tuple(str(v) for _k, v in exp.items() if v != "")
    if lang != "zh" and sentence and not sentence.startswith(ids):
        sentence = sentence[0].upper() + sentence[1:]  # not an id: a task, a worker, a page
    return sentence


ACTION_FORMS: Final[dict[str, Word]] = {
    "advance": ("{span} pass", "过了 {span}"),
    "seconds": ("{n} s", "{n} 秒"),
    "by": ("{who}: {verb}", "{who}：{verb}"),
    "by_on": ("{who}: {verb} {what}", "{who}：{verb} {what}"),
    "on": ("{verb} {what}", "{verb} {what}"),
}


def action_sentence(action: Action, lang: str = "en") -> str:
    """A step's act in a few words, for a step that says nothing itself: "10s pass",
    "Acheng: write floor6/2", "临舟：领取 floor6"."""
    if isinstance(action, Advance):
        whole, rest = divmod(action.by_ms, 1000)
        span = (
            glossary.pick(ACTION_FORMS["seconds"], lang).format(n=whole)
            if not rest and whole < 600
            else format_duration(action.by_ms)
        )
        return glossary.pick(ACTION_FORMS["advance"], lang).format(span=span)
    verb = glossary.action_word(action.name, lang)
    if lang != "zh":
        verb = verb.replace("_", " ")
    worker = getattr(action, "worker", None)
    what = getattr(action, "key", None) or getattr(action, "task", None) or ""
    if worker is None:
        said = glossary.pick(ACTION_FORMS["on"], lang).format(verb=verb, what=what).strip()
        return said[:1].upper() + said[1:]
    form = "by_on" if what else "by"
    return glossary.pick(ACTION_FORMS[form], lang).format(
        who=_who(worker, lang), verb=verb, what=what
    )


# The seed: "续约频率快于租期的一半。 例如租期 60 秒，worker 每 20 秒发一次 heartbeat。这样即使
# 丢一两次包，系统还有补救窗口。" The English form is the one the player prints on stderr.
WARNING_FORMS: Final[dict[str, Word]] = {
    "warning_at": ("{path}:{line}: warning: {message}", "{path}:{line}: 警告：{message}"),
    "renews_too_slowly": (
        "heartbeat_every ({heartbeat}) is more than half of lease_ttl ({ttl}): "
        "one lost heartbeat can cost the lease",
        "heartbeat_every（{heartbeat}）超过了 lease_ttl（{ttl}）的一半：丢一次心跳就可能丢掉租约"
        "（续约频率要快于租期的一半，例如租期 60 秒，每 20 秒发一次心跳）",
    ),
}


def timing_warnings(scenario: Scenario, lang: str = "en") -> tuple[str, ...]:
    """The scenario's timing warnings in `lang`, one line each: `FILE:LINE: warning: ...`."""
    return tuple(
        glossary.pick(WARNING_FORMS["warning_at"], lang).format(
            path=scenario.path,
            line=note.line,
            message=glossary.pick(WARNING_FORMS["renews_too_slowly"], lang).format(
                heartbeat=format_duration(note.heartbeat_ms), ttl=format_duration(note.ttl_ms)
            ),
        )
        for note in scenario.timing_notes
    )


CHECKED: Final[Word] = (
    "{path}: ok ({steps} steps, {expects} expectations)",
    "{path}：通过（{steps} 步，{expects} 条检查）",
)


def checked(scenario: Scenario, lang: str = "en") -> str:
    """What `check` says of a scenario that loads: its steps and expectations, counted."""
    expects = sum(len(s.expects) for s in scenario.steps)
    return glossary.pick(CHECKED, lang).format(
        path=scenario.path, steps=len(scenario.steps), expects=expects
    )


# -- the books ---------------------------------------------------------------------------


def _books(key: str, lang: str, /, **fill: object) -> str:
    """A sentence of the books in `lang`: the cast by their names, and a worker the story
    does not name by its id standing apart from the characters beside it ("worker-x 本来要
    写的", never "worker-x本来要写的")."""
    return spaced(glossary.lookup(BOOKS, key, lang, **fill), lang)


def _page(key: str, task_id: str | None) -> str:
    """A page's number when its key is `<task>/<n>`, else its key."""
    prefix, _, n = key.rpartition("/")
    return n if n.isdigit() and (task_id is None or prefix == task_id) else key


def _fence(token: int, lang: str) -> str:
    """ " (fence token 2)", or nothing before the fence tag (a page stamped with no token)."""
    return glossary.lookup(BOOKS, "fence", lang, n=token) if token else ""


def _steps(steps: Iterable[int], lang: str) -> str:
    """ "step 1", "steps 1, 2, 3" / "第 1 步", "第 1、2、3 步"."""
    numbers = sorted(set(steps))
    joined = ("、" if lang == "zh" else ", ").join(map(str, numbers))
    return glossary.lookup(
        BOOKS, "steps_one" if len(numbers) == 1 else "steps_many", lang, steps=joined
    )


def _late_fence(row: LedgerRow, newest: int | None, lang: str) -> str:
    """A stale page's token with the newest issued for its task beside it, when newer."""
    if not row.fence_token:
        return ""
    if newest is None or newest <= row.fence_token:
        return _fence(row.fence_token, lang)
    return glossary.lookup(BOOKS, "fence_newest", lang, n=row.fence_token, newest=newest)


def seam_sentence(
    seam: Seam, lang: str = "en", redone: Iterable[str] = (), ledger: Iterable[LedgerRow] = ()
) -> str:
    """Where the books break: at a stale page, which two holders' worlds meet there; with
    no stale page, which steps were done again (`redone`, the keys worked more than once,
    among the `ledger`'s pages by the same writer), what the redo read and what the total
    became: never an old lease where there was none."""
    sums = {"before": seam.before_total, "amount": seam.after_amount, "after": seam.after_total}
    if seam.stale is None:
        redo, other = seam.redo, seam.other
        done_again = {
            step
            for row in ledger
            if row.task_id == seam.task_id
            and row.writer == redo.writer
            and row.key in set(redone)
            and (step := page_step(row)) is not None
        }
        step = page_step(redo)
        if step is not None:
            done_again.add(step)
        said = figures(redo.value)
        return _books(
            "redone",
            lang,
            page=step or redo.key,
            who=_who(redo.writer, lang),
            steps=_steps(done_again, lang),
            total=said.total if said is not None else seam.before_total,
            other_page=page_step(other) or other.key,
            other=_who(other.writer, lang),
            built_on=seam.built_on if redo is seam.before else seam.before_total,
            **sums,
        )
    stale, other = seam.stale, seam.other
    return _books(
        "broken" if stale is seam.before else "broken_on",
        lang,
        page=page_step(stale) or stale.key,
        stale=_who(stale.writer, lang),
        stale_fence=_fence(stale.fence_token, lang),
        other_page=page_step(other) or other.key,
        other=_who(other.writer, lang),
        other_fence=_fence(other.fence_token, lang),
        built_on=seam.built_on,
        **sums,
    )


def late_page_sentence(
    row: LedgerRow, newest: int | None, lang: str = "en", over: tuple[str, int] | None = None
) -> str:
    """A stale page that no break of the chain names: where two worlds meet all the same;
    `over`, the writer and fence token of the accepted page it was written over."""
    fill = {
        "page": page_step(row) or row.key,
        "stale": _who(row.writer, lang),
        "stale_fence": _late_fence(row, newest, lang),
    }
    if over is None:
        return _books("late", lang, **fill)
    writer, token = over
    return _books(
        "late_over", lang, **fill, over=_who(writer, lang), over_fence=_fence(token, lang)
    )


def books_sentences(snap: Snapshot, lang: str = "en") -> tuple[tuple[str, str, bool], ...]:
    """What the books of a snapshot say, one sentence a place: (the page named, the
    sentence, whether a stale page is named). The stale pages are the checker's."""
    stale = snap.stale_pages
    seams = check_books(snap.ledger, stale)
    newest = {t.task_id: t.row.fence_token for t in snap.tasks}
    out = [
        (
            seam.key,
            seam_sentence(seam, lang, snap.pages_redone, snap.ledger),
            seam.stale is not None,
        )
        for seam in seams
    ]
    out += [
        (
            row.key,
            late_page_sentence(row, newest.get(row.task_id), lang, snap.stale_over.get(row.key)),
            True,
        )
        for row in late_pages(snap.ledger, stale, seams)
    ]
    return tuple(out)


def refused_page_sentence(
    who: str | None,
    key: str,
    task_id: str | None,
    value: str,
    ledger: Iterable[LedgerRow],
    lang: str = "en",
    forms: Mapping[str, Word] | None = None,
    reason: str = "fenced",
    fence_token: int | None = None,
) -> str:
    """What a refused page would have written, which check refused it (the fence, or the
    lease check, by the refusal's `reason`) and what it would have done: whose total it
    would have covered, or, for a page that says no total, whose accepted page (and under
    which token: the refused write's is `fence_token`), or that the page was still empty;
    a scripted page in `lang` whichever language it was written in (`forms`, as
    `page_words`)."""
    fill = {
        "who": _who(who or "", lang),
        "page": _page(key, task_id),
        "value": page_words(value, lang, forms),
    }
    fenced = reason == "fenced"
    if not fenced:
        fill["reason"] = glossary.reason_word(reason, lang)
    rows = tuple(ledger)
    over = refused_page(value, key, rows)
    if over is None:
        said = _books("refused" if fenced else "refused_lease", lang, **fill)
        tail = _over_page(value, key, rows, lang, forms, who or "", fence_token)
        return said + ("" if lang == "zh" else " ") + tail
    return _books(
        "refused_over" if fenced else "refused_lease_over",
        lang,
        **fill,
        total=over.total,
        over=_who(over.over.writer, lang),
        over_total=over.over_total,
    )


def _over_page(
    value: str,
    key: str,
    ledger: Iterable[LedgerRow],
    lang: str,
    forms: Mapping[str, Word] | None,
    who: str,
    fence_token: int | None,
) -> str:
    """What a refused page that says no total would have done: the accepted page it would
    have covered (whose, under which token, what it says), or that its key was empty."""
    there = next((row for row in ledger if row.key == key), None)
    page = page_step(there) if there is not None else None
    if there is None:
        return _books("over_nothing", lang, page=_page(key, None))
    fill = {
        "over": _who(there.writer, lang),
        "page": page or there.key,
        "over_fence": _fence(there.fence_token, lang),
    }
    if page_words(there.value, lang, forms) == page_words(value, lang, forms):
        fence = _fence(fence_token or 0, lang)
        return _books("over_same", lang, **fill, who=_who(who, lang), fence=fence)
    return _books("over_page", lang, **fill, there=page_words(there.value, lang, forms))


def refused_note(snap: Snapshot, lang: str) -> str | None:
    """The note over the Rejected table: the newest refused page, what it would have
    written (in `lang`, said now, whatever language it was written in), which check
    refused it and whose total it would have covered; None when no page was refused."""
    refused = next((r for r in reversed(snap.rejections) if r.value and r.key), None)
    if refused is None or refused.key is None or refused.value is None:
        return None
    return refused_page_sentence(
        refused.worker_id,
        refused.key,
        refused.task_id,
        refused.value,
        snap.ledger,
        lang,
        snap.page_forms,
        refused.reason,
        refused.fence_token,
    )


def page_fence(token: int, newest: int | None, lang: str = "en") -> str:
    """A page's fence token, with the newest issued for its task beside it when that is
    newer: the comparison the store makes ("存储层或状态机只接受当前最大的 token")."""
    if newest is None or newest <= token:
        return str(token)
    return glossary.lookup(BOOKS, "newest", lang, page=token, newest=newest)


# -- what the books do not show: two live leases at once, a side effect applied again ----------


def overlap_sentence(overlap: Overlap, now: int, lang: str = "en") -> str:
    """Two live leases at once, said: whose, which leases, from when to when, and the
    store's own expiry of the older one (the app's Belief vs truth and `play` alike)."""
    end = now if overlap.end is None else overlap.end
    said = glossary.lookup(
        SEEN,
        "tl_overlap_now" if overlap.end is None else "tl_overlap",
        lang,
        first=_who(overlap.older_worker, lang),
        second=_who(overlap.newer_worker, lang),
        old=overlap.older_lease_token,
        new=overlap.newer_lease_token,
        start=_clock(overlap.start),
        end=_clock(end),
        span=span_words(end - overlap.start, lang),
        until="—" if overlap.older_live_until is None else _clock(overlap.older_live_until),
    )
    return spaced(said, lang) + ("。" if lang == "zh" else ".")


def effect_call_words(call: EffectCall, lang: str = "en") -> str:
    """Which call of a side effect a row is: "step 3: the internal API"."""
    # only the effects the words name: a scenario's own effect ("repeat") is said as written
    named = call.effect in ("api_call", "charge")
    what = glossary.lookup(SEEN, f"effect_{call.effect}", lang) if named else call.effect
    if call.step is None:
        return what
    return glossary.lookup(SEEN, "effect_step", lang, step=call.step, what=what)


def repeat_words(call: EffectCall, lang: str = "en") -> str | None:
    """What an application of an effect beyond its first cost: "charged twice: 2 × 120"
    (or, where its payload names no amount, how many times it ran); None for a first
    application or a repeat answered from the first."""
    if call.deduplicated or call.applied_times < 2:
        return None
    if call.amount is None:
        return glossary.lookup(SEEN, "effect_again", lang, n=call.applied_times)
    key = "effect_charged_2" if call.applied_times == 2 else "effect_charged"
    return glossary.lookup(SEEN, key, lang, n=call.applied_times, amount=call.amount)


def repeat_sentence(call: EffectCall, lang: str = "en") -> str | None:
    """A side effect applied again, as a sentence: when, who, which call, under which fence
    token, and what it cost ("Idempotency 负责“重复做时别把世界打坏”"); None for a call
    that is no repeat."""
    outcome = repeat_words(call, lang)
    if outcome is None:
        return None
    fence = (
        ""
        if call.fence_token is None
        else glossary.lookup(SEEN, "effect_fence", lang, n=call.fence_token)
    )
    said = glossary.lookup(
        SEEN,
        "effect_repeat",
        lang,
        at=_clock(call.at),
        who=_who(call.worker_id, lang),
        call=effect_call_words(call, lang),
        fence=fence,
        outcome=outcome,
    )
    return spaced(said, lang)
