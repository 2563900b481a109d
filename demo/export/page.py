"""One self-contained HTML page from the frames of a scenario: narration, checks, questions.

Nothing on the page asks the network for anything: the app's SVG frames are inlined with
their web-font links taken out (the fonts are named by `local()` only, the browser falls
back to its own monospace and CJK fonts), the style and the script are inline, and the
page's Content-Security-Policy forbids every fetch, so a link that slipped in would be
refused, not followed. Without its script the page still reads: every step in order.
"""

import html
import json
from collections.abc import Callable, Sequence

from core.scenarios import glossary
from core.scenarios.format import Scenario
from core.scenarios.sentences import timing_warnings
from demo.export import timeline_svg
from demo.export.frame_svg import SharedStyles, changes, marked, page_svg
from demo.export.frames import Frame, Recording
from demo.i18n import label, tr
from demo.screens.main import AUTOPLAY_S
from demo.widgets.cjk_wrap import html_unbroken

# The page's own words; the app's (Next, Reveal, Step k of n, ...) come from demo.i18n.
WORDS: dict[str, tuple[str, str]] = {
    "steps": ("Steps", "步骤"),
    "start": ("Before the first step", "第一步之前"),
    "start_say": (
        "The scenario as it begins, before its first step.",
        "场景开始时的样子，还没走第一步。",
    ),
    "play": ("Play", "播放"),
    "keys": (
        "← → or PgUp PgDn: step · space: play · v: reveal · l: language",
        "← → 或 PgUp PgDn：翻步 · 空格：播放 · v：揭晓 · l：语言",
    ),
    "keys_one_lang": (
        "← → or PgUp PgDn: step · space: play · v: reveal",
        "← → 或 PgUp PgDn：翻步 · 空格：播放 · v：揭晓",
    ),
    "made_with": (
        "Made by the app itself with {command}, in {meaning}. Every frame is the "
        "app's own screen at that step, and every ✓ was checked in that run.",
        "由应用本身生成：{command}，{meaning}。每一帧都是应用在那一步的真实画面，"
        "每个 ✓ 都是那一局里实际检查过的。",
    ),
    "frame_label": ("The app's screen after step {k}", "第 {k} 步之后应用的画面"),
    "before_label": (
        "The app's screen before this step: the answer comes with Reveal",
        "这一步之前应用的画面：揭晓之后才出答案",
    ),
    "changed": (
        "Outlined in orange: what changed on the screen since the step before.",
        "橙色框：与上一步相比，画面上变了的地方。",
    ),
    "zoom": (
        "Click the screen to zoom in; click again or Esc to zoom out.",
        "点画面放大；再点一下或按 Esc 还原。",
    ),
    "found": ("found", "实际"),
}

LANG_TAGS = {"en": "en", "zh": "zh-Hans"}


def word(key: str, lang: str, **fmt: object) -> str:
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**fmt)


_STYLES_HERE = "\x00styles\x00"  # no text of the page holds a NUL


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _label(word: str, lang: str) -> str:
    """A bold label and the space after it, if its language puts one: "Answer: ", "答案："."""
    said = label(word, lang)
    return f"<b>{_e(said.rstrip())}</b>" + said[len(said.rstrip()) :]


def _t(text: str, lang: str) -> str:
    """Prose for the browser to wrap: in Chinese a number keeps its word and unit."""
    return html_unbroken(text, _e) if lang == "zh" else _e(text)


def _step_label(frame: Frame, lang: str) -> str:
    if frame.index == 0:
        return word("start", lang)
    said = frame.narration or ""
    cut = 44 if lang == "en" else 24
    return said if len(said) <= cut else said[: cut - 1].rstrip() + "…"


