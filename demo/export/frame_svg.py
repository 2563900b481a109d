"""The app's SVG frames made fit for one page: each frame's own names, wide characters two
cells wide, what every frame repeats kept once, and what a step changed on the screen.

The HTML around the frames is page.py's; this module knows only the SVG that Textual exports.
"""

import html
import re
from collections.abc import Sequence

from rich.cells import cell_len

# Textual's SVG names Fira Code with a CDN URL beside `local()`: the page keeps the local
# names only, once, instead of each frame's copy.
_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}\s*")
_RICH_COMMENT = re.compile(r"<!--.*?-->\s*", re.DOTALL)
_UNIQUE_ID = re.compile(r"\bterminal-\d+-")
_TEXT = re.compile(r'(<text [^>]*?textLength=")([0-9.]+)("[^>]*>)([^<]*)(</text>)')


def _wide_text_length(m: "re.Match[str]") -> str:
    """Rich sizes a run of text by its characters, not its cells (a CJK character is two):
    the browser then squeezes 起雾 into one cell each. Size it by its cells."""
    text = html.unescape(m.group(4))
    cells = cell_len(text)
    if cells == len(text) or not text:
        return m.group(0)
    length = float(m.group(2)) / len(text) * cells
    return f"{m.group(1)}{length:g}{m.group(3)}{m.group(4)}{m.group(5)}"


def page_svg(svg: str, frame_id: str) -> str:
    """A frame as the page inlines it: no font URL, wide characters two cells wide, and class
    names of its own (the styles of an inlined SVG apply to the whole page, so two frames
    must not share a name)."""
    svg = _FONT_FACE.sub("", svg)
    svg = _RICH_COMMENT.sub("", svg)
    svg = _TEXT.sub(_wide_text_length, svg)
    return _UNIQUE_ID.sub(f"terminal-{frame_id}-", svg)


_STYLE = re.compile(r"<style>(.*?)</style>\s*", re.DOTALL)
_RULE = re.compile(r"\.terminal-([\w-]+?)-([a-z]+\d*)\s*\{([^}]*)\}")
_CLASS = re.compile(r'class="terminal-[\w]+?-([a-z]+\d*)"')
_DEFS = re.compile(r"<defs>(.*?)</defs>\s*", re.DOTALL)
_DEF_REF = re.compile(r"\bterminal-[\w]+?-((?:clip-terminal|line-\d+))\b")
_CRISP = ' shape-rendering="crispEdges"'


_RECT = re.compile(
    r'<rect fill="(#[0-9a-f]{6})" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" '
    r'height="([0-9.]+)"(?: shape-rendering="crispEdges")?/>'
)


def _merged_rects(svg: str) -> str:
    """The cells' backgrounds with each run of one colour along a line as one rectangle.

    The export draws a rectangle a styled run of text, so a line in one colour is dozens of
    touching rectangles of that colour: the same pixels as one, in a fraction of the bytes."""
    out: list[str] = []
    pos = 0
    run: list[float] | None = None  # x, width of the run being drawn
    key: tuple[str, str, str] = ("", "", "")  # fill, y, height of that run

    def close() -> None:
        if run is not None:
            fill, y, h = key
            out.append(
                f'<rect fill="{fill}" x="{run[0]:g}" y="{y}" width="{run[1]:g}" height="{h}"/>'
            )

    for m in _RECT.finditer(svg):
        between = svg[pos : m.start()]
        fill, x, y, w, h = m.group(1), float(m.group(2)), m.group(3), float(m.group(4)), m.group(5)
        touching = run is not None and abs(run[0] + run[1] - x) < 0.05
        if run is not None and not between.strip() and (fill, y, h) == key and touching:
            run[1] = round(run[1] + w, 3)
        else:
            close()
            out.append(between)
            run, key = [x, w], (fill, y, h)
        pos = m.end()
    close()
    out.append(svg[pos:])
    return "".join(out)


_CLIPPED_TEXT = re.compile(r'(<text [^>]*?) clip-path="(url\(#[\w-]+\))"([^>]*>[^<]*</text>)')


def _clips_by_line(svg: str) -> str:
    """Each line's texts in one group clipped to the line, instead of each text clipped to
    it alone: the same clip, said once a line. A no-break space is the character itself."""
    out: list[str] = []
    pos = 0
    clip = ""
    for m in _CLIPPED_TEXT.finditer(svg):
        between = svg[pos : m.start()]
        if clip and (between.strip() or m.group(2) != clip):
            out.append("</g>")
            clip = ""
        out.append(between)
        if not clip:
            clip = m.group(2)
            out.append(f'<g clip-path="{clip}">')
        out.append(m.group(1) + m.group(3))
        pos = m.end()
    if clip:
        out.append("</g>")
    out.append(svg[pos:])
    return "".join(out).replace("&#160;", "\u00a0")


