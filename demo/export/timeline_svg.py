"""Belief against truth on the exported page: the app's timeline panel drawn as SVG and HTML
from the same data (the snapshot's `TimelineView`), not a picture of the terminal.

Per worker three lanes on one time axis: the lease as the store holds it (a solid bar, its
renew deadline and expiry marked), the lease as the worker believes it holds it (hatched, red
where the store no longer holds it), and its heartbeats and calls; then one sentence a worker
and the legend, in the page's language, in the same words as the app.
"""

import html
from collections.abc import Callable

from rich.cells import cell_len

from core.scenarios import glossary
from core.sim.timeline import (
    Call,
    CallOutcome,
    FenceLine,
    LeaseEnd,
    Overlap,
    TickKind,
    TimelineView,
    WorkerRow,
)
from demo.i18n import tr
from demo.widgets.cjk_wrap import html_unbroken
from demo.widgets.timeline_scale import axis_end, axis_label, clock, make_scale
from demo.widgets.timeline_view import PALETTE, store_lanes
from demo.widgets.timeline_words import (
    ARROW,
    BEAT,
    LOST,
    OK,
    OVERLAP_STYLE,
    REFUSED,
    STALE,
    STORE,
    UNDELIVERED,
    legend_items,
    overlap_sentence,
    refusal_phrase,
    task_words,
    who,
    worker_sentence,
    write_words,
)

# The app's colour names as the page's dark theme draws them.
HEX = {
    "green": "#4ebf71",
    "cyan": "#58d1eb",
    "magenta": "#c678dd",
    "blue": "#61afef",
    "yellow": "#e5c07b",
    "bright_green": "#98c379",
    "bright_cyan": "#56b6c2",
}
RED = "#f4005f"
AMBER = "#fea62b"
DIM = "#9d9d9d"
FG = "#e0e0e0"

_X = Callable[[float], float]  # time to a horizontal position

WIDTH = 960
LABEL_W = 150
RIGHT = 16
AXIS_H = 22
LANE_H = 18
GAP = 10
LABEL_ROW = 13
# a store lane: the fence's step line, the arrows, two rows of their labels
STORE_H = 2 * LANE_H + 18 + LABEL_ROW

