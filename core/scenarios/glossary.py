"""The one glossary: every word the transcript, the app and the help page show, en and zh.

Pure data and lookups, no drawing. The words follow the project's glossary and the seed:
the screen speaks the essay's terms (租约, 心跳续约, 围栏令牌, 检查点, 总册), the story
chapters speak the story's (租牌, 续沙, 围栏签, 暂存木匣). A worker is a worker or 执行者.

Each table maps a name the code uses (an event, a reason, a status, ...) to (en, zh). The
English of events, reasons, statuses and worker states is the name itself said as words
("not running" for `not_running`): `--json` and the scenario files keep the name. A broken
rule is a phrase (the light and the summary name what broke, never an id).
"""

import re
from collections.abc import Mapping
from typing import Final

from core.engine.people import PEOPLE as _CAST
from core.engine.people import called
from core.scenarios.book_words import BOOKS as BOOKS
from core.scenarios.book_words import BOX as BOX
from core.scenarios.book_words import PAGE_VERBS as PAGE_VERBS
from core.scenarios.book_words import SEEN as SEEN
from core.scenarios.book_words import VILLAGES as VILLAGES
from core.scenarios.book_words import box_contents as box_contents
from core.scenarios.book_words import box_line as box_line
from core.scenarios.book_words import box_parts as box_parts
from core.scenarios.book_words import ledger_value as ledger_value
from core.scenarios.book_words import page_words as page_words
from core.scenarios.error_words import CONFIG_MISTAKES as CONFIG_MISTAKES
from core.scenarios.error_words import ENGINE_ERRORS as ENGINE_ERRORS
from core.scenarios.error_words import FILE_MISTAKES as FILE_MISTAKES
from core.scenarios.error_words import RUN_STOPPED as RUN_STOPPED
from core.scenarios.error_words import config_mistake as config_mistake
from core.scenarios.error_words import file_mistake as file_mistake
from core.scenarios.error_words import type_word as type_word
from core.scenarios.word_table import Word as Word
from core.scenarios.word_table import lookup as lookup
from core.scenarios.word_table import pick as pick

# -- the ideas and the things on screen --------------------------------------------------------

CONCEPTS: Final[dict[str, Word]] = {
    "store": ("Store", "存储"),
    "keeper": ("Keeper", "守库人"),
    "task": ("Task", "任务"),
    "worker": ("Worker", "执行者"),
    "lease": ("Lease", "租约"),
    "expires_in": ("Expires in", "剩余租期"),
    "heartbeat": ("Heartbeat", "心跳续约"),
    "expired": ("Expired", "已过期"),
    # A running task whose lease has run out, until someone claims it: "他把第六层的钥匙状态
    # 改成'可再借出'".
    "lendable": ("lendable again", "可再借出"),
    "lendable_short": ("lendable", "可再借出"),  # the same, in the 80-column task table
    "fence": ("Fence", "围栏令牌"),
    "fencing_token": ("Fencing token", "围栏令牌"),
    "ledger": ("Ledger", "总册"),
    "rejected": ("Rejected", "拒收"),
    "checkpoint": ("Checkpoint", "检查点"),
    "event_log": ("Event log", "登记簿"),
    "idempotency": ("Idempotency", "幂等"),
    "effect_applied": ("applied", "已执行"),
    "effect_deduplicated": ("deduplicated", "已去重"),
}

# Token labels beside a number: "lease 2  fence 2" / "租约号 2  围栏令牌 2".
TOKENS: Final[dict[str, Word]] = {
    "lease": ("lease", "租约号"),
    "fence": ("fence", "围栏令牌"),
}

# The panels (tabs) of the main screen, in the order of keys 1-6.
PANELS: Final[dict[str, Word]] = {
    "ledger": ("Ledger", "总册"),
    "checkpoints": ("Checkpoints", "检查点"),
    "rejected": ("Rejected", "拒收"),
    "effects": ("Effects", "副作用"),
    "event_log": ("Event log", "登记簿"),
    "timeline": ("Belief vs truth", "以为与实情"),
}

