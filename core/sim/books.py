"""The check of the books: does each page of a task's ledger follow from the page before it?

A ledger page says what it adds and the running total after it ("page 3: west ferry 73 dan
(total 288)"), so the pages of one task form a chain: each page's total is the previous
page's total plus its own amount. One world writes a chain that holds. A page a late holder
writes from its own memory, over the current holder's, is a page of another world: it looks
like any page, and the chain breaks where it meets the current world ("账本看起来仍然整齐，
却悄悄混进了两套互相覆盖的世界"). Which page is from another world is not read from the
pages: the safety checker judged each write at its instant, and only a page written under
a lease that was not the task's current, live one is blamed. A chain broken between two
pages of current leases is a step done again from a fresh read, and is said as that.

Pure functions over ledger rows, below the app, so the app, `play` and the export judge the
books by the same rule.
"""

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from core.engine.records import LedgerRow

# A page as the ledger kind writes it, in English or as a Chinese run writes a scripted page
# ("第 3 页：西渡口 73 石（累计 288）").
_FIGURES = (
    re.compile(r"\b(?P<amount>\d+)\s*dan\s*\(total\s+(?P<total>\d+)\)\s*$"),
    re.compile(r"(?P<amount>\d+)\s*石\s*（累计\s*(?P<total>\d+)）\s*$"),
)


@dataclass(frozen=True, slots=True)
class Figures:
    """What one page adds and the running total it says after it."""

    amount: int
    total: int


def figures(value: str) -> Figures | None:
    """The amount and total a page says, or None for a page that says no total."""
    for pattern in _FIGURES:
        found = pattern.search(value)
        if found is not None:
            return Figures(int(found["amount"]), int(found["total"]))
    return None


def page_step(row: LedgerRow) -> int | None:
    """The step a page is of its task (`<task>/<step>`), or None for a free-form key."""
    prefix, _, step = row.key.rpartition("/")
    return int(step) if prefix == row.task_id and step.isdigit() and int(step) > 0 else None


@dataclass(frozen=True, slots=True)
class Seam:
    """Where the totals chain breaks: two neighbouring pages of one task that do not add up.

    `before` and `after` are the two pages in page order; the sum that fails is
    `before`'s total plus `after`'s amount against `after`'s total. `stale` is the one of
    them written under a lease that was not the task's current, live one (the checker's
    word, never a guess from the tokens): where two worlds meet. A break with no stale
    page is another harm, a step done again that read other figures (`redo`).
    """

    task_id: str
    before: LedgerRow
    after: LedgerRow
    stale: LedgerRow | None
    before_total: int
    after_amount: int
    after_total: int

    @property
    def key(self) -> str:
        """The page the books name: the stale one, or the one written again."""
        return (self.stale or self.redo).key

    @property
    def other(self) -> LedgerRow:
        """The page the named one meets."""
        return self.after if self.key == self.before.key else self.before

    @property
    def redo(self) -> LedgerRow:
        """Of the two, the page written last: with no stale page between them, the step
        done again from a fresh read, which the other page was not built on (of two written
        at one instant, the newer lease's)."""
        before, after = self.before, self.after
        newer = (before.updated_at, before.fence_token) > (after.updated_at, after.fence_token)
        return before if newer else after

    @property
    def built_on(self) -> int:
        """The total `after` was built on: what `before` said when `after` was written."""
        return self.after_total - self.after_amount


def _stale_of(a: LedgerRow, b: LedgerRow, stale: Collection[str]) -> LedgerRow | None:
    """Which of two pages that do not add up was written under a lease that was not
    current ("存储层或状态机只接受当前最大的 token"), if either; of two such, the one with
    the older token (the later, when they carry the same)."""
    late = [p for p in (a, b) if p.key in stale]
    if not late:
        return None
    return min(late, key=lambda p: (p.fence_token, -p.updated_at))


def check_books(ledger: Iterable[LedgerRow], stale: Collection[str] = ()) -> tuple[Seam, ...]:
    """Every place a task's totals chain breaks, in task and page order.

    `stale` names the pages written under a lease that was not their task's current, live
    one (the safety checker's verdict, `Snapshot.stale_pages`): only such a page is blamed.
    Pages that say no total, and pages whose predecessor is missing, are not links of the
    chain.
    """
    by_task: dict[str, dict[int, tuple[LedgerRow, Figures]]] = {}
    for row in ledger:
        step = page_step(row)
        said = figures(row.value)
        if step is not None and said is not None:
            by_task.setdefault(row.task_id, {})[step] = (row, said)
    seams: list[Seam] = []
    for task_id in sorted(by_task):
        pages = by_task[task_id]
        for step in sorted(pages):
            if step - 1 not in pages:
                continue
            before, before_said = pages[step - 1]
            after, after_said = pages[step]
            if before_said.total + after_said.amount == after_said.total:
                continue
            seams.append(
                Seam(
                    task_id=task_id,
                    before=before,
                    after=after,
                    stale=_stale_of(before, after, stale),
                    before_total=before_said.total,
                    after_amount=after_said.amount,
                    after_total=after_said.total,
                )
            )
    return tuple(seams)


def late_pages(
    ledger: Iterable[LedgerRow], stale: Collection[str], seams: Iterable[Seam] = ()
) -> tuple[LedgerRow, ...]:
    """The stale pages in the ledger that no break of the chain names: a page from another
    world whose neighbours say no total, or that the current world has not built on yet.
    It is where the two worlds meet all the same."""
    named = {seam.stale.key for seam in seams if seam.stale is not None}
    return tuple(row for row in ledger if row.key in stale and row.key not in named)


def broken_pages(ledger: Iterable[LedgerRow], stale: Collection[str] = ()) -> frozenset[str]:
    """The keys of the pages the books blame: each stale page in the ledger (at a break of
    the chain or not), and no other."""
    rows = tuple(ledger)
    seams = check_books(rows, stale)
    named = {seam.stale.key for seam in seams if seam.stale is not None}
    return frozenset(named | {row.key for row in late_pages(rows, stale, seams)})


@dataclass(frozen=True, slots=True)
class RefusedPage:
    """What a refused page would have done to the books: its total over the page there."""

    total: int
    over: LedgerRow
    over_total: int


def refused_page(value: str, key: str, ledger: Iterable[LedgerRow]) -> RefusedPage | None:
    """A refused page's total against the page the ledger holds at its key, when both say
    one and they differ (the fence kept one world's page off another's)."""
    said = figures(value)
    if said is None:
        return None
    for row in ledger:
        if row.key == key:
            there = figures(row.value)
            if there is None or there.total == said.total:
                return None
            return RefusedPage(said.total, row, there.total)
    return None
