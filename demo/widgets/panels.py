"""The tabbed panels: Ledger, Checkpoints, Rejected, Effects and the Event log."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Self

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import RichLog, Static

from core.engine.config import Mode
from core.engine.durations import format_clock
from core.engine.policies import policy_for
from core.engine.records import EventRow
from core.engine.vocabulary import EventKind
from core.scenarios.glossary import (
    artifact_word,
    box_contents,
    box_parts,
    page_words,
    task_artifact_zh,
    task_name,
)
from core.scenarios.player import event_style
from core.scenarios.sentences import (
    books_sentences,
    effect_call_words,
    page_fence,
    refused_note,
)
from core.scenarios.telling import event_sentence
from core.scenarios.telling import who as name_of
from core.sim.checker import ViolationKind
from core.sim.snapshot import Rejection, Snapshot
from demo.i18n import operation_word, reason_word, tr
from demo.widgets.cjk_wrap import WRAP_MIN, wrap_text
from demo.widgets.keyed_table import KeyedTable, Row

HIGHLIGHT_REFRESHES = 30  # a new rejection stays highlighted this many refreshes
# The Rejected panel's rows (each a refusal and its repeats) kept, the newest: a long live
# session (the fleet) refuses without end, and the table holds a row for each.
MAX_REJECTED_ROWS = 300


def _fenced(
    snap: Snapshot, columns: list[tuple[str, str]], rows: Iterable[tuple[str, Row]]
) -> tuple[list[tuple[str, str]], list[tuple[str, Row]]]:
    """The columns and rows as given, or without the fence column in a run that issues no
    fence token (the world before the fence tag, or one with no version at all)."""
    if Mode(snap.mode).issues_fence_tokens:
        return columns, list(rows)
    at = [k for k, _ in columns].index("fence")
    return columns[:at] + columns[at + 1 :], [(k, r[:at] + r[at + 1 :]) for k, r in rows]


def books_said(snap: Snapshot, lang: str) -> tuple[tuple[str, str, bool], ...]:
    """What the snapshot's books say (the check of core.sim.books, the one `play` and the
    export use too), as (page, sentence, whether a stale page is named). The Ledger and the
    note over it both ask, every refresh, of the same snapshot (frozen): it is checked
    once per language."""
    global _said_of
    if _said_of is None or _said_of[0] is not snap or _said_of[1] != lang:
        _said_of = (snap, lang, books_sentences(snap, lang))
    return _said_of[2]


_said_of: tuple[Snapshot, str, tuple[tuple[str, str, bool], ...]] | None = None


BROKEN_MARK = "✗ "  # before the key of a page where the books break


class LedgerTable(KeyedTable):
    """Pages in the order they were (last) written: a rewritten page moves to the end.

    The columns fit the panel's width: the value takes what the others leave and ends in
    "…" when longer, so the writer is never cut ("ache" for acheng at 80 columns). A page
    where the books break has a mark before its key; a page written under a lease that was
    not current has the newest token issued for its task beside its own ("1 (newest 2)"),
    the comparison the store makes (and, with no fence, does not)."""

    ORDERED = True
    AUTO_WIDTH = False
    BROKEN = Style(bold=True, color="white", bgcolor="red")

    _broken: frozenset[str] = frozenset()

    def row_style(self, row_index: int) -> Style | None:
        rows = self.ordered_rows
        if row_index < len(rows) and rows[row_index].key.value in self._broken:
            return self.BROKEN
        return None

    # Each page shown, by its key: what its cells were made of (the row itself, whether the
    # books break there, the newest token shown beside it, the language, its scripted forms),
    # the cells, their widths, and the row last handed to `sync` with the value's width and
    # whether a fence column was there. A page unchanged since the last refresh costs a
    # lookup, and `sync` sees the same row and compares nothing.
    _pages: dict[str, "_Page"]

    def show(self, snap: Snapshot, lang: str) -> None:
        pages = sorted(snap.ledger, key=lambda p: (p.updated_at, p.key))
        # only a page written under a lease that was not current is marked
        broken = frozenset(key for key, _, stale in books_said(snap, lang) if stale)
        restyled, self._broken = broken ^ self._broken, broken
        newest = {t.task_id: t.row.fence_token for t in snap.tasks}
        before = getattr(self, "_pages", {})
        made: list[_Page] = []
        for p in pages:
            # the newest token beside a page's own only where its write lost that comparison:
            # a page written under the newest lease of its time is no less sound for a later
            # claim
            shown_newest = newest.get(p.task_id) if p.key in snap.stale_pages else None
            made_of = (p, p.key in broken, shown_newest, lang, snap.page_forms.get(p.value))
            page = before.get(p.key)
            if page is None or page.made_of != made_of:
                cells = (
                    format_clock(p.updated_at),
                    (BROKEN_MARK if p.key in broken else "") + key_words(p.key, p.task_id, lang),
                    # a page's text in the run's language (the data stays as written)
                    page_words(p.value, lang, snap.page_forms),
                    page_fence(p.fence_token, shown_newest, lang),
                    name_of(p.writer, lang),
                )
                page = _Page(p.key, made_of, cells, tuple(map(cell_len, cells)))
            made.append(page)
        self._pages = {page.key: page for page in made}
        labels = {
            "at": tr("time", lang),
            "key": tr("key", lang),
            "value": tr("value", lang),
            "fence": tr("fence_token", lang),
            "writer": tr("writer", lang),
        }
        fenced = Mode(snap.mode).issues_fence_tokens
        # the cells' places in a page's cells; no fence token before the fence tag
        places = {"at": 0, "key": 1, "fence": 3, "writer": 4}
        if not fenced:
            del places["fence"]
        widths = {
            name: max([cell_len(labels[name]), *(page.lens[at] for page in made)])
            for name, at in places.items()
        }
        width = self.scrollable_content_region.width or self.size.width or 120
        # every column has one cell of padding either side; the value has the rest
        rest = width - sum(w + 2 for w in widths.values()) - 2
        longest = max([cell_len(labels["value"]), *(page.lens[2] for page in made)])
        widths["value"] = max(VALUE_MIN, min(longest, rest))
        order = tuple(c for c in ("at", "key", "value", "fence", "writer") if c in widths)
        self.set_columns([(c, labels[c]) for c in order], {c: widths[c] for c in order})
        value_w = widths["value"]
        rows: list[tuple[str, Row]] = []
        for page in made:
            if page.row is None or page.row_for != (value_w, fenced):
                at, shown_key, value, fence, writer = page.cells
                fit = _fit(value, value_w)
                page.row = (at, shown_key, fit, *((fence,) if fenced else ()), writer)
                page.row_for = (value_w, fenced)
            rows.append((page.key, page.row))
        self.sync(rows)
        if restyled:
            self.restyle_rows(restyled)
        newly = sorted(restyled & broken)
        if newly:
            # bring the page that broke the books into sight (at 80 x 24 it may be below)
            self.move_cursor(row=self.get_row_index(newly[0]), animate=False)


@dataclass(slots=True)
class _Page:
    """One ledger page as the table last showed it (see `LedgerTable._pages`)."""

    key: str
    made_of: tuple[object, ...]
    cells: tuple[str, str, str, str, str]
    lens: tuple[int, ...]
    row: Row | None = None
    row_for: tuple[int, bool] | None = None


VALUE_MIN = 10  # the ledger's value column is never narrower than this


def _fit(text: str, width: int) -> str:
    """`text` in at most `width` cells, ending in "…" when cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1) + "…"