CSS = """
.belief { margin: 0.5rem 0 0; }
.belief svg { display: block; width: 100%; height: auto; }
.belief .said { margin: 0.3rem 0; }
.belief .quote { margin: 0.3rem 0; font-style: italic; }
.belief .legend { display: flex; flex-wrap: wrap; gap: 0.1rem 1rem; padding: 0; margin: 0.3rem 0;
  list-style: none; color: #9d9d9d; font-size: 0.85rem; }
.belief .legend b { font-weight: normal; font-family: "Fira Code", monospace; }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _legend_colour(style: str, colour: str) -> str:
    if "on red" in style:
        return RED
    if "red" in style:
        return RED
    if "yellow" in style:
        return AMBER
    if "green" in style:
        return HEX["green"]
    if "dim" in style:
        return DIM
    return colour


def timeline_html(view: TimelineView | None, lang: str, uid: str, caption: bool = False) -> str:
    """The drawing, the sentences and the legend as one <figure>; "" before any lease.

    `uid` keeps the drawing's pattern ids apart from every other frame's on the page;
    `caption`: the seed's sentence over it (the first drawing of a run)."""
    if view is None or not any(row.leases for row in view.rows):
        return ""
    rows = [row for row in view.rows if row.leases or row.calls]
    # a lane for each task written to: one task's token line never judges another's write
    lanes = store_lanes(view)
    colours = {row.worker_id: HEX[PALETTE[n % len(PALETTE)]] for n, row in enumerate(rows)}
    plot = WIDTH - LABEL_W - RIGHT
    scale = make_scale(view, plot, label_cells=56)
    end = axis_end(view)
    now = view.now_ms

    def x(at: float) -> float:
        return round(LABEL_W + min(max(at, 0), end) / end * plot, 1)

    block = 3 * LANE_H + GAP
    store_top = AXIS_H + block * len(rows)
    height = store_top + STORE_H * len(lanes) + 4
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img"'
        f' aria-label="{_e(tr("timeline", lang))}" font-family="system-ui, sans-serif"'
        ' font-size="12">',
        "<defs>",
    ]
    for worker, colour in colours.items():
        for kind, stroke in (("b", colour), ("g", RED)):
            out.append(
                f'<pattern id="{uid}-{kind}-{_e(worker)}" width="6" height="6"'
                ' patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
                f'<rect width="6" height="6" fill="{stroke}" fill-opacity="0.15"/>'
                f'<line x1="0" y1="0" x2="0" y2="6" stroke="{stroke}" stroke-width="3"/>'
                "</pattern>"
            )
    out.append("</defs>")
    for _cell, at in scale.labels():
        if at > end:
            break
        out.append(
            f'<line x1="{x(at)}" y1="{AXIS_H - 4}" x2="{x(at)}" y2="{height}" stroke="#333"/>'
            f'<text x="{x(at)}" y="{AXIS_H - 8}" fill="{DIM}" text-anchor="middle">'
            f"{_e(axis_label(at))}</text>"
        )
    lane_words = (tr("tl_store", lang), tr("tl_believes", lang), tr("tl_calls", lang))
    for n, row in enumerate(rows):
        top = AXIS_H + n * block
        colour = colours[row.worker_id]
        for k, lane in enumerate(lane_words):
            name = who(row.worker_id, lang) if k == 0 else ""
            out.extend(lane_labels(name, lane, top + k * LANE_H, colour))
        out.extend(_store(row, top, colour, now, x, lang))
        out.extend(_overlaps(row, view.overlaps, top, now, x, lang))
        out.extend(_beliefs(row, top + LANE_H, uid, now, x))
        out.extend(_marks(row, top + 2 * LANE_H, x, lang))
    index = {row.worker_id: n for n, row in enumerate(rows)}
    for k, (fence, writes) in enumerate(lanes):
        top = store_top + k * STORE_H
        out.extend(_store_lane(fence, writes, index, block, top, now, x, lang))
    out.append(
        f'<line x1="{x(now)}" y1="{AXIS_H - 4}" x2="{x(now)}" y2="{height}" stroke="{FG}"'
        ' stroke-dasharray="3 2"/>'
        f'<text x="{x(now) - 4}" y="{height - 2}" fill="{FG}" text-anchor="end"'
        f' font-weight="bold">{_e(tr("tl_now", lang, at=clock(now)))}</text>'
    )
    out.append("</svg>")
    sentences = [overlap_sentence(o, now, lang) for o in view.overlaps] + [
        s for row in rows if (s := worker_sentence(row, now, lang)) is not None
    ]
    said = "".join(
        f'<p class="said">{html_unbroken(s, _e) if lang == "zh" else _e(s)}</p>' for s in sentences
    )
    legend = "".join(
        f'<li><b style="color:{_legend_colour(style, FG)}">{_e(glyph)}</b> {_e(words)}</li>'
        for glyph, style, words in legend_items(lang)
        if (glyph != ARROW or lanes) and (glyph != STORE or style != OVERLAP_STYLE or view.overlaps)
    )
    seed = tr("tl_caption", lang)
    quote = seed if not caption else html_unbroken(seed, _e) if lang == "zh" else _e(seed)
    quote = f'<p class="quote">{quote}</p>' if caption else ""
    return (
        f'<figure class="belief" aria-label="{_e(tr("timeline", lang))}">'
        + quote
        + "".join(out)
        + f'<figcaption>{said}<ul class="legend">{legend}</ul></figcaption></figure>'
    )


def _title(text: str) -> str:
    return f"<title>{_e(text)}</title>"


def _store(row: WorkerRow, top: int, colour: str, now: int, x: _X, lang: str) -> list[str]:
    out = []
    for lease in row.leases:
        until = now if lease.end is None else lease.end
        width = max(1.5, x(until) - x(lease.start))
        out.append(
            f'<rect x="{x(lease.start)}" y="{top + 3}" width="{width:.1f}" height="{LANE_H - 6}"'
            f' fill="{colour}">{_title(_lease_words(lease.lease_token, lang))}</rect>'
        )
        if lease.end is None and lease.expires_at is not None and lease.expires_at > now:
            out.append(
                f'<rect x="{x(now)}" y="{top + 3}" width="{x(lease.expires_at) - x(now):.1f}"'
                f' height="{LANE_H - 6}" fill="{colour}" fill-opacity="0.3"/>'
            )
        shown = lease.end is None or lease.ended_by is LeaseEnd.EXPIRED
        if shown and lease.renew_deadline is not None:
            out.append(
                _tick(
                    x(lease.renew_deadline), top, AMBER, tr("tl_legend_deadline", lang), dash=True
                )
            )
        expiry = lease.expires_at if lease.end is None else lease.end
        if expiry is not None and (lease.end is None or lease.ended_by is LeaseEnd.EXPIRED):
            out.append(_tick(x(expiry), top, AMBER, tr("tl_legend_expiry", lang)))
    return out


