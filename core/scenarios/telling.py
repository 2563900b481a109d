"""A line of the loan register, and a refusal, as a sentence an audience reads.

The register keeps codes (`write_rejected floor6 acheng L1 F1 key=floor6/3 fenced`) for
`--json` and the logs; the app's event log, `play`'s transcript and the exported page say
the same line in the run's language: "Acheng's page floor6/3 for floor6 is refused: her
fence token 1 is behind the task's 2" / "阿澄写 floor6/3 页（floor6）被拒收：她的围栏令牌
1 落后于当前的 2". A call that never reached the store (the bridge was down) is not
refused by it: it is "not delivered".
"""

import re
from collections.abc import Mapping
from typing import Any, Final

from core.engine.durations import format_clock
from core.engine.errors import BorrowedKeysError, ConfigError, LeaseRejected
from core.engine.people import called
from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.scenarios import glossary
from core.scenarios.format import ScenarioError
from core.scenarios.glossary import Word

# What each line of the register says. {who} is the worker by name, {task} the task id;
# the other fields are filled from the line's detail where it has them.
EVENT_FORMS: Final[dict[str, Word]] = {
    "enqueued": ("{task} joins the queue", "{task} 进入队列"),
    "claimed": ("{who} claims {task}{tokens}", "{who}领到 {task}{tokens}"),
    "renewed": ("{who} renews {task}{until}", "{who}为 {task} 续约{until}"),
    "heartbeat_noted": (
        "{who}'s heartbeat on {task} is noted: there is no lease to extend",
        "{who}对 {task} 的心跳已记下：没有可延长的租约",
    ),
    "lease_expired": (
        "{who}'s lease on {task} runs out: {task} can be lent again",
        "{who}在 {task} 上的租约到期：{task} 可再借出",
    ),
    "checkpoint_saved": (
        "{who} saves a checkpoint of {task} at step {step}",
        "{who}为 {task} 存下检查点：第 {step} 步",
    ),
    "write_accepted": (
        "{who} writes page {key} into the ledger{tokens}",
        "{who}把 {key} 页写进总册{tokens}",
    ),
    "effect_applied": ("{who}'s effect ({what}) is applied", "{who}的副作用（{what}）已执行"),
    "effect_deduplicated": (
        "{who}'s effect ({what}) was already applied: not done again",
        "{who}的副作用（{what}）已执行过：不再重复",
    ),
    "completed": ("{who} finishes {task}", "{who}完成了 {task}"),
    "failed": (
        "{who} reports {task} failed: it goes back to the queue",
        "{who}上报 {task} 失败：任务回到队列",
    ),
    "parked": (
        "{who} parks {task}: it waits for a person's approval",
        "{who}把 {task} 挂起：等人批准",
    ),
    "approved": ("a person approves {task}", "有人批准了 {task}"),
    "rejected": ("a person rejects {task}", "有人驳回了 {task}"),
    "approve_ignored": (
        "approving {task} changes nothing: it is not waiting",
        "批准 {task} 没有作用：它不在等待审批",
    ),
    "reject_ignored": (
        "rejecting {task} changes nothing: it is not waiting",
        "驳回 {task} 没有作用：它不在等待审批",
    ),
    "dead_lettered": (
        "{task} has used all its attempts: it goes to the dead-letter queue",
        "{task} 次数用尽：进入死信队列",
    ),
    "violation": ("safety violation on {task}: {reason}", "{task} 出现安全违规：{reason}"),
    "heartbeat_frozen": (
        "{who}'s heartbeats stop reaching the keeper",
        "{who}的心跳再也到不了守库人那里",
    ),
    "stalled": ("{who} stalls, still holding the lease in mind", "{who}停顿了，心里仍记着租约"),
    "killed": ("{who}'s process is killed", "{who}的进程被杀"),
    "partitioned": ("the bridge to {who} is down", "通往{who}的桥断了"),
    "healed": ("the bridge to {who} is mended", "通往{who}的桥修好了"),
    "resumed": ("{who} resumes", "{who}恢复运行"),
    "restarted": ("{who} restarts with an empty memory", "{who}重启，什么都不记得"),
    "slowed": ("{who} slows down, {factor} times slower", "{who}变慢了，慢 {factor} 倍"),
    "skewed": ("{who}'s own clock is off by {skew}", "{who}自己的时钟偏了 {skew}"),
    "worker_added": ("{who} joins the run", "{who}加入"),
    "autopilot": ("{who} goes on unscripted", "{who}自己接着干"),
    "call_dropped": (
        "{who}'s {op} is not sent: {who} is {state}",
        "{who}的{op}没有发出：{who}{state}",
    ),
    "self_fenced": (
        "{who} stops of their own accord: no renewal by the renew deadline {deadline}",
        "{who}主动停手：续约截止时刻 {deadline} 已过，没有续上",
    ),
    "checkpoint_ignored": (
        "{who} walks past the checkpoint at step {step} and starts over",
        "{who}没读第 {step} 步的检查点，从头做起",
    ),
    "heartbeat_sent": (
        "{who} sends a heartbeat carrying {payload}; it reaches the keeper at {lands}",
        "{who}发出夹带 {payload} 的心跳，{lands} 才送到守库人那里",
    ),
    "heartbeat_payload": (
        "{who}'s heartbeats now carry {payload}",
        "{who}的心跳从此夹带 {payload}",
    ),
    "store_loaded": ("the store's load is now {load} times", "存储的负载变为 {load} 倍"),
}

