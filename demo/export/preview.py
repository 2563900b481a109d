"""An animated GIF of a recording's frames, for a README: resvg draws each SVG, Pillow
animates them.

resvg lays the text out with fonts it is given, falling back glyph by glyph, so a frame's
Chinese is drawn from Noto Sans CJK (Debian's fonts-noto-cjk) and the rest from DejaVu Sans
Mono (fonts-dejavu-core), the monospace the page's browsers fall back to as well.
"""

import io
from collections.abc import Sequence
from pathlib import Path

from PIL import Image

from demo.export.frame_svg import page_svg
from demo.export.frames import Recording
from demo.screens.main import AUTOPLAY_S

# Pixels per cell of the terminal: 8 keeps its text legible and 01_fog's GIF near 1 MB.
CELL_PX = 8
FIRST_FRAME_MS = 1500
LAST_FRAME_MS = 6000
FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
MONO = ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf")
CJK = ("NotoSansCJK-Regular.ttc", "NotoSansCJK-Bold.ttc")


class PreviewError(Exception):
    """The preview cannot be drawn here (a font is missing); the message says what to install."""


def _find(names: Sequence[str], package: str) -> list[str]:
    found: list[str] = []
    for name in names:
        hit = next((p for d in FONT_DIRS if d.is_dir() for p in d.rglob(name)), None)
        if hit is None:
            raise PreviewError(f"the preview needs the font {name} (apt-get install {package})")
        found.append(str(hit))
    return found


def font_files() -> list[str]:
    return _find(MONO, "fonts-dejavu-core") + _find(CJK, "fonts-noto-cjk")


def render_png(svg: str, fonts: Sequence[str], width: int) -> bytes:
    """One frame as a PNG, drawn only with `fonts` (no system font search: fast, repeatable)."""
    import resvg_py

    return bytes(
        resvg_py.svg_to_bytes(
            svg_string=svg,
            width=width,
            skip_system_fonts=True,
            font_files=list(fonts),
            font_family="DejaVu Sans Mono",
            monospace_family="DejaVu Sans Mono",
            sans_serif_family="DejaVu Sans Mono",
        )
    )


def preview_gif(recording: Recording) -> bytes:
    """Every frame of `recording`, at the app's auto-play pace, looping."""
    fonts = font_files()
    width = (recording.size[0] + 2) * CELL_PX  # the cells and the window's margin
    images = []
    for frame in recording.frames:
        png = render_png(page_svg(frame.svg, f"p{frame.index}"), fonts, width)
        with Image.open(io.BytesIO(png)) as image:
            # one palette a frame: the app's colours are few, text stays crisp
            images.append(image.convert("RGB").quantize(colors=64, dither=Image.Dither.NONE))
    pace = int(AUTOPLAY_S * 1000)
    durations = [pace] * len(images)
    durations[0] = FIRST_FRAME_MS
    durations[-1] = LAST_FRAME_MS
    out = io.BytesIO()
    images[0].save(
        out,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=durations,
        loop=0,
        optimize=True,
        disposal=1,
    )
    return out.getvalue()