# Column names of the task table and the panels.
COLUMNS: Final[dict[str, Word]] = {
    "task": ("Task", "任务"),
    "kind": ("kind", "类型"),
    "status": ("status", "状态"),
    "owner": ("owner", "持有人"),
    "attempt": ("attempt", "尝试次数"),
    "lease_token": ("lease_token", "租约号"),
    "fence_token": ("fence", "围栏令牌"),
    "expires_in": ("Expires in", "剩余租期"),
    "expires_at": ("until", "到期"),
    "last_heartbeat": ("last heartbeat", "上次心跳"),
    "checkpoint_step": ("checkpoint step", "检查点步"),
    "result": ("result", "结果"),
    "key": ("key", "键"),
    "call": ("Call", "调用"),  # an effect's call where no idempotency key is sent
    "value": ("value", "内容"),
    "writer": ("writer", "写入者"),
    "time": ("time", "时间"),
    "operation": ("operation", "操作"),
    "reason": ("reason", "原因"),
    "effect": ("effect", "副作用"),
    "worker": ("Worker", "执行者"),
    "step": ("step", "步骤"),
    "seq": ("#", "#"),
    "inside": ("inside the box", "木匣里装着"),
}

# The task table's narrow columns, with their headers on two lines.
HEADERS: Final[dict[str, Word]] = {
    "attempt": ("attempt", "尝试\n次数"),
    "lease_token": ("lease\ntoken", "租约号"),
    "fence_token": ("fence\ntoken", "围栏\n令牌"),
    "expires_in": ("expires\nin", "剩余\n租期"),
    "expires_at": ("until", "到期"),
    "last_heartbeat": ("last\nheartbeat", "上次\n心跳"),
    "checkpoint_step": ("checkpoint\nstep", "检查点\n步"),
}

# The same headers where the whole table must fit in 80 columns: shorter English words, one
# cell between the columns; the Chinese ones as narrow as two characters a line (the glossary's
# words wrapped, 租约号 as 租约/号).
NARROW_HEADERS: Final[dict[str, Word]] = {
    "attempt": ("try", "尝试\n次数"),
    "expires_in": ("time\nleft", "剩余\n租期"),
    "last_heartbeat": ("last\nbeat", "上次\n心跳"),
    "lease_token": ("lease\ntoken", "租约\n号"),
    "checkpoint_step": ("ckpt\nstep", "检查\n点"),
}

# -- the store's words ---------------------------------------------------------------------------

TASK_STATUSES: Final[dict[str, Word]] = {
    "queued": ("queued", "排队中"),
    "running": ("running", "运行中"),
    "waiting": ("waiting", "待审批"),
    "done": ("done", "已完成"),
    "dead": ("dead", "已放弃"),
}

WORKER_STATES: Final[dict[str, Word]] = {
    "idle": ("idle", "空闲"),
    "working": ("working", "工作中"),
    "frozen": ("frozen", "心跳冻结"),
    "stalled": ("stalled", "停顿"),
    "dead": ("dead", "已死"),
    "partitioned": ("partitioned", "断桥"),
}

EVENTS: Final[dict[str, Word]] = {
    "enqueued": ("enqueued", "入队"),
    "claimed": ("claimed", "借出租约"),
    "claim_rejected": ("claim rejected", "领取被拒"),
    "renewed": ("renewed", "心跳续约"),
    "heartbeat_noted": ("heartbeat noted", "心跳已记下（无可续期）"),
    "renew_rejected": ("renew rejected", "续约被拒"),
    "lease_expired": ("lease expired", "租约过期"),
    "checkpoint_saved": ("checkpoint saved", "存入检查点"),
    "checkpoint_rejected": ("checkpoint rejected", "检查点被拒"),
    "write_accepted": ("write accepted", "总册收下"),
    "write_rejected": ("write rejected", "账房拒收"),
    "effect_applied": ("effect applied", "副作用已执行"),
    "effect_deduplicated": ("effect deduplicated", "副作用已去重"),
    "effect_rejected": ("effect rejected", "副作用被拒"),
    "completed": ("completed", "完成"),
    "complete_rejected": ("complete rejected", "完成被拒"),
    "failed": ("failed", "失败"),
    "fail_rejected": ("fail rejected", "失败上报被拒"),
    "parked": ("parked", "挂起待批"),
    "park_rejected": ("park rejected", "挂起被拒"),
    "approved": ("approved", "已批准"),
    "rejected": ("rejected", "已驳回"),
    "approve_ignored": ("approve ignored", "批准被忽略"),
    "reject_ignored": ("reject ignored", "驳回被忽略"),
    "dead_lettered": ("dead lettered", "进入死信队列"),
    "violation": ("violation", "安全违规"),
    "heartbeat_frozen": ("heartbeat frozen", "心跳冻结"),
    "stalled": ("stalled", "停顿"),
    "killed": ("killed", "进程被杀"),
    "partitioned": ("partitioned", "断桥"),
    "healed": ("healed", "桥已修好"),
    "resumed": ("resumed", "恢复"),
    "restarted": ("restarted", "重启"),
    "slowed": ("slowed", "变慢"),
    "skewed": ("skewed", "时钟偏移"),
    "worker_added": ("worker added", "新增执行者"),
    "autopilot": ("autopilot", "自己接着干"),
    "call_dropped": ("call dropped", "调用未送达"),
    "self_fenced": ("self fenced", "主动停手"),
    "checkpoint_ignored": ("checkpoint ignored", "无视检查点"),
    "heartbeat_sent": ("heartbeat sent", "重心跳发出"),
    "heartbeat_payload": ("heartbeat payload", "心跳载荷设定"),
    "store_loaded": ("store loaded", "存储负载变化"),
}

