"""Write demo/serve_page/fork.ttf: one glyph, the fork (U+2442) the app's header shows.

Roboto Mono (the served page's font) has no U+2442 and most Linux machines have no font that
does, so a browser drew an empty box where the header says the run was forked. The page
loads this font for that one code point (CSS `unicode-range`). The glyph is drawn here, from
four rectangles, so the font is this project's own (MIT) and small enough to ship.

Needs fontTools, which the app does not: `pip install fonttools`, then
`python scripts/make_fork_font.py`.
"""

from pathlib import Path

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen

UPM = 1000
ADVANCE = 600  # a monospace cell: Roboto Mono's advance is 0.6 em too
FAMILY = "Borrowed Keys Fork"
OUT = Path(__file__).resolve().parent.parent / "demo" / "serve_page" / "fork.ttf"

# Two prongs joined by a bar, on a stem: x0, y0, x1, y1 in font units.
FORK = [(260, 0, 340, 390), (100, 310, 500, 390), (100, 310, 180, 700), (420, 310, 500, 700)]


def rectangles(boxes: list[tuple[int, int, int, int]]) -> object:
    pen = TTGlyphPen(None)
    for x0, y0, x1, y1 in boxes:  # clockwise: TrueType's outer contours
        pen.moveTo((x0, y0))
        pen.lineTo((x0, y1))
        pen.lineTo((x1, y1))
        pen.lineTo((x1, y0))
        pen.closePath()
    return pen.glyph()


def main() -> None:
    builder = FontBuilder(UPM, isTTF=True)
    builder.setupGlyphOrder([".notdef", "uni2442"])
    builder.setupCharacterMap({0x2442: "uni2442"})
    builder.setupGlyf({".notdef": rectangles([]), "uni2442": rectangles(FORK)})
    builder.setupHorizontalMetrics({".notdef": (ADVANCE, 0), "uni2442": (ADVANCE, 100)})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    builder.setupNameTable({"familyName": FAMILY, "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=800, sTypoDescender=-200, usWinAscent=800, usWinDescent=200)
    builder.setupPost()
    builder.save(str(OUT))
    print(f"{OUT}: {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
