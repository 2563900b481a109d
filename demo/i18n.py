"""Every word the app shows, in English and Chinese, keyed by the glossary's words.

One small table: `tr(key, lang)`; keys are the English glossary word in snake case. The
glossary's words (concepts, panels, columns, statuses, states, events, reasons, people) come
from core.scenarios.glossary, the one table the transcript and the help page use too; this
module adds only the app's own words (buttons, tooltips, notes).
"""

import locale
import os
from typing import TYPE_CHECKING

from core.engine.people import called
from core.scenarios import glossary

if TYPE_CHECKING:
    from core.sim.spec import Action

LANGS = ("en", "zh")


def default_lang() -> str:
    """zh if the locale says Chinese, else en: the language of a run given no --lang."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


WORDS: dict[str, tuple[str, str]] = {
    # the glossary's words (core.scenarios.glossary): concepts, panels, columns, states
    **glossary.CONCEPTS,
    **glossary.PANELS,
    **glossary.COLUMNS,
    **{f"th_{k}": v for k, v in glossary.HEADERS.items()},
    **{f"th_narrow_{k}": v for k, v in glossary.NARROW_HEADERS.items()},
    **{f"status_{k}": v for k, v in glossary.TASK_STATUSES.items()},
    **glossary.WORKER_STATES,
    **glossary.SEEN,
    "freeze_heartbeat": ("Freeze heartbeat", glossary.ACTIONS["freeze_heartbeat"][1]),
    "stall": ("Stall", glossary.ACTIONS["stall"][1]),
    "resume": ("Resume", glossary.ACTIONS["resume"][1]),
    # workers and their buttons
    "kill": ("Kill", "杀死"),
    "restart_worker": ("Restart", "重启"),
    "partition": ("Partition", "断桥"),
    "heal": ("Heal", "修桥"),
    # the fleet: real worker processes (borrowed-keys fleet)
    "fleet_title": ("Real fleet · {n} worker processes", "真实进程 · {n} 个执行者进程"),
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
    "fleet_fault_help": (
        "Do it to this worker's process now · key {press} does it to the chosen worker (w chooses)",
        "立刻对这个执行者的进程执行 · 按 {press} 对选定的执行者执行（按 w 选定）",
    ),
    "add_worker": ("+ Worker", "+ 执行者"),
    "own_clock": ("own", "自认"),
    # the keeper's view of the lease (the store's clock), beside the holder's own
    "by_store": ("keeper", "守库人"),
    "pulse": ("pulse", "脉搏"),
    "ago": ("{age} ago", "{age}前"),
    "no_lease": ("holds no lease", "未持租约"),
    "manual": ("manual", "手动"),
    "skew": ("skew {amount}", "时钟偏差 {amount}"),
    "slow": ("slow x{factor}", "变慢 x{factor}"),
    "self_fencing": ("self-fencing", "主动停手"),
    "renew_by": ("renew by {at}", "续约截止 {at}"),
    # a heartbeat that carries a payload (the mistake), and the one on its way
    "heavy_heartbeat": ("heartbeat carries {size}", "心跳夹带 {size}"),
    "lands_at": ("⇢ lands {at}", "⇢ {at} 送到"),
    "no_version": ("running only: no expiry, no version", "只有“运行中”：无过期、无版本"),
    "dedup_count": ("deduplicated", "已去重"),
    # header
    "safe": ("safe", "安全"),
    "speed": ("speed", "速度"),
    "speed_times": ("x{n}", "{n} 倍"),
    "mode": ("mode", "模式"),
    "forked": ("FORKED · recording", "已分叉 · 录制中"),
    "recording": ("recording", "录制中"),
    "tip_tab": ("Show this panel (keys 1-6)", "显示这个面板（按键 1-6）"),
    "playing": ("▶ playing", "▶ 播放中"),
    "paused": ("‖ paused", "‖ 已暂停"),
    "sandbox": ("Small sandbox: two tasks", "小沙盒：两项任务"),
    "sandbox_summary": (
        "Three scribes, two tasks, nothing scripted: the clock runs live and every button acts.",
        "三位抄写员、两项任务，没有脚本：时钟实时走，每个按钮都能用。",
    ),
    # narration
    # a count of acts: English says "1 act", "2 acts"; Chinese has one form
    "acts_one": ("1 act", "1 个动作"),
    "acts_many": ("{n} acts", "{n} 个动作"),
    # a label before its text: Chinese takes the full-width colon
    "label": ("{word}: ", "{word}："),
    "step_k_of_n": ("Step {k} of {n}", "第 {k} 步 / 共 {n} 步"),
    "before_start": ("Press → or n for the first step.", "按 → 或 n 开始第一步。"),
    "end_of_script": ("End of the script.", "脚本结束。"),
    # the frame painted while a run opens (demo/loading.py), and a key pressed meanwhile
    "opening_run": ("Opening this run…", "正在打开这一局……"),
    "still_opening": (
        "Still opening this run: keys work once it is on screen (q quits).",
        "这一局还在打开：画面出来后按键才起作用（q 退出）。",
    ),
    "forked_note": (
        "You acted, so the rest of the script was dropped: this run is yours now "
        "({acts} of yours recorded so far).",
        "你动手了，剩下的脚本就此放下：这一局归你（已录下你的 {acts}）。",
    ),
    "fork_over": (
        "Your run is over: every task rests, and nothing more happens until someone acts. "
        "It is judged as a script's end is, by the same checker.",
        "你这一局结束了：每项任务都已停下，没人动手就不会再有变化。它和脚本的结尾一样，由同一个检查器评判。",
    ),
    "after_script_note": (
        "The script is over; time runs on and what you do is recorded "
        "({acts} so far). s saves it as a scenario.",
        "脚本已演完；时间继续走，你做的都会录下（已录 {acts}）。按 s 存为场景。",
    ),
    "sandbox_note": (
        "Sandbox: what you do is recorded ({acts} so far). s saves it as a scenario.",
        "沙盒：你做的都会录下（已录 {acts}）。按 s 存为场景。",
    ),
    "mode_notice": (
        "This run is {meaning}. The text describes {own_meaning}; "
        "the ✓ and ✗ show where this run differs.",
        "这一局是{meaning}。下面的旁白讲的是{own_meaning}；✓ 和 ✗ 标出这一局哪里不一样。",
    ),
    "refused": ("{msg}", "被拒绝：{msg}"),
    "ignored": ("{msg}", "已忽略：{msg}"),
    "refusal": (
        "{worker}'s {op} on {task} refused: {reason} (its token {its}; current {current})",
        "{worker}{op}（{task}）被拒：{reason}（所带令牌 {its}，当前 {current}）",
    ),
    # controls
    "play_pause": ("Play/Pause", "播放/暂停"),
    "next": ("Next", "下一步"),
    "previous": ("Previous", "上一步"),
    "restart": ("Restart", "重来"),
    "slower": ("Slower", "慢一点"),
    "faster": ("Faster", "快一点"),
    "language": ("中文", "English"),
    "mode_next": ("Mode", "模式"),
    "approve": ("Approve", "批准"),
    "reject": ("Reject", "驳回"),
    "enqueue": ("Enqueue", "入队"),
    "help": ("Help", "帮助"),
    "reveal": ("Reveal", "揭晓"),
    "question": ("Question", "提问"),
    "question_hint": ("(v: reveal)", "（按 v 揭晓）"),
    "answer": ("Answer", "答案"),
    "nothing_to_reveal": ("No question is waiting to be revealed.", "没有等待揭晓的问题。"),
    "save": ("Save", "保存"),
    "quit": ("Quit", "退出"),
    "pause": ("Pause", "暂停"),
    "back": ("Back", "返回"),
    # tooltips
    "tip_play": (
        "Sandbox: run the clock live. Playback: step on by itself.",
        "沙盒：时钟实时走。回放：自动一步步走。",
    ),
    "tip_next": ("Play the next step (sandbox: 5 s pass)", "下一步（沙盒：过 5 秒）"),
    "tip_previous": ("Step back (replays from the start)", "上一步（从头重放）"),
    "tip_restart": ("Start the scenario again", "从头再来"),
    "tip_speed": ("Multiple of real time", "相对真实时间的倍数"),
    "tip_lang": ("Switch between English and Chinese", "切换中英文"),
    "tip_mode": (
        "Restart the same scenario in another mode: a mistake scenario and its correct twin",
        "换一种模式重放同一场景：错误做法的场景和它正确的孪生版本来回切换",
    ),
    "tip_approve": ("Approve the selected waiting task", "批准选中的待批任务"),
    "tip_reject": ("Reject the selected waiting task", "驳回选中的待批任务"),
    "tip_enqueue": ("Put a new task in the queue", "往队列里加一项任务"),
    "tip_reveal": (
        "Interview mode: reveal the answer to the step's question and play the step",
        "面试模式：揭晓本步问题的答案，并播放这一步",
    ),
    "tip_help": ("The five ideas and where they show", "五个概念以及它们在屏幕上的位置"),
    "tip_save": (
        "Save the transcript (JSON Lines), a screenshot (SVG) and the run as a scenario",
        "保存回放记录（JSON Lines）、截图（SVG），并把这一局存为场景",
    ),
    "tip_quit": ("Leave the app", "退出"),
    "tip_pause": ("Pause (presentation remote)", "暂停（演示遥控器）"),
    # picker
    "pick_title": ("Borrowed Keys — choose a scenario", "借来的钥匙 — 选一个场景"),
    # the pages `serve` answers a browser with
    "app_name": ("Borrowed Keys", "借来的钥匙"),
    "serve_full_title": ("{name}: all sessions in use", "{name}：会话已满"),
    "serve_full_heading": ("{name} is full", "{name}已满"),
    # what `serve` says in its terminal, in the language it serves (after `PROG: `)
    "serve_serving": (
        "Serving Borrowed Keys at {url} — Ctrl+C to stop\n"
        "  at most {limit} tabs at once (--max-sessions); the s key saves into {folder}",
        "借来的钥匙在 {url} 上提供服务，按 Ctrl+C 停止\n"
        "  同时最多 {limit} 个标签页（--max-sessions）；按 s 保存到 {folder}",
    ),
    "serve_port_range": (
        "--port must be between 1 and 65535, not {port}",
        "--port 必须在 1 到 65535 之间，这里是 {port}",
    ),
    "serve_sessions_range": (
        "--max-sessions must be between 1 and 1000, not {n}",
        "--max-sessions 必须在 1 到 1000 之间，这里是 {n}",
    ),
    "serve_in_use": (
        "port {port} on {host} is in use; pick another with --port",
        "{host} 上的端口 {port} 已被占用：用 --port 换一个",
    ),
    "serve_privileged": (
        "port {port} needs more privileges; pick one above 1023 with --port",
        "端口 {port} 需要更高的权限：用 --port 选一个大于 1023 的",
    ),
    "serve_cannot_listen": ("cannot listen on {where}: {why}", "无法在 {where} 上监听：{why}"),
    "serve_open": (
        "warning: listening on {host}: anyone who can reach port {port} controls the app",
        "警告：正在 {host} 上监听，任何能连到端口 {port} 的人都能操控这个应用",
    ),
    "serve_full_text": (
        "This server runs at most {limit} session(s) at once (one per browser tab), and all "
        "are in use. Close a tab that shows the app, then reload this page.",
        "这台服务器同时最多运行 {limit} 个会话（每个浏览器标签页一个），现在都在使用中。"
        "请关掉一个显示本应用的标签页，再刷新此页。",
    ),
    "serve_full_more": (
        "Whoever started it can allow more with",
        "启动它的人可以用这个选项放宽上限：",
    ),
    "pick_hint": (
        "Enter opens · l language · ? help · q quit",
        "回车打开 · l 切换语言 · ? 帮助 · q 退出",
    ),
    "open": ("Open", "打开"),
    "no_bundled": ("(no bundled scenarios found)", "（没有找到内置场景）"),
    # notifications
    "saved": ("Saved in {folder}\n{names}", "已保存到 {folder}\n{names}"),
    "save_failed": ("Not saved: {why}", "未保存：{why}"),
    "save_limit": (
        "Not saved: this session has saved {n} times, the most one may",
        "未保存：本会话已保存 {n} 次，已达上限",
    ),
    "no_waiting": ("No waiting task to {what}", "没有待批任务可{what}"),
    "mode_now": ("Mode: {meaning} (restarted)", "模式：{meaning}（已重来）"),
    "help_title": ("The five ideas", "五个概念"),
    "help_close": ("Esc or ? closes this page.", "按 Esc 或 ? 关闭本页。"),
}


# The app's own words beyond the glossary's: the key bar, the palette, questions.
WORDS.update(
    {
        "undo": ("Undo", "撤销"),
        "times_column": ("times", "次数"),  # the Rejected panel's count of repeats
        # the Rejected panel: the refused call's page and tokens, the current one beside
        "page_column": ("page", "页"),
        "lease_column": ("lease", "租约号"),
        "fence_column": ("fence", "围栏令牌"),
        "token_now": ("{its} (now {current})", "{its}（当前 {current}）"),
        "found": ("found", "实际"),  # what a failed check found instead
        "box_detail": (
            "Box {task} #{seq} (step {step}):",
            "木匣 {task} #{seq}（第 {step} 步）：",
        ),
        # the Rejected panel while nothing was refused
        "nothing_refused": ("Nothing has been refused yet.", "还没有调用被拒收。"),
        "nothing_refused_let_in": (
            "Nothing was refused, yet a page from a lease that was no longer the task's went "
            "into the ledger: see the Ledger.",
            "什么都没被拒收，可一页来自已不属于这项任务的租约的写入进了总册：见总册。",
        ),
        # the Checkpoints panel while the shelf is empty: what that costs a successor
        "no_box": (
            "No box on the shelf by the stairs yet: whoever takes over starts from the first step.",
            "楼梯边的架子上还没有木匣：这时接手的人只能从第一步做起。",
        ),
        "no_box_done_again_one": (
            "No box on the shelf by the stairs: a step already done had to be done again.",
            "楼梯边的架子上没有木匣：已经做过的 1 步只好从头再做。",
        ),
        "no_box_done_again": (
            "No box on the shelf by the stairs: {n} steps already done had to be done again.",
            "楼梯边的架子上没有木匣：已经做过的 {n} 步只好从头再做。",
        ),
        # Belief against truth (the timeline panel and the exported page's drawing)
        "tl_store": ("store", "守库人"),
        "tl_believes": ("believes", "自以为"),
        "tl_calls": ("calls", "动作"),
        "tl_now": ("now {at}", "现在 {at}"),
        "tl_empty": (
            "No worker has held a lease yet.",
            "还没有人拿到过租约。",
        ),
        "tl_legend_store": ("the store's lease", "守库人登记的租约"),
        "tl_legend_future": ("time left on it", "尚未走完的租期"),
        "tl_legend_belief": ("what the worker believes it holds", "持有人以为自己还握着"),
        "tl_legend_gap": (
            "believed, but the store no longer holds it",
            "自以为还握着，守库人已不认",
        ),
        "tl_legend_deadline": ("renew deadline", "续约截止"),
        "tl_legend_expiry": ("expiry", "到期"),
        "tl_legend_beat": ("heartbeat delivered", "心跳送到"),
        "tl_legend_lost": ("heartbeat lost (fog or broken bridge)", "心跳丢失（起雾或断桥）"),
        "tl_legend_ok": ("call accepted", "动作被接受"),
        "tl_legend_refused": ("call refused", "动作被拒收"),
        "tl_legend_stale": ("accepted from a lease no longer current", "旧租约的动作竟被接受"),
        "tl_legend_undelivered": ("call not delivered", "动作未送达"),
        "tl_legend_now": ("now", "现在"),
        # one sentence per worker: what the store holds, what the worker believes
        "tl_store_open": (
            "the store holds its {lease} until {until}",
            "守库人记着{who}的{lease}，到 {until} 为止",
        ),
        "tl_store_open_forever": (
            "the store holds its {lease}, with no end",
            "守库人记着{who}的{lease}，没有到期时刻",
        ),
        "tl_store_ended": (
            "the store's {lease} ended at {at} ({why})",
            "守库人那里，{lease} 在 {at} 结束（{why}）",
        ),
        "tl_believes_still": (
            "in {who}'s memory it is still held",
            "在{who}心里，钥匙仍在手",
        ),
        "tl_believed_until": (
            "in {who}'s memory it was held until {at}, when {how}",
            "在{who}心里，钥匙一直在手，直到 {at}：{how}",
        ),
        "tl_gap": (
            "for {span} {who} held a key the store no longer honoured",
            "有 {span}，{who}握着一把守库人已不认的钥匙",
        ),
        "tl_stale_call": (
            "one of its calls was accepted from a lease that was no longer current",
            "{who}有 1 个动作凭过时的租约被接受了",
        ),
        "tl_stale_calls": (
            "{n} of its calls were accepted from a lease that was no longer current",
            "{who}有 {n} 个动作凭过时的租约被接受了",
        ),
        "tl_sentence": ("{who}: {parts}.", "{who}：{parts}。"),
        "tl_join": ("; ", "；"),
        # why a store lease ended
        "tl_end_expired": ("it expired", "到期"),
        "tl_end_completed": ("the task was done", "任务完成"),
        "tl_end_parked": ("the task waits for approval", "任务等待审批"),
        "tl_end_failed": ("the task was given up", "任务被放弃"),
        "tl_end_dead_lettered": ("the task went to the dead letters", "任务进了死信"),
        "tl_end_reclaimed": ("a new claim replaced it", "被新的领取取代"),
        # the Effects panel: one row per call of a side effect (the words `play` says
        # of a repeat are the glossary's, as are those of two live leases at once)
        "effect_outcome": ("what happened", "结果"),
        "effect_answered": (
            "deduplicated: the first call's result returned",
            "已去重：直接返回第一次的结果",
        ),
        "tl_store_overridden": (
            "at {at} the store let a second lease in beside its {lease}, though by its own"
            " clock {lease} was live until {until}",
            "{at}，守库人在{lease} 旁又放进了第二份租约，"
            "可按它自己的钟，{lease} 要到 {until} 才到期",
        ),
        "tl_end_overridden": (
            "a new claim was let in over it while it was still live",
            "它还没过期，新的领取却被放了进来",
        ),
        # the store lane: the newest fence token over time, and each write against it
        "tl_fence_lane": ("newest", "最新令牌"),
        "tl_writes_lane": ("writes", "写入"),
        "tl_write_accepted": ("{mine}: accepted", "{mine}：收下"),
        "tl_write_refused": ("{mine} < {newest}: refused", "{mine} < {newest}：拒收"),
        "tl_write_stale": ("{mine} < {newest}: accepted", "{mine} < {newest}：竟被收下"),
        "tl_write_lost": ("{mine}: never arrived", "{mine}：未送达"),
        "tl_legend_write": ("a write against the newest token", "写入与最新令牌相比"),
        "tl_legend_overlap": ("two live leases at once", "两份租约同时有效"),
        # the seed's line 23, the panel's caption the first time it opens in a run
        "tl_caption": (
            '"The most valuable thing in the vault is not the key. It is whether others can'
            ' trust that the key is really in your hands right now."',
            "“库房里最值钱的不是钥匙。”他说，“是别人能不能相信这把钥匙现在确实在你手里。”",
        ),
        # how a worker learned
        "tl_learn_refused": ("the store refused a {op} ({why})", "{op}被拒收（{why}）"),
        "tl_learn_self_fenced": (
            "the renew deadline passed and the worker let go by itself",
            "过了续约截止时刻，自己停手",
        ),
        "tl_learn_released": ("the worker finished with the task", "自己交了差"),
        "tl_learn_killed": ("the process was killed", "进程被杀掉"),
        "tl_learn_replaced": ("another lease was claimed", "领了另一份租约"),
        "tl_learn_forgot": ("the worker forgot the lease", "忘了这份租约"),
        # refusal reasons, as a phrase after "refused"
        "tl_why_superseded": ("a newer lease exists", "已有新租约"),
        "tl_why_expired": ("its lease had expired", "租约已过期"),
        "tl_why_not_running": ("the task is not running", "任务不在运行"),
        "tl_why_fenced": ("fence token {mine} behind {newest}", "围栏令牌 {mine} 落后于 {newest}"),
        "tl_why_fenced_plain": ("its fence token is behind", "围栏令牌落后"),
        "tl_why_partitioned": ("it never arrived", "断桥，未送达"),
        # a call, as a noun after "its"
        "tl_op_write": ("write", "写入总册"),
        "tl_op_checkpoint": ("checkpoint", "存检查点"),
        "tl_op_effect": ("effect", "副作用"),
        "tl_op_complete": ("completion", "交差"),
        "tl_op_fail": ("failure report", "上报失败"),
        "tl_op_park": ("request to wait for approval", "挂起待批"),
        "tl_op_heartbeat": ("heartbeat", "心跳续约"),
        "tl_op_claim": ("claim", "领取"),
        "undone": ("Undone: {act} (and the time after it)", "已撤销：{act}（以及之后流逝的时间）"),
        "nothing_to_undo": ("Nothing to undo yet", "还没有可撤销的动作"),
        "undo_limit": (
            "Undo goes back at most {n} acts in a row: y brings them back",
            "最多连续撤销 {n} 个动作：按 y 可以找回来",
        ),
        "discard_question": (
            "{what}: {n} recorded act(s) were not saved and will be lost.\n"
            "Save first with s. Go on anyway?",
            "{what}：已录制的 {n} 个动作还没保存，会丢失。\n可先按 s 保存。仍然继续吗？",
        ),
        "yes": ("Yes, go on (y)", "继续（y）"),
        "no": ("No (n)", "取消（n）"),
        "workers": ("Workers", "执行者"),
        "tip_workers": ("Back to the worker panes (key 0)", "回到执行者面板（按键 0）"),
        "filter": ("Filter", "筛选"),
        "tip_filter": (
            "Rejected panel: one reason at a time, then all",
            "拒收面板：一次只看一种原因，再按回到全部",
        ),
        "panels": ("panels", "面板"),
        "speed_word": ("speed", "速度"),
        "palette": ("all acts", "全部动作"),
        "tip_add_worker": ("Add a worker to the run", "往这一局里加一位执行者"),
        "palette_act": ("{act}", "{act}"),
        "palette_act_help": (
            "Do it now (a playback forks and records it)",
            "立刻执行（回放会分叉并录下这个动作）",
        ),
        "palette_mode": ("Mode: {mode}", "模式：{mode}"),
        "palette_enqueue": ("New task: {kind}", "新任务：{kind}"),
        "palette_enqueue_help": (
            "It joins the queue, and an idle worker claims it",
            "它加入队列，空闲的执行者会领走",
        ),
        "palette_approve": ("Approve {task}", "批准 {task}"),
        "palette_reject": ("Reject {task}", "驳回 {task}"),
        "palette_waiting": ("{task} waits for a person's approval", "{task} 正等人批准"),
        "palette_filter": ("Rejected: only {reason}", "拒收：只看{reason}"),
        "palette_filter_all": ("Rejected: every reason", "拒收：全部原因"),
        "palette_filter_help": (
            "Show the Rejected panel with this filter",
            "按这个筛选显示拒收面板",
        ),
        "palette_panel": ("Show panel: {panel}", "显示面板：{panel}"),
        "kind_ledger": ("pages into the master ledger", "往总册里写页"),
        "kind_browser": ("a browser agent's clicks", "浏览器 Agent的点击"),
        "kind_tools": ("tool calls with side effects", "带副作用的工具调用"),
        "kind_approval": ("work that waits for a person's approval", "要等人批准的活"),
    }
)


def mode_description(mode: str, lang: str) -> str:
    """What a mode shows, for the palette: the glossary's words for it."""
    return glossary.mode_word(mode, lang)