_LINE_TEXT = re.compile(
    r'<text class="[\w-]+" x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>([^<]*)</text>'
)
_TRANSLATE = re.compile(r'<g transform="translate\(([\d.]+), ([\d.]+)\)" clip-path=')
# runs that are only frame, padding or gauge: they move with every tick, they say nothing new
_NOISE = set(" \u00a0─│╭╮╰╯━╸╺┃▁▂▃▄▅▆▇█·•●○◦‖▏▕▔▁ ")
_ASCENT = 18.5  # a line's text baseline below the top of its background


def _runs(svg: str) -> dict[str, set[tuple[str, str, str]]]:
    """The text runs of a frame by line (its baseline): (x, width, text)."""
    lines: dict[str, set[tuple[str, str, str]]] = {}
    for m in _LINE_TEXT.finditer(svg):
        text = html.unescape(m.group(4))
        if set(text) <= _NOISE:
            continue
        lines.setdefault(m.group(2), set()).add((m.group(1), m.group(3), text))
    return lines


def changes(before: str, after: str) -> list[tuple[float, float, float]]:
    """What the step changed on the screen, from the two frames' text: each run of text
    (x, baseline y, width) that the frame before had nowhere at that x. A line that only
    moved (the event log scrolling, a row pushed down) is not new; a new row is, and so is
    a number that went up in its column. The first line is left out (its clock moves at
    every step), and so are runs of frame, padding and gauge characters."""
    old = {run for runs in _runs(before).values() for run in runs}
    new = _runs(after)
    first = min((float(y) for y in new), default=0.0)
    out: list[tuple[float, float, float]] = []
    for y, runs in sorted(new.items(), key=lambda item: float(item[0])):
        if float(y) == first:
            continue
        for x, width, _text in sorted(runs - old, key=lambda r: float(r[0])):
            left, w = float(x), float(width)
            if out and out[-1][1] == float(y) and abs(out[-1][0] + out[-1][2] - left) < 0.05:
                out[-1] = (out[-1][0], float(y), out[-1][2] + w)
            else:
                out.append((left, float(y), w))
    return out


def marked(svg: str, changed: Sequence[tuple[float, float, float]]) -> str:
    """The frame with an outline drawn over each change, in a group of its own on top."""
    if not changed:
        return svg
    at = _TRANSLATE.search(svg)
    dx, dy = (at.group(1), at.group(2)) if at is not None else ("0", "0")
    rects = "".join(
        f'<rect x="{x - 2:g}" y="{y - _ASCENT:.1f}" width="{w + 4:g}"/>' for x, y, w in changed
    )
    end = svg.rindex("</svg>")
    return f'{svg[:end]}<g class="changed" transform="translate({dx}, {dy})">{rects}</g>{svg[end:]}'


class SharedStyles:
    """What every frame of the app's SVG export repeats, kept once for the whole page.

    Each frame carries its own <style> (the font, the title, a class for each colour it
    uses) and its own <defs> (a clipping rectangle for each of the screen's lines): the
    same few rules and the same rectangles in every frame, about a third of a frame's bytes.
    The page keeps one class for each distinct rule and one set of rectangles for each
    distinct screen size, and each frame names those instead of its own. Only names change:
    every frame still draws exactly what the app exported."""

    def __init__(self) -> None:
        self._classes: dict[str, str] = {}  # a rule's body -> the page's class for it
        self._defs: dict[str, str] = {}  # a frame's defs, ids made generic -> the page's prefix

    def frame(self, svg: str) -> str:
        """A frame of `page_svg` with its <style> and <defs> taken out into the page's."""
        names: dict[str, str] = {}
        style = _STYLE.search(svg)
        if style is not None:
            for m in _RULE.finditer(style.group(1)):
                body = " ".join(m.group(3).split())
                names[m.group(2)] = self._classes.setdefault(body, f"k{len(self._classes)}")
            svg = svg[: style.start()] + svg[style.end() :]
        svg = _CLASS.sub(lambda m: f'class="{names.get(m.group(1), m.group(1))}"', svg)
        defs = _DEFS.search(svg)
        if defs is not None:
            key = _DEF_REF.sub(r"\1", defs.group(1))
            prefix = self._defs.setdefault(key, f"d{len(self._defs)}-")
            svg = svg[: defs.start()] + svg[defs.end() :]
            svg = _DEF_REF.sub(lambda m: prefix + m.group(1), svg)
        return _clips_by_line(_merged_rects(svg)).replace(_CRISP, "")

    def css(self) -> str:
        rules = "".join(f".{name} {{ {body} }}\n" for body, name in self._classes.items())
        return rules + ".rich-terminal rect { shape-rendering: crispEdges; }\n"

    def defs_svg(self) -> str:
        """The clipping rectangles, in one SVG of no size that every frame refers to."""
        defs = "".join(
            re.sub(r'id="((?:clip-terminal|line-\d+))"', rf'id="{prefix}\1"', key)
            for key, prefix in self._defs.items()
        )
        return (
            '<svg class="shared-defs" aria-hidden="true" width="0" height="0" '
            'style="position:absolute" xmlns="http://www.w3.org/2000/svg">'
            f"<defs>{defs}</defs></svg>"
        )
