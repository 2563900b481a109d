"""Every key of the main screen, in one table: the screen binds it, the app's command palette
lists it and the help page prints it. Its own module, so the screens, the help page and the
app can all import it without importing one another."""

from core.scenarios import glossary

# (binding id, keys, action, word key, tooltip key, shown in the footer)
CONTROLS: tuple[tuple[str, str, str, str, str, bool], ...] = (
    ("play_pause", "space", "play_pause", "play_pause", "tip_play", True),
    ("next", "n,right", "next_step", "next", "tip_next", True),
    ("previous", "p,left", "previous_step", "previous", "tip_previous", True),
    ("restart", "r", "restart", "restart", "tip_restart", True),
    ("slower", "minus", "slower", "slower", "tip_speed", True),
    ("faster", "plus,equals_sign", "faster", "faster", "tip_speed", True),
    ("language", "l", "language", "language", "tip_lang", True),
    ("mode", "m", "next_mode", "mode_next", "tip_mode", True),
    ("approve", "a", "approve", "approve", "tip_approve", True),
    ("reject", "x", "reject", "reject", "tip_reject", True),
    ("enqueue", "e", "enqueue", "enqueue", "tip_enqueue", True),
    ("reveal", "v", "reveal", "reveal", "tip_reveal", True),
    ("help", "question_mark", "help", "help", "tip_help", True),
    ("save", "s", "save", "save", "tip_save", True),
    ("quit", "q", "quit", "quit", "tip_quit", True),
    ("remote.next", "pagedown", "next_step", "next", "tip_next", False),
    ("remote.previous", "pageup", "previous_step", "previous", "tip_previous", False),
    ("remote.pause", "full_stop", "pause", "pause", "tip_pause", False),
    # 1-6 open the panels, so a walkthrough can show the Rejected tab without a mouse.
    ("tab.ledger", "1", "show_tab('tab-ledger')", "ledger", "tip_tab", False),
    ("tab.checkpoints", "2", "show_tab('tab-checkpoints')", "checkpoints", "tip_tab", False),
    ("tab.rejected", "3", "show_tab('tab-rejected')", "rejected", "tip_tab", False),
    ("tab.effects", "4", "show_tab('tab-effects')", "effects", "tip_tab", False),
    ("tab.events", "5", "show_tab('tab-events')", "event_log", "tip_tab", False),
    ("tab.timeline", "6", "show_tab('tab-timeline')", "timeline", "tip_tab", False),
    ("workers", "0", "show_workers", "workers", "tip_workers", False),
    ("filter", "f", "filter_rejected", "filter", "tip_filter", False),
)

# For the help page's keys table: (keys as typed, en, zh)
CONTROL_KEYS: tuple[tuple[str, str, str], ...] = (
    ("space", "play / pause", "播放 / 暂停"),
    ("n  →  PgDn", "next step", "下一步"),
    ("p  ←  PgUp", "previous step (replays from the start)", "上一步（从头重放）"),
    ("r", "restart", "重来"),
    ("-  +", "slower / faster", "慢一点 / 快一点"),
    ("l", "language: English / 中文", "语言：English / 中文"),
    ("m", "mode: a mistake, then its correct twin", "模式：错误做法与它正确的孪生版本互换"),
    ("a  x", "approve / reject the selected waiting task", "批准 / 驳回选中的待批任务"),
    ("f", "Rejected panel: show one reason, the next, all", "拒收面板：只看一种原因，下一种，全部"),
    ("e", "enqueue a task", "任务入队"),
    ("v", "reveal the answer to the step's question", "揭晓本步问题的答案"),
    (
        "s",
        "save transcript, screenshot, scenario (borrowed-keys-out/)",
        "保存回放记录、截图、场景（borrowed-keys-out/）",
    ),
    (".", "pause (presentation remote)", "暂停（演示遥控器）"),
    (
        "1 … 6",
        "panels: " + ", ".join(en.lower() for en, _zh in glossary.PANELS.values()),
        "面板：" + "、".join(zh for _en, zh in glossary.PANELS.values()),
    ),
    ("0", "back to the worker panes", "回到执行者面板"),
    ("ctrl+p", "every act by name: faults on each worker, modes, tasks", "按名字找每个动作"),
    ("?", "help", "帮助"),
    ("q", "quit", "退出"),
)
