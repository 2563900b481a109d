"""Explore every interleaving of a small world, breadth first, on the real engine (the
`explore` command's engine, and the app's "Explore this mode…"; the command's options and
output are core/tools/explore_cli.py). It sits with the fuzzer in core/search, below both
the tools and the app and above the scenarios, since what it hands back is scenarios.

The world is W manual workers and T ledger tasks of S steps, run by the real simulation:
the real `LeaseStore` and its statements on SQLite, the real safety checker, on the virtual
clock (core/search/explore/world.py: the world, its choices and the seed's rules). At
each state the search tries every choice there is: each call a worker can make with the
lease it remembers, each fault, approve / reject of a waiting task, and the passing of
time to each instant where something can change. Each state reached is reduced to a
canonical form (core/search/explore/canonical.py) and visited once.

Every transition is judged by the checker behind the safety light, whose rules are the
seed's (core/sim/rules.py): the explorer knows no rule of its own. The first trace found
to each broken rule is a shortest one (breadth first), and is written as a scenario file
that `borrowed-keys play` plays and the app opens. The search goes on past
a broken rule, so one rule broken early does not hide another that needs more choices.

Partial-order reduction (sleep sets; `params.reduction`, on by default, `--no-reduction`).
With several tasks, two calls of two workers on two tasks commute (`footprint` and
`independent` in core/search/explore/world.py say which): made in either order from one
state, each is offered after the other, answers and breaks the same rules, and they reach
one state. Trying both orders makes each such state twice and each call twice. A state
carries a sleep set: the choices it need not make, because a trace that differs only by
the order of independent choices makes them. At a state with sleep set Z, choice a, made
after the choices b1..bk before it (in the fixed order), leads to a child with sleep set
{x in Z + {b1..bk} : x independent of a}; a choice in Z is not made. Every state is still
reached (a sleep set prunes transitions, not states), and fewer calls go to the store.

Why the shortest trace to each rule is still found, and of the same length. Let w be a
shortest trace to rule r in the full search, of length L, its last choice a breaking r.
(1) Every trace equivalent to w (the same choices, independent neighbours swapped) has
length L and ends with a: a breaks the same rule wherever it stands among
independent choices, so an order with a earlier would break r in fewer than L steps. So
every such order passes through states at their least depth only (a state at position
i reached in fewer than i choices would shorten the trace), and its next-to-last state is
w's. (2) By induction over the length of x: if the search expands a state s at its least
depth d with sleep set Z, and x is a trace from s with the property of (1) (every order of
it passes states at their least depth, and ends with one same choice), and no choice in Z
can be moved to the front of x, then some order of x is made from s, transition by
transition. Take the first choice a1 in the fixed order at s that can be moved to the
front of x (x = a1.x'): it is not in Z, so it is made. Its child c is at depth d + 1, its
least, so c is a state of the next level and is expanded there with the intersection of
the sleep sets of its arrivals at that depth, a subset of this arrival's. No choice y in
that subset can be moved to the front of x': y is independent of a1, so x would be y.a1...
with y movable to its front: y in Z is excluded by the hypothesis, y before a1 in the
fixed order by a1's choice. By induction some order of x' is made from c. (3) With s the
root, Z empty and x = w: some order of w is made, its last choice a at depth L breaks r;
and the reduced search makes only real transitions, so it finds nothing shorter. The same
length, then, though not always the same trace: which of the equivalent orders is written
may differ. Arrivals at a deeper level are ignored: they only lie on traces that are not
shortest. No cycle proviso is needed: a sleep set skips transitions, never a state, so no
state's choices are put off for ever (that is a persistent set's problem); breadth first
needs the intersection within a level instead. A state met again as a copy with its
workers renamed (by symmetry) has that arrival's sleep set renamed to the kept copy's
workers before the intersection. `tests/test_explore_reduction.py`
checks the lengths against the full search, and the independence itself (both orders of
every independent pair reach one state and break the same) on every state of small worlds.

A state is restored by SQLite's own copy of the database (`Simulation.save` / `restore`,
core/search/explore/branch.py) or, as the slower alternative kept for measurement, by
replaying its trace from the root. With several jobs the states of each level are
expanded by that many processes (core/search/explore/pool.py); what is new, and in
which order, is decided here alone, so any number of jobs gives the same result.
"""

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from core.scenarios.glossary import violation_word
from core.search.explore import DEFAULT_DEPTH as DEFAULT_DEPTH
from core.search.explore.pool import Expander
from core.search.explore.world import ENGINE_ERROR as ENGINE_ERROR
from core.search.explore.world import ExploreParams as ExploreParams
from core.search.explore.world import Restore as Restore
from core.search.explore.world import Sleeper
from core.sim.spec import Action


