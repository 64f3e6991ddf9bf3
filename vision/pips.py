"""Whether a die shows pips at all: round, filled dots of a pip's size anywhere on its crop.

The face network reads a numbered d6's "4" as two pips at 0.95 and more (lurig-d6-values' orange speckled die), and
its numerals, read clearly, then lose to it: pips read as clear digits about as often, so a legible numeral does not
tell a numbered d6 from a pip one (models/MODEL_CARD.md, Next 18). What does is plainer: a pip die's faces carry
pips — on the up face and on every side face in view — and pips are round filled dots a tenth of the die across
or more, where a numeral is one stroke-shaped mark. So the dots are looked for here, without the network: the view's
colours measured against the die's typical colour, the marks split off at a few levels, and each mark judged by its
size, roundness and solidity (`pip_count`); circles whose middle is filled (`filled_circles`); and whether the die is
inked at all (`inked`). A glint inside a glossy pip makes a hole in it; the outline is judged, not the holes.
Measured on the training parts only (dice of 80 px or more; models/MODEL_CARD.md, fifty-sixth stop): no pips for 118
of lurig-d6-values' 170 numbered d6s, for none of 543 of nell-byler's pip dice and 2 of 674 of Rune55's.
"""

from __future__ import annotations

import cv2
import numpy as np

SIDE = 128  # px: each die is judged at this size (its box a little inside the view)
VIEW = 1.1  # the view's side in box sides
PIP_ACROSS = (0.06, 0.4)  # a pip's diameter (of its area's circle) in box sides: a dot of a 6. is smaller
ROUND = 0.75  # 4 pi area / perimeter^2 of its outline
SOLID = 0.9  # area / its convex hull's
STRETCH = 1.8  # long / short axis of its ellipse: a pip on a face 55 degrees from the camera is this long
SHARES = (5, 10, 20)  # % of the die's middle taken as marks, beside Otsu's split
LEAST_CONTRAST = 12.0  # Lab units: no split below this (a plain face, or a die of one colour)
STABLE, GROWTH = 0.6, 3.0  # a dot split at 0.6 of its level grows no more than threefold
CROWD = 3  # dots a crowded face's near-colour split must show to count
SAME_DOT = 0.05  # view sides: dots closer than this, found at two splits, are one
_ROUNDING = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
# The marks are also judged worn down by this many pixels: big pips a few pixels apart run together at a split.
_APART = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
CIRCLE_RADII = (0.03, 0.2)  # in box sides
CIRCLE_PERFECT = 0.8  # HOUGH_GRADIENT_ALT's measure of how whole a circle's outline is
FILLED_CONTRAST = 20.0  # Lab units between a filled circle's middle and the ring outside it
LOCAL_PX = 41  # the body's colour is the median over this square around each pixel: dice are two-toned, glossy
INKED = 45.0  # Lab units (measured: lurig-d6-values' numbered training d6s 51 and more at their 5th percentile)
JUDGED_FROM_PX = 80  # box side in the frame: smaller dice show pips a few pixels across, and are not judged


