"""Expanding a level of the search, in this process or in several (`--jobs`).

The search (core/search/explore/bfs.py) walks the world level by level and decides alone
which states are new, in one fixed order, so the result is the same for any number of
jobs. What it hands out is the expanding: every state of a level is tried by one of the
jobs, each with its own simulation, and what comes back is only each transition's choice,
canonical key and broken rules. The copies of the states stay with the job that made
them: a job keeps the copy of each child that may be new, the search says which ones are
(and which job expands each next), and only the copies dealt to another job cross a
process boundary, pickled together so the database pages they share cross once.
"""

import contextlib
import multiprocessing
import pickle
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from heapq import merge
from multiprocessing.connection import Connection
from typing import Any

from core.search.explore.branch import Branches, Child, Handle, Refusal, expand
from core.search.explore.canonical import canonical, read
from core.search.explore.world import ExploreParams, Sleeper
from core.sim.spec import Action


@dataclass(frozen=True, slots=True)
class Outcome:
    """One transition as the search sees it: no copy of the state, only what decides."""

    action: Action
    key: bytes
    kept: bool  # the job holds a copy of the state it led to
    broken: tuple[str, ...]
    crash: str | None
    sleep: frozenset[Sleeper] = frozenset()  # the child's sleep set (see `Child`)
    order: tuple[str, ...] = ()  # the canonical form's order of the child's workers


@dataclass(frozen=True, slots=True)
class Keep:
    """A child the search found new: the `choice`-th transition of the state at `position`
    in this level becomes the state at `next_position` of the next, held by job `job`."""

    position: int
    choice: int
    next_position: int
    job: int
    sleep: frozenset[Sleeper] = frozenset()  # the choices the state need not make


def _outcomes(children: Sequence[Child]) -> list[Outcome]:
    return [
        Outcome(c.action, c.key, c.handle is not None, c.broken, c.crash, c.sleep, c.order)
        for c in children
    ]


# A state of the level, in a job: its place in the level, its copy and its sleep set.
Entry = tuple[int, Handle, frozenset[Sleeper]]


class _Shard:
    """One job's part of the search: its simulation, its states of the level, the copies
    of their children that may be new, and every key it knows is seen."""

    def __init__(self, params: ExploreParams) -> None:
        self.branches = Branches(params)
        self.frontier: list[tuple[int, Handle, frozenset[Sleeper]]] = []
        self.pending: dict[tuple[int, int], Handle] = {}
        self.seen: set[bytes] = set()

    def start(self) -> bytes:
        root = self.branches.root()
        key = canonical(self.branches.sim, read(self.branches.sim))
        self.frontier = [(0, root, frozenset())]
        self.seen.add(key)
        return key

    def expand(self) -> list[tuple[int, list[Outcome]]]:
        return list(self.each())

    def each(self) -> Iterator[tuple[int, list[Outcome]]]:
        """The level's states one by one, so the search may stop between two of them."""
        frontier, self.frontier = self.frontier, []
        for position, handle, sleep in frontier:
            children = expand(self.branches, handle, self.seen, sleep)
            for i, child in enumerate(children):
                if child.handle is not None:
                    self.pending[(position, i)] = child.handle
            yield position, _outcomes(children)

    def keep(self, me: int, keeps: Iterable[Keep]) -> dict[int, list[Entry]]:
        """Keep the new children that stay here; the ones that move, by job."""
        moving: dict[int, list[Entry]] = {}
        for k in keeps:
            entry = (k.next_position, self.pending[(k.position, k.choice)], k.sleep)
            if k.job == me:
                self.frontier.append(entry)
            else:
                moving.setdefault(k.job, []).append(entry)
        self.pending.clear()
        return moving

    def take(
        self,
        arrived: Iterable[Entry],
        new_keys: Iterable[bytes],
        refusals: Iterable[Refusal] = (),
    ) -> None:
        self.frontier.extend(arrived)
        self.frontier.sort(key=lambda entry: entry[0])
        self.seen.update(new_keys)
        self.branches.refused.update(refusals)

    def close(self) -> None:
        self.branches.close()