@dataclass(frozen=True, slots=True)
class Counterexample:
    """The shortest trace found to one broken rule."""

    rule: str
    actions: tuple[Action, ...]
    states_before: int  # distinct states found before it
    elapsed_s: float
    path: str | None = None
    verified: bool | None = None  # the written file played and its expectations held
    detail: str = ""

    @property
    def length(self) -> int:
        return len(self.actions)


@dataclass(frozen=True, slots=True)
class Level:
    depth: int
    states: int  # distinct states found so far
    transitions: int
    elapsed_s: float


@dataclass
class ExploreReport:
    params: ExploreParams
    states: int = 0
    transitions: int = 0
    depth: int = 0  # the deepest level with a new state
    exhausted: bool = False
    counterexamples: list[Counterexample] = field(default_factory=list)
    levels: list[Level] = field(default_factory=list)
    elapsed_s: float = 0.0
    cpu_s: float = 0.0  # processor time, this process's and its finished children's
    jobs: int = 1
    stopped: bool = False  # `stop` said so before the bound: neither exhausted nor bounded
    capped: bool = False  # stopped by max_states or max_seconds before the depth bound

    @property
    def ok(self) -> bool:
        return not self.counterexamples

    @property
    def states_per_cpu_s(self) -> float:
        """Distinct states per second of processor time: per core, whatever else runs."""
        return self.states / self.cpu_s if self.cpu_s > 0 else 0.0

    @property
    def states_per_s(self) -> float:
        return self.states / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def claim(self) -> str:
        """The result in one line."""
        p = self.params
        reach = (
            "every interleaving (exhausted)"
            if self.exhausted
            else f"stopped at depth {self.depth + 1}, not exhausted"
            if self.stopped
            else f"stopped at {p.max_states} states (--max-states), not exhausted"
            if self.capped and p.max_states is not None and self.states >= p.max_states
            else f"stopped after {p.max_seconds:g} s, not exhausted"
            if self.capped and p.max_seconds is not None
            else f"bounded at depth {p.depth}, not exhausted"
        )
        head = f"{self.states} distinct states, {self.transitions} transitions, depth {self.depth}"
        if self.ok:
            return f"{head}: no violation; {reach}"
        found = ", ".join(
            f"{violation_word(c.rule, 'en')} in {c.length}" for c in self.counterexamples
        )
        n = len(self.counterexamples)
        rules = "1 rule" if n == 1 else f"{n} rules"
        return f"{head}: {rules} broken ({found} steps); {reach}"

    def summary(self) -> dict[str, Any]:
        """Everything that depends only on the inputs (identical for any --jobs)."""
        p = self.params
        return {
            "mode": p.mode.value,
            "workers": p.workers,
            "tasks": p.tasks,
            "steps": p.steps,
            "depth_bound": p.depth,
            "lease_ttl_ms": p.ttl_ms,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "exhausted": self.exhausted,
            "states_per_level": [lv.states for lv in self.levels],
            "counterexamples": [
                {
                    "rule": c.rule,
                    "length": c.length,
                    "states_before": c.states_before,
                    "path": c.path,
                    "verified": c.verified,
                    "detail": c.detail,
                    "actions": [a.name for a in c.actions],
                }
                for c in self.counterexamples
            ],
            "ok": self.ok,
        }