# Why an operation was refused.
REASONS: Final[dict[str, Word]] = {
    "superseded": ("superseded", "已有新租约"),
    "expired": ("expired", "租约已过期"),
    "not_running": ("not running", "任务不在运行"),
    "fenced": ("fenced", "围栏令牌落后"),
    "partitioned": ("partitioned", "断桥，未送达"),
    "not_waiting": ("not waiting", "不在等待审批"),
    "attempts_exhausted": ("attempts exhausted", "次数用尽"),
    "renew_deadline_passed": ("renew deadline passed", "过了续约截止时刻"),
}

# The safety rules the checker judges (core/sim/rules.py), as the light and the summary
# name what broke: a phrase, never the rule's id.
VIOLATIONS: Final[dict[str, Word]] = {
    "stale_write_accepted": ("stale write accepted", "过期写入被接受"),
    "page_without_live_lease": ("page without a live lease", "无有效租约的写入被接受"),
    "double_owner": ("two live leases at once", "同时有两份未过期的租约"),
    "reclaimed_after_end": ("finished task lent out again", "已结束的任务又被借出"),
    "fence_not_newer": ("claim without a newer fence token", "领取时没有更大的围栏令牌"),
    "completed_twice": ("task completed twice", "任务完成了两次"),
    "duplicate_effect": ("side effect done twice", "副作用重复执行"),
    "stuck_task": ("task stuck out of reach", "任务卡死"),
}

# The downstream service's own rules over its books (core/downstream/books.py,
# `ServiceRule`), as the fleet's light names what the service took: its books, not the
# lease store's ledger, so never said in the ledger's words above.
SERVICE_RULES: Final[dict[str, Word]] = {
    "no_stale_write": ("stale write taken", "接受了过期写入"),
    "no_charge_twice": ("charged twice for one thing", "同一件事扣了两次款"),
}

# What a mistake costs where it breaks no safety rule (core/sim/rules.py, `Harm`).
HARMS: Final[dict[str, Word]] = {
    "steps_done_again": ("steps done again", "重做的步数"),
    "time_out_of_reach": ("the longest a task stayed out of reach", "任务无人可接的最长时间"),
}

# The engine's modes: the correct one, or one of the seed's mistakes switched on.
MODES: Final[dict[str, Word]] = {
    "correct": ("the correct run", "正确做法"),
    "no_expiry": ("mistake one: “running” taken as ownership", "误区一：把“运行中”当成所有权"),
    "long_lease": ("mistake two: a very long lease", "误区二：租期拉得极长"),
    "no_fencing": ("mistake three: heartbeats but no fence", "误区三：只有心跳，没有围栏"),
    "no_checkpoint": ("mistake four: no checkpoint", "误区四：只回收资格，不保存中间结果"),
    "unread_checkpoint": (
        "a second lesson: the box saved, then walked past",
        "另一课：木匣存了，接手者却不读",
    ),
    "client_clock": (
        "mistake five: the client's clock judges expiry",
        "误区五：用客户端时钟判断过期",
    ),
    "no_idempotency": ("no idempotency: side effects repeat", "缺少幂等：副作用会重复"),
    "seed_sql": (
        "the seed's three statements with their guards as printed",
        "原文的三条 SQL，守卫照原文",
    ),
    "heartbeat_in_work": (
        "the heartbeat sent from the work loop",
        "心跳和业务逻辑绑在一起",
    ),
    # Chapters 1 to 4a run in this mode: the word names nothing the story has not told yet
    # (the fence tag comes in chapter 4b, "守库人因此把钥匙又改了一次").
    "before_fence": ("the vault's rules as they first were", "库房最初的规矩"),
}

