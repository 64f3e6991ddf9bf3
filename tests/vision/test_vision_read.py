"""The reader: letterbox geometry, decoding the detector, joining kind and face beliefs, and the
shipped weights reading rendered dice."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.vision.crops import FACE_CLASSES, FACE_INDEX, KINDS, square_crop
from dicecam.vision.detections import Detections
from dicecam.vision.read import Letterbox, Reader
from fake_models import counting_numerals, d20_reader


def test_a_640x480_frame_fills_the_detector_input_width_and_is_centred_vertically():
    lb = Letterbox.fit(640, 480, 416, 320)
    assert lb.scale == pytest.approx(0.65)
    assert lb.pad == (0.0, 4.0)
    frame = np.zeros((480, 640, 3), np.uint8)
    assert lb.apply(frame, 416, 320).shape == (320, 416, 3)


def _raw(boxes_in_input, kind_scores):
    """An ultralytics-shaped output: (1, 4 + kinds, anchors), centre boxes."""
    cols = []
    for (x1, y1, x2, y2), scores in zip(boxes_in_input, kind_scores):
        cols.append([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, *scores])
    return np.array(cols, np.float32).T[None]


def test_detector_boxes_map_back_to_source_pixels_and_overlaps_collapse_to_one_die():
    lb = Letterbox.fit(640, 480, 416, 320)
    src = (100.0, 200.0, 180.0, 280.0)
    inp = [v * lb.scale + lb.pad[i % 2] for i, v in enumerate(src)]
    shifted = [inp[0] + 1, inp[1], inp[2] + 1, inp[3]]
    scores = [[0, 0.9, 0, 0, 0, 0, 0], [0, 0, 0.8, 0, 0, 0, 0]]
    dets = Detections.from_yolo(_raw([inp, shifted], scores), lb.scale, lb.pad, (640, 480))
    assert len(dets) == 1, "one die, even when the detector doubts its kind"
    assert KINDS[dets.kind[0]] == "d6"
    np.testing.assert_allclose(dets.xyxy[0], src, atol=0.01)


def test_weak_detections_are_dropped_and_an_empty_frame_reads_no_dice():
    dets = Detections.from_yolo(_raw([(10, 10, 40, 40)], [[0.1] * 7]), 1.0, (0, 0), (416, 320))
    assert len(dets) == 0
    assert dets.to_readings() == []


def test_boolean_masks_index_every_field_and_shapes_are_checked():
    dets = Detections.from_arrays(np.array([[0, 0, 10, 10], [20, 20, 30, 30]], np.float32), np.eye(7)[:2])
    assert len(dets[np.array([False, True])]) == 1
    with pytest.raises(ValueError):
        Detections.from_arrays(np.zeros((2, 4), np.float32), np.zeros((3, 7), np.float32))


def _fake_reader(kind_scores, face_probs, colour=0, cocked=-5.0):
    """A reader whose detector finds one die and whose face reader answers `face_probs`."""
    lb = Letterbox.fit(640, 480, 416, 320)

    def detector(x):
        return [_raw([(100, 100, 160, 160)], [kind_scores])]

    def faces(crops):
        n = len(crops)
        logits = np.log(np.maximum(np.tile(face_probs, (n, 1)), 1e-9))
        col = np.full((n, 3), -5.0, np.float32)
        col[:, colour] = 5
        return [logits, col, np.full((n, 1), cocked, np.float32)]

    assert lb.scale > 0
    return Reader(detector, faces, colours=["red", "white", "blue"])


def _probs(**pairs):
    p = np.full(len(FACE_CLASSES), 1e-6)
    for name, v in pairs.items():
        kind, value = name.split("_")
        p[FACE_INDEX[(kind, int(value))]] = v
    return p / p.sum()


def test_the_face_reader_decides_between_d10_and_d00_when_the_detector_is_torn():
    frame = np.full((480, 640, 3), 90, np.uint8)
    scores = [0, 0, 0, 0.5, 0.5, 0, 0]  # d10 or d00: the detector cannot tell
    (die,) = _fake_reader(scores, _probs(d00_70=0.9, d10_7=0.1))(frame)
    assert (die.type.value, die.value) == ("d00", 70)
    assert die.colour == "red"
    assert not die.uncertain and not die.cocked


def test_a_face_the_reader_is_torn_about_is_flagged_uncertain_and_a_leaning_die_cocked():
    frame = np.full((480, 640, 3), 90, np.uint8)
    (die,) = _fake_reader([0, 0.9, 0, 0, 0, 0, 0], _probs(d6_6=0.5, d6_5=0.5), cocked=3.0)(frame)
    assert die.uncertain
    assert die.cocked
    assert die.type.value == "d6" and die.value in (5, 6)


def _frame_with_the_die(pips: bool) -> np.ndarray:
    """The fake detector's die (its box in source pixels, about 92 px) as a dark square with four red pips, or with a
    white "4"."""
    lb = Letterbox.fit(640, 480, 416, 320)
    x1, y1, x2, y2 = (int(round((v - lb.pad[i % 2]) / lb.scale)) for i, v in enumerate((100, 100, 160, 160)))
    frame = np.full((480, 640, 3), 200, np.uint8)
    cv2.rectangle(frame, (x1, y1), (x2, y2), (40, 40, 40), -1)
    side = x2 - x1
    for u, v in ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)) if pips else ():
        cv2.circle(frame, (int(x1 + u * side), int(y1 + v * side)), int(0.07 * side), (40, 40, 220), -1, cv2.LINE_AA)
    if not pips:
        cv2.putText(frame, "4", (x1 + side // 4, y2 - side // 4), cv2.FONT_HERSHEY_SIMPLEX, side / 40, (235, 235, 235),
                    max(side // 12, 2), cv2.LINE_AA)
    return frame


@pytest.mark.parametrize("kind_scores, faces, pips, numerals_read", [
    ([0, 0.9, 0, 0, 0, 0, 0], {"d6_4": 0.99}, True, False),  # plain pips: the network's to read
    ([0, 0.9, 0, 0, 0, 0, 0], {"d6_4": 0.6, "d6_3": 0.4}, True, True),  # pips the network is torn about
    ([0, 0.9, 0, 0, 0, 0, 0], {"d6_4": 0.99}, False, True),  # read as pips, but none to be seen: a numbered d6
    ([0, 0, 0, 0, 0, 0, 0.9], {"d20_17": 0.99}, False, True),  # a numeral die
])
def test_only_dice_that_plainly_show_pips_are_read_without_their_numerals(kind_scores, faces, pips, numerals_read):
    windows_read: list = []
    reader = _fake_reader(kind_scores, _probs(**faces))
    reader.numerals = counting_numerals(windows_read)
    (die,) = reader(_frame_with_the_die(pips))
    assert bool(windows_read) == numerals_read
    assert die.type.value == next(iter(faces)).split("_")[0]


@pytest.mark.parametrize("pips", [True, False])
def test_a_taught_d6_keeps_its_numerals_scores_as_a_reading_would_read_them(pips):
    windows_read: list = []
    reader = _fake_reader([0, 0.9, 0, 0, 0, 0, 0], _probs(d6_4=0.99))
    reader.numerals = counting_numerals(windows_read)
    faces = reader.faces
    reader.faces = lambda x: [*faces(x), np.ones((len(x), 8), np.float32)]  # a face reader that gives features
    frame = _frame_with_the_die(pips)
    kept = reader.learnable(frame, reader.detect(frame).xyxy, ["d6"])
    assert bool(windows_read) == (not pips) and np.isnan(kept.numerals).all() == pips


class _Finder:
    """An up-face finder that puts every die's numeral a little above its centre, upright."""

    def __call__(self, crops):
        return np.tile([[0.0, -0.1, 1.0, 0.0, 0.9]], (len(crops), 1)).astype(np.float32)