def _lease_words(token: int, lang: str) -> str:
    return f"{glossary.token_word('lease', lang)} {token}"


def _tick(at: float, top: int, colour: str, words: str, *, dash: bool = False) -> str:
    style = ' stroke-dasharray="2 2"' if dash else ""
    return (
        f'<line x1="{at}" y1="{top}" x2="{at}" y2="{top + LANE_H}" stroke="{colour}"'
        f' stroke-width="2"{style}>{_title(words)}</line>'
    )


def _beliefs(row: WorkerRow, top: int, uid: str, now: int, x: _X) -> list[str]:
    out = []
    for belief in row.beliefs:
        until = now if belief.end is None else belief.end
        lease = next(
            (
                bar
                for bar in row.leases
                if bar.task_id == belief.task_id and bar.lease_token == belief.lease_token
            ),
            None,
        )
        # held by the store up to the lease's end; past it, the gap, in red
        held_until = until if lease is None or lease.end is None else min(until, lease.end)
        if lease is not None and lease.ended_by is LeaseEnd.OVERRIDDEN:
            # claimed over while live: by the store's clock it still was, to its expiry
            live_to = until if lease.expires_at is None else min(until, lease.expires_at)
            held_until = max(held_until, live_to)
        if lease is None:
            held_until = belief.start
        spans = [(belief.start, held_until, "b"), (held_until, until, "g")]
        for start, stop, kind in spans:
            if stop <= start:
                continue
            out.append(
                f'<rect x="{x(start)}" y="{top + 3}" width="{max(1.5, x(stop) - x(start)):.1f}"'
                f' height="{LANE_H - 6}" fill="url(#{uid}-{kind}-{_e(row.worker_id)})"/>'
            )
    return out


def _marks(row: WorkerRow, top: int, x: _X, lang: str) -> list[str]:
    out = []
    y = top + 13
    for tick in row.ticks:
        delivered = tick.kind is TickKind.DELIVERED
        glyph, colour = (BEAT, HEX["green"]) if delivered else (LOST, AMBER)
        words = tr("tl_legend_beat" if delivered else "tl_legend_lost", lang)
        out.append(_glyph(x(tick.at), y, glyph, colour, f"{clock(tick.at)} {words}"))
    for call in row.calls:
        op = tr(f"tl_op_{call.operation.value}", lang)
        if call.outcome is CallOutcome.ACCEPTED:
            out.append(_glyph(x(call.at), y, OK, HEX["green"], f"{clock(call.at)} {op}"))
        elif call.outcome is CallOutcome.REFUSED:
            why = refusal_phrase(call.reason, call.fence_token, call.current_fence_token, lang)
            words = f"{clock(call.at)} {op}: {tr('tl_legend_refused', lang)} ({why})"
            out.append(_glyph(x(call.at), y, REFUSED, AMBER, words))
        elif call.outcome is CallOutcome.STALE:
            at = x(call.at)
            words = f"{clock(call.at)} {op}: {tr('tl_legend_stale', lang)}"
            out.append(
                f'<rect x="{at - 6}" y="{top + 1}" width="12" height="{LANE_H - 2}" fill="{RED}">'
                f"{_title(words)}</rect>"
                f'<text x="{at}" y="{y}" fill="#fff" text-anchor="middle"'
                f' font-weight="bold">{STALE}</text>'
            )
        else:
            words = f"{clock(call.at)} {op}: {tr('tl_legend_undelivered', lang)}"
            out.append(_glyph(x(call.at), y, UNDELIVERED, DIM, words))
    return out


def _glyph(at: float, y: int, glyph: str, colour: str, words: str) -> str:
    return (
        f'<text x="{at}" y="{y}" fill="{colour}" text-anchor="middle">{_e(glyph)}'
        f"{_title(words)}</text>"
    )


def _overlaps(
    row: WorkerRow, overlaps: tuple[Overlap, ...], top: int, now: int, x: _X, lang: str
) -> list[str]:
    """Two live leases at once: this row's part of the interval they share, in red."""
    out = []
    for o in overlaps:
        ours = row.worker_id in (o.older_worker, o.newer_worker)
        if not ours:
            continue
        end = now if o.end is None else o.end
        out.append(
            f'<rect x="{x(o.start)}" y="{top + 1}" width="{max(1.5, x(end) - x(o.start)):.1f}"'
            f' height="{LANE_H - 2}" fill="{RED}">{_title(overlap_sentence(o, now, lang))}</rect>'
        )
    return out