# The modes by a short name, for the header and the palette: "模式 正确做法", never the id.
# The world before the fence names no fence: the story has not invented it yet.
# The sandbox's title (a run with no file). Named by what sets it apart from scenario 14,
# the full sandbox (six tasks of four kinds).
SANDBOX_TITLE: Final = "Small sandbox: two tasks"
SANDBOX_TITLE_ZH: Final = "小沙盒：两项任务"

MODE_NAMES: Final[dict[str, Word]] = {
    "correct": ("correct", "正确做法"),
    "no_expiry": ("mistake one", "误区一"),
    "long_lease": ("mistake two", "误区二"),
    "no_fencing": ("mistake three", "误区三"),
    "no_checkpoint": ("mistake four", "误区四"),
    "unread_checkpoint": ("box unread", "木匣没读"),
    "client_clock": ("mistake five", "误区五"),
    "no_idempotency": ("no idempotency", "缺少幂等"),
    "seed_sql": ("the seed's SQL", "原文 SQL"),
    "heartbeat_in_work": ("heartbeat in the work", "心跳绑在业务里"),
    "before_fence": ("the old ways", "老规矩"),
}

# A task's kind, in the task table.
KINDS: Final[dict[str, Word]] = {
    "ledger": ("ledger", "总册"),
    "browser": ("browser", "浏览器"),
    "tools": ("tools", "工具调用"),
    "approval": ("approval", "审批"),
}

# What a finished task's result holds, by its keys, and why a failed one failed.
RESULTS: Final[dict[str, Word]] = {
    "pages": ("pages", "页数"),
    "total": ("total", "累计"),
    "url": ("URL", "网址"),
    "actions": ("actions", "操作数"),
    "calls": ("calls", "调用数"),
    "documents": ("documents", "文档数"),
    "steps": ("steps", "步数"),
    "approved": ("approved", "已批准"),
    "by": ("by", "完成者"),
}
ERRORS: Final[dict[str, Word]] = {
    "manual_failure": ("failed by hand", "手动上报失败"),
}

# Actions (a scenario's `do`) and the operations the Rejected panel names.
ACTIONS: Final[dict[str, Word]] = {
    "advance": ("advance", "时间流逝"),
    "freeze_heartbeat": ("freeze_heartbeat", "冻结心跳"),
    "stall": ("stall", "停顿"),
    "kill": ("kill", "杀死进程"),
    "partition": ("partition", "断桥"),
    "heal": ("heal", "修桥"),
    "resume": ("resume", "恢复"),
    "restart": ("restart", "重启"),
    "add_worker": ("add_worker", "加入执行者"),
    "autopilot": ("autopilot", "自己接着干"),
    "slow": ("slow", "变慢"),
    "skew": ("skew", "时钟偏移"),
    "heartbeat_payload": ("heartbeat_payload", "设定心跳载荷"),
    "load": ("load", "存储负载"),
    "enqueue": ("enqueue", "入队"),
    "approve": ("approve", "批准"),
    "reject": ("reject", "驳回"),
    "claim": ("claim", "领取"),
    "heartbeat": ("heartbeat", "心跳续约"),
    "renew": ("renew", "心跳续约"),
    "checkpoint": ("checkpoint", "存检查点"),
    "write": ("write", "写入总册"),
    "effect": ("effect", "执行副作用"),
    "complete": ("complete", "完成"),
    "fail": ("fail", "上报失败"),
    "park": ("park", "挂起待批"),
}

# -- the story -------------------------------------------------------------------------------------

# The story's people, by the worker ids the scenarios give them.
PEOPLE: Final[dict[str, Word]] = _CAST  # the story's cast, shared with the fleet

# The bundled scenarios' tasks, by the ids their files give them. The format names a task by
# its id alone, which an English screen shows as written; a Chinese screen names it ("No
# English words, ids or unit letters on Chinese screens"): the story's floor is 第六层.
TASKS: Final[dict[str, Word]] = {
    "harbour": ("harbour", "港口账"),
    "river-tax": ("river-tax", "河税账"),
    "report": ("report", "报告"),
    "agent": ("agent", "Agent 任务"),
    "crawl": ("crawl", "网页抓取"),
    "grant": ("grant", "审批"),
    "fuel": ("fuel", "燃料账"),
}
# A numbered id of a known shape: floor6 is the sixth floor, t1 and task-3 are tasks (the
# sandbox's "+ task" names its new ones task-N), msg-1 is a message.
_NUMBERED = re.compile(r"^(?P<word>floor|task|t|msg)-?(?P<n>\d+)$")
_NUMBERED_ZH: Final[dict[str, str]] = {
    "task": "任务 {n}",
    "t": "任务 {n}",
    "msg": "消息 {n}",
}
_DIGITS_ZH = "零一二三四五六七八九"