class CheckpointTable(KeyedTable):
    """Per task, newest first (the store's own order); the writer is the holder whose
    lease saved it (from the register's checkpoint_saved events)."""

    ORDERED = True

    def show(self, snap: Snapshot, lang: str, writers: Mapping[tuple[str, int], str]) -> None:
        ordered = sorted(snap.checkpoints, key=lambda c: (c.task_id, -c.seq))
        columns, rows = _fenced(
            snap,
            [
                ("task", tr("task", lang)),
                ("seq", "#"),
                ("step", tr("step", lang)),
                ("fence", tr("fence_token", lang)),
                ("by", tr("writer", lang)),
                ("at", tr("time", lang)),
                ("inside", tr("inside", lang)),
            ],
            [
                (
                    f"{c.task_id}#{c.seq}",
                    (
                        task_name(c.task_id, lang),
                        str(c.seq),
                        str(c.step),
                        str(c.fence_token),
                        name_of(writers.get((c.task_id, c.seq), ""), lang),
                        format_clock(c.created_at),
                        box_contents(c.state, lang),
                    ),
                )
                for c in ordered
            ],
        )
        self.set_columns(columns)
        self.sync(rows)


class Note(Static):
    """A paragraph over a table, wrapped by the app's own rules; hidden when empty.

    The app brings it up to date every refresh, and `Static.update` lays the whole screen
    out again even when nothing changed: so the text is given again only when it or the
    width changed, and a new layout is asked only when its number of lines did (its height
    is its lines; its width is the panel's)."""

    _text: Text = Text()
    _drawn: tuple[int, Text] | None = None  # the width and the wrapped text last shown

    def say(self, text: Text | None) -> None:
        if not text:
            self._text = Text()
            if self._drawn is not None or self.display:
                self._drawn = None
                self.update("")
                self.display = False
            return
        self.display = True
        if self._drawn is not None and text == self._text:
            return  # shown as it is (a new width draws it again on its own resize)
        self._text = text
        self._draw()

    def on_resize(self) -> None:
        if self._text:
            self._draw()

    def _draw(self) -> None:
        # broken by the app's own rules (no line starting with punctuation, "DOM 摘要" and a
        # number with its unit kept whole), which Rich's word wrap does not know
        width = self.content_size.width
        wrapped = wrap_text(self._text, width) if width else self._text
        drawn, self._drawn = self._drawn, (width, wrapped)
        if drawn == (width, wrapped):
            return
        # wrap_text leaves narrow widths to Rich's own wrap: lines unknown, so a layout
        same_lines = (
            drawn is not None
            and width > WRAP_MIN
            and drawn[0] == width
            and drawn[1].plain.count("\n") == wrapped.plain.count("\n")
        )
        self.update(wrapped, layout=not same_lines)


