"""The check of the books: does each page of a task's ledger follow from the page before it?

A ledger page says what it adds and the running total after it ("page 3: west ferry 73 dan
(total 288)"), so the pages of one task form a chain: each page's total is the previous
page's total plus its own amount. One world writes a chain that holds. A page a late holder
writes from its own memory, over the current holder's, is a page of another world: it looks
like any page, and the chain breaks where it meets the current world ("账本看起来仍然整齐，
却悄悄混进了两套互相覆盖的世界").

Pure functions over ledger rows, below the app, so the app, `play` and the export judge the
books by the same rule.
"""

import re
from collections.abc import Iterable, Mapping
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
    """Where the books break: two neighbouring pages of one task from two worlds.

    `before` and `after` are the two pages in page order; the sum that fails is
    `before`'s total plus `after`'s amount against `after`'s total. `stale` is the one of
    them from the older world: where the books break.
    """

    task_id: str
    before: LedgerRow
    after: LedgerRow
    stale: LedgerRow
    before_total: int
    after_amount: int
    after_total: int

    @property
    def key(self) -> str:
        return self.stale.key

    @property
    def other(self) -> LedgerRow:
        """The page of the newer world that the stale page meets."""
        return self.after if self.stale is self.before else self.before


def _older(a: LedgerRow, b: LedgerRow, owner: str | None) -> LedgerRow:
    """Which of two pages that do not add up came from the older world.

    The store keeps the newest fence token a page was stamped with: the lower one is the
    older world's ("存储层或状态机只接受当前最大的 token"). Without fence tokens (the story
    before the fence tag) the page not by the task's current (or last) holder is; failing
    both, the later page, which did not follow from the one before it.
    """
    if a.fence_token != b.fence_token:
        return a if a.fence_token < b.fence_token else b
    if a.writer != b.writer and owner is not None and owner in (a.writer, b.writer):
        return b if a.writer == owner else a
    return b


def check_books(
    ledger: Iterable[LedgerRow], owners: Mapping[str, str | None] | None = None
) -> tuple[Seam, ...]:
    """Every place a task's totals chain breaks, in task and page order.

    `owners` names each task's current (or last) holder, to tell the two worlds apart in a
    run that stamps no fence tokens. Pages that say no total, and pages whose predecessor
    is missing, are not links of the chain.
    """
    owners = owners or {}
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
            stale = _older(before, after, owners.get(task_id))
            seams.append(
                Seam(
                    task_id=task_id,
                    before=before,
                    after=after,
                    stale=stale,
                    before_total=before_said.total,
                    after_amount=after_said.amount,
                    after_total=after_said.total,
                )
            )
    return tuple(seams)


def broken_pages(
    ledger: Iterable[LedgerRow], owners: Mapping[str, str | None] | None = None
) -> frozenset[str]:
    """The keys of the pages where the books break."""
    return frozenset(seam.key for seam in check_books(ledger, owners))


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
