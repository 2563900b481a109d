"""Every word the app shows, in English and Chinese, keyed by the glossary's words.

One small table: `tr(key, lang)`; keys are the English glossary word in snake case. The
glossary's words (concepts, panels, columns, statuses, states, events, reasons, people) come
from core.scenarios.glossary, the one table the transcript and the help page use too; this
module adds only the app's own words (buttons, tooltips, notes).
"""

from typing import TYPE_CHECKING

from core.scenarios import glossary

if TYPE_CHECKING:
    from core.sim.spec import Action

LANGS = ("en", "zh")

WORDS: dict[str, tuple[str, str]] = {
    # the glossary's words (core.scenarios.glossary): concepts, panels, columns, states
    **glossary.CONCEPTS,
    **glossary.PANELS,
    **glossary.COLUMNS,
    **{f"th_{k}": v for k, v in glossary.HEADERS.items()},
    **{f"th_narrow_{k}": v for k, v in glossary.NARROW_HEADERS.items()},
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
    "forked_note": (
        "You acted, so the rest of the script was dropped: this run is yours now "
        "({acts} of yours recorded so far).",
        "你动手了，剩下的脚本就此放下：这一局归你（已录下你的 {acts}）。",
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
        "Mode {mode}: {meaning}. This text describes {own_meaning} (mode {own}); "
        "the ✓ and ✗ show where this run differs.",
        "当前模式 {mode}：{meaning}。下面的旁白讲的是{own_meaning}（模式 {own}）；"
        "✓ 和 ✗ 标出这一局哪里不一样。",
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
    "serve_full_heading": ("{name} is full", "{name} 已满"),
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
    "mode_now": ("Mode: {mode}, {meaning} (restarted)", "模式：{mode}，{meaning}（已重来）"),
    "help_title": ("The five ideas", "五个概念"),
    "help_close": ("Esc or ? closes this page.", "按 Esc 或 ? 关闭本页。"),
}


# The app's own words beyond the glossary's: the key bar, the palette, questions.
WORDS.update(
    {
        "undo": ("Undo", "撤销"),
        "box_detail": (
            "Box {task} #{seq} (step {step}):",
            "木匣 {task} #{seq}（第 {step} 步）：",
        ),
        "timeline_legend": (
            "each letter = who held it · ✕ lease expired · ! write rejected",
            "每个字母 = 当时的持有人 · ✕ 租约过期 · ! 写入被拒",
        ),
        "undone": ("Undone: {act} (and the time after it)", "已撤销：{act}（以及之后流逝的时间）"),
        "nothing_to_undo": ("Nothing to undo yet", "还没有可撤销的动作"),
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
        "palette_enqueue": ("Enqueue: {kind} task", "入队：{kind} 任务"),
        "palette_approve": ("Approve {task}", "批准 {task}"),
        "palette_reject": ("Reject {task}", "驳回 {task}"),
        "palette_waiting": ("{task} waits for a person's approval", "{task} 正等人批准"),
        "palette_filter": ("Rejected: only {reason}", "拒收：只看 {reason}"),
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
    """An act in a few words: "kill acheng", "杀死进程 acheng"."""
    who = getattr(action, "worker", None) or getattr(action, "task", None) or ""
    verb = glossary.action_word(action.name, lang) if lang == "zh" else action.name
    kind = getattr(action, "kind", None)
    if kind:
        who = f"{who} ({kind})"
    return f"{verb} {who}".rstrip()


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
    """A pane's title: the story's name for a known worker, with its id when they differ."""
    name = glossary.person_name(worker_id, lang)
    if name is None:
        return worker_id
    return f"{name} · {worker_id}" if lang == "zh" else name


# The presenter's words: jumping to a step, the palette key, questions and forks.
WORDS.update(
    {
        "jump": ("Go to step", "跳到某步"),
        "tip_jump": (
            "Go straight to a step (replays from the start, like stepping back)",
            "直接跳到某一步（从头重放，和上一步一样准确）",
        ),
        "tip_palette": ("Every act by name", "按名字找每个动作"),
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