class BooksNote(Note):
    """Over the Ledger: where the books break and which two holders' worlds meet there.
    The page looks like any page ("账本看起来仍然整齐"); this says what one look further
    shows. Hidden while the books add up."""

    def show(self, snap: Snapshot, lang: str) -> None:
        said = books_said(snap, lang)
        text = Text()
        for at, (_, sentence, stale) in enumerate(said):
            # a page of another world in red; a step done again is a harm, not a second world
            text.append(("" if at == 0 else " ") + sentence, style="bold red" if stale else "bold")
        self.say(text if said else None)


# The rules a page breaks when it goes into the ledger that the fence or the lease check would
# have refused.
_LET_IN = (ViolationKind.STALE_WRITE_ACCEPTED, ViolationKind.PAGE_WITHOUT_LIVE_LEASE)


class RefusedNote(Note):
    """Over the Rejected table: the newest refused page, what it would have written and
    whose total it would have covered: what the fence saved."""

    def show(self, snap: Snapshot, lang: str) -> None:
        sentence = refused_note(snap, lang)
        if sentence is None and not snap.rejections:
            # An empty table says nothing; under a mistake that let a stale page in, the
            # empty table is the harm: "两套互相覆盖的世界" met in the ledger, unrefused.
            let_in = any(
                snap.violations.get(rule.value, 0)
                for rule in (
                    ViolationKind.STALE_WRITE_ACCEPTED,
                    ViolationKind.PAGE_WITHOUT_LIVE_LEASE,
                )
            )
            empty = tr("nothing_refused_let_in" if let_in else "nothing_refused", lang)
            self.say(Text(empty, style="bold red" if let_in else "dim"))
            return
        self.say(None if sentence is None else Text(sentence, style="bold"))


