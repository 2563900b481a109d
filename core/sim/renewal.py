"""How a worker keeps its lease: the heartbeat loop, one renewal (a heavy one takes its
time on the way), and self-fencing at the renew deadline.

The heartbeat runs in its own task, never from inside the work loop: the seed's rule that
renewal is decoupled from business logic, so a slow step does not starve the lease. The
heartbeat_in_work mode breaks that rule on purpose: the work loop renews between steps
(core/sim/autopilot.py).

With self-fencing on, the heartbeat task also watches the renew deadline: a holder that has
not renewed by then stops by itself, before its lease can expire and be handed on.
"""

from core.engine.errors import LeaseRejected, RegisterReason
from core.engine.records import Lease
from core.engine.vocabulary import EventKind, Operation
from core.sim.calls import Partitioned, StoreCalls, same_lease
from core.sim.heavy import format_size, heartbeat_cost_ms


class Renewal(StoreCalls):
    """The worker's heartbeats and its own renew deadline."""

    def _deadline_due_at(self, lease: Lease) -> int | None:
        """When, by the store clock, this worker's own clock reaches its renew deadline."""
        if not self.self_fencing or lease.renew_deadline is None:
            return None
        return lease.renew_deadline - self.faults.skew_ms

    async def heartbeat_loop(self, lease_token: int, task_id: str | None = None) -> None:
        """Renew the lease every heartbeat_every, on its own, until it is lost or dropped.

        With self-fencing, also wake at the renew deadline: not renewed by then, the worker
        gives the task up by itself (Kubernetes' leader election does the same).
        """
        beat_at = self.store.clock.now_ms() + self.config.heartbeat_ms
        while True:
            lease = self.lease
            if lease is None or not same_lease(lease, task_id, lease_token):
                return
            now = self.store.clock.now_ms()
            deadline_at = self._deadline_due_at(lease)
            wake = beat_at if deadline_at is None else min(beat_at, deadline_at)
            if wake > now:
                await self.env.sleep(wake - now)
                continue  # look again: a renewal may have moved the deadline meanwhile
            if deadline_at is not None and now >= deadline_at:
                await self._fence_self(lease)
                return
            beat_at = now + self.config.heartbeat_ms
            if self.faults.heartbeat_frozen:
                continue  # frozen: the heartbeat never reaches the store
            try:
                await self.renew(lease)
            except Partitioned:
                continue
            except LeaseRejected:
                # Lost. The work loop finds out when its current step ends and drops the task.
                return

    async def renew(
        self, lease: Lease, *, forget_if_refused: bool = True, by_hand: bool = False
    ) -> Lease:
        """One heartbeat with `lease`. The renewed lease becomes the worker's memory, if that
        is still the lease it holds; a refusal means the lease is lost, and the worker
        forgets it unless told not to (a manual holder keeps its stale copy and may try it
        again). Partitioned and LeaseRejected go on to the caller.

        `by_hand`: a manual call, played at one instant like every manual call, so it
        carries no payload and makes no trip."""
        send = self.store.heartbeat if by_hand else self._send_heartbeat
        try:
            renewed = await self.call(Operation.HEARTBEAT, send, lease, retry=False)
        except LeaseRejected:
            if forget_if_refused:
                self.lease = None
            raise
        if self._still_mine(lease):
            self.lease = renewed
            self.last_renew_at = self.store.clock.now_ms()
        return renewed

    async def _send_heartbeat(self, lease: Lease) -> Lease:
        """The heartbeat's trip to the store. The store's statement is the cheap one either
        way; a payload makes the trip take time first, and the statement runs when it lands,
        judged by the store's clock then ("续约写入要足够轻。 心跳本身如果需要重数据库事务、跨区域
        RPC 或大对象序列化，它会先把自己变成新的瓶颈")."""
        payload = self.faults.heartbeat_payload_bytes
        cost = heartbeat_cost_ms(payload, self.store_load.factor)
        if payload:
            self.heartbeat_lands_at = self.store.clock.now_ms() + cost
            await self.record(
                EventKind.HEARTBEAT_SENT,
                lease,
                payload=format_size(payload),
                lands_at=self.heartbeat_lands_at,
            )
        deadline_at = self._deadline_due_at(lease)
        if deadline_at is not None and self.store.clock.now_ms() + cost > deadline_at:
            # Still on its way at the renew deadline: a self-fencing holder does not wait
            # for it ("renew_deadline   下一次续约必须发生在什么时候").
            self.env.spawn(self._fence_at_deadline(lease), owner=self.id, name="deadline")
        if cost:
            await self.env.sleep(cost)
        self.heartbeat_lands_at = None
        if cost and self.faults.partitioned:  # the bridge went down while it was on its way
            await self._note_partitioned(Operation.HEARTBEAT, None)
            raise Partitioned(Operation.HEARTBEAT)
        return await self.store.heartbeat(lease)

    async def _fence_at_deadline(self, lease: Lease) -> None:
        """Stop at the renew deadline unless a renewal has moved it meanwhile. The heartbeat
        may still land after and renew the row; the holder has let go by then, and the lease
        expires unrenewed."""
        deadline_at = self._deadline_due_at(lease)
        if deadline_at is None:
            return
        await self.env.sleep(max(0, deadline_at - self.store.clock.now_ms()))
        held = self.lease
        if held is None or held != lease or self.faults.stalled or self.faults.dead:
            return  # renewed, dropped, or not running any code of its own right now
        await self._fence_self(held)

    async def _fence_self(self, lease: Lease) -> None:
        """Give the lease up by itself: past the renew deadline, before the lease expires.

        The work loop finds out when its step ends; a call retrying through a partition
        gives up at its next try.
        """
        self.lease = None
        self.fenced_out = True
        await self.record(
            EventKind.SELF_FENCED,
            lease,
            reason=RegisterReason.RENEW_DEADLINE_PASSED,
            renew_deadline=lease.renew_deadline,
            expires_at=lease.expires_at,
        )

    async def _self_fenced(self) -> bool:
        """Defence in depth: past its own renew deadline, a worker stops by itself."""
        lease = self.lease
        if not self.self_fencing or lease is None or lease.renew_deadline is None:
            return False
        if self.local_now() < lease.renew_deadline:
            return False
        await self._fence_self(lease)
        return True