def explore(
    params: ExploreParams,
    *,
    jobs: int = 1,
    on_level: Callable[[Level], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> ExploreReport:
    """Breadth-first search of every state the world reaches within `params.depth` choices.

    `stop` is asked after each state is expanded (a thread's cancel flag, `Event.is_set`;
    with several jobs, as each state's answer comes back from them): once it answers yes
    the search returns at once with what it has found, `stopped`.
    """
    started = time.perf_counter()
    cpu_started = _cpu_s()
    report = ExploreReport(params=params, jobs=jobs)
    expander = Expander(params, jobs)
    try:
        seen = {expander.start()}
        parent: list[int] = [-1]
        via: list[Action | None] = [None]
        frontier: list[int] = [0]  # the level's states, by node
        found: dict[str, Counterexample] = {}
        depth = 0
        full = False

        def trace(node: int) -> tuple[Action, ...]:
            out: list[Action] = []
            while node > 0:
                action = via[node]
                assert action is not None
                out.append(action)
                node = parent[node]
            return tuple(reversed(out))

        while frontier and depth < params.depth and not full:
            following: list[int] = []
            new: list[tuple[int, int]] = []  # (position in the level, choice) of each
            new_keys: list[bytes] = []
            # each new state's sleep set and the canonical order of its copy's workers,
            # and where in the next level each new key stands (see the module's docstring)
            sleeps: list[frozenset[Sleeper]] = []
            orders: list[tuple[str, ...]] = []
            placed: dict[bytes, int] = {}
            known = len(seen)
            for position, outcomes in expander.expand():
                if stop is not None and stop():
                    report.stopped = True
                    break
                node = frontier[position]
                for choice, child in enumerate(outcomes):
                    report.transitions += 1
                    # A rule is broken by a transition, not by a state: one into a state
                    # already seen can still break one, and is the shortest if it is first.
                    for rule in child.broken:
                        if rule not in found:
                            found[rule] = Counterexample(
                                rule,
                                (*trace(node), child.action),
                                states_before=len(seen),
                                elapsed_s=time.perf_counter() - started,
                                detail=child.crash or "",
                            )
                    if child.crash is not None or full:
                        continue
                    if child.key in seen:
                        # Reached again in the same level: the state need skip only what
                        # every arrival at this depth may skip (the intersection), each
                        # arrival's sleep set named as the kept copy names its workers. An
                        # arrival at a later depth changes nothing (the argument above).
                        at = placed.get(child.key)
                        if at is not None and sleeps[at]:
                            mine = _renamed(child.sleep, child.order, orders[at])
                            sleeps[at] = sleeps[at] & mine
                        continue
                    assert child.kept, "the job expanding a state keeps each new child"
                    seen.add(child.key)
                    following.append(len(parent))
                    parent.append(node)
                    via.append(child.action)
                    new.append((position, choice))
                    new_keys.append(child.key)
                    placed[child.key] = len(sleeps)
                    sleeps.append(child.sleep)
                    orders.append(child.order)
                    if params.max_states is not None and len(seen) >= params.max_states:
                        full = True
            if report.stopped:
                break
            depth += 1
            if len(seen) > known:
                report.depth = depth
            if params.max_seconds is not None and following:
                full = full or time.perf_counter() - started > params.max_seconds
            frontier = following
            if frontier and depth < params.depth and not full:
                expander.keep(new, new_keys, sleeps)
            lv = Level(depth, len(seen), report.transitions, time.perf_counter() - started)
            report.levels.append(lv)
            if on_level is not None:
                on_level(lv)
        report.states = len(seen)
        report.exhausted = not frontier and not full
        report.capped = full
        report.counterexamples = sorted(found.values(), key=lambda c: (c.length, c.rule))
    finally:
        expander.close()
    report.elapsed_s = time.perf_counter() - started
    report.cpu_s = _cpu_s() - cpu_started
    return report


def _renamed(
    sleep: frozenset[Sleeper], order: tuple[str, ...], kept: tuple[str, ...]
) -> frozenset[Sleeper]:
    """A sleep set of one copy of a state, named as another copy of it names its workers:
    the i-th worker in the canonical order of one is the i-th of the other."""
    if order == kept:
        return sleep
    to = dict(zip(order, kept, strict=True))
    out: set[Sleeper] = set()
    for action, (worker, task, queues) in ((a, f) for a, f in sleep if f is not None):
        # only a worker's calls are ever asleep (a footprint names the caller)
        out.add((replace(action, worker=to[worker]), (to[worker], task, queues)))  # type: ignore[arg-type]
    return frozenset(out)


def _cpu_s() -> float:
    """This process's processor time and its ended children's (the jobs, once closed)."""
    own, children = (resource.getrusage(who) for who in _RUSAGE)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_RUSAGE = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
