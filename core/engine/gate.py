"""The lease gate's refusals: why a lease was refused, the refusal's register line and the
error its caller gets, and the parameters every gated statement takes. A mixin of
`LeaseStore`, whose policy and configuration they read."""

from typing import Any

from core.engine.config import LeaseConfig
from core.engine.errors import FencedWrite, LeaseMismatch, LeaseRejected, RejectReason, UnknownTask
from core.engine.policies import Policy
from core.engine.records import Lease
from core.engine.sql_text import TaskState
from core.engine.transaction import Rejected as _Rejected
from core.engine.transaction import Txn as _Txn
from core.engine.vocabulary import Operation, TaskStatus


class LeaseGate:
    config: LeaseConfig
    policy: Policy

    def _why(self, lease: Lease, current: TaskState | None) -> RejectReason:
        """Why the lease gate said no to `lease`, given the task's (status, owner, tokens)."""
        if current is None:
            raise UnknownTask(lease.task_id)
        status, owner, cur_lease, cur_fence = current
        if lease.lease_token < cur_lease:
            return RejectReason.SUPERSEDED
        if not self.policy.expiry and owner is not None and owner != lease.owner_id:
            # Without expiry no claim writes a token (every lease is 0, 0): another owner
            # is the only trace of a claim made since, so the caller's round is over.
            return RejectReason.SUPERSEDED
        if (
            lease.lease_token > cur_lease
            or lease.fence_token != cur_fence
            or (owner is not None and owner != lease.owner_id)
        ):
            raise LeaseMismatch(
                f"lease {lease.lease_token} (fence {lease.fence_token}) of {lease.owner_id} "
                f"was never issued for {lease.task_id} (its current lease is {cur_lease}, "
                f"fence {cur_fence}, held by {owner})"
            )
        if status != TaskStatus.RUNNING:
            return RejectReason.NOT_RUNNING
        return RejectReason.EXPIRED

    def _reject(
        self,
        txn: _Txn,
        lease: Lease,
        operation: Operation,
        *,
        key: str | None = None,
        current: TaskState | None = None,
        reason: RejectReason | None = None,
        current_fence: int | None = None,
        **detail: Any,
    ) -> _Rejected:
        """Record why the gate said no (worked out unless given) and build the error."""
        if current is None:
            current = txn.task_state(lease.task_id)
        if reason is None:
            reason = self._why(lease, current)
        assert current is not None
        status, _owner, cur_lease, cur_fence = current
        if current_fence is None:
            current_fence = cur_fence
        txn.lease_event(
            operation.rejected,
            lease,
            reason=reason,
            operation=operation,
            key=key,
            current_lease_token=cur_lease,
            current_fence_token=current_fence,
            status=status,
            **detail,
        )
        error = FencedWrite if reason is RejectReason.FENCED else LeaseRejected
        return _Rejected(
            error(
                reason,
                operation=operation,
                task_id=lease.task_id,
                worker_id=lease.owner_id,
                lease_token=lease.lease_token,
                fence_token=lease.fence_token,
                current_lease_token=cur_lease,
                current_fence_token=current_fence,
                key=key,
            )
        )

    def _gate_params(self, lease: Lease, now: int) -> dict[str, Any]:
        return {
            "task_id": lease.task_id,
            "worker_id": lease.owner_id,
            "lease_token": lease.lease_token,
            "fence_token": lease.fence_token,
            "now": now,
            "ttl": self.config.ttl_ms,
            "deadline": self.config.deadline_ms,
        }
