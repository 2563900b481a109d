"""What `explore` keeps of a state: the reading of its tables and its canonical form. The
form decides which states count as one, so it is kept apart from the search that walks them.
"""

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby, permutations
from typing import Any

from core.engine.records import CheckpointRow, EffectRow, EventRow, LedgerRow, TaskRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.sim.memory import Work
from core.sim.simulation import Simulation, run_inline

# The register lines of a transaction that leaves every task's row as it was: a refusal
# (its transaction writes only the line), a dropped call, a page or an effect (their own
# tables), and the simulation's own lines (a fault, an expiry it saw, a verdict). Any other
# line, or one added later, makes the rows be read again.
TASKS_KEPT = REJECTIONS | {
    EventKind.CALL_DROPPED,
    EventKind.WRITE_ACCEPTED,
    EventKind.EFFECT_APPLIED,
    EventKind.EFFECT_DEDUPLICATED,
    EventKind.LEASE_EXPIRED,
    EventKind.VIOLATION,
    EventKind.STALLED,
    EventKind.RESUMED,
    EventKind.KILLED,
    EventKind.RESTARTED,
    EventKind.SKEWED,
}


@dataclass(frozen=True, slots=True)
class Reading:
    """What the canonical form is made of, read once per state."""

    rows: tuple[TaskRow, ...]
    ledger: tuple[LedgerRow, ...]
    checkpoints: tuple[CheckpointRow, ...]
    effects: tuple[EffectRow, ...]
    # the queued tasks, first in first out (read only with several tasks: with one, a
    # queued task is first of its queue, as its row says)
    queue: tuple[str, ...] = ()


def _queue(sim: Simulation, rows: tuple[TaskRow, ...]) -> tuple[str, ...]:
    return tuple(run_inline(sim.store.queue())) if len(rows) > 1 else ()


def read(
    sim: Simulation, before: Reading | None = None, events: Sequence[EventRow] = ()
) -> Reading:
    """The rows, the queue, the ledger, the checkpoints and the effects. Given the reading
    `before` a transition and the events it wrote, a table no event says was written is
    taken from `before`: the store writes the event of every change in the change's
    transaction (and a task enters or leaves the queue only by a change of its row)."""
    if before is None:
        rows = tuple(run_inline(sim.store.tasks()))
        return Reading(
            rows,
            tuple(run_inline(sim.store.ledger())),
            tuple(run_inline(sim.store.checkpoints())),
            tuple(run_inline(sim.store.effects())),
            _queue(sim, rows),
        )
    kinds = {ev.event for ev in events}
    rows, queue = before.rows, before.queue
    if not kinds <= TASKS_KEPT:
        rows = tuple(run_inline(sim.store.tasks()))
        queue = _queue(sim, rows)
    ledger, checkpoints, effects = before.ledger, before.checkpoints, before.effects
    if EventKind.WRITE_ACCEPTED in kinds:
        ledger = tuple(run_inline(sim.store.ledger()))
    if EventKind.CHECKPOINT_SAVED in kinds:
        checkpoints = tuple(run_inline(sim.store.checkpoints()))
    if EventKind.EFFECT_APPLIED in kinds:
        effects = tuple(run_inline(sim.store.effects()))
    return Reading(rows, ledger, checkpoints, effects, queue)


def known(work: Work) -> tuple[str, int, tuple[tuple[str, Any], ...]]:
    """The last step of its task a worker knows done, with that step's state."""
    last = max(work.states)
    return (work.task_id, last, _state(work.states[last]))


def canonical(sim: Simulation, reading: Reading) -> bytes:
    """The digest of `canonical_text`: what the search keeps of each state it has seen."""
    return canonical_pair(sim, reading)[0]


@dataclass(frozen=True, slots=True)
class PlainForm:
    """The canonical form with every worker as itself (not renamed): the store's part
    (the tables and the rows, and what is due), the checker's, and each worker's own."""

    store: tuple[object, ...]
    checker: tuple[object, ...]
    own: tuple[tuple[str, str], ...]  # by worker name
    # The workers in the order the canonical form names them (the first is its worker 0):
    # two states with one key are one with worker order[i] of each taken as the other's.
    # Not compared: it follows from the rest.
    order: tuple[str, ...] = field(default=(), compare=False)


def canonical_pair(sim: Simulation, reading: Reading) -> tuple[bytes, PlainForm]:
    """The digest of `canonical_text`, and the same form with every worker as itself (not
    renamed): two states equal in it are one state with no worker swapped for another."""
    text, plain = _forms(sim, reading)
    return hashlib.blake2b(text.encode(), digest_size=16).digest(), plain


