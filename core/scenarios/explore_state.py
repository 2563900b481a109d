"""What `explore` keeps of a state: the reading of its tables and its canonical form. The
form decides which states count as one, so it is kept apart from the search that walks them.
"""

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby, permutations

from core.engine.records import CheckpointRow, EffectRow, EventRow, LedgerRow, TaskRow, dump_json
from core.engine.vocabulary import EventKind
from core.sim.simulation import Simulation, run_inline
from core.sim.worker import Work


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the canonical form is made of, read once per state."""

    rows: tuple[TaskRow, ...]
    ledger: tuple[LedgerRow, ...]
    checkpoints: tuple[CheckpointRow, ...]
    effects: tuple[EffectRow, ...]


def read(
    sim: Simulation, before: _Reading | None = None, events: Sequence[EventRow] = ()
) -> _Reading:
    """The rows, the ledger, the checkpoints and the effects. Given the reading `before` a
    transition and the events it wrote, a table no event says was written is taken from
    `before`: the store writes the event of every change in the change's transaction."""
    rows = tuple(run_inline(sim.store.tasks()))
    if before is None:
        return _Reading(
            rows,
            tuple(run_inline(sim.store.ledger())),
            tuple(run_inline(sim.store.checkpoints())),
            tuple(run_inline(sim.store.effects())),
        )
    kinds = {ev.event for ev in events}
    ledger, checkpoints, effects = before.ledger, before.checkpoints, before.effects
    if EventKind.WRITE_ACCEPTED in kinds:
        ledger = tuple(run_inline(sim.store.ledger()))
    if EventKind.CHECKPOINT_SAVED in kinds:
        checkpoints = tuple(run_inline(sim.store.checkpoints()))
    if EventKind.EFFECT_APPLIED in kinds:
        effects = tuple(run_inline(sim.store.effects()))
    return _Reading(rows, ledger, checkpoints, effects)


def _knows(work: Work) -> tuple[str, int, str]:
    last = max(work.states)
    return (work.task_id, last, dump_json(work.states[last]))


def canonical(sim: Simulation, reading: _Reading) -> bytes:
    """The digest of `canonical_text`: what the search keeps of each state it has seen."""
    return hashlib.blake2b(canonical_text(sim, reading).encode(), digest_size=16).digest()


