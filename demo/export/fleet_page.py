"""`borrowed-keys export SAVED_FLEET_RUN`: a saved fleet run as one self-contained web page.

A fleet run has no script of steps: what it has is its history (the events table, the
store's final rows, the supervisor's signals, what each process said it held) and frames
of its screen. At each fault the supervisor caused, each refused or stale write and the
end, the page shows the fleet screen as it was then (the real screen, drawn headless from
the saved frame: `fleet_frames.py`), screen first and click to zoom as on a scenario's
page; beside it belief against truth as it stood then (the scenario page's own drawing),
what happened since in words, and the verdict of the whole history checked again. A run
saved before runs kept their frames gets the same page without the screens.
"""

import html
import json
from collections.abc import Sequence

from core.engine.records import EventRow
from core.fleet.history import SavedRun, shifted
from core.fleet.verdict import Finding, HistoryCheck
from core.scenarios.telling import event_sentence
from demo.export import DEFAULT_SIZE, timeline_svg
from demo.export.fleet_frames import Moment, Shot, heading, moments, record_fleet
from demo.export.frame_svg import SharedStyles, page_svg
from demo.export.page import CSP, LANG_TAGS
from demo.export.page import SCRIPT as SCENARIO_PLAYER
from demo.widgets.timeline_scale import clock

WORDS: dict[str, tuple[str, str]] = {
    "title": ("A run on real processes", "真实进程上的一局"),
    "summary": (
        "{workers} worker processes on one database, on the wall clock, with the database's "
        "clock judging every lease (a lease of {ttl} s). {events} lines in the events table; "
        "the supervisor acted on its workers {signals} times (a fault, or its undoing).",
        "{workers} 个执行者进程共用一个数据库，按墙上的时钟运行，每份租约由数据库的时钟裁决"
        "（租约 {ttl} 秒）。事件表里有 {events} 行；"
        "监督者对执行者动手 {signals} 次（施加故障或解除故障）。",
    ),
    "held": (
        "Verdict of the whole history, checked again: held. Every accepted page came from "
        "its task's current live lease with the newest fence token, and no two leases of a "
        "task were live at once.",
        "整段历史重新检查后的结论：守住了。每一页收下的写入都来自该任务当前有效的租约、"
        "带着最新的围栏令牌；同一任务没有两份租约同时有效。",
    ),
    "broken": (
        "Verdict of the whole history, checked again: broken, {n} times.",
        "整段历史重新检查后的结论：没有守住，共 {n} 处。",
    ),
    "finding": ("At {at}, {who}: {what}.", "{at}，{who}：{what}。"),
    "since": ("What the events table says since the moment before", "从上一刻起事件表里记下的"),
    "none_since": ("Nothing new in the events table.", "事件表里没有新的记录。"),
    "more": ("… and {n} lines more.", "……还有 {n} 行。"),
    "no_lease": ("No lease had been taken yet.", "还没有人领到租约。"),
    "made_with": (
        "Made from the saved history with {command}: each screen is the app's own fleet "
        "screen drawn from the frame it read at that moment, and the drawing beside it is "
        "the app's own belief against truth, replayed from that history.",
        "由保存的历史生成：{command}。每个画面都是应用自己的机群画面，用那一刻读到的那一帧重新画出；"
        "旁边的图是应用自己的“自以为与实际”，从那段历史重放出来。",
    ),
    "no_frames": (
        "This run was saved before runs kept frames of the screen: the page shows its "
        "history without the screen.",
        "这一局保存时还不保留画面的帧：本页只有它的历史，没有画面。",
    ),
    "zoom": (
        "Click a screen to zoom in; click again or Esc to zoom out.",
        "点画面放大；再点一下或按 Esc 还原。",
    ),
    "frame_label": ("The fleet screen at {at}", "{at} 时的机群画面"),
    "keys": (
        "← → step through the moments, space plays, l switches the language.",
        "← → 逐个时刻前后翻，空格自动播放，l 切换语言。",
    ),
    "prev": ("◀ Previous", "◀ 上一刻"),
    "play": ("▶ Play", "▶ 播放"),
    "next": ("Next ▶", "下一刻 ▶"),
    "slider": ("the moments", "各个时刻"),
}

MAX_LINES = 200  # the events in words under one moment; the rest is counted


def word(key: str, lang: str, **fmt: object) -> str:
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**fmt)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _finding(f: Finding, origin: int, lang: str) -> str:
    at = clock(max(0, f.at - origin)) if f.at else clock(0)
    return word("finding", lang, at=at, who=f.who(lang), what=f.what(lang))


