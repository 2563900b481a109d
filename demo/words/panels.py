"""The panels' words: Rejected, Checkpoints, Belief vs truth (and the exported page's
drawing of it), Effects, and how a worker learned what it did."""

from typing import Final

from core.scenarios.glossary import Word

PANELS: Final[dict[str, Word]] = {
    # The app's own words beyond the glossary's: the key bar, the palette, questions.
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
        "{at}，守库人在{lease} 旁又放进了第二份租约，可按它自己的钟，{lease} 要到 {until} 才到期",
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