def canonical_text(sim: Simulation, reading: _Reading) -> str:
    """The state up to renaming interchangeable workers (all explored workers
    start alike; a skew is part of a worker's state, so it is kept, not compared away).

    It holds what a later choice, guard or rule can depend on: the rows as the statements
    read them, the ledger, the latest checkpoint (the only one read back), the effects,
    each worker's faults and memory, the checker's memory and the next instant due. Times
    only shown on screen (when a row changed, when a worker last renewed) are left out.

    Instants are relative to now; any further back than 3 x ttl and a little are the same,
    since no rule or guard looks further back (the stuck mark is the longest look).
    """
    now = sim.now_ms
    horizon = 3 * sim.config.ttl_ms + 2

    def rel(at: int | None) -> int | None:
        return None if at is None else max(at - now, -horizon)

    latest: dict[str, CheckpointRow] = {}
    for cp in reading.checkpoints:  # only the latest is ever read back
        if cp.task_id not in latest or cp.seq > latest[cp.task_id].seq:
            latest[cp.task_id] = cp
    newest, leases, effects, completions, down, stuck, pairs = sim.checker.memory(now, horizon)
    # Tokens are only ever compared with one another (equal, older, newer) and a claim
    # draws one above them all, so each is replaced by its rank among those the state
    # holds: the fence tokens together, each task's lease tokens apart. A task parked,
    # approved and claimed again (an approval grants one more attempt) then comes back to
    # a state already seen, instead of counting up for ever.
    fences: set[int] = {0}
    lease_tokens: dict[str, set[int]] = {}

    def saw(task: str, token: int) -> None:
        lease_tokens.setdefault(task, {0}).add(token)

    for r in reading.rows:
        fences.add(r.fence_token)
        saw(r.task_id, r.lease_token)
    fences.update(p.fence_token for p in reading.ledger)
    fences.update(cp.fence_token for cp in latest.values())
    for w in sim.workers.values():
        if w.lease is not None:
            fences.add(w.lease.fence_token)
            saw(w.lease.task_id, w.lease.lease_token)
    fences.update(f for _, f in newest)
    for task, _, token, fence, *_ in leases:
        fences.add(fence)
        saw(task, token)
    for task, token in stuck:
        saw(task, token)
    for task, old, new in pairs:
        saw(task, old)
        saw(task, new)
    fence_rank = {v: i for i, v in enumerate(sorted(fences))}
    token_rank = {t: {v: i for i, v in enumerate(sorted(vs))} for t, vs in lease_tokens.items()}

    fixed = repr(
        (
            # who wrote a page, and under which lease an effect went out, is shown on
            # screen but read by no statement: the page's fence token and the key are
            tuple((p.key, p.value, fence_rank[p.fence_token]) for p in reading.ledger),
            tuple(
                (t, cp.step, fence_rank[cp.fence_token], dump_json(cp.state))
                for t, cp in sorted(latest.items())
            ),
            tuple((e.idempotency_key, min(e.applied_count, 2)) for e in reading.effects),
            rel(sim.next_look_ms),
            tuple((t, fence_rank[f]) for t, f in newest),
            effects,
            completions,
            tuple((t, token_rank[t][k]) for t, k in stuck),
            tuple((t, token_rank[t][a], token_rank[t][b]) for t, a, b in pairs),
        )
    )
    own: dict[str, str] = {}
    for wid, w in sim.workers.items():
        f = w.faults
        lease = w.lease
        work = w.work
        own[wid] = repr(
            (
                f.dead,
                f.stalled,
                f.partitioned,
                f.heartbeat_frozen,
                f.skew_ms,
                # what it believes about the lease's end judges nothing: the store does
                None
                if lease is None
                else (
                    lease.task_id,
                    token_rank[lease.task_id][lease.lease_token],
                    fence_rank[lease.fence_token],
                ),
                # what it knows, not how it learnt it: resumed at a checkpoint of step k
                # or having done steps 1..k itself, it works on from the same state
                None if work is None or not work.states else _knows(work),
            )
        )
    # Workers in the order of what they are; only workers alike in themselves need their
    # orders tried (they differ, if at all, in what the rows and the checker say of them).
    ids = sorted(sim.workers, key=lambda wid: own[wid])
    groups = [list(g) for _, g in groupby(ids, key=lambda wid: own[wid])]
    keys = []
    for order in _orders(groups):
        name = {wid: i for i, wid in enumerate(order)}

        def n(wid: str | None, name: dict[str, int] = name) -> int | str | None:
            return None if wid is None else name.get(wid, wid)

        key = (
            tuple(own[wid] for wid in order),
            tuple(
                (
                    r.task_id,
                    r.status,
                    n(r.owner_id),
                    r.max_attempts - r.attempt,  # what the claim compares
                    token_rank[r.task_id][r.lease_token],
                    fence_rank[r.fence_token],
                    rel(r.lease_expires_at),  # the renew deadline and last heartbeat judge
                    r.approved_at is not None,  # nothing for a manual worker
                )
                for r in reading.rows
            ),
            tuple(
                (t, n(str(wid)), token_rank[t][k], fence_rank[fc], *rest)
                for t, wid, k, fc, *rest in leases
            ),
            tuple(sorted((n(str(wid)), s) for wid, s in down)),
        )
        keys.append(repr(key))
    return fixed + min(keys)


def _orders(groups: Sequence[Sequence[str]]) -> Iterator[tuple[str, ...]]:
    """Every order of the workers that keeps the groups in place and shuffles within each."""
    if not groups:
        yield ()
        return
    for head in permutations(groups[0]):
        for tail in _orders(groups[1:]):
            yield (*head, *tail)
