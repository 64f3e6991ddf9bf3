"""The face reader's crop: framing, and shrinking that keeps thin numeral strokes."""

from __future__ import annotations

import cv2
import numpy as np

from dicecam.vision.crops import square_crop


def _die_with_a_thin_stroke(side: int = 600) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    img = np.zeros((800, 800, 3), np.uint8)
    x1 = y1 = (800 - side) // 2
    # A numeral's stroke: 2 px wide and the die's height, at an x that falls between sample points.
    img[y1:y1 + side, 401:403] = 255
    return img, (x1, y1, x1 + side, y1 + side)


def test_a_large_die_shrunk_to_the_crop_keeps_a_thin_stroke():
    img, box = _die_with_a_thin_stroke()
    crop = square_crop(img, box, margin=0.15, size=64)
    column = crop[:, :, 0].astype(float).max(axis=0)
    # The stroke covers 2 of the ~12 source pixels behind each crop pixel: area averaging keeps
    # about 2/12 of its brightness, where point sampling keeps all of it or nothing.
    assert 25 <= column.max() <= 80
    expected_mass = 2 * 600 * 255 * (64 / (600 * 1.3)) ** 2
    assert abs(crop[:, :, 0].astype(float).sum() - expected_mass) < 0.3 * expected_mass


def test_point_sampling_would_have_dropped_that_stroke():
    # Why area resampling is needed: warpAffine's own shrinking samples points and misses it.
    img, box = _die_with_a_thin_stroke()
    x1, y1, x2, y2 = box
    side = (x2 - x1) * 1.3
    s = 64 / side
    m = np.array([[s, 0, 32 - s * (x1 + x2) / 2], [0, s, 32 - s * (y1 + y2) / 2]], np.float32)
    sampled = cv2.warpAffine(img, m, (64, 64), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    assert sampled[:, :, 0].max() == 0


def test_a_small_die_is_enlarged_and_centred():
    img = np.zeros((100, 100, 3), np.uint8)
    img[40:60, 40:60] = 200
    crop = square_crop(img, (40, 40, 60, 60), margin=0.15, size=64)
    ys, xs = np.nonzero(crop[:, :, 0] > 100)
    assert abs(ys.mean() - 31.5) < 1.5 and abs(xs.mean() - 31.5) < 1.5
    # The box fills 1/1.3 of the crop's side.
    assert abs((xs.max() - xs.min() + 1) - 64 / 1.3) <= 3


def test_parts_outside_the_image_replicate_its_edge():
    img = np.full((50, 50, 3), 90, np.uint8)
    crop = square_crop(img, (-20, -20, 10, 10), size=32)
    assert crop.shape == (32, 32, 3) and (crop == 90).all()
