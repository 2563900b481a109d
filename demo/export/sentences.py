"""An expectation of a step as a sentence a reader follows, in English or Chinese.

The page shows what a step's `expect` lines check as plain sentences with ✓ / ✗, not as
TOML. Everything the page asks of this goes through `sentence()`: the one function to swap
for a shared one when the scenarios package gains its own.
"""

from core.engine.durations import format_clock, format_duration
from core.scenarios import glossary
from core.scenarios.format import Expectation, ExpectValue


def _who(worker_id: str, lang: str) -> str:
    return glossary.person_name(worker_id, lang) or worker_id


def _clock(value: ExpectValue) -> str:
    """An instant as the header shows it, without the milliseconds when they are 0."""
    if not isinstance(value, int):
        return str(value)
    text = format_clock(value)
    return text.removesuffix(".000")


def _times(n: int, lang: str) -> str:
    if lang == "zh":
        return f"{n} 次"
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _task(exp: Expectation, lang: str) -> str:
    zh = lang == "zh"
    parts: list[str] = []
    for key, v in exp.params:
        if key == "status":
            parts.append(glossary.status_word(str(v), lang) if zh else f"is {v}")
        elif key == "owner":
            if v:
                parts.append(
                    f"持有人 {_who(str(v), lang)}" if zh else f"held by {_who(str(v), lang)}"
                )
            else:
                parts.append("无人持有" if zh else "held by no one")
        elif key == "attempt":
            parts.append(f"第 {v} 次尝试" if zh else f"attempt {v}")
        elif key in ("lease_token", "fence_token"):
            word = glossary.token_word(key.removesuffix("_token"), lang)
            parts.append(f"{word} {v}" if zh else f"{word} token {v}")
        elif key == "checkpoint_step":
            if v:
                parts.append(f"检查点在第 {v} 步" if zh else f"its checkpoint at step {v}")
            else:
                parts.append("还没有检查点" if zh else "no checkpoint yet")
        elif key == "expires_at":
            if v == "":
                parts.append("没有租约" if zh else "no lease")
            else:
                parts.append(f"租约到 {_clock(v)}" if zh else f"its lease until {_clock(v)}")
        elif key == "renew_deadline":
            parts.append(f"须在 {_clock(v)} 前续约" if zh else f"to be renewed by {_clock(v)}")
    if zh:
        return f"任务 {exp.value}：" + "，".join(parts) + "。"
    return f"Task {exp.value}: " + ", ".join(parts) + "."


def _worker(exp: Expectation, lang: str) -> str:
    zh = lang == "zh"
    parts: list[str] = []
    believed: list[str] = []
    for key, v in exp.params:
        if key == "state":
            parts.append(glossary.state_word(str(v), lang) if zh else f"is {v}")
        elif key == "holds":
            if v:
                parts.append(f"手里是 {v}" if zh else f"holds {v}")
            else:
                parts.append("手里什么也没有" if zh else "holds nothing")
        elif key in ("lease_token", "fence_token"):
            word = glossary.token_word(key.removesuffix("_token"), lang)
            believed.append(f"{word} {v}" if zh else f"{word} token {v}")
    who = _who(exp.value, lang)
    if zh:
        text = f"{who}：" + "，".join(parts)
        if believed:
            text += "，自以为拿着" + "、".join(believed)
        return text + "。"
    text = f"{who} " + ", ".join(parts)
    if believed:
        text += ", believing it has " + " and ".join(believed)
    return text + "."


def _ledger(exp: Expectation, lang: str) -> str:
    zh = lang == "zh"
    writer, fence, value = exp.get("writer"), exp.get("fence_token"), exp.get("value")
    if zh:
        text = f"总册第 {exp.value} 页"
        if writer is not None:
            text += f"由{_who(str(writer), lang)}写下"
        if fence is not None:
            text += f"，围栏令牌 {fence}"
        if value is not None:
            text += f"：“{value}”"
        return text + "。"
    text = f"Ledger page {exp.value}"
    text += f" was written by {_who(str(writer), lang)}" if writer is not None else " is there"
    if fence is not None:
        text += f" with fence token {fence}"
    if value is not None:
        text += f": “{value}”"
    return text + "."


def _rejected(exp: Expectation, lang: str) -> str:
    zh = lang == "zh"
    count, worker, task = exp.get("count"), exp.get("worker"), exp.get("task")
    reason = "" if exp.value == "any" else glossary.reason_word(exp.value, lang)
    if zh:
        whose = f"{_who(str(worker), lang)}的" if worker is not None else ""
        on = f"对 {task} " if task is not None else ""
        why = f"（{reason}）" if reason else ""
        if count == 0:
            return f"{whose}调用{on}没有一次被拒{why}。"
        n = "至少 1 次" if count is None else f"{count} 次"
        return f"{whose}调用{on}被拒 {n}{why}。"
    whose = f" by {_who(str(worker), lang)}" if worker is not None else ""
    on = f" on {task}" if task is not None else ""
    why = f" ({reason})" if reason else ""
    if count == 0:
        return f"No call{whose}{on} was refused{why}."
    n = "at least one call" if count is None else ("1 call" if count == 1 else f"{count} calls")
    return f"{n[0].upper()}{n[1:]}{whose}{on} refused{why}."


def _effect(exp: Expectation, lang: str) -> str:
    applied = exp.get("applied")
    if lang == "zh":
        n = "至少执行了一次" if applied is None else f"执行了 {applied} 次"
        return f"副作用 {exp.value} {n}。"
    n = "at least once" if applied is None else _times(int(applied), lang)
    return f"The side effect {exp.value} ran {n}."


def _violation(exp: Expectation, lang: str) -> str:
    count = exp.get("count")
    zh = lang == "zh"
    what = "" if exp.value == "any" else glossary.violation_word(exp.value, lang)
    if count == 0:
        if zh:
            return f"安全检查器没有发现{what or '任何违规'}。"
        return f"The safety checker found no {what or 'violation'}."
    n = "≥ 1" if count is None else str(count)
    if zh:
        return f"安全检查器记下 {n} 次{what or '违规'}。"
    return f"The safety checker counted {n} × {what or 'violation'}."


def _metric(exp: Expectation, lang: str) -> str:
    zh = lang == "zh"
    low, high = exp.get("min"), exp.get("max")
    timed = exp.value == "recovery_time"

    def shown(v: ExpectValue) -> str:
        return format_duration(v) if timed and isinstance(v, int) else str(v)

    name = ("恢复用时" if timed else "白做的步数") if zh else exp.value.replace("_", " ")
    bounds = []
    if low is not None:
        bounds.append(f"≥ {shown(low)}")
    if high is not None:
        bounds.append(f"≤ {shown(high)}")
    joined = (" 且 " if zh else " and ").join(bounds)
    return f"{name}：{joined}。" if zh else f"The {name} is {joined}."


_BY_SUBJECT = {
    "task": _task,
    "worker": _worker,
    "ledger": _ledger,
    "rejected": _rejected,
    "effect": _effect,
    "violation": _violation,
    "metric": _metric,
}


def sentence(exp: Expectation, lang: str) -> str:
    """What `exp` checks, as one sentence in `lang` (the TOML line for an unknown subject)."""
    say = _BY_SUBJECT.get(exp.subject)
    return exp.to_toml() if say is None else say(exp, lang)
