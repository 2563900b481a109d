"""Every key of the main screen, in one table: the screen binds it, the app's command palette
lists it and the help page prints it. Its own module, so the screens, the help page and the
app can all import it without importing one another."""

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
)

# For the help page's keys table: (keys as typed, en, zh)
CONTROL_KEYS: tuple[tuple[str, str, str], ...] = (
    ("space", "play / pause", "播放 / 暂停"),
    ("n  →  PgDn", "next step", "下一步"),
    ("p  ←  PgUp", "previous step (replays from the start)", "上一步（从头重放）"),
    ("r", "restart", "重来"),
    ("-  +", "slower / faster", "慢一点 / 快一点"),
    ("l", "language: English / 中文", "语言：English / 中文"),
    ("m", "mode: restart in the next mode", "模式：换下一种模式重来"),
    ("a  x", "approve / reject the selected waiting task", "批准 / 驳回选中的待批任务"),
    ("e", "enqueue a task", "任务入队"),
    ("v", "reveal the answer to the step's question", "揭晓本步问题的答案"),
    (
        "s",
        "save transcript, screenshot, scenario (borrowed-keys-out/)",
        "保存登记簿、截图、场景（borrowed-keys-out/）",
    ),
    (".", "pause (presentation remote)", "暂停（演示遥控器）"),
    (
        "1 … 6",
        "panels: ledger, checkpoints, rejected, effects, event log, ownership",
        "面板：总册、检查点、拒收、副作用、登记簿、持有时间线",
    ),
    ("?", "help", "帮助"),
    ("q", "quit", "退出"),
)
