"""The safety rules, one set, each judged at the instant its event happens.

The checker behind the safety light (core/sim/checker.py) calls these verdicts on every
event; `play`'s summary, the exported page, `chaos` and the explorer all count what the
checker found, so no rule is known to one of them and not to the others.

Each rule stands beside the seed's own sentence. The verdicts are pure functions of what
the checker remembers of a task (its current lease, the newest tokens issued, whether it
has ended), so the explorer's canonical form, which keeps that memory, keeps every
verdict to come.
"""

import enum
from dataclasses import dataclass

from core.engine.config import Mode


class ViolationKind(enum.StrEnum):
    """A safety rule broken (the `reason` of a `violation` line, a scenario's `violation`)."""

    # "存储层或状态机只接受当前最大的 token。" and the 围栏签's rule, "若某页已经见过更大
    # 的编号，较小编号的写入一律作废。" A page taken with a token older than the newest one
    # issued for its task (before the fence tag, its lease token: "lease_token 本轮租约或
    # 版本号").
    STALE_WRITE_ACCEPTED = "stale_write_accepted"
    # "谁写入总册，除了要拿出当前有效的租牌，还要在每一页角落压上自己的围栏签编号" A page
    # taken from a lease that is not the task's current, live one, though no newer token
    # exists (its holder completed, or its lease ran out with nobody after it).
    PAGE_WITHOUT_LIVE_LEASE = "page_without_live_lease"
    # "系统真正关心的是：谁在这一刻还持有未过期的执行资格。" and the Claim's guard,
    # "AND (status = 'queued' OR lease_expires_at < NOW())": one live lease per task, so a
    # claim while the previous lease has not expired (whoever claims) makes two.
    DOUBLE_OWNER = "double_owner"
    # "若 worker 成功完成，ack 删除任务；" and "审批信号到来后重新 claim；": a task done,
    # given up or waiting for a human is never lent out again by a claim (the Claim's own
    # guard, as printed, has no status in its expiry half: seed_sql shows what follows).
    RECLAIMED_AFTER_END = "reclaimed_after_end"
    # "fence_token       只增不减的围栏令牌" and "每次 claim / re-claim 任务时生成更大的
    # token；" Judged where claims issue fence tokens: before the fence tag, and where
    # `running` is taken as ownership, a claim issues none by design, and the harm that
    # follows is judged where it happens (a stale page, a stuck task).
    FENCE_NOT_NEWER = "fence_not_newer"
    # The Complete's guard, "WHERE task_id = :task_id AND owner_id = :worker_id AND
    # lease_token = :lease_token": a task completed under one lease only.
    COMPLETED_TWICE = "completed_twice"
    # "Idempotency 负责“重复做时别把世界打坏”" An effect applied once per idempotency key.
    DUPLICATE_EFFECT = "duplicate_effect"
    # "running 只说明任务一度在运行。它没有过期时间，也没有版本。系统一旦只信这个字段，就会
    # 在 worker 消失后陷入永久僵局。" A task held out of reach by a dead or stalled holder.
    STUCK_TASK = "stuck_task"


@dataclass(frozen=True, slots=True)
class HeldLease:
    """A task's current lease as the judge knows it."""

    worker_id: str
    lease_token: int
    expires_at: int
    released: bool  # completed, failed, parked or given up: no page is its own any more


def live(lease: HeldLease, at: int, expiry: bool) -> bool:
    """Whether the lease still gives its holder the right to act at `at` (a lease is live
    while `now <= lease_expires_at`; without expiry, until it is released)."""
    return not lease.released and (not expiry or at <= lease.expires_at)


