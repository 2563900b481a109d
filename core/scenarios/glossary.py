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

# What a box (checkpoint) holds, by the keys of each task kind's state. The browser's are
# the seed's four: "已打开到哪个 URL；已完成哪些操作；当前截图或 DOM 摘要在哪；下一步计划是什么".
BOX: Final[dict[str, Word]] = {
    "url": ("URL", "网址"),
    "actions": ("actions done", "已做操作"),
    "dom_summary": ("DOM summary", "DOM 摘要"),
    "screenshot": ("screenshot", "截图"),
    "next_action": ("next step", "下一步"),
    "calls": ("calls done", "已做调用"),
    "documents": ("documents", "文档数"),
    "artifacts": ("artifacts", "产物"),
    "reconciled": ("pages reconciled", "已对齐页数"),
    "total": ("running total", "累计"),
    "last": ("last item", "最后一项"),
    "done": ("steps done", "已做步骤"),
}


_BOX_LISTS: Final = ("actions", "calls", "artifacts", "done")
_DOM_READ = re.compile(r"^(?P<n>\d+) nodes read from (?P<url>\S+)$")
_STEP_VERB = re.compile(r"^(?P<n>\d+):(?P<verb>\w+)$")


def _box_item(item: str, lang: str) -> str:
    """One thing done, "3:extract", with its verb in `lang`: a Chinese screen says the step
    as a sentence does ("第 3 步提取"), not a code with a colon."""
    found = _STEP_VERB.match(item)
    if found is None or lang != "zh":
        return item
    return f"第 {found['n']} 步{lookup(PAGE_VERBS, found['verb'], lang)}"


def _box_value(key: str, value: object, lang: str) -> str:
    if isinstance(value, list):
        return ("、" if lang == "zh" else ", ").join(_box_item(str(v), lang) for v in value)
    shown = str(value)
    if lang != "zh":
        return shown
    if key == "last":
        return lookup(VILLAGES, shown, lang)
    if key == "next_action":
        return lookup(PAGE_VERBS, shown, lang)
    found = _DOM_READ.match(shown) if key == "dom_summary" else None
    if found is not None:
        return f"从 {found['url']} 读出 {found['n']} 个节点"
    return shown


def box_contents(state: Mapping[str, object], lang: str) -> str:
    """What is inside a box, in a line, in `lang`: each known part by its word, a list with
    every item ("actions done: 1:open, 2:act, 3:extract"). The English line is what a
    scenario's `box` expectation says."""
    parts = []
    colon = "：" if lang == "zh" else ": "
    for key, (en, zh) in BOX.items():
        if key not in state or state[key] in (None, "", []):
            continue
        parts.append(f"{zh if lang == 'zh' else en}{colon}{_box_value(key, state[key], lang)}")
    return " · ".join(parts)


def box_parts(state: Mapping[str, object], lang: str) -> list[tuple[str, str]]:
    """The box's parts as (word, value) pairs in `lang`, for a screen that lays them out."""
    return [
        (pick(word, lang), _box_value(key, state[key], lang))
        for key, word in BOX.items()
        if key in state and state[key] not in (None, "", [])
    ]


def box_line(english: str, lang: str) -> str:
    """A box's English line (a scenario's `box` expectation) in `lang`: read back into its
    parts and said again; a line of another shape stays as written."""
    words = {en: key for key, (en, _) in BOX.items()}
    state: dict[str, object] = {}
    for part in english.split(" · "):
        label, sep, value = part.partition(": ")
        key = words.get(label)
        if not sep or key is None:
            return english
        state[key] = value.split(", ") if key in _BOX_LISTS else value
    return box_contents(state, lang)


# A page an autopilot worker writes is data, written in English (`--json` keeps it so); a
# Chinese run shows it in Chinese. A scripted page that gives its Chinese form (`value_zh`)
# is written in Chinese by a Chinese run, and shown as written. The villages of the ledger
# kind, and the verbs of the browser's and the tools' pages.
VILLAGES: Final[dict[str, Word]] = {
    "north bank": ("north bank", "北岸"),
    "south bank": ("south bank", "南岸"),
    "west ferry": ("west ferry", "西渡口"),
    "east flat": ("east flat", "东滩"),
    "stone bridge": ("stone bridge", "石桥"),
    "willow bay": ("willow bay", "柳湾"),
    "pine mouth": ("pine mouth", "松口"),
    "deer creek": ("deer creek", "鹿溪"),
    "bluestone": ("bluestone", "青石"),
    "maple wood": ("maple wood", "枫林"),
}
PAGE_VERBS: Final[dict[str, Word]] = {
    "open": ("open", "打开"),
    "reopen": ("reopen", "重新打开"),
    "finish": ("finish", "完成任务"),
    "act": ("act", "操作"),
    "extract": ("extract", "提取"),
    "screenshot": ("screenshot", "截图"),
    "retrieve": ("retrieve", "检索"),
    "call_api": ("call the API", "调用 API"),
    "produce": ("produce", "生成结果"),
    "draft": ("draft", "起草"),
    "apply": ("apply", "执行"),
}
_LEDGER_VALUE = re.compile(
    r"^page (?P<n>\d+): (?P<village>[a-z ]+?),? (?P<grain>\d+) dan(?: \(total (?P<total>\d+)\))?$"
)