class BoxDetail(Note):
    """The whole of one box over the Checkpoints table, wrapped, in the run's language: the
    row under the cursor, or the newest box when no row is chosen. The table's cell is cut
    to its width; this is where the seed's four parts of a browser agent's box are read:
    "已打开到哪个 URL；已完成哪些操作；当前截图或 DOM 摘要在哪；下一步计划是什么". One
    paragraph, so that at 80 x 24 it fits under the tabs with the table's header in sight."""

    def show(self, snap: Snapshot, lang: str, selected: str | None) -> None:
        boxes = {f"{c.task_id}#{c.seq}": c for c in snap.checkpoints}
        box = boxes.get(selected or "")
        if box is None and boxes:
            box = max(boxes.values(), key=lambda c: (c.created_at, c.seq))
        if box is None:
            # An empty shelf is the lesson of its own: "Lease 只决定谁能接手任务，Checkpoint
            # 决定接手之后从哪里继续。"
            wasted = snap.metrics.wasted_steps
            empty = (
                tr("no_box", lang)
                if not wasted
                else tr("no_box_done_again_one", lang)
                if wasted == 1
                else tr("no_box_done_again", lang, n=wasted)
            )
            self.say(Text(empty, style="bold" if wasted else "dim"))
            return
        task = task_name(box.task_id, lang)
        text = Text(tr("box_detail", lang, task=task, seq=box.seq, step=box.step))
        text.stylize("bold")
        colon = "：" if lang == "zh" else ": "
        for at, (word, value) in enumerate(box_parts(box.state, lang)):
            # a Chinese "：" carries its own space: "（第 6 步）：已对齐页数"
            text.append(("" if lang == "zh" else " ") if at == 0 else " · ")
            text.append(f"{word}{colon}", style="bold")
            text.append(value)
        self.say(text)


def checkpoint_writers(events: Iterable[EventRow], into: dict[tuple[str, int], str]) -> None:
    """Who saved each checkpoint, by (task, seq), from checkpoint_saved events."""
    for ev in events:
        if ev.event == EventKind.CHECKPOINT_SAVED and ev.task_id is not None:
            seq = ev.detail.get("seq")
            if isinstance(seq, int) and ev.worker_id:
                into[(ev.task_id, seq)] = ev.worker_id


def token_cell(its: int | None, current: int | None, lang: str) -> str:
    """One of a refused call's tokens with the current one beside it when that differs:
    "1 (now 2)", the comparison the store made ("存储层或状态机只接受当前最大的 token");
    empty where the call carried none (it never reached the store)."""
    if its is None:
        return ""
    if current is None or current == its:
        return str(its)
    return tr("token_now", lang, its=its, current=current)


def key_words(key: str, task_id: str | None, lang: str) -> str:
    """A page's key as the Ledger shows it: "floor6/3" as written, "第六层/3" on a Chinese
    screen (the task by its name); a key of another shape as it is."""
    task, sep, rest = key.partition("/")
    if not sep or task != task_id:
        return key
    artifact = artifact_word(rest, lang) if lang == "zh" else None
    if artifact is not None:  # the downstream service's artifact: "任务 2 的结果"
        return task_artifact_zh(task_name(task, lang), artifact)
    return f"{task_name(task, lang)}/{rest}"


def page_cell(key: str | None, task_id: str | None) -> str:
    """A refused page by its number within the task the row already names ("3" for
    floor6/3); a key of another shape as it is."""
    if not key:
        return ""
    task, _, page = key.rpartition("/")
    return page if task and task == task_id else key


def rejection_cells(r: Rejection, count: int, lang: str) -> tuple[str, ...]:
    """The Rejected panel's row for one refusal (repeated `count` times), in words."""
    return (
        format_clock(r.at),
        name_of(r.worker_id or "", lang),
        task_name(r.task_id, lang) if r.task_id else "",
        operation_word(r.operation, lang),
        page_cell(r.key, r.task_id),
        token_cell(r.lease_token, r.current_lease_token, lang),
        token_cell(r.fence_token, r.current_fence_token, lang),
        reason_word(r.reason, lang),
        str(count) if count > 1 else "",
    )


REJECTED_COLUMNS: Final = (
    "at",
    "worker",
    "task",
    "op",
    "page",
    "lease",
    "fence",
    "reason",
    "count",
)


@dataclass
class RejectionGroup:
    """Repeats of one refusal: same worker, task, operation, reason and tokens."""

    first: Rejection
    last: Rejection
    count: int = 1


def group_key(r: Rejection) -> str:
    its = (r.lease_token, r.fence_token, r.current_lease_token, r.current_fence_token)
    return "|".join(str(p) for p in (r.worker_id, r.task_id, r.operation, r.reason, *its))


