"""The presenter's words: jumping to a step, the palette, questions and forks; leaving the
script and coming back; the round of "Which mistake is this?"."""

from typing import Final

from core.scenarios.glossary import Word

PRESENTER: Final[dict[str, Word]] = {
    # The presenter's words: jumping to a step, the palette key, questions and forks.
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
        "面试得分：{questions} 道题答对 {right} 道，{follow_ups} 道追问答对 {follow_right} 道。",
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
    # Leaving the script and coming back: redo, another scenario, a mode from a list, the
    # chosen worker's fault keys, the folded narration.
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
    # "Which mistake is this?": a run under a mistake the room is not told (tui --guess-mode).
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
    # the command palette's own words and Textual's commands in it (demo.commands)
    "palette_search": ("Search for a command…", "搜索命令…"),
    "sys_quit": ("Quit", "退出"),
    "sys_quit_help": ("Quit the app", "退出本程序"),
    "sys_keys": ("Keys", "按键"),
    "sys_keys_show": ("Show the keys of the focused part", "显示当前部件可用的按键"),
    "sys_keys_hide": ("Hide the keys panel", "隐藏按键面板"),
    "sys_screenshot": ("Screenshot", "截图"),
    "sys_screenshot_help": ("Save an SVG picture of this screen", "把当前画面存成 SVG 图片"),
}
