"""The fleet's words: real worker processes on the screen (`borrowed-keys fleet`)."""

from typing import Final

from core.scenarios.glossary import Word

FLEET: Final[dict[str, Word]] = {
    # the fleet: real worker processes (borrowed-keys fleet)
    # the header's light: what the downstream service's own books broke (SERVICE_RULES)
    "service_broke": ("the service's books: {what}", "下游服务的账本：{what}"),
    "fleet_title": ("Real fleet · {n} worker processes", "真实进程 · {n} 个执行者进程"),
    "fleet_title_one": ("Real fleet · 1 worker process", "真实进程 · 1 个执行者进程"),
    "fleet_note_sqlite": (
        "SQLite: one machine and one clock. Each process's store reads this machine's clock, "
        "so a worker whose clock is skewed could take a live lease; on PostgreSQL the "
        "server's clock judges every lease.",
        "SQLite：一台机器、一个时钟。每个进程的存储读的是本机时钟，时钟偏了的执行者可能拿走仍有效的租约；"
        "在 PostgreSQL 上由服务器的时钟裁决每一份租约。",
    ),
    "fleet_note_pg": (
        "PostgreSQL: the server's clock judges every lease, whatever each machine's clock says.",
        "PostgreSQL：由服务器的时钟裁决每一份租约，不管各台机器的时钟怎么说。",
    ),
    "fleet_pid": ("pid {pid}", "进程 {pid}"),
    "fleet_elsewhere": ("started elsewhere", "在别处启动"),
    "fleet_exited": ("ended, exit status {status}", "已结束，退出码 {status}"),
    "fleet_not_ours": (
        "{worker} was started elsewhere: its faults are not this app's to send",
        "{worker} 是在别处启动的：本应用不能对它施加故障",
    ),
    "fleet_killed": (
        "Killed {worker} (pid {pid}) with SIGKILL",
        "已用 SIGKILL 杀死 {worker}（进程 {pid}）",
    ),
    "fleet_stalled": (
        "Stalled {worker} (pid {pid}) with SIGSTOP",
        "已用 SIGSTOP 让 {worker} 卡住（进程 {pid}）",
    ),
    # a stalled agent worker's pane: stopped with its downstream write on its way out
    "write_in_hand": ("stopped with its write in hand", "停住时手里还拿着写入"),
    "stopping_at_write": ("to stop at its next write", "将停在下一次写入前"),
    # what the service answered that write, sent late once the worker was resumed
    "late_write_refused": (
        "its late write to {name} refused by the service: fence token {token} < {newest}",
        "它迟到的写入（{name}）被下游服务拒绝：围栏令牌 {token} < {newest}",
    ),
    "late_write_refused_short": (
        "late write refused: fence token {token} < {newest}",
        "迟到的写入被拒：围栏令牌 {token} < {newest}",
    ),
    "late_write_taken_over_short": (
        "late write taken over fence token {newest}",
        "迟到的写入被收下，盖过围栏令牌 {newest}",
    ),
    "late_write_refused_other": (
        "its late write to {name} refused by the service ({error})",
        "它迟到的写入（{name}）被下游服务拒绝（{error}）",
    ),
    "late_write_taken_over": (
        "its late write to {name} taken by the service over fence token {newest}",
        "下游服务收下了它迟到的写入（{name}），盖过了围栏令牌 {newest}",
    ),
    "late_write_taken": (
        "its late write to {name} taken by the service",
        "下游服务收下了它迟到的写入（{name}）",
    ),
    "fleet_resumed": (
        "Resumed {worker} (pid {pid}) with SIGCONT",
        "已用 SIGCONT 让 {worker} 继续（进程 {pid}）",
    ),
    "fleet_frozen": (
        "Froze the heartbeat of {worker} (pid {pid}); its work goes on",
        "已冻结 {worker} 的心跳（进程 {pid}）；它的工作照常进行",
    ),
    "fleet_thawed": ("The heartbeat of {worker} beats again", "{worker} 的心跳恢复了"),
    "fleet_restarted": (
        "Restarted {worker}: pid {pid} ended, pid {new} started under the same id",
        "已重启 {worker}：进程 {pid} 结束，同一编号下启动了进程 {new}",
    ),
    "fleet_gone": ("{worker} (pid {pid}) is no longer running", "{worker}（进程 {pid}）已不在运行"),
    "fleet_no_partition": (
        "SQLite has no partition: one file on this machine, no road to a server to cut "
        "(? says more). Run the fleet with --pg",
        "SQLite 没有断桥：本机上的一个文件，没有通往服务器的路可切（? 有详细说明）。请用 --pg 运行",
    ),
    "fleet_partitioned": (
        "Cut the road from {worker} (pid {pid}) to the server: its connections dropped",
        "已切断 {worker}（进程 {pid}）通往服务器的路：它的连接断了",
    ),
    "fleet_healed": (
        "The road from {worker} to the server is back",
        "{worker} 通往服务器的路恢复了",
    ),
    "fleet_skew_key": ("Skew a clock", "拨快时钟"),
    "fleet_skewed": (
        "Restarted {worker} under libfaketime, its clock five minutes ahead: pid {pid} ended, "
        "pid {new} started",
        "已在 libfaketime 下重启 {worker}，它的时钟快了五分钟：进程 {pid} 结束，进程 {new} 启动",
    ),
    "fleet_no_faketime": (
        "Skew needs libfaketime (apt-get install faketime), which is not installed here",
        "拨快时钟需要 libfaketime（apt-get install faketime），这台机器上没有装",
    ),
    "fleet_nobody_to_skew": (
        "Every live worker's clock is already skewed",
        "每个在运行的执行者的时钟都已拨快",
    ),
    "fleet_started": ("Started {worker} as pid {pid}", "已启动 {worker}，进程 {pid}"),
    "fleet_too_many": (
        "{n} worker processes are the most one fleet starts on this machine: "
        "start more in another terminal against the same database",
        "一个车队在这台机器上最多启动 {n} 个执行者进程：更多的请在另一个终端对同一个数据库启动",
    ),
    "fleet_add": ("one more worker", "再加一个执行者"),
    "fleet_no_steps": (
        "Real processes have no steps: time runs by itself. {press} starts one more worker.",
        "真实进程没有“下一步”：时间自己在走。按 {press} 再加一个执行者。",
    ),
    "fleet_approved": (
        "Approved {task}: a worker takes it again",
        "已批准 {task}：执行者会重新领取它",
    ),
    "fleet_rejected": ("Rejected {task}: it goes to the dead letters", "已驳回 {task}：它进入死信"),
    "fleet_enqueue": ("enqueue", "加任务"),
    "fleet_enqueued": ("Enqueued {tasks}", "已加入任务 {tasks}"),
    "fleet_save": ("save history", "保存历史"),
    "fleet_quit": ("quit (ends every worker)", "退出（结束所有执行者）"),
    "fleet_saved": ("Saved the history to {path}. {verdict}", "历史已保存到 {path}。{verdict}"),
    "fleet_verdict_held": (
        "The whole history was checked again: every rule held",
        "整段历史重新检查过：每条规则都守住了",
    ),
    "fleet_service_held": (
        "; the service's books, judged by its own rules, held",
        "；下游服务的账本按它自己的规则检查过，也守住了",
    ),
    "fleet_service_broken": (
        "; but the service's books break its own rules (findings: {n};"
        " borrowed-keys fleet --check says where)",
        "；但下游服务的账本有 {n} 处违反它自己的规则（borrowed-keys fleet --check 会指出在哪）",
    ),
    "fleet_verdict_broken": (
        "The whole history was checked again: {n} safety rules were broken",
        "整段历史重新检查过：有 {n} 处违反安全规则",
    ),
    "fleet_read_failed": ("The store could not be read: {why}", "读不了存储：{why}"),
    "fleet_killed_by": ("killed ({signal})", "已被杀死（{signal}）"),
    "fleet_stopped_saying": ("stopped: {words}", "已停止：{words}"),
    "fleet_unskewed": (
        "Restarted {worker} on its own clock again: pid {pid} ended, pid {new} started",
        "已让 {worker} 用回自己的时钟重启：进程 {pid} 结束，进程 {new} 启动",
    ),
    "fleet_rate_key": ("new tasks", "新任务"),
    "fleet_rate_now": ("New tasks arrive at {rate} a minute", "新任务每分钟来 {rate} 项"),
    "fleet_fixed_batch": (
        "This fleet runs a fixed batch (--tasks): start it without --tasks for a steady queue",
        "这支队伍跑的是固定的一批任务（--tasks）：不带 --tasks 启动才有稳定的队列",
    ),
    "fleet_palette_faster": ("More new tasks a minute", "每分钟多来些新任务"),
    "fleet_palette_slower": ("Fewer new tasks a minute", "每分钟少来些新任务"),
    "tip_fleet_skew_key": (
        "Restart the chosen worker under libfaketime, its clock five minutes ahead (again: "
        "its own clock back)",
        "在 libfaketime 下重启选定的执行者，它的时钟快五分钟（再按一次：用回自己的时钟）",
    ),
    "tip_fleet_rate_key": (
        "The steady queue: fewer / more new tasks a minute",
        "稳定的队列：每分钟少来 / 多来些新任务",
    ),
    "tip_fleet_palette_faster": (
        "The steady queue's new tasks a minute, half as many again",
        "稳定的队列每分钟的新任务，多一半",
    ),
    "tip_fleet_palette_slower": (
        "The steady queue's new tasks a minute, a third fewer",
        "稳定的队列每分钟的新任务，少三分之一",
    ),
    "tip_fleet_add": ("Start one more worker process", "再启动一个执行者进程"),
    "tip_fleet_enqueue": ("Add three tasks to the queue now", "现在往队列里加三项任务"),
    "tip_fleet_save": (
        "Save the whole history and its verdict (borrowed-keys-out/)",
        "保存整段历史和结论（borrowed-keys-out/）",
    ),
    "fleet_help_title": ("The real fleet's keys", "真实进程队伍的按键"),
    "fleet_help_sqlite": (
        "On SQLite c does nothing: the workers share one file on this machine, so there is no "
        "road to a server to cut, and holding back a process's calls by hand would be a "
        "stall, not a partition. Run the fleet with --pg for a real partition.",
        "在 SQLite 上 c 不起作用：各执行者共用本机上的一个文件，没有通往服务器的路可切；"
        "人为扣住一个进程的调用只是停顿，不是断桥。要真正的断桥，请用 --pg 运行这支队伍。",
    ),
    "fleet_help_pg": (
        "On PostgreSQL c cuts the chosen worker's road to the server (a relay of its own): it "
        "keeps running and believing, its calls fail and are tried again, and once healed "
        "its late writes meet the fence.",
        "在 PostgreSQL 上 c 切断选定执行者通往服务器的路（它自己的中继）：它照常运行、照样以为"
        "自己持有租约，调用失败后再试；修好之后，它迟到的写入会撞上围栏。",
    ),
    "fleet_help_close": ("Any key closes this page", "按任意键关闭本页"),
    "fleet_not_ready": (
        "{worker} is still connecting: cut its road once it has opened its store",
        "{worker} 还在连接：等它打开存储之后再断桥",
    ),
    # A process started with no road to its store cannot open it, and a first connection
    # that fails is an answer (a wrong URL): it would stop at once, a partition shown as a crash.
    "fleet_cut_start": (
        "{worker} is cut off from the database: heal it (c) first, then start it again",
        "{worker}通往数据库的路已断：先修好（c），再重新启动它",
    ),
    "fleet_fault_help": (
        "Do it to this worker's process now · key {press} does it to the chosen worker (w chooses)",
        "立刻对这个执行者的进程执行 · 按 {press} 对选定的执行者执行（按 w 选定）",
    ),
    "add_worker": ("+ Worker", "+ 执行者"),
    "own_clock": ("own", "自认"),
}