def group_rejections(rejections: Iterable[Rejection]) -> dict[str, RejectionGroup]:
    """Repeats folded into one row each, in order of each group's first refusal."""
    groups: dict[str, RejectionGroup] = {}
    for r in rejections:
        key = group_key(r)
        group = groups.get(key)
        if group is None:
            groups[key] = RejectionGroup(r, r)
        else:
            group.last = r
            group.count += 1
    return groups


class RejectedTable(KeyedTable):
    """Refused operations, repeats folded ("claim partitioned ×120"), optionally one reason.

    A row that is new or has a new repeat is highlighted, the whole row, for a while.
    """

    HIGHLIGHT = Style(bold=True, color="black", bgcolor="yellow")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._fresh: dict[str, int] = {}  # group key -> refreshes it stays highlighted
        self._counts: dict[str, int] = {}  # group key -> repeats seen
        self._seen_seq = 0
        self._groups: dict[str, RejectionGroup] = {}
        self.reason_filter: str | None = None
        self.new_count = 0
        # whether the cursor goes to the newest refusal (and the table scrolls to it): not
        # while the presenter has scrolled up to read
        self.scroll_to_new = True

    def reset(self) -> None:
        self._fresh.clear()
        self._counts.clear()
        self._groups.clear()
        self._seen_seq = 0

    def reasons(self) -> list[str]:
        """The reasons refused so far, in order of first appearance."""
        return list(dict.fromkeys(g.first.reason for g in self._groups.values()))

    def next_filter(self) -> None:
        """Show one reason, then the next, then all again."""
        reasons = self.reasons()
        at = reasons.index(self.reason_filter) if self.reason_filter in reasons else None
        if self.reason_filter is None:
            self.reason_filter = reasons[0] if reasons else None
        elif at is not None and at + 1 < len(reasons):
            self.reason_filter = reasons[at + 1]
        else:
            self.reason_filter = None

    def row_style(self, row_index: int) -> Style | None:
        rows = self.ordered_rows
        if row_index >= len(rows):
            return None
        key = rows[row_index].key.value
        return self.HIGHLIGHT if key in self._fresh else None

    def show(self, snap: Snapshot, lang: str, *, time_moved: bool) -> None:
        fresh_before = set(self._fresh)
        new = [r for r in snap.rejections if r.seq > self._seen_seq]
        if new:
            self._seen_seq = new[-1].seq
            for key, group in group_rejections(new).items():
                known = self._groups.get(key)
                if known is None:
                    self._groups[key] = group
                else:
                    known.last = group.last
                    known.count += group.count
            if len(self._groups) > MAX_REJECTED_ROWS:
                by_age = sorted(self._groups, key=lambda k: self._groups[k].last.seq)
                for key in by_age[:-MAX_REJECTED_ROWS]:
                    del self._groups[key]
                    self._counts.pop(key, None)
                    self._fresh.pop(key, None)
        if time_moved:
            for key in list(self._fresh):
                self._fresh[key] -= 1
                if self._fresh[key] <= 0:
                    del self._fresh[key]
        self.new_count = 0
        for key, group in self._groups.items():
            if self._counts.get(key) != group.count:
                self._counts[key] = group.count
                self._fresh[key] = HIGHLIGHT_REFRESHES
                self.new_count += 1
        rows: list[tuple[str, Row]] = []
        for key, group in self._groups.items():
            r = group.last
            if self.reason_filter is not None and r.reason != self.reason_filter:
                continue
            rows.append((key, rejection_cells(r, group.count, lang)))
        # a column nobody needs (no refused page, no repeat, one task only: the task table
        # names it) gives its width to the others, so a row fits 80 columns in Chinese too
        empty = {
            k
            for at, k in enumerate(REJECTED_COLUMNS)
            if k in ("page", "count") and not any(row[at] for _, row in rows)
        }
        if len(snap.tasks) <= 1:
            empty.add("task")
        labels = {
            "at": tr("time", lang),
            "worker": tr("worker", lang),
            "task": tr("task", lang),
            "op": tr("operation", lang),
            "page": tr("page_column", lang),
            "lease": tr("lease_column", lang),
            "fence": tr("fence_column", lang),
            "reason": tr("reason", lang),
            "count": tr("times_column", lang),
        }
        kept = [at for at, k in enumerate(REJECTED_COLUMNS) if k not in empty]
        columns = [(REJECTED_COLUMNS[at], labels[REJECTED_COLUMNS[at]]) for at in kept]
        columns, rows = _fenced(snap, columns, [(k, tuple(r[at] for at in kept)) for k, r in rows])
        self.set_columns(columns)
        self.sync(rows)
        restyled = fresh_before ^ set(self._fresh)
        if restyled:
            self.restyle_rows(restyled)
        if self.new_count and self.row_count and self.scroll_to_new:
            newest = max((k for k, _ in rows), key=lambda k: self._groups[k].last.seq, default=None)
            if newest is not None:
                self.move_cursor(row=self.get_row_index(newest), animate=False)