def die_view(frame: np.ndarray, box) -> np.ndarray:
    """(SIDE, SIDE, 3) uint8 Lab: the die in `box` (x1, y1, x2, y2) of a BGR frame, its box VIEW inside the view,
    smoothed a little; what the tests below look at. Sampled straight (bilinear), not area-averaged as the face
    reader's crops are (vision/crops.square_crop): the thresholds were chosen and judged on this view, and the
    averaged one calls 111 rather than 118 of lurig-d6-values' 170 numbered training d6s pipless."""
    x1, y1, x2, y2 = (float(v) for v in box)
    scale = SIDE / (max(x2 - x1, y2 - y1, 1.0) * VIEW)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    m = np.float32([[scale, 0, SIDE / 2 - cx * scale], [0, scale, SIDE / 2 - cy * scale]])
    view = cv2.warpAffine(frame, m, (SIDE, SIDE), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.cvtColor(cv2.GaussianBlur(view, (3, 3), 0), cv2.COLOR_BGR2LAB)


def _is_pip(outline: np.ndarray) -> bool:
    area = cv2.contourArea(outline)
    across = np.sqrt(4 * area / np.pi) / (SIDE / VIEW)
    if not PIP_ACROSS[0] <= across <= PIP_ACROSS[1] or len(outline) < 5:
        return False
    xs, ys = outline[:, 0, 0], outline[:, 0, 1]
    if xs.min() <= 1 or ys.min() <= 1 or xs.max() >= SIDE - 2 or ys.max() >= SIDE - 2:
        return False  # cut by the view: the table or a neighbour, not a dot on the die
    perimeter = cv2.arcLength(cv2.approxPolyDP(outline, 1.0, True), True)
    if 4 * np.pi * area / max(perimeter * perimeter, 1e-6) < ROUND:
        return False
    if area / max(cv2.contourArea(cv2.convexHull(outline)), 1e-6) < SOLID:
        return False
    (_, _), (a, b), _ = cv2.fitEllipse(outline)
    return max(a, b) / max(min(a, b), 1e-6) <= STRETCH


def pip_count(lab8: np.ndarray, enough: int | None = None) -> int:
    """How many pip-like dots a die's view (`die_view`) shows, counted once however many splits find them; `enough`:
    stop counting there (a pip die's first dot is usually found at the first split)."""
    q = SIDE // 4
    lab = lab8.astype(np.float32)
    centres: list[tuple[float, float]] = []
    # Far from the die's middle's typical colour, and far from each pixel's neighbourhood's (two-toned, glossy dice).
    # A numeral's thickest stretch stands out of its neighbourhood as a round scrap at a tight split; a dot found
    # there must keep its edge at a looser one (`_dots`). Not so against the whole die: a small pip in a glossy dish
    # runs into the glare around it at looser splits.
    for body, local in ((np.median(lab[q:SIDE - q, q:SIDE - q].reshape(-1, 3), 0), False),
                        (cv2.medianBlur(lab8, LOCAL_PX), True)):
        far = np.sqrt(((lab - body) ** 2).sum(-1))
        middle = far[q:SIDE - q, q:SIDE - q]
        otsu, _ = cv2.threshold(np.clip(middle, 0, 255).astype(np.uint8), 0, 255,
                                cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        for level in (otsu, *np.percentile(middle, [100 - s for s in SHARES])):
            if level >= LEAST_CONTRAST:
                _add_new(centres, _dots(far >= level, far >= level * STABLE if local else None))
                if enough is not None and len(centres) >= enough:
                    return len(centres)
        # On a face crowded with big pips (a six) the middle's typical colour is the pips', and they are what lies
        # near it; a numbered face's body split so leaves round scraps too, so that side counts only for a crowd.
        if otsu >= LEAST_CONTRAST:
            crowd = _dots(far < otsu)
            if len(crowd) >= CROWD:
                _add_new(centres, crowd)
    return len(centres)


def _dots(split: np.ndarray, wider: np.ndarray | None = None) -> list[tuple[float, float]]:
    """Centres (in view sides) of the pip-like marks of one split, also judged worn apart. `wider`: the same marks
    split more loosely, where a pip keeps its edge and the thickest stretch of a stroke, round at a tight split,
    runs out into the rest of its numeral (STABLE, GROWTH)."""
    opened = cv2.morphologyEx(split.astype(np.uint8), cv2.MORPH_OPEN, _ROUNDING)
    areas = labels = None
    if wider is not None:
        _, labels, stats, _ = cv2.connectedComponentsWithStats(wider.astype(np.uint8), connectivity=8)
        areas = stats[:, cv2.CC_STAT_AREA]
    found: list[tuple[float, float]] = []
    for marks in (opened, cv2.erode(opened, _APART)):
        # Every mark's outer outline, those inside another mark's hole too (a pip inside a ring of glare).
        outlines, tree = cv2.findContours(marks, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        for o, (_, _, _, parent) in zip(outlines, tree[0] if tree is not None else ()):
            if parent >= 0 or not _is_pip(o):
                continue
            x, y = o[:, 0].mean(0)
            if labels is not None:
                grown = areas[labels[int(round(y)), int(round(x))]]
                if grown > GROWTH * max(cv2.contourArea(o), 1.0):
                    continue
            _add_new(found, [(x / SIDE, y / SIDE)])
    return found


def _add_new(centres: list[tuple[float, float]], more) -> None:
    """Adds the centres in `more` that are no dot already in `centres`."""
    for x, y in more:
        if all(np.hypot(x - a, y - b) > SAME_DOT for a, b in centres):
            centres.append((float(x), float(y)))


def filled_circles(lab: np.ndarray) -> int:
    """How many filled circles of a pip's size a die's view (`die_view`) shows: circles found in the outlines of its
    lightness or either colour axis whose middle's colour differs from the ring just outside them. Glare streaking
    between glossy pips joins them at every split (`pip_count` sees no dot there), but leaves their round edges; a
    numeral's loop (a 6's) is a circle too, with the body's colour inside and out."""
    die = SIDE / VIEW
    least, most = int(CIRCLE_RADII[0] * die), int(CIRCLE_RADII[1] * die)
    found: list[tuple[float, float]] = []
    for channel in range(3):
        circles = cv2.HoughCircles(lab[:, :, channel], cv2.HOUGH_GRADIENT_ALT, 1.5, 2 * least, param1=60,
                                   param2=CIRCLE_PERFECT, minRadius=least, maxRadius=most)
        _add_new(found, [(x / SIDE, y / SIDE) for x, y, r in (() if circles is None else circles[0])
                         if _filled(lab, x, y, r)])
    return len(found)


def _filled(lab: np.ndarray, x: float, y: float, r: float) -> bool:
    """Whether the circle (x, y, r) in `lab`'s pixels holds another colour than the ring just outside it."""
    reach = int(np.ceil(1.7 * r)) + 1
    x0, y0 = max(int(x) - reach, 0), max(int(y) - reach, 0)
    patch = lab[y0:int(y) + reach + 1, x0:int(x) + reach + 1].astype(np.float32)
    yy, xx = np.mgrid[:patch.shape[0], :patch.shape[1]]
    gap = np.hypot(xx + x0 - x, yy + y0 - y) / max(r, 1e-6)
    inside, ring = patch[gap <= 0.6], patch[(gap >= 1.3) & (gap <= 1.7)]
    if len(inside) < 5 or len(ring) < 5:
        return False
    return float(np.linalg.norm(np.median(inside, 0) - np.median(ring, 0))) >= FILLED_CONTRAST


def inked(lab8: np.ndarray) -> bool:
    """Whether a die's view (`die_view`) shows marks in ink: the most distinct 5 % of its middle INKED or further
    from its typical colour. Pips or numerals pressed into an unpainted die (Rune55's white cubes) are faint rings
    that no test here finds, and the recogniser reads them as digits: where nothing is inked, no pip seen says
    nothing."""
    q = SIDE // 4
    middle = lab8[q:SIDE - q, q:SIDE - q].astype(np.float32)
    far = np.sqrt(((middle - np.median(middle.reshape(-1, 3), 0)) ** 2).sum(-1))
    return float(np.percentile(far, 95)) >= INKED


def show_no_pips(frame: np.ndarray, boxes: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """(N,) bool: the dice in `judge` (N,) bool, JUDGED_FROM_PX or larger and inked (`inked`), on which no pip is
    seen: no dot of a pip's shape (`pip_count`), and fewer than two filled circles (`filled_circles`; a pip die shows
    two and more in nearly every view, and a one-pip face's lone big dot is the dots' to find)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    side = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    out = np.zeros(len(boxes), bool)
    for i in np.flatnonzero(np.asarray(judge, bool) & (side >= JUDGED_FROM_PX)):
        view = die_view(frame, boxes[i])
        if inked(view) and pip_count(view, enough=1) == 0:
            out[i] = filled_circles(view) < 2
    return out
