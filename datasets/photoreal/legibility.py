"""Whether a rendered die's numerals stand out in the picture, not only in their paint's colour.

A paint chosen against the body's colour can still vanish in the picture: a gem shows the table and the light
through itself, not its tint, and a hairline font blurs into the body at webcam sizes. Real dice are printed to
be read, so a rendered die whose paint does not stand out is a die no maker sells.
"""

from __future__ import annotations

import cv2
import numpy as np

LEGIBLE = 0.1  # median local contrast (grey levels over 255) below which numerals read as blotches, by eye
MIN_INK_PX = 6  # fewer painted pixels in view than this and there is nothing to judge


def numeral_contrast(img: np.ndarray, ink: np.ndarray, cover: np.ndarray) -> float | None:
    """How far the painted pixels' lightness lies from the body's around them (median over the paint,
    0-1), or None when too little paint is in view to judge.

    img: the rendered frame (BGR uint8); ink, cover: `Stage.ink_and_cover` of the same scene. The body is
    compared locally, within about a numeral's reach of each painted pixel, because swirls, speckles and a
    gem's refractions make a die's body anything but one lightness."""
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32) / 255
    solid = cover >= 250
    paint = (ink > 0.5) & solid
    if paint.sum() < MIN_INK_PX:
        return None
    near_paint = cv2.dilate((ink > 0.05).astype(np.uint8), np.ones((3, 3), np.uint8), iterations=2).astype(bool)
    body = (solid & ~near_paint).astype(np.float32)
    # A numeral's reach: a fifth of the dice's size on screen.
    ys, xs = np.nonzero(solid)
    reach = int(max(5, 0.2 * max(np.ptp(xs), np.ptp(ys)))) | 1
    num = cv2.boxFilter(grey * body, -1, (reach, reach), normalize=False)
    den = cv2.boxFilter(body, -1, (reach, reach), normalize=False)
    ok = paint & (den > 0.1 * reach * reach)
    if ok.sum() < MIN_INK_PX:
        return None
    local_body = num[ok] / den[ok]
    return float(np.median(np.abs(grey[ok] - local_body)))


def every_die_legible(img: np.ndarray, ink: np.ndarray, cover: np.ndarray, boxes) -> bool:
    """Every die's numerals stand out (`numeral_contrast` at least LEGIBLE, or too little paint in view to say),
    each judged within its own box (x1, y1, x2, y2): on a table of ten, one die nobody can read is one too many."""
    h, w = img.shape[:2]
    for box in boxes:
        corners = np.r_[np.floor(np.asarray(box[:2], float)), np.ceil(np.asarray(box[2:], float))]
        x1, y1, x2, y2 = np.clip(corners, 0, [w, h, w, h]).astype(int)
        contrast = numeral_contrast(img[y1:y2, x1:x2], ink[y1:y2, x1:x2], cover[y1:y2, x1:x2])
        if contrast is not None and contrast < LEGIBLE:
            return False
    return True