def act_words(action: "Action", lang: str) -> str:
    """An act as the narration says it, by names, not ids: "Acheng resumes", "阿澄恢复"
    (never "resume acheng" in a toast)."""
    from core.scenarios.telling import act_sentence

    return act_sentence(action, lang, capital=False)


def tr(key: str, lang: str, **fmt: object) -> str:
    """A word of the app's table, by the glossary's one lookup."""
    return glossary.lookup(WORDS, key, lang, **fmt)


def acts_words(n: int, lang: str) -> str:
    """A count of acts that reads right for one and for many: "1 act", "3 acts", "3 个动作"."""
    return tr("acts_one", lang) if n == 1 else tr("acts_many", lang, n=n)


def label(word: str, lang: str) -> str:
    """A label before its text, "Answer: " or "答案：", the colon each language writes."""
    return tr("label", lang, word=word)


# The glossary's lookups, under the names the widgets use.
event_word = glossary.event_word
reason_word = glossary.reason_word
operation_word = glossary.action_word
state_word = glossary.state_word
status_word = glossary.status_word
mode_word = glossary.mode_word
token_word = glossary.token_word


def worker_name(worker_id: str, lang: str) -> str:
    """A pane's title: the story's name for a known worker (阿澄, never "阿澄 · acheng": an id
    is no word on a Chinese screen), or the id of one the story does not know."""
    return called(worker_id, lang)


