"""The headless fleet's sentences, in English and Chinese (`--lang`).

The fleet sits beside the scenarios in the layers, so it keeps its own few sentences; the
app's fleet screen takes its words from demo/i18n.py like every other screen.
"""

WORDS: dict[str, tuple[str, str]] = {
    # the fenced downstream service's own books (`--work`)
    "service_rules": (
        "The downstream service's books ({n} requests), judged by its rules: {rules}.",
        "下游服务自己的账本（{n} 次请求），按它的规则检查：不接受比见过的最新围栏令牌更旧的写入；"
        "同一件事不扣两次款。",
    ),
    "service_held": ("The service's rules held.", "下游服务的规则全部成立。"),
    "service_broken": (
        "The service's rules were broken {n} times.",
        "下游服务的规则被打破了 {n} 次。",
    ),
    "fleet": (
        "A fleet of {n} worker processes on {db}, {tasks}, seed {seed}.",
        "{n} 个执行者进程，数据库 {db}，{tasks}，随机种子 {seed}。",
    ),
    "batch": ("{n} tasks", "{n} 项任务"),
    "steady": (
        "a steady queue of {rate} new tasks a minute",
        "稳定的队列，每分钟来 {rate} 项新任务",
    ),
    "busy": (
        "The running workers held a lease {share}% of the time.",
        "在运行的执行者有 {share}% 的时间持有租约。",
    ),
    "least_busy": (
        " The least busy, {worker}, held one {share}% of the time it ran.",
        "其中最闲的{worker}，运行时也有 {share}% 的时间持有租约。",
    ),
    "started": ("Started {worker} as pid {pid}.", "已启动 {worker}，进程 {pid}。"),
    "died": (
        "{worker} (pid {pid}) ended by itself with exit status {status}.",
        "{worker}（进程 {pid}）自己结束了，退出码 {status}。",
    ),
    "violation": ("Violation, seen as it happened: {detail}.", "当场发现违规：{detail}。"),
    "holding": (" holding {task}", "（持有 {task}）"),
    "killed": (
        "Killed {worker} (pid {pid}){held} with SIGKILL.",
        "已用 SIGKILL 杀死 {worker}（进程 {pid}）{held}。",
    ),
    "stalled": (
        "Stalled {worker} (pid {pid}){held} with SIGSTOP.",
        "已用 SIGSTOP 让 {worker}（进程 {pid}）{held}卡住。",
    ),
    "stalled_write": (
        "Stalled {worker} (pid {pid}){held} with SIGSTOP, its write to {target} with fence token "
        "{token} on its way out.",
        "已用 SIGSTOP 让 {worker}（进程 {pid}）{held}卡住，它对 {target} 的写入（围栏令牌 {token}）"
        "正在送出的路上。",
    ),
    "cut": (
        "Cut the road from {worker} (pid {pid}){held} to the server.",
        "已切断 {worker}（进程 {pid}）{held}通往服务器的路。",
    ),
    "frozen": (
        "Froze the heartbeat of {worker} (pid {pid}){held}; its work goes on.",
        "已冻结 {worker}（进程 {pid}）{held}的心跳；它的工作照常进行。",
    ),
    "restarted_now": (
        "Restarted {worker}{held}: pid {old} killed, pid {pid} started under the same id.",
        "已重启 {worker}{held}：进程 {old} 被杀死，同一编号下启动了进程 {pid}。",
    ),
    "restarted": ("Restarted {worker} as pid {pid}.", "已重启 {worker}，进程 {pid}。"),
    "resumed": ("Resumed {worker} with SIGCONT.", "已用 SIGCONT 让 {worker} 继续。"),
    "resumed_write": (
        "Resumed {worker} with SIGCONT: its held write goes now, late, with its old fence token.",
        "已用 SIGCONT 让 {worker} 继续：它压着的写入现在才送出，带着旧的围栏令牌。",
    ),
    "thawed": ("Thawed the heartbeat of {worker}.", "{worker} 的心跳恢复了。"),
    "healed": ("The road from {worker} to the server is back.", "{worker} 通往服务器的路恢复了。"),
    "summary": (
        "{n} worker processes ran for {seconds} s with {faults} faults; {claims} claims, "
        "{completed} tasks completed, {accepted} pages accepted and {refused} refused.",
        "{n} 个执行者进程运行了 {seconds} 秒，施加了 {faults} 次故障；领取 {claims} 次，"
        "完成 {completed} 项任务，收下 {accepted} 页，拒收 {refused} 页。",
    ),
    "rechecked": (
        "The whole history ({events} events) was checked again from its first row.",
        "整段历史（{events} 条记录）从第一行起重新检查了一遍。",
    ),
    "unfinished": (
        "Not every task was done when the time ran out.",
        "时间到了，还有任务没有做完。",
    ),
    "broken": (
        "Verdict: broken. {n} safety rules were broken:",
        "结论：没有守住。有 {n} 处违反安全规则：",
    ),
    "held": (
        "Verdict: held. Every accepted page came from its task's current live lease with the "
        "newest fence token, no two leases were live at once, each effect was applied once "
        "and each task completed once.",
        "结论：守住了。每一页收下的写入都来自该任务当前有效的租约、带着最新的围栏令牌；没有两份租约"
        "同时有效；每个副作用只执行了一次；每项任务只完成了一次。",
    ),
    "differs": (
        "The verdict saved with the run was another ({said}, checked again {now}): the file "
        "was changed since it was saved.",
        "保存时的结论与此不同（当时{said}，重新检查{now}）：文件在保存之后被改过。",
    ),
    "differs_no_rows": (
        "The verdict saved with the run was another: the store's final rows judged it then, "
        "and this file does not keep them.",
        "保存时的结论与此不同：那时还看了存储最后的各行，而这个文件里没有这些行。",
    ),
    "skipped": (
        "This file was saved before runs kept the store's final rows, so two rules were not "
        "applied: {rules}.",
        "这个文件保存时还不保留存储最后的各行，所以有两条规则没有检查：{rules}。",
    ),
    "rule_completion_count": (
        "each task the store says is done was completed exactly once",
        "存储里标为已完成的每项任务都恰好完成了一次",
    ),
    "rule_effect_count": (
        "each effect row was applied exactly once",
        "副作用表里的每一行都恰好执行了一次",
    ),
    "saved": ("The history and its verdict are in {path}.", "历史和结论已写入 {path}。"),
    "stopped": ("Stopped; every worker process was ended.", "已停止；所有执行者进程都已结束。"),
    # the final check's own rules (the running checker's are the simulation's, in the glossary)
    "page_from_old_lease": (
        "a page was accepted from a lease that was no longer the current one",
        "收下了一页来自已不是当前租约的写入",
    ),
    "page_from_expired_lease": (
        "a page was accepted after its lease had expired",
        "在租约过期之后收下了一页写入",
    ),
    "effect_count": ("an effect was not applied exactly once", "有一个副作用不是恰好执行一次"),
    "completion_count": ("a task was not completed exactly once", "有一项任务不是恰好完成一次"),
    "history_gap": (
        "the history has a hole: a line of the register is missing, repeated or out of order",
        "历史有缺口：登记簿里有一行缺失、重复或顺序颠倒",
    ),
    "row_unexplained": (
        "the history does not explain the store's final rows",
        "历史解释不了存储最后的各行",
    ),
    "after_the_end": (
        "the file goes on after its verdict line",
        "文件在结论那一行之后还有内容",
    ),
    "nobody": ("the store", "存储"),
    # a finding said on the command line: in English with what the history shows in figures
    "finding_en": ("{who}, {task}: {what} ({detail}).", "{who}，{task}：{what}。"),
    "finding": ("{who}, {task}: {what}.", "{who}，{task}：{what}。"),
}


def word(key: str, lang: str, **fmt: object) -> str:
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**fmt)