def ledger_value(value: str, lang: str) -> str:
    """A ledger page's text in `lang`: "page 3: west ferry 73 dan (total 288)" is
    "第 3 页：西渡口 73 石（累计 288）" in Chinese; a page of another shape has its verb
    translated ("open https://..." is "打开 https://..."), anything else stays as written."""
    found = _LEDGER_VALUE.match(value) if lang == "zh" else None
    if found is not None:
        village = lookup(VILLAGES, found["village"], lang)
        total = f"（累计 {found['total']}）" if found["total"] else ""
        return f"第 {found['n']} 页：{village} {found['grain']} 石{total}"
    if "; " in value:  # "reopen https://...; extract": each part its own verb
        joiner = "；" if lang == "zh" else "; "
        return joiner.join(ledger_value(part, lang) for part in value.split("; "))
    verb, sep, rest = value.partition(" ")
    return f"{lookup(PAGE_VERBS, verb, lang)}{sep}{rest}" if verb in PAGE_VERBS else value


def page_words(value: str, lang: str, forms: Mapping[str, Word] | None = None) -> str:
    """A page's text in `lang`, said when it is drawn: a scripted page by its own form in
    `lang` (`forms`, the snapshot's both forms of each, whichever was written), any other
    as `ledger_value` says it."""
    word = forms.get(value) if forms else None
    return pick(word, lang) if word is not None else ledger_value(value, lang)


# The check of the books (each page's total is the previous page's total plus its own
# amount), where it breaks, and what a refused page would have done to them. "账本看起来仍然
# 整齐，却悄悄混进了两套互相覆盖的世界": the page looks like any page; these say where the two
# worlds meet, and what the fence kept out.
BOOKS: Final[dict[str, Word]] = {
    "broken": (
        "The books break at page {page}. It is {stale}'s page, written from the memory of an "
        "old lease{stale_fence}; page {other_page} is {other}'s{other_fence}, built on another "
        "total: {before} + {amount} is not {after}. Two worlds meet here.",
        "账本在第 {page} 页断开。这一页是{stale}凭旧租约的记忆写的{stale_fence}；第 {other_page} "
        "页是{other}写的{other_fence}，接的是另一个累计：{before} + {amount} 不等于 {after}。"
        "两个世界在这里相接。",
    ),
    # the stale page is the later of the two: built on a total the page before does not say
    "broken_on": (
        "The books break at page {page}. It is {stale}'s page, written from the memory of an "
        "old lease{stale_fence}, built on a total of {built_on}; page {other_page} before it is "
        "{other}'s{other_fence} and says {before}: {before} + {amount} is not {after}. Two "
        "worlds meet here.",
        "账本在第 {page} 页断开。这一页是{stale}凭旧租约的记忆写的{stale_fence}，接的是累计 "
        "{built_on}；它前面的第 {other_page} 页是{other}写的{other_fence}，写的是 {before}："
        "{before} + {amount} 不等于 {after}。两个世界在这里相接。",
    ),
    # a stale page whose neighbours give no sum to fail (they say no total, or the current
    # world has not built on it yet): where two worlds meet all the same
    "late": (
        "Page {page} is {stale}'s, written when {stale}'s lease was no longer the task's "
        "current one{stale_fence}: a page of another world, let into the ledger.",
        "第 {page} 页是{stale}写的，那时{stale}的租约已不是任务当前的租约{stale_fence}："
        "另一个世界的一页，被收进了总册。",
    ),
    # the same, written over another holder's accepted page (a page that says no total: a
    # tools kind's), which the fence would have kept
    "late_over": (
        "Page {page} is {stale}'s, written when {stale}'s lease was no longer the task's "
        "current one{stale_fence}, over {over}'s page{over_fence}: a page of another world, "
        "let into the ledger in place of the current one's.",
        "第 {page} 页是{stale}写的，那时{stale}的租约已不是任务当前的租约{stale_fence}，"
        "盖掉了{over}写的那一页{over_fence}：另一个世界的一页，顶替当前这一页被收进了总册。",
    ),
    # a break with no stale page: a step done again read other figures (no box told the
    # redo what was read before, or the reports were counted again), not a second world
    "redone": (
        "The books do not add up at page {page}, and no page there is stale: {who} did "
        "{steps} again and read other figures this time. Page {page} now says total {total}; "
        "page {other_page}, {other}'s, was built on {built_on}: {before} + {amount} is not "
        "{after}. Work done again, not two worlds.",
        "账本在第 {page} 页对不上，但这里没有哪一页过期：{who}把{steps}又做了一遍，这回读到的"
        "数不一样。第 {page} 页现在写的累计是 {total}；第 {other_page} 页是{other}写的，接的是 "
        "{built_on}：{before} + {amount} 不等于 {after}。这是重做的工作，不是两个世界。",
    ),
    "steps_one": ("step {steps}", "第 {steps} 步"),
    "steps_many": ("steps {steps}", "第 {steps} 步"),
    "fence": (" (fence token {n})", "（围栏令牌 {n}）"),
    "fence_newest": (" (fence token {n}, newest {newest})", "（围栏令牌 {n}，最新 {newest}）"),
    # which check refused a page: the fence (a token behind the newest) or the lease check
    # (the lease ran out, was superseded, or the task is not running)
    "refused": (
        "The fence kept out what {who} would have written: “{value}”.",
        "围栏挡下了{who}本来要写的：“{value}”。",
    ),
    "refused_over": (
        "The fence kept out what {who} would have written: “{value}”. It would have put "
        "total {total} over {over}'s {over_total} on page {page}.",
        "围栏挡下了{who}本来要写的：“{value}”。它会把累计 {total} 盖在{over}第 {page} 页的 "
        "{over_total} 之上。",
    ),
    "refused_lease": (
        "The lease check kept out what {who} would have written ({reason}): “{value}”.",
        "租约校验挡下了{who}本来要写的（{reason}）：“{value}”。",
    ),
    "refused_lease_over": (
        "The lease check kept out what {who} would have written ({reason}): “{value}”. It "
        "would have put total {total} over {over}'s {over_total} on page {page}.",
        "租约校验挡下了{who}本来要写的（{reason}）：“{value}”。它会把累计 {total} 盖在{over}"
        "第 {page} 页的 {over_total} 之上。",
    ),
    # what a refused page that says no total would have done (a tools kind's page: "call_api
    # #3 -> artifact://..."), said after which check refused it: whose accepted page it would
    # have covered, or that the page was still empty. "就算他本人完全不知道自己已经失去所有权，
    # 只要他的围栏签编号落后于当前持有人，他写下的东西都会被账房拒收。"
    "over_page": (
        "It would have put that over {over}'s page {page}{over_fence}, which says “{there}”.",
        "它会盖掉{over}写的第 {page} 页{over_fence}，那一页写的是“{there}”。",
    ),
    "over_same": (
        "It would have put that over {over}'s page {page}{over_fence}: the same words, but "
        "then as {who}'s page{fence}, from a lease that is no longer current.",
        "它会盖掉{over}写的第 {page} 页{over_fence}：字一样，可这一页就成了{who}凭已不再有效的"
        "租约写的{fence}。",
    ),
    "over_nothing": (
        "Page {page} holds nothing yet: it would have been the first page there, from a "
        "lease that is no longer current.",
        "第 {page} 页还空着：它会成为那里的第一页，来自一份已不再有效的租约。",
    ),
    "newest": ("{page} (newest {newest})", "{page}（最新 {newest}）"),
}


