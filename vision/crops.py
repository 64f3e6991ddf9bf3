"""The face reader's view of a die: a square crop around its box, and the class table.

Training (models/) and inference (vision/read.py) both cut crops here, so the reader sees at
run time exactly the framing it was trained on.
"""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import FACES, DieType

# Detector classes, in the fixed order of the YOLO exports (vision/labels.py): DieType's order.
KINDS: tuple[str, ...] = tuple(t.value for t in DieType)
CROP_SIZE = 64
CROP_MARGIN = 0.15


def face_label(kind: str, value: int) -> str:
    """'7', '00', '30': a face's value as labels show it (a d00's with two digits)."""
    return f"{value:02d}" if kind == "d00" else str(value)


def face_name(kind: str, value: int) -> str:
    """'d8_7', 'd00_30': one class of the face reader."""
    return f"{kind}_{face_label(kind, value)}"


# Every (kind, value) the face reader can answer, grouped by kind in KINDS order.
FACE_CLASSES: tuple[tuple[str, int], ...] = tuple((k, v) for k in KINDS for v in FACES[DieType(k)])
FACE_INDEX: dict[tuple[str, int], int] = {kv: i for i, kv in enumerate(FACE_CLASSES)}
# Per face class: the index of its kind in KINDS, and its value (made once; read on every frame).
KIND_OF_FACE = np.array([KINDS.index(k) for k, _ in FACE_CLASSES], np.int64)
# Per kind (index into KINDS), its faces' columns in FACE_CLASSES.
KIND_COLUMNS = [np.flatnonzero(KIND_OF_FACE == k) for k in range(len(KINDS))]
VALUE_OF_FACE = np.array([v for _, v in FACE_CLASSES], np.int64)


def square_crop(img: np.ndarray, box: Sequence[float], margin: float = CROP_MARGIN,
                size: int = CROP_SIZE) -> np.ndarray:
    """A square crop centred on the box, `margin` of its larger side added on each side;
    parts outside the image are filled by edge replication.

    Shrinking averages every source pixel (area resampling): `warpAffine` would sample a
    150-px die at 64 points per row and drop a numeral's thin strokes between them."""
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1, 1.0) * (1 + 2 * margin)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    s = size / side
    if s >= 1:
        m = np.array([[s, 0, size / 2 - s * cx], [0, s, size / 2 - s * cy]], np.float32)
        return cv2.warpAffine(img, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # Cut the square at (about) native resolution, then area-average it down.
    n = int(np.ceil(side))
    t = n / side
    m = np.array([[t, 0, n / 2 - t * cx], [0, t, n / 2 - t * cy]], np.float32)
    native = cv2.warpAffine(img, m, (n, n), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.resize(native, (size, size), interpolation=cv2.INTER_AREA)


def crop_batch(img: np.ndarray, boxes: np.ndarray, margin: float = CROP_MARGIN, size: int = CROP_SIZE) -> np.ndarray:
    """(N, size, size, 3) uint8 crops of one image, one per box row (x1, y1, x2, y2)."""
    out = np.empty((len(boxes), size, size, 3), np.uint8)
    for i, b in enumerate(boxes):
        out[i] = square_crop(img, b, margin, size)
    return out