def _numeral_zh(n: int) -> str:
    """6 as 六, 12 as 十二, 40 as 四十; past 99 the digits as written."""
    if not 0 < n < 100:
        return str(n)
    tens, ones = divmod(n, 10)
    head = "" if tens == 0 else "十" if tens == 1 else _DIGITS_ZH[tens] + "十"
    return head + (_DIGITS_ZH[ones] if ones else "")


# The downstream service's artifacts, by the name after their task ("t2/result"): what an
# agent's use case writes there (the tools' result, the approved reply, the browser's form).
ARTIFACTS: Final[dict[str, Word]] = {
    "result": ("result", "结果"),
    "sent": ("reply sent", "回信"),
    "form": ("form", "表单"),
}


def artifact_word(name: str, lang: str) -> str | None:
    """An artifact's name in `lang` ("结果" for result), None for a name it does not know."""
    word = ARTIFACTS.get(name)
    return None if word is None else pick(word, lang)


def task_artifact_zh(task_name_zh: str, artifact: str) -> str:
    """ "任务 2 的结果", "第六层的结果": a space only after a number or a Latin letter."""
    gap = " " if task_name_zh[-1:].isascii() and task_name_zh[-1:].isalnum() else ""
    return f"{task_name_zh}{gap}的{artifact}"


def task_name(task_id: str, lang: str) -> str:
    """A task as the screen names it: its id in English, its name in Chinese where the id is
    one the bundled scenarios give or of a known shape; any other id as written."""
    if lang != "zh":
        return task_id
    if task_id in TASKS:
        return pick(TASKS[task_id], lang)
    found = _NUMBERED.match(task_id)
    if found is None:
        return task_id
    n = int(found["n"])
    if found["word"] == "floor":
        return f"第{_numeral_zh(n)}层"
    return _NUMBERED_ZH[found["word"]].format(n=n)


# The story's word for each idea, as the seed says it and as the English story text says it.
STORY: Final[dict[str, Word]] = {
    "store": ("the vault", "库房"),
    "keeper": ("Laojiang, the keeper", "守库人老绛"),
    "task": ("the sixth floor", "第六层"),
    "lease": ("the lease tag", "租牌"),
    "expires_at": ("the hourglass, the return time", "沙漏，归还时刻"),
    "heartbeat": ("renewing the sand, “I'm still here”", "续沙，“我还在”"),
    "expired": ("available to lend again", "可再借出"),
    "fence": ("the fence tag, a number that only grows", "围栏签（只增不减的编号）"),
    "ledger": ("the master ledger", "总册"),
    "rejected": ("the counting house refuses it", "账房拒收"),
    "checkpoint": ("the numbered box on the shelf by the stairs", "暂存木匣，楼梯口的暂存架"),
    "event_log": ("the loan register", "借出登记簿"),
    # The story has no idempotency: its counting house refuses stale pages by the fence tag.
    "idempotency": (
        "(the story has none: the counting house refuses stale pages by the fence tag)",
        "（故事里没有：账房拒收旧页，靠的是围栏签，不是幂等）",
    ),
}


# The transcript's own words (the player's readable output).
TRANSCRIPT: Final[dict[str, Word]] = {
    "step": ("Step", "第{n}步"),
    "lease": TOKENS["lease"],
    "fence": TOKENS["fence"],
    "pass": ("pass", "通过"),
    "fail": ("FAIL", "未通过"),
    "found": ("found", "实际"),
    "passed": ("passed", "通过"),
    "failed": ("failed", "未通过"),
    "violations": ("violations", "安全违规"),
    "none": ("none", "无"),
    # where a mode's mistake breaks no safety rule, what it costs instead
    "harm_not_safety": (
        "this mode's harm is not safety but {harm}: {value}",
        "这个模式的害处不在安全，而在{harm}：{value}",
    ),
    # the same where this run showed none of it ("…: 0 s" read as a harm of nothing)
    "harm_not_shown": (
        "this mode's harm is not safety but {harm}, and this run showed none",
        "这个模式的害处不在安全，而在{harm}；这一局没有出现",
    ),
    # the explorer's result where the mode's harm is not safety (its figure from a run)
    "harm_in_run": (
        "This mode's harm is not safety but {harm}, which a search of free choices cannot "
        "measure (a worker may always wait, or start over): {value} in {scenario}, "
        "against {correct} in its correct run",
        "这个模式的害处不在安全，而在{harm}；穷举的每一步都是自由选择（执行者总可以等，或重来），"
        "量不出这个数：{scenario} 里是 {value}，正确做法下是 {correct}",
    ),
    "start": ("start", "开始"),
    "mode": ("mode", "模式"),
    "seed": ("seed", "种子"),
    "ask": ("Q:", "问："),
    "answer": ("A:", "答："),
    "times": (
        " ({n} times, until {until})",
        "（共 {n} 次，直到 {until}）",
    ),  # repeats of one line folded into it
    "follow_up": ("Follow-up:", "追问："),
}


