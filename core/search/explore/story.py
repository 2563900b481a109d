"""A shortest counterexample as a scenario file: one step per choice, narrated in English
and Chinese from what the engine did, with expectations that prove the broken rule.

The trace is replayed on a fresh simulation (the explorer's states are restored copies;
the file must hold for anyone who plays it from the start), and the written text is
played back with the scenario player before it counts as verified.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.engine.config import Mode
from core.engine.durations import format_clock, format_duration
from core.engine.people import called
from core.engine.records import EventRow, TaskRow
from core.engine.vocabulary import EventKind, TaskStatus
from core.scenarios.format import Expectation, Step, Subject, parse_scenario
from core.scenarios.glossary import (
    Word,
    mode_word,
    pick,
    reason_word,
    status_word,
    task_name,
    violation_word,
)
from core.scenarios.player import PlayResult, play
from core.scenarios.writer import dump_scenario, write_whole
from core.search.explore.bfs import Counterexample, ExploreParams
from core.sim.checker import ViolationKind
from core.sim.simulation import ActionResult, Simulation, run_inline
from core.sim.spec import (
    Action,
    Advance,
    Approve,
    Checkpoint,
    Claim,
    Complete,
    Effect,
    Fail,
    Heartbeat,
    Kill,
    Park,
    Reject,
    Restart,
    Resume,
    Skew,
    Stall,
    Write,
)

LANGS = ("en", "zh")

OUTCOME: dict[str, Word] = {
    "accepted": ("accepted", "收下"),
    "saved": ("saved", "已存入"),
    "done": ("done", "已完成"),
    "waiting": ("waiting for a human", "等待审批"),
    "queued": ("queued again", "重新排队"),
    "dead": ("given up", "已放弃"),
    "applied": ("applied", "已执行"),
    "deduplicated": ("deduplicated", "已去重"),
    "refused": ("refused", "被拒"),
    "nothing": ("nothing to claim", "没有可领的任务"),
}


def _who(worker_id: str, lang: str) -> str:
    return called(worker_id, lang)


def rule_word(rule: str, lang: str) -> str:
    """A broken rule's phrase in `lang` (the checker's words, which the light shows)."""
    return violation_word(rule, lang)


@dataclass(frozen=True, slots=True)
class _Done:
    """One step replayed: the action, what the facade answered, the events it wrote."""

    action: Action
    result: ActionResult
    events: tuple[EventRow, ...]
    now_ms: int
    lease: tuple[int, int] | None  # the tokens the actor remembered before acting
    then_ms: int = 0  # the clock before the step
    before: tuple[TaskRow, ...] = ()  # the rows before the step
    broken: tuple[str, ...] = ()  # the rules the checker found broken by the step


def _refusal(done: _Done, lang: str) -> str:
    reason = done.result.rejection.reason if done.result.rejection is not None else None
    word = pick(OUTCOME["refused"], lang)
    if reason is None:
        return word
    return (
        f"{word} ({reason_word(reason, lang)})"
        if lang == "en"
        else f"{word}（{reason_word(reason, lang)}）"
    )


def _first(done: _Done, kind: EventKind) -> EventRow | None:
    return next((ev for ev in done.events if ev.event == kind), None)


def _until(at: object, lang: str) -> str:
    if not isinstance(at, int):
        return "with no end" if lang == "en" else "没有到期时刻"
    return f"until {format_clock(at)}" if lang == "en" else f"到 {format_clock(at)} 为止"


def _ends_passed(done: _Done, lang: str) -> str:
    """Every lease end the step's time has just passed, each with its task's status: that
    an instant went by is the point of a time step (a lease is live while `now <=
    expires_at`, so its end is passed from `expires_at + 1` on). A lease the keeper
    expired in the step is said by its event instead."""
    said = {
        (ev.task_id, ev.lease_token) for ev in done.events if ev.event == EventKind.LEASE_EXPIRED
    }
    text = ""
    for row in done.before:
        end = row.lease_expires_at
        passed = end is not None and done.then_ms <= end < done.now_ms
        if end is None or not passed or (row.task_id, row.lease_token) in said:
            continue
        holder = _who(row.owner_id, lang) if row.owner_id is not None else None
        status = status_word(row.status, lang)
        named = task_name(row.task_id, lang)
        if lang == "en":
            whose = f"{holder}'s, " if holder else ""
            text += (
                f"; {named} is {status}, and the end of its lease {row.lease_token} "
                f"({whose}{format_clock(end)}) has just passed"
            )
        else:
            whose = f"（{holder}的）" if holder else ""
            text += (
                f"；{named} {status}，它的租约号 {row.lease_token}{whose}"
                f"到期时刻 {format_clock(end)} 刚刚过去"
            )
    return text


def _tokens(lease: int | None, fence: int | None, lang: str) -> tuple[str, str]:
    """A lease's two tokens in words: "lease 1, fence token 2", or "no fence token" where
    none is issued (before the fence tag; without expiry, no lease token either)."""
    en = lang == "en"
    if lease:
        first = f"lease {lease}" if en else f"租约号 {lease}"
    else:
        first = "no lease token" if en else "没有租约号"
    if fence:
        second = f"fence token {fence}" if en else f"围栏令牌 {fence}"
    else:
        second = "no fence token" if en else "没有围栏令牌"
    return first, second


def _both(tokens: tuple[str, str], lang: str) -> str:
    first, second = tokens
    if lang == "en":
        return f"{first} and {second}" if first.startswith("no ") else f"{first}, {second}"
    return f"{first}，也{second}" if first.startswith("没有") else f"{first}，{second}"


def narrate(done: _Done, lang: str) -> str:
    """One sentence for one step, from what the engine did."""
    a = done.action
    clock = format_clock(done.now_ms)
    en = lang == "en"
    who = _who(getattr(a, "worker", ""), lang) if hasattr(a, "worker") else ""
    held = done.lease
    holding = ""
    if held is not None:
        lease, fence = _tokens(held[0], held[1], lang)
        holding = (
            f", holding {lease} ({fence}) in memory," if en else f"手里记着{lease}（{fence}），"
        )
    ok = done.result.ok and not done.result.ignored
    text: str
    match a:
        case Advance():
            expired = [ev for ev in done.events if ev.event == EventKind.LEASE_EXPIRED]
            text = f"Time passes to {clock}" if en else f"时间来到 {clock}"
            for ev in expired:
                gone = _who(ev.worker_id or "", lang)
                at = format_clock(int(ev.detail.get("expired_at", done.now_ms)))
                text += (
                    f"; {gone}'s lease {ev.lease_token} ran out at {at}"
                    if en
                    else f"；{gone}的租约号 {ev.lease_token} 在 {at} 到期"
                )
            text += _ends_passed(done, lang)
        case Claim(task=task):
            what = task or ("a task" if en else "任务")
            claimed = _first(done, EventKind.CLAIMED)
            if claimed is not None:
                until = _until(claimed.detail.get("expires_at"), lang)
                tokens = _both(_tokens(claimed.lease_token, claimed.fence_token, lang), lang)
                text = (
                    f"At {clock} {who} claims {what}: {tokens}, {until}"
                    if en
                    else f"{clock}，{who}领取{what}：{tokens}，{until}"
                )
            else:
                outcome = (
                    pick(OUTCOME["nothing"], lang)
                    if done.result.rejection is None
                    else _refusal(done, lang)
                )
                text = (
                    f"At {clock} {who} asks for {what}: {outcome}"
                    if en
                    else f"{clock}，{who}想领取{what}：{outcome}"
                )
        case Heartbeat():
            renewed = _first(done, EventKind.RENEWED)
            outcome = (
                (
                    f"accepted, {_until(renewed.detail.get('expires_at'), lang)}"
                    if en
                    else f"成功，{_until(renewed.detail.get('expires_at'), lang)}"
                )
                if renewed is not None
                else _refusal(done, lang)
            )
            text = (
                f"At {clock} {who}{holding} renews it: {outcome}"
                if en
                else f"{clock}，{who}{holding}心跳续约：{outcome}"
            )
        case Write(key=key):
            page = key.rsplit("/", 1)[-1]
            outcome = pick(OUTCOME["accepted"], lang) if ok else _refusal(done, lang)
            text = (
                f"At {clock} {who}{holding} writes page {page}: {outcome}"
                if en
                else f"{clock}，{who}{holding}写下第 {page} 页：{outcome}"
            )
        case Checkpoint(step=step):
            outcome = pick(OUTCOME["saved"], lang) if ok else _refusal(done, lang)
            text = (
                f"At {clock} {who}{holding} saves the checkpoint of step {step}: {outcome}"
                if en
                else f"{clock}，{who}{holding}存下第 {step} 步的检查点：{outcome}"
            )
        case Effect(key=key):
            if _first(done, EventKind.EFFECT_APPLIED) is not None:
                outcome = pick(OUTCOME["applied"], lang)
            elif _first(done, EventKind.EFFECT_DEDUPLICATED) is not None:
                outcome = pick(OUTCOME["deduplicated"], lang)
            else:
                outcome = _refusal(done, lang)
            text = (
                f"At {clock} {who}{holding} calls the outside service under the idempotency "
                f"key {key}: {outcome}"
                if en
                else f"{clock}，{who}{holding}以幂等键 {key} 调用外部服务：{outcome}"
            )
        case Complete():
            outcome = pick(OUTCOME["done"], lang) if ok else _refusal(done, lang)
            text = (
                f"At {clock} {who}{holding} completes the task: {outcome}"
                if en
                else f"{clock}，{who}{holding}完成任务：{outcome}"
            )
        case Fail(retry=retry):
            outcome = (
                pick(OUTCOME["queued" if retry else "dead"], lang) if ok else _refusal(done, lang)
            )
            text = (
                f"At {clock} {who}{holding} reports the task failed: {outcome}"
                if en
                else f"{clock}，{who}{holding}上报任务失败：{outcome}"
            )
        case Park():
            outcome = pick(OUTCOME["waiting"], lang) if ok else _refusal(done, lang)
            text = (
                f"At {clock} {who}{holding} parks the task for a human's approval: {outcome}"
                if en
                else f"{clock}，{who}{holding}挂起任务，等人审批：{outcome}"
            )
        case Stall():
            text = (
                f"At {clock} {who} stalls (a long pause), keeping everything in memory"
                if en
                else f"{clock}，{who}停顿了（一次很长的停顿），脑子里的东西都还在"
            )
        case Resume():
            text = (
                f"At {clock} {who} wakes up, remembering what it knew"
                if en
                else f"{clock}，{who}醒了过来，记得之前知道的一切"
            )
        case Kill():
            text = (
                f"At {clock} {who}'s process is killed: what it remembered is lost, and its "
                "lease stays in the store until it expires"
                if en
                else f"{clock}，{who}的进程被杀：记忆全部丢失，租约留在库房里直到过期"
            )
        case Restart():
            text = (
                f"At {clock} {who} restarts with an empty memory"
                if en
                else f"{clock}，{who}重启，记忆一片空白"
            )
        case Skew(by_ms=by):
            span = format_duration(by)
            text = (
                f"At {clock} {who}'s own clock runs {span} ahead of the store's"
                if en
                else f"{clock}，{who}自己的时钟比库房快了 {span}"
            )
        case Approve(task=task) | Reject(task=task):
            verdict = isinstance(a, Approve)
            text = (
                f"At {clock} a human {'approves' if verdict else 'rejects'} {task_name(task, lang)}"
                if en
                else f"{clock}，审批人{'批准' if verdict else '驳回'}了{task_name(task, lang)}"
            )
        case _:  # pragma: no cover - the explorer makes no other choice
            text = f"{clock} {a.name}"
    return text + ("." if en else "。")


def _why(rule: str, steps: Sequence[_Done], lang: str) -> str:
    """Why the last of `steps` breaks `rule`, from the rows it met and the events it (and
    the steps before it) wrote: what exists now that makes it a violation ("lease 2
    exists now")."""
    *earlier, done = steps
    en = lang == "en"
    ev = next((e for e in done.events if e.task_id is not None), None)
    task = ev.task_id if ev is not None else None
    row = next((r for r in done.before if r.task_id == task), None)
    if ev is None or row is None:
        return ""
    named = task_name(row.task_id, lang)  # as the screen names it (第六层, not floor6)
    holder = _who(row.owner_id, lang) if row.owner_id is not None else None
    status = status_word(row.status, lang)
    match rule:
        case ViolationKind.STALE_WRITE_ACCEPTED:
            if ev.fence_token is None:  # before the fence tag: told by the lease token
                return (
                    f"lease {row.lease_token} exists now, and the page came under the older "
                    f"lease {ev.lease_token}"
                    if en
                    else f"租约号 {row.lease_token} 已经存在，这一页却出自更旧的租约号 "
                    f"{ev.lease_token}"
                )
            return (
                f"fence token {row.fence_token} exists now, and the page carries the older "
                f"fence token {ev.fence_token}"
                if en
                else f"围栏令牌 {row.fence_token} 已经存在，这一页压的却是更旧的围栏令牌 "
                f"{ev.fence_token}"
            )
        case ViolationKind.PAGE_WITHOUT_LIVE_LEASE:
            end = row.lease_expires_at
            if row.status != TaskStatus.RUNNING:
                return (
                    f"{named} is {status}, so no lease is live, yet the page was taken"
                    if en
                    else f"{named} {status}，没有任何有效租约，这一页却被收下"
                )
            at = format_clock(end) if end is not None else ""
            return (
                f"lease {row.lease_token} ended at {at} and nobody holds a live one, yet the "
                "page was taken"
                if en
                else f"租约号 {row.lease_token} 已在 {at} 到期，没有人持有有效租约，这一页却被收下"
            )
        case ViolationKind.DOUBLE_OWNER:
            whose = f"{holder}'s " if en and holder else (f"{holder}的" if holder else "")
            end = row.lease_expires_at
            until = _until(end, lang)
            return (
                f"{whose}lease {row.lease_token} is still live, {until}, and lease "
                f"{ev.lease_token} exists now"
                if en
                else f"{whose}租约号 {row.lease_token} 仍然有效，{until}，而租约号 "
                f"{ev.lease_token} 也已经存在"
            )
        case ViolationKind.RECLAIMED_AFTER_END:
            return (
                f"{named} was {status} already, yet lease {ev.lease_token} exists now"
                if en
                else f"{named} 本来的状态是“{status}”，租约号 {ev.lease_token} 却又出现了"
            )
        case ViolationKind.COMPLETED_TWICE:
            first = next(
                (
                    e.lease_token
                    for d in earlier
                    for e in d.events
                    if e.event == EventKind.COMPLETED and e.task_id == task
                ),
                None,
            )
            under = f" under lease {first}" if en else f"在租约号 {first} 下"
            under = "" if first is None else under
            return (
                f"{named} was completed{under} already, and lease {ev.lease_token} completes it "
                "again"
                if en
                else f"{named} 已经{under}完成过一次，租约号 {ev.lease_token} 又完成了一次"
            )
        case ViolationKind.DUPLICATE_EFFECT:
            key = ev.detail.get("key", ev.detail.get("call"))
            return (
                f"the call under the key {key} had been applied already"
                if en
                else f"幂等键 {key} 下的调用之前已经执行过"
            )
        case ViolationKind.STUCK_TASK:
            seen = row.last_heartbeat_at
            since = format_clock(seen) if seen is not None else format_clock(0)
            return (
                f"the lease on {named} never ends, and {holder} has given no sign of life "
                f"since {since}, over three leases ago, so nobody else may take it"
                if en
                else f"{named} 的租约永不过期，{holder}自 {since} 起再无音讯，已超过三个租期，"
                "别人却接不了手"
            )
        case ViolationKind.FENCE_NOT_NEWER:
            return (
                f"fence token {row.fence_token} was issued before, and the claim's "
                f"{ev.fence_token} is not above it"
                if en
                else f"之前已发出围栏令牌 {row.fence_token}，这次领取的 {ev.fence_token} 并不更大"
            )
    return ""


def _row_expect(row: TaskRow) -> Expectation:
    params: list[tuple[str, str | int]] = [("status", row.status)]
    if row.owner_id is not None:
        params.append(("owner", row.owner_id))
    params += [("lease_token", row.lease_token), ("fence_token", row.fence_token)]
    if row.lease_expires_at is not None:
        params.append(("expires_at", row.lease_expires_at))
    return Expectation(Subject.TASK, row.task_id, tuple(params))


def _task_of(done: _Done, rows: Sequence[TaskRow]) -> str:
    for ev in done.events:
        if ev.task_id is not None:
            return ev.task_id
    return rows[0].task_id


def replay(
    params: ExploreParams, actions: Sequence[Action]
) -> tuple[list[_Done], list[list[TaskRow]], Simulation]:
    """Play a trace from the start; each step's record and the rows after it."""
    sim = Simulation(params.settings())
    events: list[EventRow] = []
    sim.store.add_listener(events.append)
    steps: list[_Done] = []
    rows = [list(run_inline(sim.store.tasks()))]
    for action in actions:
        events.clear()
        worker = sim.workers.get(getattr(action, "worker", ""))
        lease = worker.lease if worker is not None else None
        remembered = None if lease is None else (lease.lease_token, lease.fence_token)
        then = sim.now_ms
        found = len(sim.checker.found)
        result = sim.apply(action)
        broken = tuple(dict.fromkeys(str(v.name) for v in sim.checker.found[found:]))
        steps.append(
            _Done(
                action,
                result,
                tuple(events),
                sim.now_ms,
                remembered,
                then,
                tuple(rows[-1]),
                broken,
            )
        )
        rows.append(list(run_inline(sim.store.tasks())))
    return steps, rows, sim


def scenario_text(params: ExploreParams, cex: Counterexample) -> str:
    """The counterexample as a scenario file whose last step proves the broken rule."""
    steps, rows, sim = replay(params, cex.actions)
    try:
        last = steps[-1]
        task = _task_of(last, rows[-1])
        after = next(r for r in rows[-1] if r.task_id == task)
        before = next(r for r in rows[-2] if r.task_id == task)
        proof: list[Expectation] = []
        if cex.rule in set(ViolationKind):
            proof.append(
                Expectation(
                    Subject.VIOLATION, cex.rule, (("count", sim.checker.violations[cex.rule]),)
                )
            )
        proof.append(_row_expect(after))
        if isinstance(last.action, Write):
            page = next(p for p in run_inline(sim.store.ledger()) if p.key == last.action.key)
            proof.append(
                Expectation(
                    Subject.LEDGER,
                    page.key,
                    (("writer", page.writer), ("fence_token", page.fence_token)),
                )
            )
    finally:
        sim.close()
    mode = params.mode.value
    out: list[Step] = []
    for i, done in enumerate(steps):
        say = {lang: narrate(done, lang) for lang in LANGS}
        expects: tuple[Expectation, ...] = ()
        if i == len(steps) - 2:
            expects = (_row_expect(before),)
        broken = list(done.broken)
        if i == len(steps) - 1:
            expects = tuple(proof)
            broken = [cex.rule, *(r for r in broken if r != cex.rule)]
        # every step the light turns red at says what broke, and why
        for name in broken:
            why = {lang: _why(name, steps[: i + 1], lang) for lang in LANGS}
            say["en"] += f" Broken: {rule_word(name, 'en')}" + (
                f": {why['en']}." if why["en"] else "."
            )
            say["zh"] += f"违反规则：{rule_word(name, 'zh')}" + (
                f"：{why['zh']}。" if why["zh"] else "。"
            )
        out.append(Step(say=say["en"], say_zh=say["zh"], action=done.action, expects=expects))
    tasks = "1 task" if params.tasks == 1 else f"{params.tasks} tasks"
    world = (
        f"{params.workers} workers, {tasks} of {params.steps} steps, "
        f"lease {format_duration(params.ttl_ms)}"
    )
    rule = {lang: rule_word(cex.rule, lang) for lang in LANGS}
    meaning = {lang: mode_word(mode, lang) for lang in LANGS}
    return dump_scenario(
        f"Explorer: the shortest way to {rule['en']} in {mode} mode ({cex.length} steps)",
        params.settings(),
        out,
        # The mode's meaning has a colon of its own ("误区三：只有心跳，没有围栏"): it goes
        # in brackets after the mode's name, not after the title's colon.
        # The mode by its words in quotes, not by its id: a Chinese title names no
        # `no_fencing`, and the meaning's own colon stays inside the quotes.
        title_zh=f"穷举搜索：在“{meaning['zh']}”下最短的“{rule['zh']}”（{cex.length} 步）",
        summary=(
            f"Found by borrowed-keys explore: of every interleaving of {world} in {mode} "
            f"mode ({meaning['en']}), none breaks the rule in fewer steps. The search offers "
            "each worker every call it can make with the lease it remembers (a claim, a "
            "page, the outside call of the step it works, before its page and after it, a "
            "checkpoint, a renewal, completing, failing, parking), a human's verdict, the "
            "passing of time to every instant where a verdict can change"
            f"{_offered(params, 'en')}. {cex.states_before} distinct states were explored "
            "before this one."
        ),
        summary_zh=(
            f"由穷举搜索找到：在“{meaning['zh']}”下，"
            f"{params.workers} 个执行者、"
            f"{params.tasks} 个 {params.steps} 步任务的所有交错里，没有更短的违规路径。"
            "搜索让每个执行者凭它记得的租约做它能做的每个调用（领取、写一页、在这一步写页之前和之后"
            "调用外部服务、存检查点、续约、完成、上报失败、挂起），审批人可以批准或驳回，"
            f"时间可以走到每个会改变判断的时刻{_offered(params, 'zh')}。"
            f"找到它之前已探索 {cex.states_before} 个不同状态。"
        ),
        comments=(
            f"borrowed-keys explore: mode {mode}, {world}",
            f"shortest trace to {cex.rule}: {cex.length} steps, after "
            f"{cex.states_before} distinct states",
            "replay: borrowed-keys play THIS_FILE",
        ),
    )


def _offered(params: ExploreParams, lang: str) -> str:
    """The faults the search offers in this mode, after the calls (see `choices`)."""
    en = lang == "en"
    if params.mode is Mode.CLIENT_CLOCK:
        ahead = format_duration(params.ttl_ms * 3 // 2)
        return (
            f", and a worker's own clock {ahead} ahead of the store's, past the lease"
            if en
            else f"，执行者自己的时钟还可以比库房快 {ahead}，超过一个租期"
        )
    if params.mode is Mode.NO_EXPIRY:
        return (
            ", and a worker's stall, kill and restart" if en else "，执行者还可以停顿、被杀和重启"
        )
    return ""


def verify(text: str) -> bool:
    """Play the text with the scenario player: do all its expectations hold?"""
    scenario = parse_scenario(text, "<explore>")
    result = PlayResult()
    for _ in play(scenario, result=result):
        pass
    return result.failed == 0 and result.passed > 0


def file_name(params: ExploreParams, rule: str) -> str:
    return f"explore-{params.mode.value}-{rule}.toml"


def write_counterexamples(
    params: ExploreParams,
    found: Sequence[Counterexample],
    out_dir: str | Path | None,
    on_written: Callable[[str], None] | None = None,
) -> list[Counterexample]:
    """Each counterexample's file, written to `out_dir` (if given) and verified;
    `on_written` hears each file's path once it is whole. The folder is made only for a
    file to put in it."""
    from dataclasses import replace

    written: list[Counterexample] = []
    for cex in found:
        if cex.rule == "engine_error":
            written.append(cex)  # a crash is reported, not played
            continue
        text = scenario_text(params, cex)
        path = None
        if out_dir is not None:
            target = Path(out_dir) / file_name(params, cex.rule)
            write_whole(target, text)
            path = str(target)
            if on_written is not None:
                on_written(path)
        written.append(replace(cex, path=path, verified=verify(text)))
    return written


__all__ = ["narrate", "scenario_text", "verify", "write_counterexamples"]