def canonical_text(sim: Simulation, reading: Reading) -> str:
    """The state up to renaming interchangeable workers (all explored workers
    start alike; a skew is part of a worker's state, so it is kept, not compared away).

    It holds what a later choice, guard or rule can depend on: the rows as the statements
    read them, the ledger's pages, the latest checkpoint (the only one read back), the
    effects, each worker's faults and memory, the checker's memory and the next instant
    due. What no statement or rule reads is left out (each below, beside its reason, and
    together in docs/explore.md): times only shown on screen, a page's and a checkpoint's
    fence token, whether a human approved a task, what a dead worker was doing.

    Instants are relative to now; any further back than 3 x ttl and a little are the same,
    since no rule or guard looks further back (the stuck mark is the longest look).
    """
    return _forms(sim, reading)[0]


def _forms(sim: Simulation, reading: Reading) -> tuple[str, PlainForm]:
    """`canonical_text`, and the same with the workers in the order of their names."""
    now = sim.now_ms
    horizon = 3 * sim.config.ttl_ms + 2
    far = now - horizon  # anything at or before this is as long ago as this

    latest: dict[str, CheckpointRow] = {}
    for cp in reading.checkpoints:  # only the latest is ever read back
        got = latest.get(cp.task_id)
        if got is None or cp.seq > got.seq:
            latest[cp.task_id] = cp
    memory = sim.checker.memory(now, horizon)
    newest, leases, effects, completions, down, stuck, pairs, newest_lease = memory
    # Tokens are only ever compared with one another (equal, older, newer), and a claim
    # draws a fence token above every one issued, so a token is kept as where it stands
    # among those a comparison can still meet (see `_rank_among`). A task parked,
    # approved and claimed again (an approval grants one more attempt) then comes back to
    # a state already seen, instead of counting up for ever.
    #
    # Fence tokens: a fence is compared when a call reaches the store (the caller's with
    # the row's) and by the rules (a writer's with the newest issued). A caller is a living
    # worker holding its lease, or a claim still to come, which draws above everything: so
    # the rows' fences, the living holders' and the newest issued are the tokens that
    # count. A page's fence token is compared only by a write that would overwrite it,
    # and that write has passed the gate, which admits the row's own fence alone (or, with
    # no fencing, overwrites without comparing): a row's fence never goes back, and every
    # page was written at or below it, so the comparison always lets the write through and
    # the page's token is left out (the refusal's reason, a register line, can mention
    # it). A checkpoint's fence token no statement compares.
    #
    # Every one of those comparisons is within one task: the gate compares the caller's
    # token with the row of the task its lease names, the rules a writer's or a claim's
    # with the newest issued for its task. So the fence tokens are ranked each task's
    # apart, as the lease tokens are: the one counter all claims draw from orders the
    # tokens of two tasks, and nothing reads that order. Two claims of different tasks
    # then reach one state in either order, which is what lets the search take them as
    # independent (core/search/explore/world.py, `footprint`).
    workers = sim.workers
    live_fences: dict[str, set[int]] = {r.task_id: {r.fence_token} for r in reading.rows}
    lease_tokens: dict[str, set[int]] = {}
    for r in reading.rows:
        lease_tokens[r.task_id] = {0, r.lease_token}
    for w in workers.values():
        held = w.lease
        if held is not None:
            live_fences.setdefault(held.task_id, set()).add(held.fence_token)
            lease_tokens.setdefault(held.task_id, {0}).add(held.lease_token)
    for t, token in newest:
        live_fences.setdefault(t, set()).add(token)
    # Lease tokens, each task's apart, are compared for equality (the row's with the
    # caller's, the checker's records with an event's) and by order (a newer lease than
    # the caller's): every token the state holds is kept by rank.
    for lm in leases:
        lease_tokens.setdefault(lm.task_id, {0}).add(lm.lease_token)
    for task, token in stuck:
        lease_tokens.setdefault(task, {0}).add(token)
    for task, old, new in pairs:
        lease_tokens.setdefault(task, {0}).update((old, new))
    for task, token in newest_lease:
        lease_tokens.setdefault(task, {0}).add(token)
    fence_ranks = {t: _rank_among(fs) for t, fs in live_fences.items()}

    def fence_rank(task: str, token: int) -> int:
        return fence_ranks[task](token)

    token_rank = {t: {v: i for i, v in enumerate(sorted(vs))} for t, vs in lease_tokens.items()}
    look = sim.next_look_ms

    tables = (
        # who wrote a page, and under which lease an effect went out, is shown on
        # screen but read by no statement; nor is a page's fence token (above)
        tuple((p.key, p.value) for p in reading.ledger),
        tuple((t, cp.step, _state(cp.state)) for t, cp in sorted(latest.items())),
        tuple((e.idempotency_key, min(e.applied_count, 2)) for e in reading.effects),
        None if look is None else max(look, far) - now,
    )
    fixed = (
        *tables,
        tuple((t, fence_rank(t, f)) for t, f in newest),
        effects,
        completions,
        tuple((t, token_rank[t][k]) for t, k in stuck),
        tuple((t, token_rank[t][a], token_rank[t][b]) for t, a, b in pairs),
        tuple((t, token_rank[t][k]) for t, k in newest_lease),
    )
    own: dict[str, str] = {}
    for wid, w in workers.items():
        f = w.faults
        if f.dead:
            # A dead worker remembers nothing, and the only thing it can do is be
            # restarted, as a fresh worker with only its clock's skew kept: whether it
            # was stalled when it died is read by no one (the checker forgets it too).
            own[wid] = repr((True, f.skew_ms))
            continue
        held = w.lease
        work = w.work
        own[wid] = repr(
            (
                False,
                f.skew_ms,
                f.stalled,
                f.partitioned,
                f.heartbeat_frozen,
                # what it believes about the lease's end judges nothing: the store does
                None
                if held is None
                else (
                    held.task_id,
                    token_rank[held.task_id][held.lease_token],
                    fence_rank(held.task_id, held.fence_token),
                ),
                # what it knows, not how it learnt it: resumed at a checkpoint of step k
                # or having done steps 1..k itself, it works on from the same state
                None if work is None or not work.states else known(work),
            )
        )
    # The claim of any task takes the first expired lease by `lease_expires_at, task_id`,
    # else the first queued task by `queue_seq, task_id`: each task's place in both
    # orders is kept, as a rank. The expiries kept relative to now say the first order
    # only until they fall behind the far mark, where they are all one, and the place in
    # the queue is in no row at all. A task enters the queue behind every one queued
    # (its place is drawn above theirs), so the ranks decide every later pick as the
    # places themselves would. A task out of the queue has no place that counts: it gets
    # a new one when it comes back.
    in_queue = {t: i for i, t in enumerate(reading.queue)}
    by_expiry = sorted(
        (r.lease_expires_at, r.task_id) for r in reading.rows if r.lease_expires_at is not None
    )
    expiry_place = {t: i for i, (_, t) in enumerate(by_expiry)}
    rows = tuple(
        (
            r.task_id,
            r.status,
            r.owner_id,
            r.max_attempts - r.attempt,  # what the claim compares
            token_rank[r.task_id][r.lease_token],
            fence_rank(r.task_id, r.fence_token),
            # the renew deadline and the last heartbeat judge nothing for a manual worker,
            # and neither does whether a human approved the task: only the autopilot's
            # work loop reads that (a kind that parks once, waiting for an approval)
            None if r.lease_expires_at is None else max(r.lease_expires_at, far) - now,
            expiry_place.get(r.task_id),
            in_queue.get(r.task_id),
        )
        for r in reading.rows
    )
    # the checker's leases by their lease token: the fence token it notes with each is
    # compared with nothing (its stale-write rule reads the newest issued)
    held_by = tuple(
        (
            lm.task_id,
            lm.worker_id,
            token_rank[lm.task_id][lm.lease_token],
            lm.expires_in,
            lm.renewed_ago,
            lm.orphaned,
        )
        for lm in leases
    )

    def form(order: Sequence[str]) -> tuple[object, ...]:
        name: dict[str | None, int | str | None] = {wid: i for i, wid in enumerate(order)}
        name[None] = None
        return (
            tuple(own[wid] for wid in order),
            tuple((t, st, name.get(o, o), *rest) for t, st, o, *rest in rows),
            tuple((t, name.get(w, w), *rest) for t, w, *rest in held_by),
            tuple(sorted(((name.get(w, w), why) for w, why in down), key=repr)),
        )

    # Workers in the order of what they are; only workers alike in themselves need their
    # orders tried (they differ, if at all, in what the rows and the checker say of them).
    as_named = sorted(workers)
    plain = PlainForm(
        (tables, rows), (fixed, held_by, down), tuple((wid, own[wid]) for wid in as_named)
    )
    ids = sorted(as_named, key=own.__getitem__)
    if len(set(own.values())) == len(own):
        return repr((fixed, form(ids))), replace(plain, order=tuple(ids))
    groups = [list(g) for _, g in groupby(ids, key=own.__getitem__)]
    text, order = min((repr(form(order)), order) for order in _orders(groups))
    return repr(fixed) + text, replace(plain, order=order)


def _rank_among(tokens: set[int]) -> Callable[[int], int]:
    """Where a token stands among `tokens`: 2i + 1 for the i-th of them, 2i for any token
    between the (i - 1)-th and the i-th. Two tokens with the same place compare alike with
    every one of `tokens` and with every token drawn later (which is above them all)."""
    ranked = sorted(tokens)

    def place(token: int) -> int:
        i = bisect_left(ranked, token)
        return 2 * i + 1 if i < len(ranked) and ranked[i] == token else 2 * i

    return place


def _state(state: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A step's state as a value to compare: its items in the order of their keys."""
    return tuple(sorted(state.items()))


def _orders(groups: Sequence[Sequence[str]]) -> Iterator[tuple[str, ...]]:
    """Every order of the workers that keeps the groups in place and shuffles within each."""
    if not groups:
        yield ()
        return
    for head in permutations(groups[0]):
        for tail in _orders(groups[1:]):
            yield (*head, *tail)