# The presenter's words: jumping to a step, the palette key, questions and forks.
WORDS.update(
    {
        "jump": ("Go to step", "跳到某步"),
        "tip_jump": (
            "Go straight to a step (replays from the start, like stepping back)",
            "直接跳到某一步（从头重放，和上一步一样准确）",
        ),
        "tip_palette": ("Every act by name", "按名字找每个动作"),
        # the palette's entry for the explorer (its screen loads, with its words, when opened)
        "explore": ("Explore this mode…", "穷举这个模式…"),
        "tip_explore": (
            "Search every interleaving of 2 workers and 1 task of 2 steps in this mode, "
            "and list the shortest way to each broken rule",
            "在这个模式下搜索 2 个执行者、1 个 2 步任务的所有交错，列出每条被违反规则的最短路径",
        ),
        "forked_word": ("FORKED", "已分叉"),
        "on_their_own": ("workers on their own", "执行者自己接着干"),
        "saved_transcript": ("transcript", "回放记录"),  # as the save key says it
        "saved_screenshot": ("screenshot", "截图"),
        "saved_scenario": ("scenario", "场景"),
        "save_picker": (
            "Nothing to save here: open a scenario or the sandbox, then s saves that run",
            "这里没有可保存的：先打开一个场景或沙盒，再按 s 保存那一局",
        ),
        "at_step": ("{mark} at step {k}:", "第 {k} 步时{mark}："),
        "question_n": (
            "The step asks first: v reveals the answer and plays it",
            "这一步先提问：按 v 揭晓答案并播放这一步",
        ),
        # interview mode: the room answers by number before v
        "interview": ("Interview", "面试"),
        "tip_interview": (
            "Interview mode: the room answers each question by its number before v reveals it",
            "面试模式：揭晓之前，现场按数字键回答每个问题",
        ),
        "interview_on": (
            "Interview mode on: at a question the room answers by its number, then v reveals",
            "面试模式已开：遇到问题，现场先按编号作答，再按 v 揭晓",
        ),
        "interview_off": ("Interview mode off", "面试模式已关"),
        "answer_hint": ("(1-{n}: answer · v: reveal)", "（按 1-{n} 作答 · 按 v 揭晓）"),
        "reveal_hint": ("(v: reveal)", "（按 v 揭晓）"),
        "answer_keys": ("Answer", "作答"),
        "follow_up": ("Follow-up", "追问"),
        "chosen_right": ("Right.", "答对了。"),
        "chosen_wrong": ("Not quite: the answer is {n}.", "不对：答案是 {n}。"),
        "no_such_choice": (
            "There is no choice {n}: answer 1 to {last}",
            "没有第 {n} 个选项：请在 1 到 {last} 里选",
        ),
        "interview_score": (
            "Interview: questions right {right} of {questions}, "
            "follow-ups right {follow_right} of {follow_ups}.",
            "面试得分：{questions} 道题答对 {right} 道，"
            "{follow_ups} 道追问答对 {follow_right} 道。",
        ),
        "interview_score_short": (
            "Interview: questions right {right} of {questions}.",
            "面试得分：{questions} 道题答对 {right} 道。",
        ),
        "paused_at_question": (
            "A question waits: nothing moves until v reveals it",
            "正在提问：按 v 揭晓之前，什么都不会动",
        ),
        "toml_form": ("TOML", "TOML"),
        "tip_toml": (
            "The expectations as the scenario file spells them, or as sentences",
            "按场景文件的写法显示预期，或显示成句子",
        ),
        "jump_start": ("The start, before step 1", "开头，第 1 步之前"),
        "jump_nothing": ("No script to jump in: this run has no steps", "这一局没有脚本步骤可跳"),
        "jumped": ("At step {k} of {n}", "到了第 {k} 步 / 共 {n} 步"),
        "jump_title": (
            "Go to step (0-{n}): type its number or move to it, then Enter · Esc cancels",
            "跳到第几步（0-{n}）：输入步数或移到那一行，再按回车 · Esc 取消",
        ),
    }
)