class Expander:
    """Expands the levels of one search; `jobs` processes, or this one for a single job."""

    def __init__(self, params: ExploreParams, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self._local: _Shard | None = None
        self._pipes: list[Connection] = []
        self._procs: list[Any] = []
        self._holders: list[int] = [0]  # the job holding each state of the level
        self._learnt: list[list[Refusal]] = [[] for _ in range(self.jobs)]
        if self.jobs == 1:
            self._local = _Shard(params)
            return
        # Forked: a job starts as a copy of this process (nothing to import again) and
        # lives until the search ends, so that cost is paid once, not once a level.
        ctx = multiprocessing.get_context("fork")
        try:
            for job in range(self.jobs):
                mine, theirs = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(params, theirs, job), daemon=True)
                proc.start()
                theirs.close()
                self._pipes.append(mine)
                self._procs.append(proc)
        except BaseException:
            self.close()
            raise

    def start(self) -> bytes:
        """The root's key; the root is the first job's one state."""
        if self._local is not None:
            return self._local.start()
        self._pipes[0].send(("start",))
        key = self._answer(self._pipes[0])
        assert isinstance(key, bytes)
        for pipe in self._pipes[1:]:
            pipe.send(("take", [], [key], []))
        for pipe in self._pipes[1:]:
            self._answer(pipe)
        return key

    def expand(self) -> Iterator[tuple[int, list[Outcome]]]:
        """Every state of the level and its transitions, in the level's order."""
        if self._local is not None:
            yield from self._local.each()
            return
        for pipe in self._pipes:
            pipe.send(("expand",))
        parts = []
        for job, pipe in enumerate(self._pipes):
            part, self._learnt[job] = self._answer(pipe)
            parts.append(part)
        yield from merge(*parts, key=lambda entry: entry[0])

    def keep(
        self,
        new: Sequence[tuple[int, int]],
        new_keys: Sequence[bytes],
        sleeps: Sequence[frozenset[Sleeper]] = (),
    ) -> None:
        """The next level: `new` are its states as (position, choice) of the transition
        that found each, in the next level's order; `new_keys` their keys; `sleeps` their
        sleep sets (none: empty)."""
        before = self._holders
        keeps = plan(new, self.jobs, sleeps)
        self._holders = [k.job for k in keeps]
        if self._local is not None:
            moved = self._local.keep(0, keeps)
            assert not moved
            self._local.take((), new_keys)
            self._local.branches.drain()  # no other job to tell
            return
        by_job: list[list[Keep]] = [[] for _ in self._pipes]
        for k in keeps:
            by_job[before[k.position]].append(k)
        for pipe, mine in zip(self._pipes, by_job, strict=True):
            pipe.send(("keep", mine))
        arriving: list[list[bytes]] = [[] for _ in self._pipes]
        for pipe in self._pipes:
            moving: dict[int, bytes] = self._answer(pipe)
            for job, blob in moving.items():
                arriving[job].append(blob)
        # Each job also learns the refusals the others met in this level (see
        # `Branches.refused`): remembered by one job alone, they would be met again by each.
        for job, (pipe, blobs) in enumerate(zip(self._pipes, arriving, strict=True)):
            others = [r for other, rs in enumerate(self._learnt) if other != job for r in rs]
            pipe.send(("take", blobs, new_keys, others))
        self._learnt = [[] for _ in self._pipes]
        for pipe in self._pipes:
            self._answer(pipe)

    def _answer(self, pipe: Connection) -> Any:
        kind, value = pipe.recv()
        if kind == "error":
            raise RuntimeError(f"an explorer job failed:\n{value}")
        return value

    def close(self) -> None:
        if self._local is not None:
            self._local.close()
            return
        for pipe in self._pipes:
            with contextlib.suppress(OSError):  # a job that failed has closed its end
                pipe.send(("stop",))
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for pipe in self._pipes:
            pipe.close()


def plan(
    new: Sequence[tuple[int, int]], jobs: int, sleeps: Sequence[frozenset[Sleeper]] = ()
) -> list[Keep]:
    """Where each new state goes: `new` are (position, choice) in the next level's order.
    The jobs take turns: siblings cost alike (the same choices, mostly refused the same
    way), so dealing them out one by one evens each level out better than leaving a
    state with the job that found it; a job waits at the end of a level for the slowest,
    and moving a copy costs far less than expanding a state."""
    return [
        Keep(
            position,
            choice,
            next_position,
            next_position % jobs,
            sleeps[next_position] if sleeps else frozenset(),
        )
        for next_position, (position, choice) in enumerate(new)
    ]


def _serve(params: ExploreParams, pipe: Connection, me: int) -> None:
    """A job's loop: answer the search's requests until it says stop."""
    shard: _Shard | None = None
    try:
        shard = _Shard(params)
        while True:
            request = pipe.recv()
            kind = request[0]
            if kind == "stop":
                return
            try:
                if kind == "start":
                    pipe.send(("ok", shard.start()))
                elif kind == "expand":
                    pipe.send(("ok", (shard.expand(), shard.branches.drain())))
                elif kind == "keep":
                    moving = shard.keep(me, request[1])
                    blobs = {
                        job: pickle.dumps(entries, pickle.HIGHEST_PROTOCOL)
                        for job, entries in moving.items()
                    }
                    pipe.send(("ok", blobs))
                elif kind == "take":
                    arrived = [entry for blob in request[1] for entry in pickle.loads(blob)]
                    shard.take(arrived, request[2], request[3])
                    pipe.send(("ok", None))
            except Exception:
                pipe.send(("error", traceback.format_exc()))
                return
    except (EOFError, KeyboardInterrupt):
        return
    finally:
        if shard is not None:
            shard.close()
        pipe.close()