def _write_colour(call: Call) -> str:
    if call.outcome is CallOutcome.STALE:
        return RED
    if call.outcome is CallOutcome.REFUSED:
        return AMBER
    return HEX["green"] if call.outcome is CallOutcome.ACCEPTED else DIM


def _store_lane(
    fence: FenceLine,
    writes: list[tuple[str, Call]],
    index: dict[str, int],
    block: int,
    top: int,
    now: int,
    x: _X,
    lang: str,
) -> list[str]:
    """Kleppmann's figure: the newest fence token as a step line, each write an arrow from
    its writer's calls lane into it, labelled with its token against the newest."""
    line_y = top + LANE_H
    out = lane_labels(task_words(fence.task_id, lang), tr("tl_fence_lane", lang), top, FG)
    points = []
    for n, (start, token) in enumerate(fence.steps):
        stop = fence.steps[n + 1][0] if n + 1 < len(fence.steps) else now
        # the line rises a step with each newer token
        y = line_y - min(n, 3) * 4
        points.append(f"{x(start)},{y} {x(max(start, stop))},{y}")
        out.append(
            f'<text x="{x(start) + 2}" y="{y - 3}" fill="{HEX["cyan"]}" font-weight="bold">'
            f"{token}</text>"
        )
    out.append(
        f'<polyline points="{" ".join(points)}" fill="none" stroke="{FG}" stroke-width="2"/>'
    )
    for writer, call in writes:
        at = x(call.at)
        start_y = AXIS_H + index.get(writer, 0) * block + 3 * LANE_H - 2
        colour = _write_colour(call)
        words = write_words(call, lang)
        tip = line_y - 2
        out.append(
            f'<g><line x1="{at}" y1="{start_y}" x2="{at}" y2="{tip - 5}" stroke="{colour}"'
            f' stroke-width="1.5"/><path d="M{at - 4},{tip - 6} L{at + 4},{tip - 6} L{at},{tip} z"'
            f' fill="{colour}"/>{_title(f"{clock(call.at)} {who(writer, lang)}: {words}")}</g>'
        )
    for at, row, colour, words in _write_labels(writes, x, lang):
        out.append(
            f'<text x="{at}" y="{line_y + 16 + row * LABEL_ROW}" fill="{colour}"'
            f' text-anchor="middle" font-size="11">{_e(words)}</text>'
        )
    return out


def text_px(text: str, size: float = 12) -> float:
    """About how wide `text` is drawn: a cell is six tenths of the font size."""
    return cell_len(text) * size * 0.6


def lane_labels(name: str, lane: str, top: int, colour: str) -> list[str]:
    """A lane's name at the left, its lane word at the right of the label column, never
    running into each other: a name too long for the room left is cut short with "…"."""
    room = LABEL_W - 6 - 4 - text_px(lane) - 8
    if text_px(name) > room:
        while name and text_px(name + "…") > room:
            name = name[:-1]
        name += "…"
    out = [
        f'<text x="{LABEL_W - 6}" y="{top + 13}" fill="{DIM}" text-anchor="end">{_e(lane)}</text>'
    ]
    if name:
        out.insert(
            0, f'<text x="4" y="{top + 13}" fill="{colour}" font-weight="bold">{_e(name)}</text>'
        )
    return out


def _write_labels(
    writes: list[tuple[str, Call]], x: _X, lang: str
) -> list[tuple[float, int, str, str]]:
    """(x, row, colour, words) of each write's label: the harms placed first, each centred
    under its arrow on the first of two rows where it runs into no label placed before it;
    one with room on neither is left to its arrow's title."""
    rank = {CallOutcome.STALE: 0, CallOutcome.REFUSED: 1}
    placed: list[tuple[float, int, str, str]] = []
    taken: list[list[tuple[float, float]]] = [[], []]
    for _writer, call in sorted(writes, key=lambda wc: rank.get(wc[1].outcome, 2)):
        words = write_words(call, lang)
        half = text_px(words, 11) / 2 + 4
        at = min(max(x(call.at), LABEL_W + half), WIDTH - half)
        for row, spans in enumerate(taken):
            if all(at + half <= low or at - half >= high for low, high in spans):
                spans.append((at - half, at + half))
                placed.append((at, row, _write_colour(call), words))
                break
    return placed
