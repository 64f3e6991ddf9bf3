"""Numeral and pip masks of a whole die in one texture atlas, in any font, weight and 6/9 mark.

The atlas layout and the face polygons are the moderngl renderer's (`render._face_frame`,
`render._face_relief`), so a face's numerals sit where geometry.py puts its glyphs, turned the
same way: the labels of both renderers come from one numbering.

Pillow (an install extra) is imported where a glyph is drawn.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .. import geometry
from ..render import _face_frame, _face_relief, _to_px

GLYPH_PX = 160  # glyphs are drawn this tall, then scaled onto the face
# Real dice print numerals larger than the moderngl atlases do (measured by eye on the shared
# real photos: a d20 numeral is about 40 % of its face's height).
NUM_SCALE = {"d4": 1.1, "d6": 1.3, "d8": 1.35, "d10": 1.5, "d00": 1.3, "d12": 1.35, "d20": 1.5}
MAX_W = {"d4": 1.35, "d6": 1.7, "d8": 1.7, "d10": 1.7, "d00": 1.8, "d12": 1.7, "d20": 1.75}


@lru_cache(maxsize=64)
def _font(path: str, px: int):
    from PIL import ImageFont

    if path:
        try:
            return ImageFont.truetype(path, px)
        except OSError:  # a font that vanished or will not load: fall back rather than fail the render
            pass
    return ImageFont.load_default(size=px)


def glyph_image(text: str, height_px: float, font: str, weight: float, mark: str, marked: bool,
                max_w: float) -> tuple[np.ndarray, tuple[float, float]]:
    """Grey glyph (uint8) whose digits are height_px tall, and the digits' centre in it.

    marked: the numeral is a 6 or 9 (60/90) and carries `mark`, a bar below or a dot at its
    lower right, as real dice tell them apart."""
    from PIL import Image, ImageDraw

    f = _font(font, GLYPH_PX)
    stroke = int(round(weight * GLYPH_PX))
    l, t, r, b = f.getbbox(text, stroke_width=stroke)
    w, h = r - l, b - t
    pad = 10
    extra_h = int(h * 0.24) if marked and mark == "bar" else 0
    extra_w = int(h * 0.26) if marked and mark == "dot" else 0
    img = Image.new("L", (w + 2 * pad + extra_w, h + 2 * pad + extra_h), 0)
    d = ImageDraw.Draw(img)
    d.text((pad - l, pad - t), text, font=f, fill=255, stroke_width=stroke, stroke_fill=255)
    if marked and mark == "bar":
        y0 = pad + h + int(h * 0.08)
        d.rectangle([pad + w * 0.12, y0, pad + w * 0.88, y0 + max(3, int(h * 0.09))], fill=255)
    elif marked:
        rad = max(3, h * 0.07)
        cx, cy = pad + w + h * 0.13, pad + h - rad
        d.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], fill=255)
    scale = height_px / max(h, 1)
    if (w + extra_w) * scale > max_w:
        scale = max_w / (w + extra_w)
    arr = np.asarray(img)
    new = (max(1, int(round(arr.shape[1] * scale))), max(1, int(round(arr.shape[0] * scale))))
    arr = cv2.resize(arr, new, interpolation=cv2.INTER_AREA)
    return arr, ((pad + w / 2) * scale, (pad + h / 2) * scale)


def atlas_uvs(kind: str, style: str) -> list[list[tuple[float, float]]]:
    """Per face, per corner: (u, v) in the atlas, v measured downwards from its top row."""
    mesh = geometry.build(kind, style)
    TILE, cols, rows, _ = _face_frame(mesh)
    AW, AH = cols * TILE, rows * TILE
    out = []
    for fi in range(len(mesh.faces)):
        ox, oy = (fi % cols) * TILE, (fi // cols) * TILE
        poly = _face_relief(kind, style, fi)[0]
        out.append([((ox + x) / AW, (oy + y) / AH) for x, y in poly])
    return out


@lru_cache(maxsize=48)
def ink_atlas(kind: str, style: str, font: str, weight: float, size: float, mark: str) -> np.ndarray:
    """float32 (H, W) atlas in [0, 1]: 1 where a numeral or pip is cut into the face."""
    mesh = geometry.build(kind, style)
    v = mesh.vertices
    TILE, cols, rows, s = _face_frame(mesh)
    atlas = np.zeros((rows * TILE, cols * TILE), np.float32)
    for fi, f in enumerate(mesh.faces):
        ox, oy = (fi % cols) * TILE, (fi // cols) * TILE
        inside = _face_relief(kind, style, fi)[1]
        right = np.cross(f.up, f.normal)
        ink = np.zeros((TILE, TILE), np.float32)
        ir = geometry._inradius(v, f.verts, f.center) * s
        for g in f.glyphs:
            cx, cy = _to_px(f, g.center, TILE, s)
            if g.text == "pip":
                r = g.size * s / 2 * (1.0 + 0.4 * (size - 0.8))
                cv2.circle(ink, (int(round(cx * 4)), int(round(cy * 4))), int(round(r * 4)), 1.0, -1, cv2.LINE_AA, shift=2)
                continue
            ang = np.degrees(np.arctan2(-(g.up @ right), g.up @ f.up))
            gi, (gx, gy) = glyph_image(g.text, g.size * s * 0.62 * size * NUM_SCALE[kind], font, weight, mark,
                                       g.underline, ir * MAX_W[kind])
            M = cv2.getRotationMatrix2D((gx, gy), ang, 1.0)
            M[0, 2] += cx - gx
            M[1, 2] += cy - gy
            warped = cv2.warpAffine(gi, M, (TILE, TILE), flags=cv2.INTER_LINEAR)
            ink = np.maximum(ink, warped.astype(np.float32) * np.float32(1 / 255))
        # Keep the ink off the rounded edges: a numeral never runs over the bevel.
        keep = cv2.erode(inside, np.ones((5, 5), np.uint8), iterations=2).astype(np.float32)
        atlas[oy : oy + TILE, ox : ox + TILE] = ink * keep
    return atlas
