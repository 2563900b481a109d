"""Every word the app shows, in English and Chinese, keyed by the glossary's words.

One small table: `tr(key, lang)`; keys are the English glossary word in snake case. The
glossary's words (concepts, panels, columns, statuses, states, events, reasons, people) come
from core.scenarios.glossary, the one table the transcript and the help page use too; this
module adds only the app's own words (buttons, tooltips, notes).
"""

from core.scenarios import glossary

LANGS = ("en", "zh")

WORDS: dict[str, tuple[str, str]] = {
    # the glossary's words (core.scenarios.glossary): concepts, panels, columns, states
    **glossary.CONCEPTS,
    **glossary.PANELS,
    **glossary.COLUMNS,
    **{f"th_{k}": v for k, v in glossary.HEADERS.items()},
    **{f"status_{k}": v for k, v in glossary.TASK_STATUSES.items()},
    **glossary.WORKER_STATES,
    "freeze_heartbeat": ("Freeze heartbeat", glossary.ACTIONS["freeze_heartbeat"][1]),
    "stall": ("Stall", glossary.ACTIONS["stall"][1]),
    "resume": ("Resume", glossary.ACTIONS["resume"][1]),
    # workers and their buttons
    "kill": ("Kill", "杀死"),
    "restart_worker": ("Restart", "重启"),
    "partition": ("Partition", "断桥"),
    "heal": ("Heal", "修桥"),
    "add_worker": ("+ Worker", "+ 执行者"),
    "own_clock": ("own", "自认"),
    "by_store": ("store", "存储"),
    "pulse": ("pulse", "脉搏"),
    "ago": ("{age} ago", "{age}前"),
    "no_lease": ("holds no lease", "未持租约"),
    "manual": ("manual", "手动"),
    "skew": ("skew {amount}", "时钟偏差 {amount}"),
    "slow": ("slow x{factor}", "变慢 x{factor}"),
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
    "mode_notice": (
        "Mode {mode}: {meaning}. This text describes {own_meaning} (mode {own}); "
        "the ✓ and ✗ show where this run differs.",
        "当前模式 {mode}：{meaning}。下面的旁白讲的是{own_meaning}（模式 {own}）；"
        "✓ 和 ✗ 标出这一局哪里不一样。",
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
    "mode_now": ("Mode: {mode}, {meaning} (restarted)", "模式：{mode}，{meaning}（已重来）"),
    "help_title": ("The five ideas", "五个概念"),
    "help_close": ("Esc or ? closes this page.", "按 Esc 或 ? 关闭本页。"),
}


def tr(key: str, lang: str, **fmt: object) -> str:
    """The word for `key` in `lang` (en or zh)."""
    en, zh = WORDS[key]
    text = zh if lang == "zh" else en
    return text.format(**fmt) if fmt else text


# The glossary's lookups, under the names the widgets use.
event_word = glossary.event_word
reason_word = glossary.reason_word
operation_word = glossary.action_word
state_word = glossary.state_word
status_word = glossary.status_word
mode_word = glossary.mode_word
token_word = glossary.token_word


def worker_name(worker_id: str, lang: str) -> str:
    """A pane's title: the story's name for a known worker, with its id when they differ."""
    name = glossary.person_name(worker_id, lang)
    if name is None:
        return worker_id
    return f"{name} · {worker_id}" if lang == "zh" else name