# A refused call, by who made it and what it was.
REFUSAL_FORMS: Final[dict[str, Word]] = {
    "refused": ("{who}'s {op} on {task} is refused: {why}", "{who}对 {task} 的{op}被拒：{why}"),
    "refused_page": (
        "{who}'s page {key} for {task} is refused: {why}",
        "{who}写 {key} 页（{task}）被拒收：{why}",
    ),
    "undelivered": (
        "{who}'s {op} on {task} is not delivered: the bridge is down",
        "{who}对 {task} 的{op}没有送到：桥断了",
    ),
    "undelivered_page": (
        "{who}'s page {key} for {task} is not delivered: the bridge is down",
        "{who}的 {key} 页（{task}）没有送到：桥断了",
    ),
    "undelivered_claim": (
        "{who}'s claim is not delivered: the bridge is down",
        "{who}的领取没有送到：桥断了",
    ),
    # why, with the tokens that decide it
    "fence_behind": (
        "fence token {its} is behind the current {current}",
        "围栏令牌 {its} 落后于当前的 {current}",
    ),
    "page_behind": (
        "fence token {its} is behind the page's {current}",
        "围栏令牌 {its} 落后于这一页的 {current}",
    ),
    "lease_behind": (
        "lease token {its} is old, the current one is {current}",
        "租约号 {its} 已旧，当前是 {current}",
    ),
    "times": (" ({n} times)", "（{n} 次）"),
}

# The tail of a line about a lease: its tokens, when the lease ends.
TAIL_FORMS: Final[dict[str, Word]] = {
    "tokens": (
        " (lease token {lease}, fence token {fence})",
        "（租约号 {lease}，围栏令牌 {fence}）",
    ),
    "lease_only": (" (lease token {lease})", "（租约号 {lease}）"),
    "fence_only": (" (fence token {fence})", "（围栏令牌 {fence}）"),
    "no_version": (" (no lease token, no expiry)", "（没有租约号，也不会过期）"),
    "until": ("; the lease now ends at {at}", "，租约延到 {at}"),
}

# The operations as a noun after "Acheng's" ("Acheng's heartbeat"), and in Chinese.
OPERATIONS: Final[dict[str, Word]] = {
    "claim": ("claim", "领取"),
    "heartbeat": ("heartbeat", "心跳续约"),
    "renew": ("heartbeat", "心跳续约"),
    "checkpoint": ("checkpoint", "检查点"),
    "write": ("write", "写入"),
    "effect": ("effect", "副作用"),
    "complete": ("completion", "交差"),
    "fail": ("failure report", "失败上报"),
    "park": ("parking", "挂起"),
}


def _pick(table: Mapping[str, Word], name: str, lang: str, /, **fill: object) -> str:
    return glossary.pick(table[name], lang).format(**fill)