def _question_html(frame: Frame, lang: str) -> tuple[str, str]:
    """The question and its choices (shown first), and the answer and why (revealed)."""
    q = frame.question
    if q is None:
        return "", ""
    choices = q.choices_in(lang)
    items = "".join(
        f'<li class="choice{" right" if n == q.answer else ""}">{_t(c, lang)}</li>'
        for n, c in enumerate(choices, start=1)
    )
    asked = (
        f'<div class="question"><p class="ask">{_label(tr("question", lang), lang)}'
        f"{_t(q.text(lang), lang)}</p>"
        + (f"<ol>{items}</ol>" if items else "")
        + f'<p class="hint">{_e(tr("question_n", lang))}</p>'
        f'<button type="button" class="reveal">{_e(tr("reveal", lang))} (v)</button>'
        "</div>"
    )
    answer = ""
    right = q.right_choice(lang)
    if right is not None:
        said = f"{_label(tr('answer', lang), lang)}{q.answer}. {_t(right, lang)} ✓"
        answer += f'<p class="answer">{said}</p>'
    why = q.why_in(lang)
    if why:
        answer += f'<p class="why">{_t(why, lang)}</p>'
    follow = q.follow_up
    if follow is not None:
        # the interviewer's pushback, after the answer, as the player prints it
        answer += (
            f'<p class="ask">{_label(tr("follow_up", lang), lang)}{_t(follow.text(lang), lang)}</p>'
        )
        right = follow.right_choice(lang)
        if right is not None:
            said = f"{_label(tr('answer', lang), lang)}{follow.answer}. {_t(right, lang)} ✓"
            answer += f'<p class="answer">{said}</p>'
        why = follow.why_in(lang)
        if why:
            answer += f'<p class="why">{_t(why, lang)}</p>'
    return asked, answer


def _step_html(
    frame: Frame,
    lang: str,
    total: int,
    shared: SharedStyles,
    before: str | None,
    caption: bool = False,
) -> tuple[str, str]:
    """The step's part of the page in `lang`, and its frame as the page draws it (before
    the outlines): `before` is the frame of the step before, as this returned it;
    `caption`: the first drawing of belief against truth carries the seed's sentence."""
    k = frame.index
    asked, answer = _question_html(frame, lang)
    parts = [f'<div class="l" data-l="{lang}" lang="{LANG_TAGS[lang]}">', '<div class="text">']
    heading = tr("step_k_of_n", lang, k=k, n=total)
    parts.append(f'<h2><a href="#step-{k}">{_e(heading)}</a></h2>')
    parts.append(asked)
    parts.append('<div class="after">')
    parts.append(answer)
    if k == 0:
        parts.append(f'<p class="say">{_e(word("start_say", lang))}</p>')
    if frame.narration:
        parts.append(f'<p class="say">{_t(frame.narration, lang)}</p>')
    if frame.refusal:
        parts.append(f'<p class="refusal">{_t(frame.refusal, lang)}</p>')
    if frame.checks:
        items = []
        for c in frame.checks:
            found = (
                f' <span class="found">({_e(tr("label", lang, word=word("found", lang)))}'
                f"{_e(c.found)})</span>"
                if c.found
                else ""
            )
            mark, cls = ("✓", "ok") if c.ok else ("✗", "bad")
            sentence = _t(c.sentence, lang)
            items.append(
                f'<li class="{cls}"><span class="mark">{mark}</span> {sentence}{found}</li>'
            )
        parts.append(f'<ul class="checks">{"".join(items)}</ul>')
    if k == total:
        parts.append(f'<p class="end">{_e(tr("end_of_script", lang))}</p>')
    if frame.report:  # the end of the run, as the app's narration says it
        lines = "".join(f'<p class="{kind}">{_t(line, lang)}</p>' for line, kind in frame.report)
        parts.append(f'<div class="report">{lines}</div>')
    parts.append("</div></div>")  # .after, .text
    label = _e(word("frame_label", lang, k=k))
    drawn = shared.frame(page_svg(frame.svg, f"{lang}{k}"))
    svg = drawn if before is None else marked(drawn, changes(before, drawn))
    belief = timeline_svg.timeline_html(frame.timeline, lang, f"tl-{lang}{k}", caption)
    parts.append(f'<figure class="frame after" aria-label="{label}">{svg}{belief}</figure>')
    if frame.question is not None:
        # while the question waits, the screen it is asked about: the page's script puts the
        # previous step's frame here (a copy in the file would cost a frame's bytes)
        said = _e(word("before_label", lang))
        parts.append(
            f'<figure class="frame before" aria-label="{said}" data-from="{k - 1}">'
            f"<figcaption>{said}</figcaption></figure>"
        )
    parts.append("</div>")
    return "".join(parts), drawn