class EffectsTable(KeyedTable):
    """Side effects, one row per call as the register has it (when, who, under which fence
    token, what happened): a second application of the same call is its own row, marked,
    with what it cost. A snapshot without the calls (the fleet's) shows one row per key."""

    def show(self, snap: Snapshot, lang: str) -> None:
        if not snap.effect_calls and snap.effects:
            self._show_keys(snap, lang)
            return
        # a run that sends no idempotency key names the call, a key it does not carry
        keyed = policy_for(Mode(snap.mode)).idempotency
        columns = [
            ("at", tr("time", lang)),
            ("worker", tr("worker", lang)),
            ("task", tr("task", lang)),
            ("call", tr("key" if keyed else "call", lang)),
            ("fence", tr("fence_token", lang)),
            ("outcome", tr("effect_outcome", lang)),
        ]
        rows: list[tuple[str, Row]] = []
        for n, c in enumerate(snap.effect_calls):
            call = effect_call_words(c, lang)
            if c.deduplicated:
                outcome = Text(tr("effect_answered", lang), style="green")
            elif c.applied_times > 1:
                said = (
                    tr(
                        "effect_charged_2" if c.applied_times == 2 else "effect_charged",
                        lang,
                        n=c.applied_times,
                        amount=c.amount,
                    )
                    if c.amount is not None
                    else tr("effect_again", lang, n=c.applied_times)
                )
                outcome = Text("✗ " + said, style="bold red")
            else:
                outcome = Text(tr("effect_applied", lang), style="green")
            rows.append(
                (
                    str(n),
                    (
                        format_clock(c.at).removesuffix(".000"),
                        name_of(c.worker_id, lang),
                        task_name(c.task_id, lang),
                        call,
                        "" if c.fence_token is None else str(c.fence_token),
                        outcome,
                    ),
                )
            )
        if len(snap.tasks) <= 1:  # the task table names the one task
            columns, rows = columns[:2] + columns[3:], [(k, r[:2] + r[3:]) for k, r in rows]
        columns, rows = _fenced(snap, columns, rows)
        names = [name for name, _ in columns]
        if snap.effect_calls and all(c.fence_token is None for c in snap.effect_calls):
            # a service's charges carry no fence token (a payments tool takes none): no
            # column of blanks
            fence = names.index("fence") if "fence" in names else None
            if fence is not None:
                columns = columns[:fence] + columns[fence + 1 :]
                rows = [(k, r[:fence] + r[fence + 1 :]) for k, r in rows]
        self.set_columns(columns)
        self.sync(rows)

    def _show_keys(self, snap: Snapshot, lang: str) -> None:
        keyed = policy_for(Mode(snap.mode)).idempotency
        columns = [
            ("key", tr("key" if keyed else "call", lang)),
            ("task", tr("task", lang)),
            ("effect", tr("effect", lang)),
            ("fence", tr("fence_token", lang)),
            ("applied", tr("effect_applied", lang)),
            ("dedup", tr("effect_deduplicated", lang)),
        ]
        rows: list[tuple[str, Row]] = []
        for e in snap.effects:
            applied = Text(
                str(e.applied_count), style="bold red" if e.applied_count > 1 else "green"
            )
            rows.append(
                (
                    e.idempotency_key,
                    (
                        e.idempotency_key,
                        task_name(e.task_id, lang),
                        e.effect,
                        str(e.fence_token),
                        applied,
                        str(snap.dedup.get(e.idempotency_key, 0)),
                    ),
                )
            )
        if not keyed:
            columns, rows = columns[:-1], [(k, r[:-1]) for k, r in rows]
        columns, rows = _fenced(snap, columns, rows)
        self.set_columns(columns)
        self.sync(rows)


