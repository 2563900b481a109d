"""Moving one simulation of the explored world from state to state: a copy of a state to
go back to, and every transition out of a state (see core/search/explore/bfs.py)."""

import hashlib
from dataclasses import dataclass, fields
from operator import attrgetter

from core.engine.records import EventRow
from core.engine.vocabulary import REJECTIONS, EventKind
from core.search.explore.canonical import PlainForm, Reading, canonical_pair, known, read
from core.search.explore.world import (
    ENGINE_ERROR,
    ExploreParams,
    Footprint,
    Restore,
    Sleeper,
    broken_rules,
    choices,
    claimed,
    footprint,
    independent,
)
from core.sim.simulation import SavedRun, Simulation
from core.sim.spec import Action, Checkpoint, Claim, Complete, Effect, Fail, Heartbeat, Park, Write
from core.sim.worker import Worker

# The pieces a copy's database is cut into: SQLite's default page, so that a piece is a
# page and unchanged pages are shared (any size would give back the same bytes).
_PAGE = 4096
# Pages kept shared between the copies at most this many at a time (see `Branches.here`).
_SHARED_PAGES = 4096


@dataclass(frozen=True, slots=True)
class _Copy:
    """A saved run with its database cut into pages shared with the other copies.

    From one state to the next almost every page of the database is unchanged (one page
    of the register's lines is new); a page equal to one already kept is the same object,
    so a frontier of many thousands of copies costs about one page each, and nothing is
    compressed or decompressed on the way."""

    run: SavedRun  # with an empty database
    pages: tuple[bytes, ...]
    # the state's reading, key and form, as found when it was reached: a restore is
    # exact, so expanding it need not read and reduce it again
    known: "Known | None" = None


# A saved run but its database, in the order of its fields after the database: a copy's
# run is rebuilt with its database joined again on every restore, and
# `dataclasses.replace` (which looks the fields up each time) took 3 % of the search.
_FIELDS = [f.name for f in fields(SavedRun)]
assert _FIELDS[0] == "database", "a SavedRun is rebuilt with its database first"
_REST = attrgetter(*_FIELDS[1:])


def _with_database(run: SavedRun, database: bytes) -> SavedRun:
    return SavedRun(database, *_REST(run))


# A call refused with nothing changed: the state but the workers' own parts (a digest),
# the caller's own part, the call (see `_callers_view`).
Refusal = tuple[bytes, str, Action]

# A state's reading, canonical key and form with every worker as itself.
Known = tuple[Reading, bytes, PlainForm]

# A state to go back to: a copy of the run, or a trace from the root.
Handle = _Copy | tuple[Action, ...]


class Branches:
    """One simulation of the world, moved to any state the search has seen."""

    def __init__(self, params: ExploreParams) -> None:
        self.params = params
        self.settings = params.settings()
        self.events: list[EventRow] = []
        self.sim = self._fresh()
        self._pages: dict[bytes, bytes] = {}
        # The calls known to be refused with nothing changed, each as (the state but the
        # workers' own parts, the caller's own part, the call): see `_callers_view`.
        self.refused: set[Refusal] = set()
        self.learnt: list[Refusal] = []  # added to `refused` since the last `drain`

    def _fresh(self) -> Simulation:
        sim = Simulation(self.settings)
        sim.store.add_listener(self.events.append)
        return sim

    def root(self) -> Handle:
        return self.here((), None)

    def here(
        self, path: tuple[Action, ...], action: Action | None, known: "Known | None" = None
    ) -> Handle:
        """A handle on the state the simulation is in, reached by `path` then `action`
        (`known`: its reading, key and form, if the caller has them)."""
        if self.params.restore is Restore.REPLAY:
            return path if action is None else (*path, action)
        saved = self.sim.save()
        db = saved.database
        pages = self._pages
        if len(pages) > _SHARED_PAGES:
            # Forget the shared pages now and then: the copies keep what they use, and
            # the pages every state has in common are shared again from the next copy on.
            pages.clear()
        cut = tuple(
            pages.setdefault(page, page)
            for page in (db[i : i + _PAGE] for i in range(0, len(db), _PAGE))
        )
        return _Copy(_with_database(saved, b""), cut, known)

    def goto(self, handle: Handle) -> None:
        """Move to the state `handle` names."""
        if isinstance(handle, _Copy):
            self.sim.restore(_with_database(handle.run, b"".join(handle.pages)))
            return
        self.sim.close()
        self.sim = self._fresh()
        for action in handle:
            self.sim.apply(action)

    def drain(self) -> list[Refusal]:
        """The refusals met here since the last time (for the other jobs to remember)."""
        mine, self.learnt = self.learnt, []
        return mine

    def close(self) -> None:
        self.sim.close()


