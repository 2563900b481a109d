"""The words of what a run keeps: a box's (checkpoint's) parts, a ledger page's text, and
the books' sentences (where two worlds meet, what a check found), en and zh.

Part of the one glossary (`core.scenarios.glossary` re-exports every name): these tables say
the run's data, where the glossary's others say the store's and the story's words.
"""

import re
from collections.abc import Mapping
from typing import Final

from core.scenarios.word_table import Word, lookup, pick

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
# a tool step's page: "call_api #3 -> artifact://agent/3-call_api.json"
_TOOL_PAGE = re.compile(r"^(?P<verb>\w+) #(?P<n>\d+) -> (?P<where>\S+)$")


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


# the receipts a tools task writes as its result: ["ch_1", "ch_4"], said by their numbers
# in Chinese ("No English words, ids or unit letters on Chinese screens")
RECEIPTS: Final[Word] = ("charges {ids}", "收费单 {ids} 号")
# the reply an approval task drafts before it parks: "refund for t1"
REFUND: Final[Word] = ("refund for {task}", "{task}的退款")
_REFUND = re.compile(r"refund for (?P<task>\S+)")
_CHARGES = re.compile(r'\[\s*"ch_\d+"(?:\s*,\s*"ch_\d+")*\s*\]')


def ledger_value(value: str, lang: str) -> str:
    """A ledger page's text in `lang`: "page 3: west ferry 73 dan (total 288)" is
    "第 3 页：西渡口 73 石（累计 288）" in Chinese; a page of another shape has its verb
    translated ("open https://..." is "打开 https://..."), anything else stays as written."""
    refund = _REFUND.fullmatch(value) if lang == "zh" else None
    if refund is not None:
        # an approval's draft: the task by its name, as the task table says it
        numbered = re.fullmatch(r"t(\d+)", refund["task"])
        task = f"任务 {numbered[1]} " if numbered is not None else refund["task"] + " "
        return pick(REFUND, lang).format(task=task)
    charges = _CHARGES.fullmatch(value)
    if charges is not None:
        # a tools task's result, its charges' receipts: said by their numbers in Chinese
        ids = re.findall(r'"ch_(\d+)"', value)
        listed = "、".join(ids) if lang == "zh" else ", ".join(f"ch_{n}" for n in ids)
        return pick(RECEIPTS, lang).format(ids=listed)
    found = _LEDGER_VALUE.match(value) if lang == "zh" else None
    if found is not None:
        village = lookup(VILLAGES, found["village"], lang)
        total = f"（累计 {found['total']}）" if found["total"] else ""
        return f"第 {found['n']} 页：{village} {found['grain']} 石{total}"
    tool = _TOOL_PAGE.match(value) if lang == "zh" else None
    if tool is not None and tool["verb"] in PAGE_VERBS:
        # said as a sentence, the address kept as written (an address, like a URL)
        verb = lookup(PAGE_VERBS, tool["verb"], lang)
        return f"第 {tool['n']} 步{verb}，产物存于 {tool['where']}"
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
    "effect_charge": ("the payments tool", "调用收费接口"),
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