def _verdict(check: HistoryCheck, origin: int, lang: str) -> str:
    if not check.findings:
        return f'<p class="verdict held">{_e(word("held", lang))}</p>'
    items = "".join(f"<li>{_e(_finding(f, origin, lang))}</li>" for f in check.findings[:50])
    said = word("broken", lang, n=len(check.findings))
    return f'<p class="verdict broken">{_e(said)}</p><ul class="findings">{items}</ul>'


def _head_part(run: SavedRun, check: HistoryCheck, lang: str, shots: list[Shot]) -> str:
    """The title, the summary and the verdict in `lang`."""
    workers = {ev.worker_id for ev in run.events if ev.worker_id}
    summary = word(
        "summary",
        lang,
        workers=len(workers),
        ttl=f"{run.ttl_ms / 1000:g}",
        events=len(run.events),
        signals=len(run.signals),
    )
    return "".join(
        [
            f'<div class="l" data-l="{lang}" lang="{LANG_TAGS[lang]}">',
            f"<h1>{_e(word('title', lang))}</h1>",
            f'<p class="summary">{_e(summary)}</p>',
            _verdict(check, run.origin, lang),
            f'<p class="note">{_e(word("zoom" if shots else "no_frames", lang))} '
            f"{_e(word('keys', lang))}</p>",
            "</div>",
        ]
    )


def _moment_part(
    run: SavedRun,
    lang: str,
    k: int,
    moment: Moment,
    shot: Shot | None,
    since: list[EventRow],
    shared: SharedStyles,
) -> str:
    """One moment in `lang`: the screen then, belief against truth beside it, the events
    since the moment before."""
    parts = [
        f'<div class="l" data-l="{lang}" lang="{LANG_TAGS[lang]}">',
        f'<h2><a href="#step-{k}">{_e(heading(moment, lang))}</a></h2>',
        '<div class="pair">',
    ]
    if shot is not None:
        label = _e(word("frame_label", lang, at=clock(max(0, shot.frame.at))))
        svg = shared.frame(page_svg(shot.svg, f"f{lang}{k}"))
        parts.append(f'<figure class="frame" aria-label="{label}">{svg}</figure>')
    view = run.timeline_at(moment.at)
    figure = timeline_svg.timeline_html(view, lang, f"fl-{lang}{k}")
    none = f"<p>{_e(word('no_lease', lang))}</p>"
    parts.append(f'<div class="belief">{figure or none}</div>')
    parts.append("</div>")  # .pair
    parts.append(f"<details><summary>{_e(word('since', lang))}</summary>")
    if not since:
        parts.append(f"<p>{_e(word('none_since', lang))}</p>")
    else:
        lines = "".join(
            f"<li>{_e(clock(ev.at))} {_e(event_sentence(ev, lang))}</li>"
            for ev in since[:MAX_LINES]
        )
        parts.append(f'<ol class="events">{lines}</ol>')
        if len(since) > MAX_LINES:
            parts.append(f"<p>{_e(word('more', lang, n=len(since) - MAX_LINES))}</p>")
    parts.append("</details></div>")
    return "".join(parts)


def _bar(langs: Sequence[str], total: int) -> str:
    """The scenario page's player bar (its script drives it), with a slider over the
    moments."""

    def each(key: str) -> str:
        return "".join(
            f'<span data-l="{lg}" lang="{LANG_TAGS[lg]}">{_e(word(key, lg))}</span>' for lg in langs
        )

    buttons = [
        f'<button class="prev" type="button">{each("prev")}</button>',
        f'<button class="play" type="button">{each("play")}</button>',
        f'<button class="next" type="button">{each("next")}</button>',
    ]
    if len(langs) > 1:
        buttons.append('<button class="lang" type="button">English / 中文</button>')
    return (
        f'<div class="bar">{"".join(buttons)}<span class="counter">0 / {total}</span>'
        f'<input class="slider" type="range" min="0" max="{total}" value="0" step="1" '
        f'aria-label="{_e(" / ".join(word("slider", lg) for lg in langs))}"></div>'
    )