CSS = """
@font-face { font-family: "Fira Code"; src: local("FiraCode-Regular"), local("Fira Code");
  font-weight: 400; }
@font-face { font-family: "Fira Code"; src: local("FiraCode-Bold"), local("Fira Code Bold");
  font-weight: 700; }
:root { color-scheme: dark; --bg: #121212; --fg: #e0e0e0; --dim: #9d9d9d; --ok: #4ebf71;
  --bad: #f4005f; --accent: #58d1eb; --q: #fea62b; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, "Noto Sans CJK SC", sans-serif; }
header, footer, nav, main { padding: 0.5rem 1.5rem; }
h1 { margin: 0.5rem 0 0.25rem; font-size: 1.6rem; }
.summary { margin: 0 0 0.5rem; color: var(--dim); max-width: 70rem; }
.report { margin: 0.75rem 0; padding: 0.25rem 0.75rem; border-left: 3px solid var(--q); }
.report p { margin: 0.1rem 0; } .report .title, .report .bill { font-weight: 700; }
.report .anomaly { color: var(--bad); font-weight: 700; } .report .twin { color: var(--ok); }
.report .line { font-family: "Fira Code", monospace; white-space: pre-wrap; }
.report .note { color: var(--dim); }
.warning { margin: 0 0 0.5rem; color: #b58900; font-weight: bold; max-width: 70rem; }
.bar { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
button { font: inherit; color: var(--fg); background: #2a2a2a; border: 1px solid #444;
  border-radius: 4px; padding: 0.2rem 0.8rem; cursor: pointer; }
button:hover, button:focus-visible { border-color: var(--accent); }
.counter { color: var(--dim); }
.keys { color: var(--dim); font-size: 0.85rem; }
nav ol { display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; margin: 0; padding: 0;
  list-style: none; font-size: 0.85rem; }
nav a { color: var(--dim); text-decoration: none; }
nav summary { cursor: pointer; }
nav a.current { color: var(--accent); font-weight: bold; }
a { color: var(--accent); }
.l { display: flex; flex-direction: column; gap: 0.5rem; }
.text { max-width: 70rem; }
.frame { order: -1; margin: 0; width: 100%; }
.frame svg.rich-terminal { display: block; width: 100%; height: auto; max-height: 82vh;
  cursor: zoom-in; }
.frame.zoomed { position: fixed; inset: 0; z-index: 10; overflow: auto; background: var(--bg);
  padding: 0.5rem; }
.frame.zoomed svg.rich-terminal { width: 200%; max-height: none; cursor: zoom-out; }
.frame.zoomed .belief { display: none; }
.changed rect { fill: #fea62b; fill-opacity: 0.14; stroke: #fea62b; stroke-width: 2.5;
  height: 24.4px; }
.changes-legend { color: var(--dim); font-size: 0.85rem; }
.frame.before { display: none; }
.frame.before figcaption { color: var(--q); font-size: 0.85rem; }
.step[data-question]:not(.open) .frame.before { display: block; }
h2 { font-size: 1.1rem; margin: 0.25rem 0; }
h2 a { color: var(--fg); text-decoration: none; }
.say { font-style: italic; }
.nb { white-space: nowrap; }
.refusal { color: var(--bad); }
.checks { list-style: none; padding: 0; }
.checks li { margin: 0.2rem 0; }
.ok .mark { color: var(--ok); font-weight: bold; }
.bad .mark, .found { color: var(--bad); font-weight: bold; }
.question { border-left: 3px solid var(--q); padding-left: 0.75rem; }
.ask b, .answer b { color: var(--q); }
.answer { color: var(--ok); }
.hint, .end { color: var(--dim); }
.hint.nudge { color: var(--q); animation: nudge 0.6s; }
@keyframes nudge { 0%, 100% { transform: none; } 25%, 75% { transform: translateX(4px); } }
.step[data-question] .after { display: none; }
.step[data-question].open .after { display: block; }
.step[data-question].open .question .hint,
.step[data-question].open .question button { display: none; }
.step[data-question].open .choice.right { color: var(--ok); font-weight: bold; }
.step[data-question].open .frame.after { display: block; }
html[data-lang="en"] [data-l="zh"], html[data-lang="zh"] [data-l="en"] { display: none; }
footer { color: var(--dim); font-size: 0.85rem; border-top: 1px solid #333; margin-top: 1rem; }
code { font-family: "Fira Code", monospace; }
@media print {
  @page { size: A4 landscape; margin: 10mm; }
  body { background: #fff; color: #000; font-size: 9.5pt; line-height: 1.35; }
  header, main { padding: 0; }
  p, ul, ol { margin: 0.3em 0; }
  .bar, nav, .keys, .hint, .question button { display: none !important; }
  .step, .step[hidden] { display: block !important; break-after: page; break-inside: avoid; }
  .step:last-of-type { break-after: auto; }
  .step .after, .step .frame.after { display: block !important; }
  .step .frame.before, .changes-legend { display: none !important; }
  /* landscape paper: the screen and its words side by side */
  .l { flex-direction: row; align-items: flex-start; gap: 4mm; }
  .frame { order: 0; flex: 0 0 58%; width: 58%; }
  footer { margin: 0; padding: 0; border: 0; font-size: 7pt; }
  .text { flex: 1 1 0; min-width: 0; }
  /* a step stays on one sheet: the screen and the drawing of belief under it, with its
     caption, fit 190 mm of A4 less its margins, and the footer fits after the last step */
  .frame svg.rich-terminal { max-height: 110mm; }
  .frame .belief figcaption { font-size: 7.5pt; line-height: 1.25; }
  .summary, .counter, footer, .end { color: #333; }
  h2 a { color: #000; }
}
"""