class _AxesSeen:
    """A numeral reader that reads nothing legible and notes where each call read the dice's d4 faces."""

    def __init__(self) -> None:
        self.axes: list = []
        self.inner = counting_numerals([])

    def __call__(self, frame, boxes, looks, d4_axes=None):
        self.axes.append(d4_axes)
        return self.inner(frame, boxes, looks, d4_axes)


@pytest.mark.parametrize("kind_scores, along_the_axis", [
    ([0.9, 0, 0, 0, 0, 0, 0], True),  # a d4
    ([0.2, 0, 0.7, 0, 0, 0, 0], True),  # a d8 that may be a d4
    ([0, 0, 0, 0, 0, 0, 0.9], False),  # a d20
])
def test_a_die_that_may_be_a_d4_has_its_d4_faces_read_along_the_finders_axis(kind_scores, along_the_axis):
    reader = _fake_reader(kind_scores, _probs(d4_3=0.5, d20_3=0.5))
    reader.finder, reader.numerals = _Finder(), _AxesSeen()
    reader(np.full((480, 640, 3), 90, np.uint8))
    (axes,) = reader.numerals.axes
    assert (axes[0] is not None) == along_the_axis


def test_a_die_taught_as_a_d4_keeps_its_d4_faces_as_read_along_the_finders_axis():
    reader = d20_reader(lambda frame: np.zeros((3, len(FACE_CLASSES))))
    reader.finder, reader.numerals = _Finder(), _AxesSeen()
    boxes = np.array([[100, 100, 160, 160], [300, 100, 360, 160]], np.float32)
    reader.learnable(np.full((480, 640, 3), 90, np.uint8), boxes, ["d4", "d20"])
    (axes,) = reader.numerals.axes
    assert axes[0] is not None and axes[1] is None