def event_line(ev: EventRow, lang: str) -> Text:
    """One line of the register as a sentence in the run's language, after its time."""
    return _append_event(Text(no_wrap=True, overflow="ellipsis"), ev, lang)


def _append_event(text: Text, ev: EventRow, lang: str) -> Text:
    text.append(f"{format_clock(ev.at)} ", style="dim")
    text.append(event_sentence(ev, lang), style=event_style(ev.event))
    return text


class EventLog(RichLog):
    """The loan register: new events are appended, never redrawn."""

    # Every write grows the log's virtual height. Widget's own `virtual_size` asks for a
    # layout when it changes, and Textual lays out the whole screen (~250 widgets) for it:
    # the writes' refreshes were two to three times the others. The log's height changes
    # nothing outside it, so it asks for a layout only when its scrollbars must change.
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def __init__(self, *, id: str | None = None, wrap: bool = False) -> None:
        # the log beside a panel is narrow: there an event wraps onto a second line rather
        # than hiding its worker and tokens behind a sideways scroll
        super().__init__(
            id=id,
            max_lines=2000,
            wrap=wrap,
            markup=False,
            auto_scroll=True,
            # RichLog renders at least 78 cells wide by default: wider than the log beside
            min_width=1 if wrap else 78,
        )
        self._waiting: list[EventRow] = []
        self._waiting_lang = "en"

    def append(self, events: list[EventRow], lang: str) -> None:
        if self.size.width <= 2:
            # just shown again, not yet laid out: sentences wrapped at no width lose their
            # Chinese characters (two cells each), so they wait for the log's width, which
            # a resize brings (asking again after every refresh spins while a parent hides it)
            self._waiting.extend(events)
            self._waiting_lang = lang
            del self._waiting[:-2000]
            return
        self._write(events, lang)

    def clear(self) -> Self:
        self._waiting.clear()
        return super().clear()

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        overflow = self.styles.overflow_y
        bar = overflow == "scroll" or (
            overflow == "auto" and new.height > self.container_size.height
        )
        if new.width != old.width or bar != self.show_vertical_scrollbar:
            # a scrollbar comes or goes, or lines got wider: that takes a layout
            self.refresh(layout=True)
        else:
            # the scrollbar that is there already: its thumb follows the new height
            self.vertical_scrollbar.window_virtual_size = new.height

    def on_resize(self, event: Resize) -> None:
        if self._waiting and event.size.width > 2:
            waiting, self._waiting = self._waiting, []
            self._write(waiting, self._waiting_lang)
        elif self.auto_scroll:
            # a log given fewer rows (the log beside, fitted to the body) keeps its newest
            # line in sight: its last scroll to the end was measured at the old height, and
            # on a loaded machine nothing else scrolls it again
            self.scroll_end(animate=False, immediate=True)

    def on_show(self) -> None:
        # Lines written while the log was hidden scrolled it to the end it had then (none):
        # opened at a step, it would show the run's first lines and keep the step's own, the
        # newest, below the fold.
        self.call_after_refresh(self.scroll_end, animate=False)

    def _write(self, events: list[EventRow], lang: str) -> None:
        # one write for the batch, a line per event: each write measures, renders and
        # scrolls the whole log, which made a burst of events the slowest refreshes; one
        # Text appended to, not a Text a line joined (joining copied every line's spans)
        text = Text(no_wrap=not self.wrap, overflow="fold" if self.wrap else "ellipsis")
        for i, ev in enumerate(events):
            if i:
                text.append("\n")
            _append_event(text, ev, lang)
        self.write(text)  # RichLog scrolls to the end after the next paint, as it is then
        if self.auto_scroll:
            # and at once, as it is now: waiting for the paint, the log was painted twice,
            # before its new lines scrolled into sight and after; the later scroll is left
            # for a layout that changes the log's height meanwhile, and moves nothing else
            self.scroll_end(animate=False, immediate=True, x_axis=False)