# The calls a worker makes to the store, and the register lines that say one changed
# nothing: a refusal, a dropped call, an effect answered from its idempotency key.
_CALLS = (Claim, Heartbeat, Checkpoint, Write, Effect, Complete, Fail, Park)
_NO_CHANGE = REJECTIONS | {EventKind.CALL_DROPPED, EventKind.EFFECT_DEDUPLICATED}


def _memory(sim: Simulation, worker: Worker | None) -> tuple[object, ...]:
    """What a call can change of its caller and the run besides the store's rows."""
    if worker is None:
        return ()
    work = worker.work
    knows = None if work is None or not work.states else known(work)
    return (worker.lease, work, knows, sim.next_look_ms, sim.now_ms)


def _callers_view(plain: PlainForm) -> tuple[bytes, dict[str, str]]:
    """A state as one worker's call meets it: the digest of all but the workers' own
    parts (the store's tables and rows, what is due, the checker), and each worker's own
    part (its faults and the lease and step it remembers), by name.

    A call by worker W is answered from the store's tables, what W sends (made of W's own
    memory) and the clock, and judged by the checker; no other worker's memory enters it.
    The one look at the other workers is the checker's look for stuck tasks after a
    choice (it asks who is idle), and after a call refused with nothing changed that look
    judges again the state it judged when the state was reached. So a call refused with
    nothing changed in one state is refused with nothing changed in every state alike in
    this view, whatever the other workers remember: the child is its parent's state.
    """
    rest = hashlib.blake2b(repr((plain.store, plain.checker)).encode(), digest_size=16)
    return rest.digest(), dict(plain.own)


@dataclass(frozen=True, slots=True)
class Child:
    """One transition out of a state: the choice, where it led, and what it broke."""

    action: Action
    key: bytes
    handle: Handle | None  # None: the state was seen before (no need to keep it)
    broken: tuple[str, ...]
    crash: str | None = None  # what the engine raised, if it did
    # With the reduction: the choices the child need not make (its sleep set), and the
    # order the canonical form puts its workers in (a sleep set names workers as they are
    # in this copy: another arrival at the same key may have them renamed).
    sleep: frozenset[Sleeper] = frozenset()
    order: tuple[str, ...] = ()


def reduces(params: ExploreParams) -> bool:
    """Whether the search reduces: with one task no two choices are independent."""
    return params.reduction and params.tasks > 1