def test_crops_are_square_centred_on_the_box_and_edge_filled():
    img = np.zeros((100, 100, 3), np.uint8)
    img[40:60, 40:60] = 255
    crop = square_crop(img, (40, 40, 60, 60), margin=0.5, size=40)
    assert crop.shape == (40, 40, 3)
    assert crop[20, 20].min() == 255 and crop[2, 2].max() == 0
    edge = square_crop(img, (0, 0, 20, 20), margin=0.5, size=20)
    assert edge.shape == (20, 20, 3)


# --- the shipped weights on rendered dice ------------------------------------------------------

render = pytest.importorskip("dicecam.datasets.render")
egl_ok, egl_why = render.egl_available()


@pytest.fixture(scope="module")
def shipped():
    return Reader.load()


@pytest.mark.skipif(not egl_ok, reason=f"no headless OpenGL (EGL) context: {egl_why}")
def test_the_shipped_weights_find_and_read_rendered_dice(shipped):
    from dicecam.datasets.scene import render_image
    from dicecam.vision.evaluate import Report, score_image

    report = Report()
    gl = render.Renderer()
    for seed in range(12):
        img, truth = render_image(55_000 + seed, renderer=gl, n_dice=4)
        read = shipped(img)
        assert all(isinstance(d, DieReading) for d in read)
        for d in read:
            x1, y1, x2, y2 = d.box
            assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 480
        score_image(report, truth.dice, read)
    gl.close()
    figures = report.to_json()
    found = sum(k.found for k in report.kinds.values()) / max(1, figures["dice"])
    # The shipped weights on these 12 renders (48 dice, bundled fonts): found 0.75, read right 0.44,
    # colour 0.94. The floors sit two or three dice under that: a real regression fails here.
    assert found >= 0.70, figures
    assert figures["dice_read_right"] >= 0.39, figures
    assert figures["colour_accuracy"] >= 0.90, figures


def test_a_finder_that_takes_larger_crops_gets_its_own_cut_of_the_same_framing(shipped, monkeypatch):
    seen = []

    class LargerFinder:
        size = 128

        def __call__(self, crops):
            seen.append(crops)
            return np.tile([[0.0, 0.0, 1.0, 0.0, 1.0]], (len(crops), 1)).astype(np.float32)

    frame = np.random.default_rng(3).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    boxes = np.array([[100, 100, 180, 190], [300, 200, 340, 260]], np.float32)
    crops = shipped.crops(frame, boxes)
    monkeypatch.setattr(shipped, "finder", LargerFinder())
    assert shipped.up_faces(frame, boxes, crops).shape == (2, 5)
    assert seen[0].shape == (2, 128, 128, 3)
    assert np.array_equal(seen[0][1], square_crop(frame, boxes[1], size=128))
    assert len(shipped.looks(frame, boxes, crops)) == 2