# Two harms the books do not show, said alike by the app (Belief vs truth, the Effects panel),
# the exported page and `play`: two live leases at once, and a side effect applied again.
# "账本看起来仍然整齐，却悄悄混进了两套互相覆盖的世界" is seen where the two leases overlap;
# "Idempotency 负责“重复做时别把世界打坏”" where one call is charged twice.
SEEN: Final[dict[str, Word]] = {
    "tl_overlap": (
        "{first}'s lease {old} and {second}'s lease {new} were live at once from {start}"
        " to {end} ({span}): the store's clock held {first}'s lease until {until}",
        "从 {start} 到 {end}（{span}），{first}的租约号 {old} 和{second}的租约号 {new} "
        "同时有效：按守库人的钟，{first}的租约要到 {until} 才到期",
    ),
    "tl_overlap_now": (
        "{first}'s lease {old} and {second}'s lease {new} have been live at once since"
        " {start} ({span} so far): the store's clock holds {first}'s lease until {until}",
        "从 {start} 起（已有 {span}），{first}的租约号 {old} 和{second}的租约号 {new} "
        "同时有效：按守库人的钟，{first}的租约要到 {until} 才到期",
    ),
    # one call of a side effect: its step and what it calls
    "effect_step": ("step {step}: {what}", "第 {step} 步：{what}"),
    "effect_api_call": ("the internal API", "调用内部 API"),
    # a call applied again, and what that cost where its payload says
    "effect_charged_2": ("charged twice: 2 × {amount}", "扣了两次：2 × {amount}"),
    "effect_charged": ("charged {n} times: {n} × {amount}", "扣了 {n} 次：{n} × {amount}"),
    "effect_again": ("applied again: {n} times", "又执行了一次：共 {n} 次"),
    # the same, as a sentence of the transcript: when, who, which call, under which token
    "effect_repeat": (
        "At {at} {who}'s call ({call}) ran again{fence}: {outcome}.",
        "{at}，{who}的调用（{call}）又执行了一次{fence}：{outcome}。",
    ),
    "effect_fence": (" (fence token {n})", "（围栏令牌 {n}）"),
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
