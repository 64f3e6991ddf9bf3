"""The die check: a box the detector was unsure of counts only when the face network clearly sees a die in
it, and a box it was sure of is dropped only when the network clearly sees none."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dicecam.mechanics.errors import DicecamError
from dicecam.vision.diecheck import DieCheck, check_inputs, relative_side
from dicecam.vision.read import Letterbox, Reader
from fake_models import brightness_faces, yolo_raw

FEATURES = 4


def test_an_unsure_box_needs_a_clear_die_and_a_sure_box_a_clear_non_die():
    check = DieCheck(np.zeros(FEATURES + 9, np.float32), 0.0, floor=0.15, trusted=0.3, keep_low=0.9, drop_high=0.1)
    score = np.array([0.2, 0.2, 0.6, 0.6, 0.1])
    chance = np.array([0.95, 0.5, 0.5, 0.05, 0.99])
    assert check.keep(chance, score).tolist() == [True, False, True, False, False]


def test_thresholds_out_of_order_are_refused():
    with pytest.raises(ValueError, match="out of order"):
        DieCheck(np.zeros(3), 0.0, floor=0.4, trusted=0.3)
    with pytest.raises(ValueError, match="out of order"):
        DieCheck(np.zeros(3), 0.0, keep_low=0.2, drop_high=0.5)


def test_the_inputs_are_the_features_the_logs_of_the_scores_and_the_boxes_share_of_the_frame():
    xyxy = np.array([[0, 0, 64, 32]], np.float32)
    side = relative_side(xyxy, 640, 480)
    np.testing.assert_allclose(side, [0.1], rtol=1e-6)
    x = check_inputs(np.ones((1, FEATURES)), np.full((1, 7), 0.5), np.array([0.5]), side)
    assert x.shape == (1, FEATURES + 9)
    np.testing.assert_allclose(x[0, -2:], np.log([0.5, 0.1]), rtol=1e-5)


def test_a_check_round_trips_and_one_fitted_on_another_face_reader_is_refused(tmp_path):
    check = DieCheck(np.arange(FEATURES + 9, dtype=np.float32) / 10, -0.5, reader="abc")
    path = tmp_path / "diecheck.json"
    path.write_text(json.dumps(check.to_json(fitted_on={"synthetic": 3})))
    again = DieCheck.load(path, "abc")
    np.testing.assert_allclose(again.w, check.w)
    assert (again.b, again.floor, again.keep_low) == (check.b, check.floor, check.keep_low)
    with pytest.raises(DicecamError, match="another face reader"):
        DieCheck.load(path, "another")
    path.write_text("{not json")
    with pytest.raises(DicecamError, match="cannot be used"):
        DieCheck.load(path, "abc")


def _table(check: DieCheck | None):
    """A reader whose detector draws a faint box round a bright patch (a die) and a confident box round a
    dark one (a knob), and whose face network's first feature is the crop's brightness."""
    lb = Letterbox.fit(640, 480, 416, 320)
    assert lb.scale > 0
    calls = []

    def detector(x):
        return [yolo_raw([(100, 100, 140, 140), (250, 100, 290, 140)], [[0, 0.2, 0, 0, 0, 0, 0], [0, 0.6, 0, 0, 0, 0, 0]])]

    frame = np.zeros((480, 640, 3), np.uint8)
    x1, y1 = (np.array([100, 100]) - np.array(lb.pad)) / lb.scale
    frame[int(y1) + 5:int(y1) + 55, int(x1) + 5:int(x1) + 55] = 230
    return Reader(detector, brightness_faces(calls, FEATURES), check=check), frame, calls


def test_the_reader_keeps_a_faint_die_the_check_sees_and_drops_a_sure_knob_it_does_not():
    w = np.zeros(FEATURES + 9, np.float32)
    w[0] = 40.0  # bright crops are dice
    reader, frame, calls = _table(DieCheck(w, -10.0))
    dice = reader(frame)
    assert len(dice) == 1 and dice[0].box[0] < 200, "the faint box round the bright patch"
    assert calls == [2], "the face network looks once, and the reading uses that look"
    plain, frame, _ = _table(None)
    (alone,) = plain(frame)
    assert alone.box[0] > 200, "without a check the detector's threshold alone decides"
