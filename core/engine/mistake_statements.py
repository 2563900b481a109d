"""What the mistake modes make of the lease statements: every place a Policy bends the
correct statement, apart from it.

core/engine/statements.py writes each statement as the correct mode runs it (and
core/engine/lease.sqlite.sql shows it as SQL), and core/engine/batch_statements.py its batch
forms; both hand the parts a mistake changes to one function here, which returns the correct
part untouched when the policy keeps the rule.
Each function names the mistake it plants; the modes are core/engine/modes.py.
"""

from typing import Any

from sqlalchemy import and_, bindparam, false, func, select, true

from core.engine.models import AgentTask
from core.engine.policies import Policy

tasks = AgentTask.__table__  # type: ignore[attr-defined]


def live(policy: Policy, correct: Any) -> Any:
    """The gate's "the lease has not expired"; without expiry (mistake one, `running` means
    owned) there is no expiry to pass."""
    return correct if policy.expiry else true()


def claim_lease(policy: Policy, correct: dict[str, Any]) -> dict[str, Any]:
    """What a claim writes of the lease: a new lease token, its expiry and renew deadline,
    and a new fence token. Without expiry a claim writes `running` and an owner, nothing
    more: no new lease or fence token. Before the fence tag, no fence token."""
    if not policy.expiry:
        return {}
    if not policy.fence_tokens:
        return {k: v for k, v in correct.items() if k != "fence_token"}
    return correct


def renew_gate(policy: Policy, correct: Any) -> Any:
    """The gate of Heartbeat and Complete. The seed's own (seed_sql): owner and lease token
    only, no status and no expiry check, so a heartbeat after expiry renews, and a lease on a
    finished task can still be renewed and completed."""
    if policy.guards:
        return correct
    t = tasks
    return and_(
        t.c.task_id == bindparam("task_id"),
        t.c.owner_id == bindparam("worker_id"),
        t.c.lease_token == bindparam("lease_token"),
    )


def whole_lease(policy: Policy, correct: Any, owned: Any) -> Any:
    """A batch's guard for each lease: the whole lease as issued, or in seed_sql the seed's
    Heartbeat and Complete as printed (owner and lease token)."""
    return correct if policy.guards else owned


def expired_pick(policy: Policy, correct: Any, judge_now: Any, postgresql: bool) -> Any:
    """The claim's pick among expired leases. seed_sql: the seed's guard as printed, no status
    check on the expiry half, so a done task whose expiry was never cleared becomes
    claimable once that expiry passes."""
    if policy.guards:
        return correct
    t = tasks
    pick = (
        select(t.c.task_id)
        .where(t.c.lease_expires_at < judge_now)
        .order_by(t.c.lease_expires_at, t.c.task_id)
        .limit(1)
    )
    return pick.with_for_update(skip_locked=True) if postgresql else pick


def claim_pick(policy: Policy, expired: Any, queued: Any) -> Any:
    """Which task `claim_any` takes: the oldest expired lease, else the first queued task;
    without expiry nothing expires, so the first queued task only."""
    if policy.expiry:
        return func.coalesce(expired.scalar_subquery(), queued.scalar_subquery())
    return queued.scalar_subquery()


def expired_named(policy: Policy, correct: Any, judge_now: Any) -> Any:
    """A named task's "its lease has expired": seed_sql without the status check."""
    return correct if policy.guards else tasks.c.lease_expires_at < judge_now


def claimable_expired(policy: Policy, correct: Any) -> Any:
    """Without expiry, a running task is never claimable again."""
    return correct if policy.expiry else false()


def renewal(policy: Policy, correct: dict[str, Any]) -> dict[str, Any]:
    """What a heartbeat writes: without expiry, only that the worker was heard."""
    if policy.expiry:
        return correct
    return {k: v for k, v in correct.items() if k not in ("lease_expires_at", "renew_deadline")}


def finish(policy: Policy, correct: dict[str, Any]) -> dict[str, Any]:
    """What Complete writes. seed_sql leaves the expiry set, as the seed's Complete does, so
    the finished task is claimed (and completed) again once it passes."""
    if policy.guards:
        return correct
    return {k: v for k, v in correct.items() if k not in ("lease_expires_at", "renew_deadline")}


def ledger_page(policy: Policy, fenced: Any, unfenced: Any) -> Any:
    """The ledger's insert: from the current, live lease only; with no fencing (mistake
    three) the ledger takes any write (照单全收)."""
    return fenced if policy.fencing else unfenced


def ledger_overwrite(policy: Policy, correct: Any) -> Any:
    """When a page already written is overwritten: never by a lower fence token; with no
    fencing, always."""
    return correct if policy.fencing else None


def effect_on_repeat(policy: Policy, once: Any, again: Any) -> Any:
    """A second call with the same idempotency key: nothing (the formula's fifth part), or,
    with idempotency off, the effect applied again and counted."""
    return once if policy.idempotency else again