# Leaving the script and coming back: redo, another scenario, a mode from a list, the
# chosen worker's fault keys, the folded narration.
WORDS.update(
    {
        "redo": ("Redo", "重做"),
        "tip_redo": (
            "Bring back what undo took away: the act and the time after it",
            "把撤销掉的动作和它之后的时间找回来",
        ),
        "redone": ("Redone: {act}", "已重做：{act}"),
        "nothing_to_redo": ("Nothing to redo", "没有可重做的动作"),
        "undone_redo": (
            "Undone: {act} (and the time after it). y brings it back.",
            "已撤销：{act}（以及之后流逝的时间）。按 y 找回来。",
        ),
        "open_scenario": ("Open scenario", "打开场景"),
        "tip_open_scenario": (
            "Open another scenario without leaving the app",
            "不退出应用，打开另一个场景",
        ),
        "pick_hint_back": (
            "Enter opens · Esc goes back to the run · l language · ? help",
            "回车打开 · Esc 回到这一局 · l 切换语言 · ? 帮助",
        ),
        "open_other": ("Open another scenario", "打开另一个场景"),
        "mode_title": (
            "Choose a mode: Enter replays this run to the same step in it · Esc cancels",
            "选一种模式：回车后这一局在新模式下重放到同一步 · Esc 取消",
        ),
        "mode_current": ("(now)", "（当前）"),
        "mode_own": ("(the scenario's own)", "（场景本来的模式）"),
        "mode_kept": (
            "Mode: {meaning}. Replayed to step {k}, where the run was.",
            "模式：{meaning}。已重放到原来的第 {k} 步。",
        ),
        "mode_cut": (
            "Mode: {meaning}. Step {next} cannot be played in this mode, so the run "
            "stands at step {k}, not {was}.",
            "模式：{meaning}。这一模式下第 {next} 步无法演出，所以这一局停在第 {k} 步，"
            "而不是第 {was} 步。",
        ),
        "mode_from_start": (
            "Mode: {meaning}. The run starts over.",
            "模式：{meaning}。这一局从头开始。",
        ),
        "choose_worker": ("Worker", "执行者"),
        "tip_choose_worker": (
            "Choose the worker the fault keys act on",
            "选定故障键作用的执行者",
        ),
        "chosen_worker": (
            "Fault keys act on {name}: h freeze heartbeat, z stall, k kill, u resume or "
            "restart, c partition or heal",
            "故障键作用于{name}：h 冻结心跳，z 停顿，k 杀死，u 恢复或重启，c 断桥或修桥",
        ),
        "no_worker": ("No worker to act on", "没有可以操作的执行者"),
        "tip_fault": (
            "Do it to the chosen worker now (w chooses; a playback forks)",
            "立刻对选定的执行者执行（按 w 选定；回放会分叉）",
        ),
        "palette_fault_help": (
            "Do it now (a playback forks and records it) · key {press} does it to the chosen "
            "worker (w chooses)",
            "立刻执行（回放会分叉并录下）· 按 {press} 对选定的执行者执行（按 w 选定）",
        ),
        "serve_starting": ("{name} is starting…", "{name}正在启动…"),
        "serve_ended": ("The app in this tab has ended.", "这个标签页里的应用已经结束。"),
        "serve_again": ("Start it again", "重新启动"),
        "narration_fold": ("Narration", "旁白"),
        "tip_narration_fold": (
            "Open the whole step's narration, or fold it to its first lines",
            "展开这一步的全部旁白，或折回前几行",
        ),
        "narration_more": (
            "▸ {n} more lines: d opens the rest",
            "▸ 还有 {n} 行：按 d 展开",
        ),
    }
)


# "Which mistake is this?": a run under a mistake the room is not told (tui --guess-mode).
WORDS.update(
    {
        "guess": ("Guess", "猜误区"),
        "guess_round": ("Which mistake is this?", "这是哪个误区？"),
        "tip_guess": (
            "Which of the five mistakes is this run played under? Say it by its number",
            "这一局是在五个误区里的哪一个之下演的？按编号说出来",
        ),
        "guess_hidden": ("? (G: guess)", "？（按 G 猜）"),
        "guess_title": (
            "Which of the seed's five mistakes is this? Press its number",
            "这是原文五个误区里的哪一个？按它的编号",
        ),
        "guess_right": ("Right: it is {mode}", "猜对了：正是{mode}"),
        "guess_wrong": ("Not {chosen}: it is {mode}", "不是{chosen}：其实是{mode}"),
        "guess_first": (
            "Guess the mistake first (G): the mode list would give it away",
            "先猜出是哪个误区（按 G）：模式列表会把答案说破",
        ),
        "guess_close": ("Esc closes", "按 Esc 关闭"),
        "guess_on": (
            "Which mistake is this? Watch the run, then press G and say it by its number",
            "这是哪个误区？看这一局怎么演，再按 G、报出它的编号",
        ),
    }
)