def page_verdict(
    token: int,
    newest: int,
    lease_token: int,
    current: HeldLease | None,
    at: int,
    expiry: bool,
) -> ViolationKind | None:
    """A page taken under `lease_token` with `token` (the writer's fence token, or its
    lease token before the fence tag) while `newest` is the newest issued for its task:
    the one rule it breaks, if any. A page older than the newest token is stale; any
    other page not from the current, live lease is the second rule."""
    if token < newest:
        return ViolationKind.STALE_WRITE_ACCEPTED
    if current is None or current.lease_token != lease_token or not live(current, at, expiry):
        return ViolationKind.PAGE_WITHOUT_LIVE_LEASE
    return None


def page_is_judged_by_lease(fence_token: int | None, lease_token: int | None) -> bool:
    """Before the fence tag a page carries no fence token: its lease token is the version
    the store could have compared."""
    return fence_token is None and lease_token is not None


def claim_verdicts(
    previous: HeldLease | None,
    ended: bool,
    fence: int,
    newest_fence: int,
    at: int,
    *,
    expiry: bool,
    fence_tokens: bool,
) -> list[ViolationKind]:
    """The rules a claim breaks: of a task that had ended, over a live lease, or without a
    newer fence token (only where claims issue one)."""
    out: list[ViolationKind] = []
    if ended:
        out.append(ViolationKind.RECLAIMED_AFTER_END)
    elif previous is not None and live(previous, at, expiry):
        out.append(ViolationKind.DOUBLE_OWNER)
    if fence_tokens and fence <= newest_fence:
        out.append(ViolationKind.FENCE_NOT_NEWER)
    return out


def completion_verdict(leases_completed: int) -> ViolationKind | None:
    """A task completed under this many leases so far."""
    return ViolationKind.COMPLETED_TWICE if leases_completed > 1 else None


def effect_verdict(times_applied: int) -> ViolationKind | None:
    """An effect applied this many times under one idempotency key."""
    return ViolationKind.DUPLICATE_EFFECT if times_applied > 1 else None


# A task held out of reach by a dead or stalled holder this many leases past its last
# heartbeat, while someone could take it over, is stuck.
STUCK_AFTER_LEASES = 3


def stuck_mark(last_renew_at: int, ttl_ms: int) -> int:
    """The last instant a down holder's task is not yet stuck: from the next one it is."""
    return last_renew_at + STUCK_AFTER_LEASES * ttl_ms


class Harm(enum.StrEnum):
    """What a mistake costs where it breaks no safety rule: the figure that shows it."""

    # "没有 checkpoint，租约过期后的重试常常意味着整条链路重跑" and "下一位拿到的只是空白
    # 现场，成本会被重复执行吃掉。"
    STEPS_DONE_AGAIN = "steps_done_again"
    # "租期太长会把恢复时间也一起拉长。一个已经死掉的 worker 会霸占任务很久"
    TIME_OUT_OF_REACH = "time_out_of_reach"


# The modes whose mistake costs work or time, not safety.
MODE_HARM: dict[Mode, Harm] = {
    Mode.NO_CHECKPOINT: Harm.STEPS_DONE_AGAIN,
    Mode.UNREAD_CHECKPOINT: Harm.STEPS_DONE_AGAIN,
    # "如果心跳只能在主逻辑走到某一行代码时顺手发送，那么主逻辑一旦卡死，续约也会一起
    # 消失。" A healthy worker loses its lease in every long step, and the task waits for
    # the next claim each time (its pages are never reached, so none is written twice).
    Mode.HEARTBEAT_IN_WORK: Harm.TIME_OUT_OF_REACH,
    Mode.LONG_LEASE: Harm.TIME_OUT_OF_REACH,
}


def harm_figure(mode: Mode, wasted_steps: int, recovery_time_ms: int) -> tuple[Harm, int] | None:
    """A mode's harm that is not safety, with its figure in a run (steps, or milliseconds);
    None for a mode whose mistake is a safety rule, or the correct run."""
    harm = MODE_HARM.get(mode)
    if harm is None:
        return None
    return harm, wasted_steps if harm is Harm.STEPS_DONE_AGAIN else recovery_time_ms