def who(worker_id: str | None, lang: str) -> str:
    """The story's people by their names (阿澄, Acheng); another worker by its id."""
    if not worker_id:
        return ""
    return called(worker_id, lang)


# A worker the story does not name is called by its id ("worker-a", "A"): in a Chinese
# sentence a Latin name stands apart from the characters around it ("worker-a 领到"), as
# the seed writes "worker A 卡死，worker B 接手".
_GLUED = re.compile(
    r"(?:(?<=[A-Za-z])|(?<=[A-Za-z][0-9])|(?<=[A-Za-z][0-9][0-9]))(?=[\u4e00-\u9fff])"
    r"|(?<=[\u4e00-\u9fff])(?=[A-Za-z])"
)


def spaced(sentence: str, lang: str) -> str:
    """A Chinese sentence with a space between a Latin word and a character beside it; a
    task named in characters (`task_words`) sits against the characters beside it, without
    the space its id would need."""
    if lang != "zh":
        return sentence
    sentence = _NAMED_TASK_LEFT.sub(r"\1", sentence)
    sentence = _NAMED_TASK_RIGHT.sub(r"\1", sentence)
    sentence = _NUMBERED_TASK_RIGHT.sub(" ", sentence)
    return _GLUED.sub(" ", sentence.replace(_TASK_MARK, ""))


def page_key_words(
    key: str | None, task_id: str | None, lang: str, *, named: bool = False
) -> str | None:
    """A page's key as a Chinese sentence names it: "floor6/3" of floor6 is 第 3 where its
    task is named beside it, 第六层第 3 (`named`) where it is not; any other key, and every
    key in English, as written."""
    if key is None or lang != "zh" or not task_id:
        return key
    task, _, page = key.rpartition("/")
    artifact = glossary.artifact_word(page, lang) if task == task_id else None
    if artifact is not None:  # the downstream service's: "任务 2 的结果", "结果" beside it
        if not named:
            return artifact
        named_zh = glossary.task_artifact_zh(glossary.task_name(task_id, lang), artifact)
        return f"{_TASK_MARK}{named_zh}{_TASK_MARK}"
    if task != task_id or not page.isdigit():
        return key
    task = glossary.task_name(task_id, lang) if named else ""
    if task[-1:].isdigit():
        task += " "  # "任务 1 第 3", never a number pressed against 第
    return f"{_TASK_MARK}{task}第 {page}{_TASK_MARK}"


def effect_key_words(key: str, lang: str) -> str:
    """An effect's idempotency key as the Effects panel names its call: "agent/3/api_call"
    is "step 3: the internal API" ("第 3 步：调用内部 API"); any other key as written."""
    _task, _, rest = key.partition("/")
    step, _, effect = rest.partition("/")
    if not step.isdigit() or effect != "api_call":
        return key
    what = glossary.lookup(glossary.SEEN, f"effect_{effect}", lang)
    return glossary.lookup(glossary.SEEN, "effect_step", lang, step=int(step), what=what)


# A task in a sentence is marked until `spaced` has placed it: "领到 第六层" is "领到第六层",
# "领到 t9" keeps its space.
_TASK_MARK = "\x1f"
_NAMED_TASK_LEFT = re.compile(rf"(?<=[\u4e00-\u9fff]) {_TASK_MARK}([\u4e00-\u9fff])")
_NAMED_TASK_RIGHT = re.compile(rf"([\u4e00-\u9fff]){_TASK_MARK} (?=[\u4e00-\u9fff])")
# a task named with its number ("任务 3") keeps the space after the number that it has before
# it when a character follows: "把任务 3 借在其名下", not "任务 3借"
_NUMBERED_TASK_RIGHT = re.compile(rf"(?<=[0-9]){_TASK_MARK}(?=[\u4e00-\u9fff])")


def task_words(task_id: str | None, lang: str) -> str:
    """A task as a sentence names it: its id, or on a Chinese screen its name ("第六层"),
    marked for `spaced` to place."""
    if not task_id or lang != "zh":
        return task_id or ""
    return f"{_TASK_MARK}{glossary.task_name(task_id, lang)}{_TASK_MARK}"


