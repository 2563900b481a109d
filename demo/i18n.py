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
from demo.words.fleet import FLEET
from demo.words.panels import PANELS
from demo.words.presenter import PRESENTER
from demo.words.serve import SERVE

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


_SCREEN: dict[str, tuple[str, str]] = {
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
    # the keeper's view of the lease (the store's clock), beside the holder's own
    "by_store": ("keeper", "守库人"),
    "pulse": ("pulse", "脉搏"),
    "ago": ("{age} ago", "{age}前"),
    "no_lease": ("holds no lease", "未持租约"),
    "no_lease_known": ("remembers no lease", "不记得任何租约"),
    "still_lent": ("the keeper still lends it {task}", "守库人仍把{task}借在其名下"),
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


def _joined(*tables: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """One table of them all; a word two tables both define is a mistake, not an override."""
    words: dict[str, tuple[str, str]] = {}
    for table in tables:
        twice = words.keys() & table.keys()
        if twice:
            raise ValueError(f"words defined twice: {sorted(twice)}")
        words.update(table)
    return words


WORDS: dict[str, tuple[str, str]] = _joined(_SCREEN, FLEET, SERVE, PANELS, PRESENTER)


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
