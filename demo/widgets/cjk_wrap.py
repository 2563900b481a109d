"""Line breaking that follows Chinese rules, for English and Chinese alike.

Rich breaks Chinese at any character: that put a lone "。" or "，" at the start of a line,
split words like 围栏令牌 across two, and left a number on the line after its word
("围栏令牌 / 1"). Here a line never starts with closing punctuation nor ends with an
opening one, a glossary word is never split, and a number stays with the word before it
and the unit after it ("围栏令牌 1", "第 2 页", "80 秒", "120 石").
"""

import functools
import re
from collections.abc import Callable

from rich.cells import cell_len
from rich.text import Text

# A line never starts with these (closing punctuation) nor ends with the opening ones.
NO_LINE_START = set("，。、；：！？）》」』”’…·")
NO_LINE_END = set("（《「『“‘")
# Units a number keeps on its line: "80 秒", "第 2 页", "3 次", a page's "120 石" (dan).
UNITS = set("秒分钟步页次个位号层天时毫份条张项遍石刻倍岁年行轮")


# A lease and its fence, "L2 F2", read as one pair: a break between them parts the token.
_LEASE_END = re.compile(r"(?<![A-Za-z0-9])L\d+$")
_FENCE = re.compile(r"F\d+(?![A-Za-z0-9])")


def _all_cjk(text: str) -> bool:
    return all(_is_cjk(ch) for ch in text)


def _is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


@functools.cache
def protected_terms() -> tuple[str, ...]:
    """The glossary's Chinese words, longest first: a wrap never splits one ("租约令 / 牌")."""
    from core.scenarios.glossary import PEOPLE, VILLAGES
    from demo.i18n import WORDS

    words = (*WORDS.values(), *PEOPLE.values(), *VILLAGES.values())
    terms = {zh for _en, zh in words if 2 <= len(zh) <= 6 and _all_cjk(zh)}
    terms |= {"租约号", "围栏令牌", "围栏签", "暂存木匣", "暂存架", "存储", "持有人"}
    terms |= {
        "进度条",
        "裁定",
        "停下",
        "从头再来",
        "多久前",
        "页签",
        "中断处",
        "到期时刻",
        "时辰",
        "账房",
    }
    return tuple(sorted(terms, key=len, reverse=True))


@functools.cache
def _by_first(terms: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The terms by their first character, longest first: one look per character."""
    out: dict[str, list[str]] = {}
    for term in terms:
        out.setdefault(term[0], []).append(term)
    return {ch: tuple(found) for ch, found in out.items()}


def _is_number(piece: str) -> bool:
    return piece[:1].isdigit()


def tokens(text: str, terms: tuple[str, ...] | None = None) -> list[str]:
    """Unbreakable pieces: Latin words, glossary terms, single characters, spaces; closing
    punctuation sticks to the piece before it, opening to the piece after, a number to the
    Chinese word before it and the Chinese unit after it."""
    starting = _by_first(protected_terms() if terms is None else terms)
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isascii() and not ch.isspace():
            j = i
            while j < len(text) and text[j].isascii() and not text[j].isspace():
                j += 1
            piece = text[i:j]
            i = j
        else:
            term = next((t for t in starting.get(ch, ()) if text.startswith(t, i)), None)
            piece = term or ch
            i += len(piece)
        if out and (piece[0] in NO_LINE_START or out[-1][-1:] in NO_LINE_END):
            out[-1] += piece
        elif (
            _FENCE.match(piece) and len(out) >= 2 and out[-1] == " " and _LEASE_END.search(out[-2])
        ):
            out[-2] += " " + piece  # L2 F2
            out.pop()
        elif _is_number(piece) and len(out) >= 2 and out[-1] == " " and _is_cjk(out[-2][-1]):
            out[-2] += " " + piece  # 围栏令牌 1
            out.pop()
        elif _is_number(piece) and out and _is_cjk(out[-1][-1]):
            out[-1] += piece
        elif piece[0] in UNITS and out and _number_end(out):
            _glue_unit(out, piece)
        else:
            out.append(piece)
    return out


def _number_end(out: list[str]) -> bool:
    """Whether the pieces end with a number, maybe then one space (before a unit)."""
    last = out[-1]
    if last == " " and len(out) >= 2:
        last = out[-2]
    return last[-1:].isdigit()


def _glue_unit(out: list[str], piece: str) -> None:
    """The unit (or the glossary word it begins, "页签") joins the number before it."""
    if out[-1] == " ":
        out.pop()
        out[-1] += " " + piece
    else:
        out[-1] += piece


def wrap(text: str, width: int) -> list[str]:
    """Greedy wrapping by display cells that respects the rules above, for zh and en alike."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for piece in tokens(paragraph):
            if line and cell_len(line + piece.rstrip()) > width:
                lines.append(line.rstrip())
                line = piece.lstrip()
            else:
                line += piece
        lines.append(line.rstrip())
    return lines


def html_unbroken(text: str, escape: Callable[[str], str]) -> str:
    """`text` as HTML for a page a browser wraps: a number with its word and unit ("第 3 页",
    "围栏令牌 1", "30 秒") sits in one `<span class="nb">`, which the page's style keeps on one
    line (a browser would break at the space inside it); everything else is `escape`d."""
    out = []
    for piece in tokens(text):
        bound = any(ch.isdigit() for ch in piece) and any(_is_cjk(ch) for ch in piece)
        out.append(f'<span class="nb">{escape(piece)}</span>' if bound else escape(piece))
    return "".join(out)


def hanging_indent(line: str) -> int:
    """Where a wrapped line's continuation starts: under the text of a ✓ / ✗ line or of a
    numbered choice, at the margin otherwise."""
    stripped = line.lstrip(" ")
    lead = len(line) - len(stripped)
    if stripped[:1] in ("✓", "✗", "○", "·") and stripped[1:2] == " ":
        return lead + 2
    number = len(stripped) - len(stripped.lstrip("0123456789"))
    if number and stripped[number : number + 2] == ". ":
        return lead + number + 2
    return 0


WRAP_MIN = 8  # at this width or less, a text is left as it is (Rich wraps it)


def wrap_text(text: Text, width: int) -> Text:
    """`text` broken into lines of at most `width` cells by the rules above, its styles
    kept; a ✓ line or a numbered choice continues under its own text (`hanging_indent`)."""
    if width <= WRAP_MIN:
        return text
    out = Text(end="")
    for n, line in enumerate(text.split("\n", allow_blank=True)):
        if n:
            out.append("\n")
        plain = line.plain
        indent = hanging_indent(plain)
        pos = 0
        for k, piece in enumerate(_line_breaks(plain, width, indent)):
            body = piece if k == 0 else piece.lstrip()
            start = plain.find(body, pos) if body else pos
            if start < 0:  # cannot happen: the pieces are the line's own, in order
                start = pos
            end = start + len(body)
            if k:
                out.append("\n" + " " * indent)
            out.append_text(line[start:end])
            pos = end
    return out


def _line_breaks(plain: str, width: int, indent: int) -> list[str]:
    lines: list[str] = []
    line = ""
    limit = width
    for piece in tokens(plain):
        if line.strip() and cell_len(line + piece.rstrip()) > limit:
            lines.append(line.rstrip())
            line = piece.lstrip()
            limit = width - indent
        else:
            line += piece
    lines.append(line.rstrip())
    return lines
