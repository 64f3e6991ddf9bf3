"""Which of a 6 and a 9 a die shows, from where its mark sits beside the numeral.

Dice mark their 6 and 9 so that they can be told apart: a dot or a bar after or under the numeral
("6." "6_" "9." "9_"). Turned so that its glyph stands as a "6", a marked 6 keeps its mark after its
foot or under it, while a marked 9 seen upside down has it before its top or over it. The text
recogniser often writes nothing for a dot it meets at a 6's top left (on lurig-d20's training runs the
clearest 6-or-9 window of 38 of 94 photos of a 9 read a bare "6"), so the mark is looked for here in
the picture itself: the glyph is the ink shape with one loop at the window's middle, and the mark a
small separate shape of the same ink beside it, where it sits judged square to the glyph's own axis.
"""

from __future__ import annotations

import cv2
import numpy as np

SIX, NINE, UNSEEN = 1, -1, 0
# Shares of the window's middle that may be ink: a numeral with its mark covers about a tenth to a
# third of it, depending on the font's weight and how much of the face is in view.
INK_SHARES = (8, 14, 22, 32)
MAX_LEAN = np.radians(40)  # how far from upright a numeral's own axis is trusted to lean


def _inks(window: np.ndarray) -> list[np.ndarray]:
    """Masks of where ink may be: the window's grey darker, or brighter, than each of a few shares of
    its middle half (where the numeral and its face are). No one split suits every die (a white
    neighbouring face or a glint beside a black numeral on a speckled orange die takes Otsu's), and the
    numeral's shape says which split found it (see `_glyph`)."""
    grey = cv2.GaussianBlur(cv2.cvtColor(window, cv2.COLOR_BGR2GRAY), (3, 3), 0)
    h, w = grey.shape
    middle = np.sort(grey[h // 4:h - h // 4, w // 4:w - w // 4], axis=None)
    at = [min(len(middle) - 1, len(middle) * q // 100) for q in INK_SHARES]
    dark = [(grey <= middle[i]).view(np.uint8) for i in at]
    bright = [(grey >= middle[len(middle) - 1 - i]).view(np.uint8) for i in at]
    return dark + bright


def _loops(shape: np.ndarray) -> list[tuple[float, float]]:
    """Each enclosed background region of a binary shape as (its top, its centre), heights in the
    shape's box (0 top, 1 bottom)."""
    inv = np.pad((shape == 0).astype(np.uint8), 1, constant_values=1)
    n, labels, stats, centres = cv2.connectedComponentsWithStats(inv, connectivity=4)
    outside = labels[0, 0]  # the padding joins everything outside the shape into one region
    h = max(shape.shape[0], 1)
    return [((stats[i, 1] - 1) / h, (centres[i][1] - 1) / h) for i in range(1, n) if i != outside]


def _glyph(mask: np.ndarray, stats: np.ndarray, labels: np.ndarray) -> int | None:
    """The label of the shape that is the numeral: the largest near the middle with one loop, in its
    lower part (a "6"; a "9" standing upright, its loop on top, is not what the reader turned up)."""
    h, w = mask.shape
    x, y, bw, bh, area = stats.T
    fits = ((area >= 25) & (bh >= 0.25 * h) & (bh <= 0.95 * h) & (bw <= 0.9 * w)
            & (np.abs(x + bw / 2 - w / 2) <= 0.25 * w) & (np.abs(y + bh / 2 - h / 2) <= 0.25 * h))
    fits[0] = False  # label 0 is what is not ink
    best = None
    for i in np.flatnonzero(fits)[np.argsort(-area[fits], kind="stable")]:  # the largest that has the loop
        loops = _loops((labels[y[i]:y[i] + bh[i], x[i]:x[i] + bw[i]] == i).view(np.uint8))
        # A 6's one loop is its lower part; a 0's or an O's fills it, a 4's or a 9's is on top.
        if len(loops) == 1 and loops[0][0] > 0.3 and loops[0][1] > 0.55:
            best = int(i)
            break
    if best is None:
        return None
    # A lone numeral: a digit as tall right beside it makes it part of a number ("15", "16"), no 6 or
    # 9 (an edge of the face is longer than a digit, and is no part of it).
    gx, gy, gw, gh = x[best], y[best], bw[best], bh[best]
    digit = (bh >= 0.6 * gh) & (bh <= 1.4 * gh) & (bw <= 1.2 * gw)
    beside = (y < gy + gh) & (y + bh > gy) & (x < gx + 1.6 * gw) & (x + bw > gx - 0.6 * gw)
    digit[[0, best]] = False
    return None if (digit & beside).any() else best


def _glyph_frame(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(origin, right, down) of the numeral's own axes from its pixels: its centroid, and unit vectors across
    and along its long axis (a "6" is taller than wide). The reader's windows are turned in steps of 30
    degrees and a numeral on a tilted face leans further: where its mark sits is judged square to the
    numeral itself."""
    origin = np.array([xs.mean(), ys.mean()])
    dx, dy = xs - origin[0], ys - origin[1]
    cov = np.array([[(dx * dx).mean(), (dx * dy).mean()], [(dx * dy).mean(), (dy * dy).mean()]])
    up = np.linalg.eigh(cov)[1][:, -1]
    up = up if up[1] < 0 else -up  # the long axis, pointing up the window
    lean = float(np.clip(np.arctan2(up[0], -up[1]), -MAX_LEAN, MAX_LEAN))
    right = np.array([np.cos(lean), np.sin(lean)])
    return origin, right, np.array([-right[1], right[0]])


def _extent(xs: np.ndarray, ys: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> tuple[float, float]:
    """(first, past last) of the pixels (xs, ys) along `axis` from `origin`."""
    t = (xs - origin[0]) * axis[0] + (ys - origin[1]) * axis[1]
    return float(t.min()), float(t.max()) + 1.0


def _marks_in(mask: np.ndarray) -> set[int]:
    """The sides (SIX, NINE) that marks beside the numeral in one ink mask point to; none without a numeral."""
    n, labels, stats, centres = cv2.connectedComponentsWithStats(mask, connectivity=4)
    g = _glyph(mask, stats, labels)
    if g is None:
        return set()
    ga = float(stats[g, 4])
    h, w = mask.shape
    ys, xs = np.nonzero(labels == g)
    origin, right, down = _glyph_frame(xs, ys)
    u0, u1 = _extent(xs, ys, origin, right)
    v0, v1 = _extent(xs, ys, origin, down)
    gw, gh = u1 - u0, v1 - v0
    found = set()
    for i in range(1, n):
        x, y, bw, bh, area = (float(v) for v in stats[i])
        if i == g or not 0.02 * ga <= area <= 0.4 * ga or x <= 0 or y <= 0 or x + bw >= w or y + bh >= h:
            continue
        my, mx = np.nonzero(labels == i)
        a0, a1 = _extent(mx, my, origin, right)
        b0, b1 = _extent(mx, my, origin, down)
        mw, mh = a1 - a0, b1 - b0  # the mark's size across and along the numeral
        fx, fy = ((a0 + a1) / 2 - u0) / gw, ((b0 + b1) / 2 - v0) / gh  # in the numeral's box: 0..1 inside
        dot = max(mw, mh) <= 2.5 * min(mw, mh) and max(mw, mh) <= 0.45 * gh
        bar = mw >= 2 * mh and 0.4 * gw <= mw <= 1.6 * gw and mh <= 0.3 * gh and -0.2 <= fx <= 1.2
        if dot and 0.95 <= fx <= 1.5 and 0.7 <= fy <= 1.15:  # after the foot
            found.add(SIX)
        elif dot and -0.6 <= fx <= 0.15 and -0.35 <= fy <= 0.3:  # before the top: a "9." upside down
            found.add(NINE)
        elif bar and 0.95 <= fy <= 1.5:  # under
            found.add(SIX)
        elif bar and -0.5 <= fy <= 0.05:  # over: a "9_" upside down
            found.add(NINE)
    return found


def mark_side(window: np.ndarray) -> int:
    """SIX, NINE or UNSEEN for a window in which a 6-or-9 stands upright as a "6" (BGR uint8).

    Each ink mask that shows the numeral and marks on one side only votes for that side; the looser
    masks also pick up speckles, so a mask that sees marks on both sides votes for neither, and the
    window says which only when no mask votes the other way."""
    votes = {SIX: 0, NINE: 0}
    for mask in _inks(window):
        found = _marks_in(mask)
        if len(found) == 1:
            votes[found.pop()] += 1
    if votes[SIX] and not votes[NINE]:
        return SIX
    if votes[NINE] and not votes[SIX]:
        return NINE
    return UNSEEN