# -- lookups ------------------------------------------------------------------------------------


def event_word(name: str, lang: str) -> str:
    return lookup(EVENTS, name, lang)


def reason_word(name: str, lang: str) -> str:
    """A register line's reason: a refusal's, or the violation a `violation` line names."""
    return lookup(REASONS if name in REASONS else VIOLATIONS, name, lang)


def status_word(name: str, lang: str) -> str:
    return lookup(TASK_STATUSES, name, lang)


def state_word(name: str, lang: str) -> str:
    return lookup(WORKER_STATES, name, lang)


def violation_word(name: str, lang: str) -> str:
    return lookup(VIOLATIONS, name, lang)


def harm_word(name: str, lang: str) -> str:
    return lookup(HARMS, name, lang)


def violations_phrase(counts: Mapping[str, int], lang: str) -> str:
    """What broke, each rule by its phrase with how often ("stale write accepted × 1"), in
    the order of the rules' table; empty if nothing did."""
    order = {name: i for i, name in enumerate(VIOLATIONS)}
    named = sorted((n for n, k in counts.items() if k), key=lambda n: (order.get(n, len(order)), n))
    sep = "，" if lang == "zh" else ", "
    return sep.join(f"{violation_word(n, lang)} × {counts[n]}" for n in named)


def service_phrase(counts: Mapping[str, int], lang: str) -> str:
    """What the downstream service's books broke ("charged twice for one thing × 2"), in
    the order of its rules' table; empty if nothing."""
    named = [n for n in SERVICE_RULES if counts.get(n)]
    named += sorted(n for n, k in counts.items() if k and n not in SERVICE_RULES)
    sep = "，" if lang == "zh" else ", "
    return sep.join(f"{lookup(SERVICE_RULES, n, lang)} × {counts[n]}" for n in named)


def mode_word(name: str, lang: str) -> str:
    """What a mode means ("mistake three: heartbeats but no fence"), or its name."""
    return lookup(MODES, name, lang)


def action_word(name: str, lang: str) -> str:
    """An action or a refused operation (write, checkpoint, ...)."""
    return lookup(ACTIONS, name, lang)


def token_word(name: str, lang: str) -> str:
    """ "lease" or "fence" as the label beside a token's number."""
    return lookup(TOKENS, name, lang)


def concept_word(name: str, lang: str) -> str:
    return lookup(CONCEPTS, name, lang)


def story_word(name: str, lang: str) -> str:
    return lookup(STORY, name, lang)


def mode_name(name: str, lang: str) -> str:
    """A mode's short name ("mistake three", "误区三")."""
    return lookup(MODE_NAMES, name, lang)


def kind_word(name: str, lang: str) -> str:
    return lookup(KINDS, name, lang)


def result_line(result: str | None, error_code: str | None, lang: str) -> str:
    """A task's result (JSON, as the store keeps it) or its error, in words: "pages 6 · total
    288" / "页数 6 · 累计 288"; an error code by its word ("failed by hand")."""
    import json

    if result in (None, "", "null"):
        return lookup(ERRORS, error_code, lang) if error_code else ""
    try:
        data = json.loads(str(result))
    except ValueError:
        return str(result)
    if not isinstance(data, dict):
        return str(data)
    parts = []
    for key, value in data.items():
        label = lookup(RESULTS, key, lang)
        if value is True:
            parts.append(label)
        elif key == "by":
            parts.append(f"{label} {called(str(value), lang)}")
        elif value is not None:
            parts.append(f"{label} {value}")
    return " · ".join(parts)


def person_name(worker_id: str, lang: str) -> str | None:
    """The story's name for a worker id, or None for a worker the story does not know."""
    word = PEOPLE.get(worker_id)
    return None if word is None else pick(word, lang)