def operation_noun(name: str, lang: str) -> str:
    return glossary.lookup(OPERATIONS, name, lang)


def _clock(ms: object) -> str:
    return format_clock(int(str(ms))).removesuffix(".000")


def _tokens(lease: int | None, fence: int | None, lang: str) -> str:
    if lease == 0:
        return _pick(TAIL_FORMS, "no_version", lang)  # mistake one: no version at all
    if lease and fence:
        return _pick(TAIL_FORMS, "tokens", lang, lease=lease, fence=fence)
    if lease:
        return _pick(TAIL_FORMS, "lease_only", lang, lease=lease)
    if fence:
        return _pick(TAIL_FORMS, "fence_only", lang, fence=fence)
    return ""


def refusal_sentence(
    *,
    worker: str | None,
    task: str | None,
    operation: str,
    reason: str,
    lang: str,
    key: str | None = None,
    its: tuple[int | None, int | None] = (None, None),
    current: tuple[int | None, int | None] = (None, None),
    page_fence: int | None = None,
) -> str:
    """A refused (or undelivered) call in one sentence, with the tokens that decided it."""
    name, task_id = who(worker, lang), task_words(task, lang)
    key = page_key_words(key, task, lang)
    op = operation_noun(operation, lang)
    if reason == "partitioned":
        # the call never reached the store: nothing refused it
        if not task_id:
            return _pick(REFUSAL_FORMS, "undelivered_claim", lang, who=name)
        form = "undelivered_page" if key else "undelivered"
        return spaced(
            _pick(REFUSAL_FORMS, form, lang, who=name, op=op, task=task_id, key=key), lang
        )
    why = glossary.reason_word(reason, lang)
    (its_lease, its_fence), (now_lease, now_fence) = its, current
    if reason == "fenced" and its_fence is not None:
        if page_fence is not None and (now_fence is None or page_fence > now_fence):
            why = _pick(REFUSAL_FORMS, "page_behind", lang, its=its_fence, current=page_fence)
        elif now_fence is not None:
            why = _pick(REFUSAL_FORMS, "fence_behind", lang, its=its_fence, current=now_fence)
    elif reason == "superseded" and its_lease is not None and now_lease is not None:
        why += glossary.pick(("; ", "；"), lang) + _pick(
            REFUSAL_FORMS, "lease_behind", lang, its=its_lease, current=now_lease
        )
    form = "refused_page" if key and operation == "write" else "refused"
    return spaced(
        _pick(REFUSAL_FORMS, form, lang, who=name, op=op, task=task_id, key=key, why=why), lang
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def event_sentence(ev: EventRow, lang: str) -> str:
    """One line of the register as a sentence in `lang` (without its time)."""
    d = ev.detail
    name = who(ev.worker_id, lang)
    task = task_words(ev.task_id, lang)
    if ev.event in REJECTIONS:
        return refusal_sentence(
            worker=ev.worker_id,
            task=ev.task_id,
            operation=str(d.get("operation") or ev.event.removesuffix("_rejected")),
            reason=ev.reason or "",
            lang=lang,
            key=d.get("key"),
            its=(ev.lease_token, ev.fence_token),
            current=(_int(d.get("current_lease_token")), _int(d.get("current_fence_token"))),
            page_fence=_int(d.get("page_fence_token")),
        )
    form = EVENT_FORMS.get(ev.event)
    if ev.event == EventKind.SELF_FENCED and d.get("renew_deadline") is None:
        form = SELF_FENCED_UNDATED  # a record that does not say when (an older saved run)
    if form is None:
        return glossary.event_word(ev.event, lang)
    fill: dict[str, object] = {
        "who": name,
        "task": task,
        "key": page_key_words(d.get("key") or "", ev.task_id, lang, named=True) or "",
        "step": d.get("step", ""),
        "tokens": "",
        "until": "",
        "reason": glossary.reason_word(ev.reason or "", lang),
        "what": effect_key_words(str(d.get("key") or d.get("call") or d.get("effect") or ""), lang),
        "factor": d.get("factor", ""),
        "skew": d.get("skew_ms", ""),
        "payload": d.get("payload", ""),
        "load": d.get("load", ""),
        "op": operation_noun(str(d.get("operation", "")), lang),
        "state": glossary.state_word(ev.reason or "", lang),
        "deadline": _clock(d["renew_deadline"]) if d.get("renew_deadline") is not None else "",
        "lands": _clock(d["lands_at"]) if d.get("lands_at") is not None else "",
    }
    for name in ("load", "factor"):
        if isinstance(fill[name], float):
            fill[name] = f"{fill[name]:g}"  # 100 times, not 100.0
    if isinstance(fill["skew"], int):
        fill["skew"] = (
            f"{fill['skew'] / 1000:+g} s" if lang != "zh" else f"{fill['skew'] / 1000:+g} 秒"
        )
    if ev.event in (EventKind.CLAIMED, EventKind.WRITE_ACCEPTED):
        fill["tokens"] = _tokens(ev.lease_token, ev.fence_token, lang)
    if ev.event == EventKind.RENEWED and d.get("expires_at") is not None:
        fill["until"] = _pick(TAIL_FORMS, "until", lang, at=_clock(d["expires_at"]))
    pattern = glossary.pick(form, lang)
    sentence = pattern.format(**fill)
    if lang != "zh" and not pattern.startswith("{"):
        sentence = sentence[:1].upper() + sentence[1:]  # a word, not a name or an id
    return spaced(sentence, lang)


SELF_FENCED_UNDATED: Final[Word] = (
    "{who} stops of their own accord: no renewal by the renew deadline",
    "{who}主动停手：续约截止时刻已过，没有续上",
)


# What a step (or a person at the keyboard) does, as a sentence: "Acheng saves a checkpoint
# at step 2", "阿澄存下第 2 步的检查点".
ACT_FORMS: Final[dict[str, Word]] = {
    "advance": ("{span} pass", "过了 {span}"),
    "freeze_heartbeat": ("{who}'s heartbeat freezes", "{who}的心跳冻结了"),
    "stall": ("{who} stalls", "{who}停顿了"),
    "kill": ("{who}'s process is killed", "{who}的进程被杀"),
    "partition": ("the bridge to {who} breaks", "通往{who}的桥断了"),
    "heal": ("the bridge to {who} is mended", "通往{who}的桥修好了"),
    "resume": ("{who} resumes", "{who}恢复运行"),
    "restart": ("{who} restarts", "{who}重启"),
    "autopilot": ("{who} goes on unscripted", "{who}自己接着干"),
    "add_worker": ("{who} joins the run", "{who}加入"),
    "slow": ("{who} slows down {factor} times", "{who}慢了 {factor} 倍"),
    "skew": ("{who}'s own clock is set off by {span}", "{who}自己的时钟偏了 {span}"),
    "heartbeat_payload": ("{who}'s heartbeats carry {size}", "{who}的心跳夹带 {size}"),
    "load": ("the store's load becomes {factor} times", "存储的负载变为 {factor} 倍"),
    "enqueue": ("{task} joins the queue", "{task} 进入队列"),
    "approve": ("a person approves {task}", "有人批准 {task}"),
    "reject": ("a person rejects {task}", "有人驳回 {task}"),
    "claim": ("{who} asks for {task}", "{who}申请领取 {task}"),
    "claim_any": ("{who} asks for a task", "{who}申请领取任务"),
    "heartbeat": ("{who} sends a heartbeat", "{who}发出心跳"),
    "checkpoint": ("{who} saves a checkpoint at step {step}", "{who}存下第 {step} 步的检查点"),
    "write": ("{who} writes page {key}", "{who}写 {key} 页"),
    "effect": ("{who} applies effect {key}", "{who}执行副作用 {key}"),
    "complete": ("{who} reports the task done", "{who}交差"),
    "fail": ("{who} reports the task failed", "{who}上报失败"),
    "park": ("{who} parks the task for approval", "{who}把任务挂起待批"),
}


def span_words(ms: int, lang: str) -> str:
    """A duration to read: "70 s", "2 min 5 s" / "70 秒", "2 分 5 秒"."""
    seconds, rest = divmod(ms, 1000)
    if rest or seconds < 120:
        return f"{ms / 1000:g} s" if lang != "zh" else f"{ms / 1000:g} 秒"
    minutes, seconds = divmod(seconds, 60)
    if lang == "zh":
        return (f"{minutes} 分" if minutes else "") + (f" {seconds} 秒" if seconds else "")
    return (
        " ".join(
            p for p in (f"{minutes} min" if minutes else "", f"{seconds} s" if seconds else "") if p
        )
        or "0 s"
    )


def act_sentence(action: object, lang: str, *, capital: bool = True) -> str:
    """A step's act in a sentence, in `lang` (`capital`: as a sentence's start)."""
    name = str(getattr(action, "name", ""))
    form = ACT_FORMS.get(name)
    if name == "claim" and getattr(action, "task", None) is None:
        form = ACT_FORMS["claim_any"]
    if form is None:
        return glossary.action_word(name, lang)
    by = getattr(action, "by_ms", 0)
    fill = {
        "who": who(getattr(action, "worker", None), lang),
        "task": task_words(getattr(action, "task", None), lang),
        "step": getattr(action, "step", ""),
        "key": getattr(action, "key", ""),
        "factor": f"{getattr(action, 'factor', 1):g}",
        "span": span_words(by, lang).strip() if isinstance(by, int) else "",
        "size": getattr(action, "size_bytes", ""),
    }
    if isinstance(fill["size"], int):
        from core.sim.heavy import format_size

        fill["size"] = format_size(fill["size"])
    pattern = glossary.pick(form, lang)
    sentence = pattern.format(**fill)
    if capital and lang != "zh" and not pattern.startswith("{"):
        sentence = sentence[:1].upper() + sentence[1:]
    return spaced(sentence, lang)


def error_sentence(exc: BaseException, lang: str) -> str:
    """An error the core raised on purpose, as one sentence in `lang`, from its `why` and
    `fill` (never from its English); any other error (a bug) by its own message."""
    if isinstance(exc, ScenarioError):
        return exc.message if lang != "zh" or exc.message_zh is None else exc.message_zh
    if not isinstance(exc, BorrowedKeysError):
        return str(exc)
    word = glossary.ENGINE_ERRORS.get(exc.why.value)
    if word is None:
        return str(exc)
    fill: dict[str, object] = {**exc.fill, "message": str(exc)}
    if lang == "zh":
        fill.update(_zh_fill(exc))
    return glossary.pick(word, lang).format_map(_Blank(fill))


def _zh_fill(exc: BorrowedKeysError) -> dict[str, object]:
    """An error's values as the Chinese sentence shows them: people by name, acts, states
    and whole errors in words."""
    out: dict[str, object] = {}
    for name, value in exc.fill.items():
        if name == "worker":
            out[name] = who(str(value), "zh")
        elif name in ("action", "operation"):
            out[name] = glossary.action_word(str(value), "zh")
        elif name == "status":
            out[name] = glossary.status_word(str(value), "zh")
        elif isinstance(value, BaseException):
            out[name] = error_sentence(value, "zh")
    if isinstance(exc, ConfigError):
        out["rule"] = glossary.config_mistake(exc, "zh")
    if isinstance(exc, LeaseRejected):
        out["refusal"] = refusal_sentence(
            worker=exc.worker_id,
            task=exc.task_id,
            operation=str(exc.operation),
            reason=str(exc.reason),
            lang="zh",
            key=exc.key,
            its=(exc.lease_token, exc.fence_token),
            current=(exc.current_lease_token, exc.current_fence_token),
        )
    return out


class _Blank(dict[str, object]):
    """A sentence's values; one the error does not carry is said as nothing, not a crash."""

    def __missing__(self, key: str) -> str:
        return ""


def run_stopped(form: str, lang: str, exc: BaseException, **fill: object) -> str:
    """How a run says it stopped on `exc` ("step 3 cannot run: ..."), in `lang`."""
    return glossary.lookup(
        glossary.RUN_STOPPED, form, lang, error=error_sentence(exc, lang), **fill
    )
