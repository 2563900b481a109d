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

Word = tuple[str, str]  # (en, zh)


def pick(word: Word, lang: str) -> str:
    """One (en, zh) pair in `lang` ("zh" or anything else for English)."""
    return word[1] if lang == "zh" else word[0]


def lookup(table: Mapping[str, Word], name: str, lang: str, /, **fmt: object) -> str:
    """The one lookup of every word table (this module's, the transcript's, the app's):
    `name` in `lang`, its `{fields}` filled from `fmt`; a name the table does not have is
    shown as itself (a word the code writes before any table knows it)."""
    word = table.get(name)
    if word is None:
        return name
    text = pick(word, lang)
    return text.format(**fmt) if fmt else text


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
# cell between the columns; the Chinese ones are already as narrow as two characters.
NARROW_HEADERS: Final[dict[str, Word]] = {
    "attempt": ("try", "尝试\n次数"),
    "expires_in": ("time\nleft", "剩余\n租期"),
    "last_heartbeat": ("last\nbeat", "上次\n心跳"),
    "checkpoint_step": ("ckpt\nstep", "检查点"),
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
    """One thing done, "3:extract", with its verb in `lang` ("3:提取")."""
    found = _STEP_VERB.match(item)
    if found is None or lang != "zh":
        return item
    return f"{found['n']}:{lookup(PAGE_VERBS, found['verb'], lang)}"


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


# A timing mistake in a file, in Chinese, by the rule it breaks (the English is the
# engine's own message). The keys are the file's, as it spells them.
CONFIG_MISTAKES: Final[dict[str, str]] = {
    "ttl_positive": "lease_ttl 必须为正，现在是 {ttl}",
    "heartbeat_positive": "heartbeat_every 必须为正",
    "deadline_positive": "renew_deadline 必须为正",
    "poll_positive": "poll_every 必须为正",
    "ttl_too_short": "lease_ttl 太短，分不出心跳的间隔",
    "ttl_above_deadline": "lease_ttl（{ttl}）必须长于 renew_deadline（{deadline}）",
    "deadline_above_heartbeat": (
        "renew_deadline（{deadline}）必须长于 heartbeat_every（{heartbeat}）"
    ),
    "heartbeat_below_long_deadline": (
        "heartbeat_every（{heartbeat}）必须短于误区二（租期拉得极长）的续约截止时长（{deadline}）"
    ),
}


# A mistake in a scenario file, by its kind, in both languages: the English is what the
# loader has always said (tests and docs quote it), the Chinese what a zh run says instead.
# Keys, ids and values stay as the file spells them; the sentence around them is the run's.
FILE_MISTAKES: Final[dict[str, Word]] = {
    "unknown_key": ('unknown key "{key}" in {table}{hint}', "{table}里没有 “{key}” 这一项{hint}"),
    "the_scenario": ("the scenario", "剧本"),
    "table": ("[[{name}]]", "[[{name}]]"),
    "did_you_mean": (' (did you mean "{close}"?)', "（是不是想写 “{close}”？）"),
    "action_takes_no_key": (
        'action "{action}" takes no key "{key}"',
        "动作 “{action}” 没有 “{key}” 这一项",
    ),
    "key_without_action": (
        '"{key}" without an action: add do = "..."',
        '有 “{key}” 却没有动作：加上 do = "..."',
    ),
    "unknown_expect_key": (
        'unknown key "{key}" in a {subject} expectation{hint}; it may have {valid}',
        "对{subject}的检查里没有 “{key}” 这一项{hint}；可以写的有 {valid}",
    ),
    "unknown_action": ('unknown action "{action}"{hint}', "没有 “{action}” 这个动作{hint}"),
    "do_not_string": ("do must be a string, got {got}", "do 必须是字符串，这里是{got}"),
    "missing_title": (
        'missing title: add a line like title = "The fog"',
        '缺少标题：加一行，例如 title = "The fog"',
    ),
    "action_needs": ('action "{action}" needs "{key}"', "动作 “{action}” 需要 “{key}”"),
    "worker_needs_id": (
        'a worker needs an id, like id = "acheng"',
        '每个执行者都要有 id，例如 id = "acheng"',
    ),
    "task_needs_id": (
        'a task needs an id, like id = "sixth-floor"',
        '每个任务都要有 id，例如 id = "sixth-floor"',
    ),
    "must_be_string": ("{name} must be a string, got {got}", "{name} 必须是字符串，这里是{got}"),
    "must_be_bool": (
        "{name} must be true or false, got {got}",
        "{name} 必须是 true 或 false，这里是{got}",
    ),
    "must_be_int": ("{name} must be an integer, got {got}", "{name} 必须是整数，这里是{got}"),
    "at_least": ("{name} must be at least {low}, got {got}", "{name} 至少是 {low}，这里是 {got}"),
    "at_most": ("{name} is too large: {got} (at most {high})", "{name} 太大：{got}（最多 {high}）"),
    "must_be_tables": (
        "{key} must be an array of tables, written [[{key}]]",
        "{key} 必须是表的数组，写成 [[{key}]]",
    ),
    "unknown_member": (
        'unknown {what} "{value}"{hint}; {listing} {valid}',
        "没有 “{value}” 这个{what}{hint}；可用的{what}有 {valid}",
    ),
    "mode": ("mode", "模式"),
    "kind": ("kind", "任务类型"),
    "duplicate_id": ('duplicate {what} id "{id}"', "{what} id “{id}” 重复了"),
    "worker": ("worker", "执行者"),
    "task": ("task", "任务"),
    "ledger": ("ledger", "总册"),
    "rejected": ("rejected", "拒收"),
    "effect": ("effect", "副作用"),
    "violation": ("violation", "违规"),
    "metric": ("metric", "指标"),
    "unknown_worker": ('unknown worker "{id}"{hint}', "没有 “{id}” 这个执行者{hint}"),
    "unknown_task": ('unknown task "{id}"{hint}', "没有 “{id}” 这个任务{hint}"),
    "none_yet_workers": (" (there are no workers yet)", "（这时还没有执行者）"),
    "none_yet_tasks": (" (there are no tasks yet)", "（这时还没有任务）"),
    "bad_toml": ("bad TOML: {message}", "TOML 写法有误：{message}"),
    "toml_column": (" (column {n})", "（第 {n} 列）"),
    "toml_end": (" (at the end of the file)", "（在文件末尾）"),
    "toml_too_deep": ("bad TOML: nested too deeply", "TOML 写法有误：嵌套太深"),
    # a value's problem, told after its key: `lease_ttl` + the rest
    "bad_duration": (
        ': bad duration {value}: write it like "250ms", "10s", "2m" or "1h"',
        "：时长 {value} 写不对，要写成 “250ms”、“10s”、“2m” 或 “1h”",
    ),
    "duration_type": (
        ' must be a duration like "10s", got {got}',
        " 必须是时长，例如 “10s”，这里是{got}",
    ),
    "duration_negative": (" must not be negative, got {value}", " 不能是负数，这里是 {value}"),
    "duration_zero": (" must be longer than zero, got {value}", " 必须大于零，这里是 {value}"),
    "duration_too_long": (
        " is too long: {value} (at most 1 day, 24h)",
        " 太长：{value}（最多一天，24h）",
    ),
    "duration_too_large": (": duration {value} is far too large", "：时长 {value} 大得离谱"),
    "duration_bare_number": (
        ' must be written with its unit, like "{value}s" or "{value}ms", '
        "got the bare number {value}",
        " 必须带上单位，例如 “{value}s” 或 “{value}ms”，这里只写了数字 {value}",
    ),
    "duration_not_finite": (
        " must be a finite duration, got {value}",
        " 必须是有限的时长，这里是 {value}",
    ),
    "not_empty": (" must not be empty", " 不能为空"),
    "no_such_scenario": (
        "no such file, nor a bundled scenario of that name ({hint}"
        "`borrowed-keys list` names them all)",
        "没有这个文件，也没有叫这个名字的内置剧本（{hint}borrowed-keys list 会列出全部）",
    ),
    "near_names": ("did you mean {names}? ", "是不是想写 {names}？"),
    "or": (" or ", " 或 "),
    "no_such_file": ("cannot read: no such file", "读不到：没有这个文件"),
    "a_directory": ("cannot read: it is a directory, not a file", "读不到：这是目录，不是文件"),
    "empty_file": ("empty file: a scenario needs at least a title", "空文件：剧本至少要有标题"),
    "not_utf8": (
        "not UTF-8 text (byte 0x{byte}); save the file as UTF-8",
        "不是 UTF-8 文本（字节 0x{byte}）；请把文件存成 UTF-8",
    ),
    "utf16": (
        "not UTF-8 text (it is UTF-16); save the file as UTF-8",
        "不是 UTF-8 文本（这是 UTF-16）；请把文件存成 UTF-8",
    ),
    "manual_on_autopilot": (
        '"{action}" is a manual operation, but worker "{worker}" is on autopilot '
        "(give it autopilot = false)",
        "“{action}” 要手动操作，“{worker}” 却是 autopilot（自动运行）：写上 autopilot = false",
    ),
    "empty_step": ("empty step: give it say, do or expect", "空步骤：给它写上 say、do 或 expect"),
    "without_question": (
        '"{key}" without a question: add ask = "..."',
        '有 “{key}” 却没有问题：加上 ask = "..."',
    ),
    "without_follow_up": (
        '"{key}" without a follow-up question: add {follow_up} = "..."',
        '有 “{key}” 却没有追问：加上 {follow_up} = "..."',
    ),
    "value_zh_alone": (
        '"value_zh" without value: add value = "..."',
        '有 “value_zh” 却没有 “value”：加上 value = "..."',
    ),
    # a question's choices (a follow-up's keys have `p` = "follow_up_" in front)
    "choices_zh_alone": (
        '"{p}choices_zh" without choices: add {p}choices = [...]',
        "有 “{p}choices_zh” 却没有 “{p}choices”：加上 {p}choices = [...]",
    ),
    "answer_alone": (
        '"{p}answer" without choices: add {p}choices = [...]',
        "有 “{p}answer” 却没有 “{p}choices”：加上 {p}choices = [...]",
    ),
    "choices_no_answer": (
        "{p}choices need an answer: add {p}answer = N, the right one's number (1 to {n})",
        "{p}choices 要有答案：加上 {p}answer = N，对的那个选项的序号（1 到 {n}）",
    ),
    "answer_out_of_range": (
        "{p}answer must be one of the choices, 1 to {n}, got {answer}",
        "{p}answer 必须是某个选项的序号，1 到 {n}，这里是 {answer}",
    ),
    "choices_zh_count": (
        "{p}choices_zh has {zh} answers, {p}choices has {n}: "
        "give both the same answers in the same order",
        "{p}choices_zh 有 {zh} 个选项，{p}choices 有 {n} 个：两边要写同样的选项，次序相同",
    ),
    "choice_n": ("choice {n}", "第 {n} 个选项"),
    "choice_n_in": ("choice {n} in {key}", "{key} 的第 {n} 个选项"),
    "choices_not_array": (
        '{key} must be an array of short answers, like ["yes", "no"]',
        '{key} 必须是简短答案的数组，例如 ["yes", "no"]',
    ),
    "choices_count": (
        "{key} must have {low} to {high} answers, got {count}",
        "{key} 要有 {low} 到 {high} 个选项，这里有 {count} 个",
    ),
    # a size (a heartbeat's payload), after its key
    "size_type": (' must be a size like "2MB", got {got}', " 必须是大小，例如 “2MB”，这里是{got}"),
    "size_negative": (" must not be negative, got {value}", " 不能是负数，这里是 {value}"),
    "size_unread": (
        ' must be a size like "2MB", "512KB" or "0", got "{value}"',
        " 必须是大小，例如 “2MB”、“512KB” 或 “0”，这里是 “{value}”",
    ),
    "size_too_large": (" is too large: {value} (at most 1GB)", " 太大：{value}（最多 1GB）"),
    # text a terminal would not simply print, after its key
    "id_not_printable": (
        " must be one line of printable text; it holds {char}",
        " 必须是一行可打印的文字，里面却有{char}",
    ),
    "text_one_line": (" must be one line; it holds {char}", " 必须只占一行，里面却有{char}"),
    "text_no_control": (
        " must hold no control characters; it holds {char}",
        " 不能含控制字符，里面却有{char}",
    ),
    "char_line_break": ("a line break (U+{code})", "换行符（U+{code}）"),
    "char_nul": ("a NUL character (U+0000)", "空字符 NUL（U+0000）"),
    "char_escape": (
        "an escape character (U+001B, which starts a terminal's control sequence)",
        "转义字符（U+001B，终端控制序列由它开头）",
    ),
    "char_surrogate": (
        "a lone surrogate (U+{code}, bytes that are not UTF-8 text)",
        "残缺的半个字符（U+{code}，不是 UTF-8 文本的字节）",
    ),
    "char_unprintable": (
        "a character that is not printable (U+{code})",
        "不可打印的字符（U+{code}）",
    ),
    "too_much_work": (
        "too much work: the tasks add up to more than {high} steps",
        "工作量太大：任务加起来超过 {high} 步",
    ),
    "too_long_to_simulate": (
        "this run would be too long to simulate: about {wakeups} worker wake-ups by here "
        "(at most {high}); advance less time or poll less often",
        "这一场太长，模拟不了：到这里执行者大约要醒来 {wakeups} 次（最多 {high} 次）；"
        "少推进一些时间，或者轮询得慢一些",
    ),
    "too_many_of": ("too many {what} (at most {high})", "{what}太多（最多 {high} 个）"),
    "too_large_file": (
        "file too large (a scenario is at most 1 MB)",
        "文件太大（一个剧本最多 1 MB）",
    ),
    "binary_byte": (
        "binary data (a NUL byte), not a TOML text",
        "这是二进制数据（含 NUL 字节），不是 TOML 文本",
    ),
    "binary_char": (
        "binary data (a NUL character), not a TOML text",
        "这是二进制数据（含 NUL 字符），不是 TOML 文本",
    ),
    "lone_surrogate": ("not UTF-8 text (a lone surrogate)", "不是 UTF-8 文本（有残缺的半个字符）"),
    "too_deep": ("nested too deeply", "嵌套太深"),
    # the system's own reason (strerror) stays as it is
    "cannot_read": ("cannot read: {why}", "读不到：{why}"),
    "min_above_max": ("metric {metric}: min is above max", "指标 {metric}：min 比 max 还大"),
    "expect_not_table": (
        "each expectation must be an inline table, got {got}",
        "每条检查都必须是内联表，这里是{got}",
    ),
    "expect_two_subjects": (
        'an expectation names one subject, this one names "{one}" and "{two}"',
        "一条检查只能针对一样东西，这条同时写了 “{one}” 和 “{two}”",
    ),
    "expect_unknown_key": (
        'unknown key "{key}" in an expectation{hint}',
        "检查里没有 “{key}” 这一项{hint}",
    ),
    "expect_no_subject": (
        "an expectation needs a subject: one of {valid}",
        "每条检查都要写明针对什么，可写的有 {valid}",
    ),
    "expect_not_array": (
        'expect must be an array of inline tables, like expect = [{{ task = "t1", status = '
        '"done" }}], got {got}',
        'expect 必须是内联表的数组，例如 expect = [{{ task = "t1", status = "done" }}]，'
        "这里是{got}",
    ),
    "too_many": (
        "too many {what}: {count} (at most {high})",
        "{what}太多：{count} 个（最多 {high} 个）",
    ),
    "too_long_text": (
        "{name} is too long (at most {high} characters)",
        "{name} 太长（最多 {high} 个字符）",
    ),
    "number_type": (" must be a number, got {got}", " 必须是数字，这里是{got}"),
    "above_zero": (" must be above zero, got {value}", " 必须大于零，这里是 {value}"),
    "too_large": (" is too large: {value} (at most {high})", " 太大：{value}（最多 {high}）"),
    "task status": ("task status", "任务状态"),
    "worker state": ("worker state", "执行者状态"),
    "rejection reason": ("rejection reason", "拒收原因"),
    "panel": ("panel", "面板"),
    "workers": ("workers", "执行者"),
    "tasks": ("tasks", "任务"),
    "steps": ("steps", "步骤"),
    # TOML's kinds of value, as a mistake names what it found
    "type_bool": ("a boolean", "布尔值"),
    "type_int": ("an integer", "整数"),
    "type_float": ("a number with a fraction", "小数"),
    "type_str": ("a string", "字符串"),
    "type_list": ("an array", "数组"),
    "type_dict": ("a table", "表"),
    "type_datetime": ("a datetime", "日期时间"),
    "type_date": ("a date", "日期"),
    "type_time": ("a time", "时刻"),
}


# Every error the core raises on purpose that can reach a person, by its `why` (the
# engine's Why, the simulation's Unfit), in both languages. The English is what the core
# has always said (a test holds each row to the error's own message); `{message}` stands
# for the core's own line where it is more than a template (a store's path and driver
# words), which the Chinese quotes as the store's words. Ids stay as the run spells them;
# a worker the story knows goes by its name.
ENGINE_ERRORS: Final[dict[str, Word]] = {
    # the engine's
    "general": ("{message}", "核心拒绝了这一步（原话：{message}）"),
    "config": ("{message}", "租约时长的设定不成立：{rule}"),
    "store": ("{message}", "存储无法使用（存储的原话：{message}）"),
    "clock_behind": (
        "{message}",
        "本进程的时钟落后于存储里已经写下的时刻：在 SQLite 上每个进程用自己的时钟判断租约，"
        "时钟对不上的进程无法被安全地判断，所以停下（存储的原话：{message}）",
    ),
    "schema_version": (
        "{message}",
        "这个存储的表结构版本与本程序不符，文件原样未动（存储的原话：{message}）",
    ),
    "store_closed": ("{message}", "存储已经关闭，不再接受新的事务"),
    "disk_full": (
        "{message}",
        "磁盘已满：这个事务没有写进去，数据库里仍是此前提交的内容",
    ),
    "foreign_log": (
        "{message}",
        "数据库旁边的预写日志不属于它，两者都原样未动（存储的原话：{message}）",
    ),
    "connection_lost": ("{message}", "打开存储时连接断了，可以再试一次"),
    "unknown_task": ("unknown task {task!r}", "没有 “{task}” 这个任务"),
    "duplicate_task": ("task {task!r} already exists", "任务 “{task}” 已经存在"),
    "invalid_payload": ("{message}", "这份数据存不成 JSON，存储什么也没写"),
    "invalid_argument": ("{message}", "给存储的参数类型或范围不对，存储什么也没写"),
    "invalid_id": ("{message}", "这个编号不是一行可显示的文字，存储什么也没写"),
    "lease_mismatch": ("{message}", "这份租约从来不是为这个任务签发的"),
    "not_waiting": (
        "cannot {operation} {task}: it is {status}, not waiting for approval",
        "无法{operation}任务 “{task}”：它现在{status}，并不在等待审批",
    ),
    "lease_rejected": ("{message}", "{refusal}"),
    "lease_lost": (
        "{message}",
        "{worker}失去了任务 “{task}” 的租约，手上的工作已经停下（存储的原话：{message}）",
    ),
    "not_claimed": ("{message}", "领不到任务 “{task}”（存储的原话：{message}）"),
    "downstream_refused": ("{message}", "下游服务拒绝了这次写入或调用（服务的原话：{message}）"),
    # the simulation's: an act that does not fit the run
    "unknown_worker": ("{action}: unknown worker {worker!r}", "没有 “{worker}” 这个执行者"),
    "worker_exists": (
        "add_worker: worker {worker!r} already exists",
        "执行者{worker}已经在了",
    ),
    "no_lease": (
        "{action}: {worker} holds no lease in its memory",
        "{worker}的记忆里没有租约，{action}做不成",
    ),
    "does_not_fit": ("{action}: {cause}", "这一步做不成：{cause}"),
    "time_backwards": ("time cannot go backwards", "时间不能倒流"),
    "unknown_action": ("unknown action {action!r}", "没有 “{action}” 这个动作"),
    "save_needs_sqlite": (
        "only a run on SQLite can be saved and restored",
        "只有用 SQLite 的运行才能保存和恢复",
    ),
    "save_needs_manual": (
        "a run with autopilot workers cannot be saved",
        "有执行者在自动运行，这次运行不能保存",
    ),
    "stalled": ("{worker} is stalled; resume it first", "{worker}停顿着：先让它恢复"),
    "nothing_to_claim": ("nothing to claim", "没有可以领取的任务"),
    "heartbeat_frozen": ("{worker}'s heartbeat is frozen", "{worker}的心跳冻结了"),
    "partitioned": ("{worker} is partitioned from the store", "{worker}与存储之间断了桥"),
}

# How a scenario's run says it stopped on such an error.
RUN_STOPPED: Final[dict[str, Word]] = {
    "cannot_start": ("cannot start the run: {error}", "这次运行无法开始：{error}"),
    "step_cannot_run": ("step {number} cannot run: {error}", "第 {number} 步无法执行：{error}"),
}


def file_mistake(name: str, lang: str, /, **fill: object) -> str:
    """One of a scenario file's mistakes in `lang`, its blanks filled."""
    return lookup(FILE_MISTAKES, name, lang, **fill)


def type_word(value: object, lang: str) -> str:
    """What kind of TOML value this is ("an integer", "整数"); dates by their Python name."""
    for kind, name in (
        (bool, "bool"),
        (int, "int"),
        (float, "float"),
        (str, "str"),
        (list, "list"),
        (dict, "dict"),
    ):
        if isinstance(value, kind):
            return file_mistake(f"type_{name}", lang)
    if lang != "zh":
        return f"a {type(value).__name__}"
    return file_mistake(f"type_{type(value).__name__}", lang)


def config_mistake(err: Exception, lang: str) -> str:
    """A ConfigError in `lang`: its Chinese by the rule it names, else its own message."""
    rule, fill = getattr(err, "rule", ""), getattr(err, "fill", {})
    if lang != "zh" or rule not in CONFIG_MISTAKES:
        return str(err)
    return CONFIG_MISTAKES[rule].format(**fill)


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