CSS = """
body { font-family: system-ui, sans-serif; margin: 0; color: #1f2328; }
header, main, footer { padding: 0.5rem 1.5rem; }
.verdict { font-weight: bold; padding: .5em .8em; border-radius: 6px; }
.verdict.held { background: #dafbe1; }
.verdict.broken { background: #ffebe9; }
.step h2 { font-size: 1.1em; margin: .6em 0; }
h2 a { color: inherit; text-decoration: none; }
.note, .counter { color: #57606a; }
.bar { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; position: sticky;
  top: 0; background: #fff; padding: .3rem 0; z-index: 5; }
.bar .slider { flex: 1 1 12rem; }
button { font: inherit; border: 1px solid #d0d7de; border-radius: 4px; background: #f6f8fa;
  padding: 0.2rem 0.8rem; cursor: pointer; }
button.play.on { background: #dafbe1; }
html[data-lang="en"] [data-l="zh"], html[data-lang="zh"] [data-l="en"] { display: none; }
/* the timeline drawn beside the screen, below it on a narrow window */
.pair { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.pair .frame { flex: 3 1 36rem; margin: 0; min-width: 0; }
.pair .belief { flex: 1 1 18rem; min-width: 0; }
.frame svg.rich-terminal { display: block; width: 100%; height: auto; max-height: 82vh;
  cursor: zoom-in; }
.frame.zoomed { position: fixed; inset: 0; z-index: 10; overflow: auto; background: #fff;
  margin: 0; padding: .5em; }
.frame.zoomed svg.rich-terminal { width: 200%; max-height: none; cursor: zoom-out; }
ol.events { font-size: .9em; }
footer { color: #57606a; font-size: .9em; margin-top: 2em; }
@media print {
  .bar { display: none !important; }
  .step, .step[hidden] { display: block !important; break-after: page; }
}
"""

# One moment at a time, in the scenario page's own player (demo/export/page.py: the arrows,
# space plays, l switches the language, a click zooms a screen); the slider moves with it.
PLAYER = SCENARIO_PLAYER
SLIDER = """
(() => {
  const slider = document.querySelector("input.slider");
  if (!slider) return;
  const at = () => {
    const m = /^#step-(\\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : 0;
  };
  slider.addEventListener("input", () => {
    location.hash = "#step-" + slider.value;
  });
  // its own keys (the arrows, Home, End, the page keys) move it; l and space still reach
  // the player once the slider has the focus
  const own = /^(Arrow|Home$|End$|Page)/;
  slider.addEventListener("keydown", (ev) => { if (own.test(ev.key)) ev.stopPropagation(); });
  const follow = () => { slider.value = String(at()); };
  window.addEventListener("hashchange", follow);
  document.addEventListener("bk-step", (ev) => { slider.value = String(ev.detail); });
  follow();
})();
"""
PACE_MS = 3000  # the player's pace, a moment every three seconds


def build_fleet_page(
    run: SavedRun,
    langs: Sequence[str],
    *,
    command: str,
    size: tuple[int, int] = DEFAULT_SIZE,
) -> str:
    """The page: one moment on screen at a time, in the scenario page's player (arrows,
    space plays, `l` switches the language, a slider over the moments)."""
    check = run.check()
    first = langs[0]
    title = " · ".join(word("title", lg) for lg in langs)
    shots = record_fleet(run, check, langs, size)
    shared = SharedStyles()
    stops = {lg: moments(run, check, lg) for lg in langs}
    count = len(stops[first])
    events = [shifted(ev, run.origin) for ev in run.events]
    sections = []
    shown = 0
    for k in range(count):
        at = stops[first][k].at
        since = []
        while shown < len(events) and events[shown].at <= at:
            since.append(events[shown])
            shown += 1
        body = "".join(
            _moment_part(
                run,
                lg,
                k,
                stops[lg][k],
                shots[lg][k] if k < len(shots[lg]) else None,
                since,
                shared,
            )
            for lg in langs
        )
        sections.append(f'<section class="step" id="step-{k}">{body}</section>')
    footer = "".join(
        f'<p data-l="{lg}" lang="{LANG_TAGS[lg]}">'
        + _e(word("made_with", lg, command="\0")).replace("\0", f"<code>{_e(command)}</code>")
        + "</p>"
        for lg in langs
    )
    heads = "".join(_head_part(run, check, lg, shots[lg]) for lg in langs)
    data = (
        f"data-langs='{json.dumps(list(langs))}' data-pace-ms=\"{PACE_MS}\" "
        f'data-total="{max(0, count - 1)}"'
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f'<html lang="{LANG_TAGS[first]}" data-lang="{first}">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>{_e(title)}</title>",
            f"<style>{CSS}{timeline_svg.CSS}{shared.css()}</style>",
            "</head>",
            f"<body {data}>",
            shared.defs_svg(),
            f"<header>{heads}{_bar(langs, max(0, count - 1))}</header>",
            f"<main>{''.join(sections)}</main>",
            f"<footer>{footer}</footer>",
            f"<script>{PLAYER}{SLIDER}</script>",
            "</body></html>",
        ]
    )