# The reader: one step on screen; a question's answer and frame wait for Reveal (or v).
SCRIPT = """
(() => {
  const steps = Array.from(document.querySelectorAll("section.step"));
  // the page opens at its top: with the ids gone the browser has no fragment to scroll to
  // (the script shows the step instead); without the script a link still jumps to its step
  steps.forEach((s) => s.removeAttribute("id"));
  const links = Array.from(document.querySelectorAll("nav a"));
  const counter = document.querySelector(".counter");
  const playButton = document.querySelector("button.play");
  const langs = JSON.parse(document.body.dataset.langs);
  const pace = Number(document.body.dataset.paceMs);
  const total = Number(document.body.dataset.total);
  let at = -1, timer = null;
  function show(i) {
    i = Math.max(0, Math.min(steps.length - 1, i));
    if (i !== at) { steps[i].classList.remove("open"); resume = false; }  // asked again
    steps.forEach((s, j) => { s.hidden = j !== i; });
    before(steps[i]);
    links.forEach((a, j) => a.classList.toggle("current", j === i));
    at = i;
    counter.textContent = `${i} / ${total}`;
    if (location.hash !== "#step-" + i) history.replaceState(null, "", "#step-" + i);
    // replaceState fires no hashchange: a page's own controls (the fleet page's slider)
    // follow the step shown by this event
    document.dispatchEvent(new CustomEvent("bk-step", { detail: i }));
  }
  function before(step) {  // a question's screen: the one of the step before, until Reveal
    step.querySelectorAll("figure.frame.before").forEach((fig) => {
      if (fig.querySelector("svg")) return;
      const lang = fig.closest("[data-l]").dataset.l;
      const from = steps[Number(fig.dataset.from)].querySelector(
        `[data-l="${lang}"] figure.frame.after svg.rich-terminal`);
      if (!from) return;
      const copy = from.cloneNode(true);
      copy.querySelectorAll("g.changed").forEach((g) => g.remove());
      fig.insertBefore(copy, fig.firstChild);
    });
  }
  function zoom(fig) {
    document.querySelectorAll("figure.zoomed").forEach((f) => {
      if (f !== fig) f.classList.remove("zoomed");
    });
    if (fig) fig.classList.toggle("zoomed");
  }
  const waiting = () => steps[at].hasAttribute("data-question") &&
    !steps[at].classList.contains("open");
  let resume = false;  // auto-play stopped at this question: revealing it plays on
  function reveal() {
    if (!waiting()) return;
    steps[at].classList.add("open");
    if (resume) { resume = false; start(); }  // the revealed step stays a full beat
  }
  function nudge() {  // as in the app, n by habit does not give the answer away
    const hint = steps[at].querySelectorAll(".hint");
    hint.forEach((h) => {
      h.classList.remove("nudge");
      void h.offsetWidth;  // restart the animation
      h.classList.add("nudge");
    });
  }
  function next() {
    if (waiting()) { nudge(); return false; }
    if (at + 1 < steps.length) { show(at + 1); return true; }
    return false;
  }
  function stop() { clearInterval(timer); timer = null; playButton.classList.remove("on"); }
  function start() {
    playButton.classList.add("on");
    timer = setInterval(() => {
      if (waiting()) { stop(); resume = true; return; }  // a question stops the run
      if (!next()) stop();
    }, pace);
  }
  function play() {
    resume = false;
    if (timer !== null) stop(); else start();
  }
  function toggleLang() {
    if (langs.length < 2) return;
    const now = document.documentElement.dataset.lang;
    const lang = langs[(langs.indexOf(now) + 1) % langs.length];
    document.documentElement.dataset.lang = lang;
    document.documentElement.lang = lang === "zh" ? "zh-Hans" : "en";
  }
  const fromHash = () => {
    const m = /^#step-(\\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : 0;
  };
  document.addEventListener("click", (ev) => {
    const fig = ev.target.closest("figure.frame");
    if (fig && ev.target.closest("svg.rich-terminal, figure.zoomed")) { zoom(fig); return; }
    const b = ev.target.closest("button");
    if (!b) return;
    b.blur();  // the keys stay the page's: space plays, it does not press this button again
    if (b.classList.contains("reveal")) reveal();
    else if (b.classList.contains("next")) next();
    else if (b.classList.contains("prev")) show(at - 1);
    else if (b.classList.contains("play")) play();
    else if (b.classList.contains("lang")) toggleLang();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    if (k === "Escape" && document.querySelector("figure.zoomed")) { zoom(null); return; }
    if (k === "ArrowRight" || k === "PageDown" || k === "n") next();
    else if (k === "ArrowLeft" || k === "PageUp" || k === "p") show(at - 1);
    else if (k === " ") play();
    else if (k === "v") reveal();
    else if (k === "l") toggleLang();
    else if (k === "Home") show(0);
    else if (k === "End") show(steps.length - 1);
    else return;
    ev.preventDefault();
  });
  window.addEventListener("hashchange", () => show(fromHash()));
  show(fromHash());
  // a permalink opens its step, and the page at its top: the screen and the bar in view
  history.scrollRestoration = "manual";
  window.scrollTo(0, 0);
  window.addEventListener("load", () => window.scrollTo(0, 0));
})();
"""

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; font-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
)


