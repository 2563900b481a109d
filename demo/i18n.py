"""Every word the app shows, in English and Chinese, keyed by the glossary's words.

One small table: `tr(key, lang)`; keys are the English glossary word in snake case.
Event and reason names reuse the transcript's own table (core.scenarios.player) so the app and the
headless player say the same thing.
"""

from core.scenarios.player import event_label, reason_label

LANGS = ("en", "zh")

WORDS: dict[str, tuple[str, str]] = {
    # glossary words
    "store": ("Store", "存储"),
    "keeper": ("Keeper", "守库人"),
    "task": ("Task", "任务"),
    "lease": ("Lease", "租约"),
    "expires_in": ("Expires in", "剩余租期"),
    "heartbeat": ("Heartbeat", "心跳续约"),
    "expired": ("Expired", "已过期"),
    "fence": ("Fence", "围栏令牌"),
    "ledger": ("Ledger", "总册"),
    "rejected": ("Rejected", "拒收"),
    "checkpoint": ("Checkpoint", "检查点"),
    "checkpoints": ("Checkpoints", "检查点"),
    "event_log": ("Event log", "登记簿"),
    "freeze_heartbeat": ("Freeze heartbeat", "冻结心跳"),
    "stall": ("Stall", "停顿"),
    "resume": ("Resume", "恢复"),
    "effect_applied": ("applied", "已执行"),
    "effect_deduplicated": ("deduplicated", "已去重"),
    # workers and their buttons
    "kill": ("Kill", "杀死"),
    "restart_worker": ("Restart", "重启"),
    "partition": ("Partition", "断桥"),
    "heal": ("Heal", "修桥"),
    "add_worker": ("+ Worker", "+ 工作者"),
    "worker": ("Worker", "工作者"),
    "step": ("step", "步骤"),
    "idle": ("idle", "空闲"),
    "working": ("working", "工作中"),
    "frozen": ("frozen", "心跳冻结"),
    "stalled": ("stalled", "停顿"),
    "dead": ("dead", "已死"),
    "partitioned": ("partitioned", "断桥"),
    "own_clock": ("own", "自认"),
    "by_store": ("store", "存储"),
    "pulse": ("pulse", "脉搏"),
    "ago": ("{age} ago", "{age}前"),
    "no_lease": ("holds no lease", "未持租约"),
    "manual": ("manual", "手动"),
    "skew": ("skew {amount}", "时钟偏差 {amount}"),
    "slow": ("slow x{factor}", "变慢 x{factor}"),
    # task statuses (the store's words, shown in the task table)
    "status_queued": ("queued", "排队中"),
    "status_running": ("running", "运行中"),
    "status_waiting": ("waiting", "待批准"),
    "status_done": ("done", "已完成"),
    "status_dead": ("dead", "已放弃"),
    # tables
    "kind": ("kind", "类型"),
    "status": ("status", "状态"),
    "owner": ("owner", "持有者"),
    "attempt": ("attempt", "尝试"),
    "lease_token": ("lease_token", "租约令牌"),
    "fence_token": ("fence", "围栏令牌"),
    "last_heartbeat": ("last heartbeat", "上次心跳"),
    "checkpoint_step": ("checkpoint step", "检查点步"),
    "result": ("result", "结果"),
    # the task table's two-line headers (narrow columns)
    "th_lease_token": ("lease\ntoken", "租约\n令牌"),
    "th_fence_token": ("fence\ntoken", "围栏\n令牌"),
    "th_expires_in": ("expires\nin", "剩余\n租期"),
    "th_last_heartbeat": ("last\nheartbeat", "上次\n心跳"),
    "th_checkpoint_step": ("checkpoint\nstep", "检查点\n步"),
    "key": ("key", "键"),
    "value": ("value", "值"),
    "writer": ("writer", "写入者"),
    "time": ("time", "时间"),
    "operation": ("operation", "操作"),
    "its_token": ("its token", "它的令牌"),
    "current_token": ("current", "当前令牌"),
    "reason": ("reason", "原因"),
    "effects": ("Effects", "副作用"),
    "effect": ("effect", "副作用"),
    "timeline": ("Ownership", "持有时间线"),
    "seq": ("#", "#"),
    "timeline_legend": (
        "each letter = who held it · ✕ lease expired · ! write rejected",
        "每个字母 = 当时的持有者 · ✕ 租约过期 · ! 写入被拒",
    ),
    "dedup_count": ("deduplicated", "已去重"),
    # header
    "safe": ("safe", "安全"),
    "speed": ("speed", "速度"),
    "mode": ("mode", "模式"),
    "forked": ("FORKED · recording", "已分叉 · 录制中"),
    "recording": ("recording", "录制中"),
    "tip_tab": ("Show this panel (keys 1-6)", "显示这个面板（按键 1-6）"),
    "playing": ("▶ playing", "▶ 播放中"),
    "paused": ("‖ paused", "‖ 已暂停"),
    "sandbox": ("Sandbox", "沙盒"),
    "sandbox_summary": (
        "Three scribes, two tasks, nothing scripted: the clock runs live and every button acts.",
        "三位抄写员、两项任务，没有脚本：时钟实时走，每个按钮都能用。",
    ),
    # narration
    "step_k_of_n": ("Step {k} of {n}", "第 {k} 步 / 共 {n} 步"),
    "before_start": ("Press → or n for the first step.", "按 → 或 n 开始第一步。"),
    "end_of_script": ("End of the script.", "脚本结束。"),
    "forked_note": (
        "You acted, so the script was dropped: this run is yours now. Acts recorded: {n}.",
        "你动手了，脚本就此放下：这一局归你。已录制 {n} 个动作。",
    ),
    "after_script_note": (
        "The script is over; time runs on and your acts are recorded: {n}. "
        "Save as scenario with s.",
        "脚本已演完；时间继续走，你的动作都会录下：已录制 {n} 个。按 s 存为场景。",
    ),
    "sandbox_note": (
        "Sandbox: acts recorded: {n}. Save as scenario with s.",
        "沙盒：已录制 {n} 个动作。按 s 存为场景。",
    ),
    "refused": ("{msg}", "被拒绝：{msg}"),
    "refusal": (
        "{worker}'s {op} on {task} refused: {reason} (its token {its}; current {current})",
        "{worker} 对 {task} 的{op}被拒：{reason}（它的令牌 {its}，当前 {current}）",
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
        "Restart the same scenario in the next mode (a mistake beside the correct run)",
        "换下一种模式重放同一场景（把错误做法摆在正确做法旁边）",
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
        "保存登记簿（JSON Lines）、截图（SVG），并把这一局存为场景",
    ),
    "tip_quit": ("Leave the app", "退出"),
    "tip_pause": ("Pause (presentation remote)", "暂停（演示遥控器）"),
    # picker
    "pick_title": ("Borrowed Keys — choose a scenario", "借来的钥匙 — 选一个场景"),
    "pick_hint": (
        "Enter opens · l language · ? help · q quit",
        "回车打开 · l 切换语言 · ? 帮助 · q 退出",
    ),
    "no_bundled": ("(no bundled scenarios found)", "（没有找到内置场景）"),
    # notifications
    "saved": ("Saved in {folder}\n{names}", "已保存到 {folder}\n{names}"),
    "no_waiting": ("No waiting task to {what}", "没有待批任务可{what}"),
    "mode_now": ("Mode: {mode} (restarted)", "模式：{mode}（已重来）"),
    "help_title": ("The five ideas", "五个概念"),
    "help_close": ("Esc or ? closes this page.", "按 Esc 或 ? 关闭本页。"),
}


