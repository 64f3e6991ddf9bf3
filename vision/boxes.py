"""Box arithmetic, in one place. A box is `(x1, y1, x2, y2)` in pixels of its image (xyxy), as
`DieReading.box` and `Detections.xyxy` hold it; the detector and YOLO labels give centre boxes, turned
into xyxy here. The examples run as tests (tests/vision/test_vision_boxes.py).

Overlap of two boxes, intersection over union:

>>> iou((0, 0, 10, 10), (5, 0, 15, 10))
0.3333333333333333
>>> iou((0, 0, 10, 10), (20, 0, 30, 10)), iou((0, 0, 0, 0), (0, 0, 0, 0))
(0.0, 0.0)

Where a box's centre lies:

>>> centre((10, 20, 30, 60))
(20.0, 40.0)

A YOLO label's normalised centre box in pixels of a 640 x 480 image, and back:

>>> pixel_box(0.5, 0.5, 0.25, 0.5, 640, 480)
(240.0, 120.0, 400.0, 360.0)
>>> normalised((240.0, 120.0, 400.0, 360.0), 640, 480)
(0.5, 0.5, 0.25, 0.5)

The detector's centre boxes (cx, cy, w, h; one row each), kept by non-maximum suppression, as xyxy. The
second box overlaps the first by IoU 0.82 and goes; the third overlaps it by 0.25 and stays; the fourth
scores below `min_score`:

>>> import numpy as np
>>> centres = np.array([[50.0, 50, 20, 40], [52, 50, 20, 40], [62, 50, 20, 40], [150, 50, 20, 40]])
>>> xywh = xywh_from_centres(centres)
>>> xywh[0].tolist()
[40.0, 30.0, 20.0, 40.0]
>>> kept = nms(xywh, np.array([0.9, 0.8, 0.7, 0.2]), min_score=0.3, max_iou=0.5)
>>> kept.tolist()
[0, 2]
>>> xyxy_from_xywh(xywh[kept]).tolist()
[[40.0, 30.0, 60.0, 70.0], [52.0, 30.0, 72.0, 70.0]]

With every score below `min_score` none is kept, and the indices still index:

>>> xywh[nms(xywh, np.full(4, 0.1), min_score=0.3, max_iou=0.5)].shape
(0, 4)

Two sets of boxes at once: each pair's IoU, and how much of each box of the second set lies inside each box of
the first (a small box wholly inside a big one is covered 1.0; the big one by it only 0.25):

>>> big, small = [0, 0, 20, 20], [0, 0, 10, 10]
>>> pairwise_iou(np.array([big]), np.array([small, [40, 40, 50, 50]])).tolist()
[[0.25, 0.0]]
>>> covered(np.array([big, small]), np.array([small, big])).tolist()
[[1.0, 1.0], [1.0, 0.25]]
"""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

Box = Sequence[float]  # (x1, y1, x2, y2)
PixelBox = tuple[float, float, float, float]


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes; 0 when both are empty."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def centre(box: Box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def pixel_box(cx: float, cy: float, bw: float, bh: float, width: int, height: int) -> PixelBox:
    """A normalised YOLO box in pixels of a width x height image: (x1, y1, x2, y2)."""
    return (cx - bw / 2) * width, (cy - bh / 2) * height, (cx + bw / 2) * width, (cy + bh / 2) * height


def normalised(box: Box, width: int, height: int) -> tuple[float, float, float, float]:
    """A box as a YOLO label writes it: (cx, cy, w, h) as shares of a width x height image."""
    x1, y1, x2, y2 = box
    return (x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height


def xywh_from_centres(cxcywh: np.ndarray) -> np.ndarray:
    """Rows of (cx, cy, w, h) as rows of (x1, y1, w, h), the form OpenCV's NMS takes."""
    cx, cy, w, h = cxcywh[:, 0], cxcywh[:, 1], cxcywh[:, 2], cxcywh[:, 3]
    return np.stack([cx - w / 2, cy - h / 2, w, h], 1)


def xyxy_from_xywh(xywh: np.ndarray) -> np.ndarray:
    return np.stack([xywh[:, 0], xywh[:, 1], xywh[:, 0] + xywh[:, 2], xywh[:, 1] + xywh[:, 3]], 1)


def nms(xywh: np.ndarray, scores: np.ndarray, *, min_score: float, max_iou: float) -> np.ndarray:
    """Indices of the boxes non-maximum suppression keeps (OpenCV's): of two boxes overlapping by more than
    `max_iou`, the higher scored; boxes scored below `min_score` never."""
    idx = cv2.dnn.NMSBoxes(xywh.tolist(), scores.tolist(), min_score, max_iou)
    return np.asarray(idx, np.int64).reshape(-1)


def _areas(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(len(a), len(b)) intersections of two sets of xyxy boxes, and each set's areas, broadcast alike."""
    a, b = np.asarray(a, np.float64).reshape(-1, 1, 4), np.asarray(b, np.float64).reshape(1, -1, 4)
    iw = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    ih = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    return iw * ih, (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]), (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])


def pairwise_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) intersection over union of two sets of xyxy boxes."""
    inter, area_a, area_b = _areas(a, b)
    union = area_a + area_b - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def covered(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) the share of each box of `b` that lies inside each box of `a`."""
    inter, _, area_b = _areas(a, b)
    return np.where(area_b > 0, inter / np.where(area_b > 0, area_b, 1), 0.0)