def build_page(scenario: Scenario, recordings: Sequence[Recording], *, command: str) -> str:
    """The page: `recordings` are the same scenario's frames, one per language."""
    langs = [r.lang for r in recordings]
    first = langs[0]
    total = len(scenario.steps)  # a page of the first steps only still says "of N"
    mode = scenario.settings.mode.value

    def each(make: Callable[[str], str], tag: str = "span") -> str:
        return "".join(
            f'<{tag} data-l="{lg}" lang="{LANG_TAGS[lg]}">{make(lg)}</{tag}>' for lg in langs
        )

    out = [
        "<!DOCTYPE html>",
        f'<html lang="{LANG_TAGS[first]}" data-lang="{first}">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="description" content="{_e(scenario.summary_in(first) or "")}">',
        # an empty icon: on a web host the browser would otherwise ask for /favicon.ico
        '<link rel="icon" href="data:,">',
        f"<title>{_e(' · '.join(dict.fromkeys(scenario.title_in(lg) for lg in langs)))}</title>",
        f"<style>{_STYLES_HERE}</style>",  # the frames' shared rules join when all are in
        "</head>",
        f"<body data-langs='{_e(json.dumps(langs))}' data-total=\"{total}\""
        f' data-pace-ms="{int(AUTOPLAY_S * 1000)}">',
        "<header>",
        each(lambda lg: f"<h1>{_e(scenario.title_in(lg))}</h1>", "div"),
        each(lambda lg: f'<p class="summary">{_t(scenario.summary_in(lg) or "", lg)}</p>', "div"),
        *(
            [
                each(
                    lambda lg: "".join(
                        f'<p class="warning">{_t(w, lg)}</p>' for w in timing_warnings(scenario, lg)
                    ),
                    "div",
                )
            ]
            if scenario.timing_notes
            else []
        ),
        '<div class="bar">',
        each(
            lambda lg: (
                f'<button type="button" class="prev">← {_e(tr("previous", lg))}</button>'
                f'<button type="button" class="next">{_e(tr("next", lg))} →</button>'
                f'<button type="button" class="play">␣ {_e(word("play", lg))}</button>'
            )
        ),
        '<span class="counter"></span>',
    ]
    if len(langs) > 1:
        # the app's own language button: it names the language it switches to
        out.append(
            each(lambda lg: f'<button type="button" class="lang">{_e(tr("language", lg))}</button>')
        )
    keys = "keys" if len(langs) > 1 else "keys_one_lang"
    out.append(each(lambda lg: f'<span class="keys">{_e(word(keys, lg))}</span>'))
    out.append(
        each(
            lambda lg: (
                f'<span class="changes-legend">{_e(word("changed", lg))} '
                f"{_e(word('zoom', lg))}</span>"
            )
        )
    )
    out.append("</div></header>")
    items = []
    for i, frame in enumerate(recordings[0].frames):
        label = "".join(
            f'<span data-l="{r.lang}" lang="{LANG_TAGS[r.lang]}">'
            f"{_e(_step_label(r.frames[i], r.lang))}</span>"
            for r in recordings
        )
        items.append(f'<li><a href="#step-{frame.index}">{frame.index}. {label}</a></li>')
    # the list of steps folds away, so that the screen comes right under the buttons
    steps_word = each(lambda lg: f"<b>{_e(word('steps', lg))}</b>")
    out.append(
        f"<nav><details><summary>{steps_word}</summary><ol>{''.join(items)}</ol></details></nav>"
    )
    out.append("<main>")
    shared = SharedStyles()
    drawn: dict[str, str] = {}  # each language's frame of the step before, as drawn
    captioned: set[str] = set()  # the languages whose first belief drawing is on the page
    for i, frame in enumerate(recordings[0].frames):
        marks = ' data-question="1"' if frame.question is not None else ""
        parts = []
        for r in recordings:
            timeline = r.frames[i].timeline
            drawn_here = timeline is not None and any(row.leases for row in timeline.rows)
            caption = drawn_here and r.lang not in captioned
            if caption:
                captioned.add(r.lang)
            part, drawn[r.lang] = _step_html(
                r.frames[i], r.lang, total, shared, drawn.get(r.lang), caption
            )
            parts.append(part)
        body = "".join(parts)
        out.append(
            f'<section class="step" id="step-{frame.index}" data-step="{frame.index}"{marks}>'
            f"{body}</section>"
        )
    out.append("</main>")
    out.append(
        "<footer>"
        + each(
            lambda lg: _e(
                word(
                    "made_with",
                    lg,
                    command="\0",
                    mode=mode,
                    meaning=glossary.mode_word(mode, lg),
                )
            ).replace("\0", f"<code>{_e(command)}</code>"),
            "p",
        )
        + "</footer>"
    )
    # the frames' clips, first in the body: anywhere later it can start a printed page
    out.insert(out.index("<header>"), shared.defs_svg())
    out.append(f"<script>{SCRIPT}</script>")
    out.append("</body></html>")
    return "\n".join(out).replace(_STYLES_HERE, CSS + timeline_svg.CSS + shared.css(), 1)
