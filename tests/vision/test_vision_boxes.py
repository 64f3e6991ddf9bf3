"""Box arithmetic: the examples in vision/boxes.py's docstring are its tests, and the two directions of a
YOLO label's box undo each other."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from dicecam.vision import boxes


def test_the_docstring_examples_hold():
    result = doctest.testmod(boxes, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


@pytest.mark.parametrize("box", [(0.0, 0.0, 64.0, 48.0), (10.0, 20.0, 30.0, 60.0), (100.5, 7.25, 310.0, 479.0)])
def test_a_yolo_label_box_reads_back_as_the_box_it_was_written_from(box):
    assert boxes.pixel_box(*boxes.normalised(box, 640, 480), 640, 480) == pytest.approx(box)


def test_iou_is_symmetric_and_one_for_the_same_box():
    a, b = (0, 0, 10, 10), (3, 4, 12, 20)
    assert boxes.iou(a, b) == boxes.iou(b, a) and boxes.iou(b, b) == 1.0


def test_two_sets_of_boxes_overlap_pair_by_pair_as_iou_does():
    got = boxes.pairwise_iou(np.array([[0, 0, 10, 10], [20, 20, 30, 30]]), np.array([[5, 0, 15, 10], [0, 0, 10, 10]]))
    assert got == pytest.approx(np.array([[1 / 3, 1.0], [0.0, 0.0]]))
    assert boxes.pairwise_iou(np.zeros((0, 4)), np.array([[0, 0, 1, 1]])).shape == (0, 1)