def expand(
    branches: Branches,
    handle: Handle,
    seen: set[bytes],
    sleep: frozenset[Sleeper] = frozenset(),
) -> list[Child]:
    """Try every choice at the state `handle` names; a child whose key is not in `seen`
    comes with a copy of its state, and its key is added.

    After a choice that left the world as it was (a refused call: a line in the register
    and nothing else that any choice, guard or rule reads), the next choice is made from
    there rather than from a fresh copy of the state: the two are one state by the same
    canonical form that makes the search visit each state once. "As it was" means with
    every worker as itself, not up to renaming, so the next choice's worker is the same.
    A call refused so in a state alike for its caller (`_callers_view`) is not made at
    all: its child is this state (unless `params.memo` is off).

    A choice in `sleep` is not made at all (and has no child): the state's sleep set,
    each choice of which the search has already made, or will make, in a trace that
    differs from any through here only by the order of independent choices (see
    core/search/explore/bfs.py). Each child comes with its own: what this state's sleep
    set and the choices made here before it hold that is independent of its choice.
    """
    branches.goto(handle)
    sim = branches.sim
    if isinstance(handle, _Copy) and handle.known is not None:
        parent, home_key, home = handle.known
    else:
        parent = read(sim)
        home_key, home = canonical_pair(sim, parent)
    path = handle if isinstance(handle, tuple) else ()
    out: list[Child] = []
    before = parent
    live = True  # the simulation is in the state `handle` names, as far as anything reads
    memo = branches.refused if branches.params.memo else None
    shared, own = _callers_view(home) if memo is not None else (b"", {})
    offered = choices(sim, parent.rows)
    reducing = reduces(branches.params)
    # Each choice's footprint, taken here before any is made (the simulation moves).
    prints = {a: footprint(sim, a) for a in offered} if reducing else {}
    asleep_here = {a for a, _ in sleep}
    done: list[Sleeper] = [*sleep]  # asleep here, or already made here

    def sleeps(action: Action, mine: Footprint) -> frozenset[Sleeper]:
        """The child's sleep set: what sleeps here or was made before, independent."""
        if not reducing:
            return frozenset()
        asleep = frozenset(z for z in done if independent(z[1], mine))
        done.append((action, mine))
        return asleep

    for action in offered:
        if action in asleep_here:
            continue
        asked: Refusal | None = None
        if memo is not None and isinstance(action, _CALLS):
            asked = (shared, own[action.worker], action)
            if asked in memo:
                # Refused before, with nothing changed, in a state alike in all this call
                # meets: refused again, and the child is this state (see below).
                out.append(
                    Child(
                        action,
                        home_key,
                        None,
                        (),
                        None,
                        sleeps(action, prints.get(action)),
                        home.order,
                    )
                )
                continue
        if not live:
            branches.goto(handle)
            sim = branches.sim
            before = parent
            live = True
        branches.events.clear()
        found = len(sim.checker.found)
        actor = sim.workers.get(getattr(action, "worker", ""))
        memory = _memory(sim, actor) if live and isinstance(action, _CALLS) else None
        try:
            sim.apply(action)
        except Exception as crash:  # the engine failing is what to report
            # Not a verdict but a crash: the store raised instead of refusing. The state
            # after it is not one to trust, so the branch ends here.
            crashed = f"{ENGINE_ERROR}: {type(crash).__name__}: {crash}"
            out.append(Child(action, b"", None, (ENGINE_ERROR,), crashed, sleeps(action, None)))
            live = False
            continue
        if (
            memory is not None
            and len(sim.checker.found) == found
            and all(ev.event in _NO_CHANGE for ev in branches.events)
            and _memory(sim, actor) == memory
        ):
            # A refused call (or one that found nothing to claim, or an effect already
            # applied): the store changed no row (every change writes its event, and
            # these say nothing changed, so nothing is read back), nor did the caller's
            # memory, nor the checker's (it counts none of them against a rule), nor what
            # is due: the parent's state, with one more register line.
            if memo is not None and asked is not None:
                memo.add(asked)
                branches.learnt.append(asked)
            out.append(
                Child(
                    action, home_key, None, (), None, sleeps(action, prints.get(action)), home.order
                )
            )
            continue
        after = read(sim, before, branches.events)
        broken = tuple(broken_rules(sim, found))
        key, plain = canonical_pair(sim, after)
        kept = None
        if key not in seen:
            # the first time this key turns up: the copy of it the search may keep
            kept = branches.here(path, action, (after, key, plain))
            seen.add(key)
        mine = prints.get(action)
        if reducing and isinstance(action, Claim) and action.task is None and memory is not None:
            mine = claimed(sim, action, memory[0])
        out.append(Child(action, key, kept, broken, None, sleeps(action, mine), plain.order))
        live = plain == home
        if live:
            before = after
    return out