def tr(key: str, lang: str, **fmt: object) -> str:
    """The word for `key` in `lang` (en or zh)."""
    en, zh = WORDS[key]
    text = zh if lang == "zh" else en
    return text.format(**fmt) if fmt else text


# The event and reason words are the headless player's, so the app and the transcript agree.
event_word = event_label
reason_word = reason_label


OPERATIONS_ZH = {
    "write": "写入",
    "heartbeat": "心跳续约",
    "renew": "心跳续约",
    "checkpoint": "存检查点",
    "complete": "交差",
    "fail": "报失败",
    "park": "挂起待批",
    "effect": "副作用",
    "claim": "借用",
}


def operation_word(operation: str, lang: str) -> str:
    """A refused operation's name (write, checkpoint, ...); zh from a small table."""
    return OPERATIONS_ZH.get(operation, operation) if lang == "zh" else operation


def state_word(state: str, lang: str) -> str:
    return tr(state, lang) if state in WORDS else state


def status_word(status: str, lang: str) -> str:
    """A task status in the table (unknown ones as they are)."""
    key = f"status_{status}"
    return tr(key, lang) if key in WORDS else status


# The story's people, as the glossary names them on screen; other ids show as they are.
WORKER_NAMES = {
    "azheng": ("Azheng", "阿澄"),
    "linzhou": ("Linzhou", "临舟"),
    "elder": ("Elder", "校对官"),
}


def worker_name(worker_id: str, lang: str) -> str:
    """A pane's title: the story's name for a known worker, with its id when they differ."""
    names = WORKER_NAMES.get(worker_id)
    if names is None:
        return worker_id
    name = names[1] if lang == "zh" else names[0]
    return f"{name} · {worker_id}" if lang == "zh" else name
