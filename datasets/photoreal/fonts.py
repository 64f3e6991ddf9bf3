"""System fonts that draw dice numerals, with the bundled fonts as the fallback.

Pillow (an install extra) is imported where a font is tried."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..render import FONT_DIR

# Stroke width over digit height below which a face is a hairline (extra-light, thin) that no dice maker prints:
# it blurs into the body at webcam sizes. Bold faces measure 0.14-0.19, regular serifs 0.08-0.09, extra-light 0.07.
MIN_STROKE = 0.1

FONT_ROOTS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path.home() / ".fonts")
# Scripts and symbol sets whose digits are not Latin or not there at all.
SKIP = ("emoji", "symbol", "dingbat", "d050000l", "math", "cjk", "arabic", "hebrew", "devanagari", "thai",
        "music", "braille", "sign", "mono", "code", "z003")


def _digits_ok(path: Path) -> bool:
    """The font draws ten distinct, non-empty digits (not ten copies of a missing-glyph box)."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype(str(path), 40)
    except Exception:  # noqa: BLE001 - unreadable or unsupported font files are skipped
        return False
    seen = set()
    for ch in "0123456789":
        img = Image.new("L", (60, 60), 0)
        ImageDraw.Draw(img).text((10, 5), ch, font=font, fill=255)
        a = np.asarray(img)
        if a.max() == 0:
            return False
        seen.add(a.tobytes())
    return len(seen) == 10


@lru_cache(maxsize=None)
def system_fonts(roots: tuple[Path, ...] = FONT_ROOTS, limit: int = 1000) -> tuple[str, ...]:
    """Paths of usable TTF/OTF fonts (sorted, so every process agrees), bundled fonts first."""
    out = [str(p) for p in sorted(FONT_DIR.glob("*.ttf"))]
    found = []
    for root in roots:
        if root.is_dir():
            found += [p for p in root.rglob("*") if p.suffix.lower() in (".ttf", ".otf")]
    for p in sorted(set(found)):
        name = p.name.lower()
        if any(s in name for s in SKIP) or not _digits_ok(p):
            continue
        out.append(str(p))
        if len(out) >= limit:
            break
    return tuple(out)


@lru_cache(maxsize=None)
def stroke_ratio(path: str, weight: float = 0.0, px: int = 160) -> float:
    """The font's digits' stroke width over their height, drawn `px` tall with an outline of weight * px added
    (as `faces.glyph_image` draws them): the median of twice the distance from the strokes' ridges to their edges."""
    import cv2
    from PIL import Image, ImageDraw

    from .faces import _font  # the glyphs' own loader: the same fallback for a font that will not load

    font = _font(path, px)
    stroke = int(round(weight * px))
    widths = []
    for ch in "0123456789":
        l, t, r, b = font.getbbox(ch, stroke_width=stroke)
        img = Image.new("L", (r - l + 20, b - t + 20), 0)
        ImageDraw.Draw(img).text((10 - l, 10 - t), ch, font=font, fill=255, stroke_width=stroke, stroke_fill=255)
        inked = (np.asarray(img) > 127).astype(np.uint8)
        dist = cv2.distanceTransform(inked, cv2.DIST_L2, 5)
        ridge = dist[(dist >= cv2.dilate(dist, np.ones((3, 3), np.uint8))) & (dist > 0)]
        widths.append(2 * float(np.median(ridge)) / max(b - t, 1))
    return float(np.median(widths))
