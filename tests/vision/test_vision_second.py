"""A second detector's opinion: it vetoes a die it sees nothing at, adds a die the first missed where its own check
sees one, and leaves a die both find exactly as the first read it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dicecam.mechanics.errors import DicecamError
from dicecam.vision.crops import KINDS
from dicecam.vision.diecheck import DieCheck
from dicecam.vision.read import Letterbox, Reader, detector_boxes
from dicecam.vision.second import CHECK_FILE, DETECTOR_FILE, SecondOpinion, load_second
from fake_models import brightness_faces, yolo_raw

FEATURES = 4
LB = Letterbox.fit(640, 480, 416, 320)
# Boxes in the detector's input (416 x 320): a die at the left, a knob in the middle, a die under glass at the right.
DIE, KNOB, UNDER_GLASS = (60, 60, 100, 100), (180, 60, 220, 100), (300, 60, 340, 100)
D6 = [0, 0.8, 0, 0, 0, 0, 0]


def _detector(*boxes):
    return lambda x: [yolo_raw(list(boxes), [D6] * len(boxes))]


def _frame():
    """Bright patches (dice) at DIE and UNDER_GLASS, a dark one (the knob) at KNOB."""
    frame = np.zeros((480, 640, 3), np.uint8)
    for (x1, y1, x2, y2), level in ((DIE, 230), (KNOB, 20), (UNDER_GLASS, 230)):
        a = (np.array([x1, y1, x2, y2]) - np.array([*LB.pad, *LB.pad])) / LB.scale
        frame[int(a[1]) + 5:int(a[3]) - 5, int(a[0]) + 5:int(a[2]) - 5] = level
    return frame


def _check(trust_bright: bool = True):
    """A die check that sees a die in bright crops (or, `trust_bright=False`, in none)."""
    w = np.zeros(FEATURES + len(KINDS) + 2, np.float32)
    w[0] = 40.0 if trust_bright else 0.0
    return DieCheck(w, -10.0 if trust_bright else -20.0)


def _reader(first, second=None, check=None):
    calls = []
    opinion = None if second is None else SecondOpinion(detector_boxes(second, 416, 320), check or _check())
    return Reader(first, brightness_faces(calls, FEATURES), check=DieCheck(np.zeros(FEATURES + 9, np.float32), 0.0), second=opinion), calls


def _lefts(dice):
    return sorted(round(d.box[0]) for d in dice)


def test_a_die_both_detectors_find_reads_as_the_first_alone_reads_it_and_a_knob_only_the_first_sees_goes():
    plain, _ = _reader(_detector(DIE, KNOB))
    both, _ = _reader(_detector(DIE, KNOB), _detector(DIE))
    alone, frame = plain(_frame()), _frame()
    (kept,) = both(frame)
    assert len(alone) == 2
    assert kept == next(d for d in alone if d.box[0] < 200), "the same box, kind, value and confidence"


def test_a_die_only_the_second_detector_finds_is_added_where_its_own_check_sees_a_die():
    reader, calls = _reader(_detector(DIE), _detector(DIE, UNDER_GLASS))
    dice = reader(_frame())
    assert len(dice) == 2 and max(d.box[0] for d in dice) > 400, "the die under the glass"
    assert calls == [1, 1], "the face network looks at the first detector's die, then at the one box to add"
    doubter, _ = _reader(_detector(DIE), _detector(DIE, UNDER_GLASS), check=_check(trust_bright=False))
    assert len(doubter(_frame())) == 1, "a box its check sees no die in is not added"


def test_the_second_detector_adds_dice_where_the_first_found_nothing():
    reader, _ = _reader(_detector(), _detector(UNDER_GLASS))
    (die,) = reader(_frame())
    assert die.box[0] > 400 and (die.type.value, die.value) == ("d6", 6)
    nothing, _ = _reader(_detector(), _detector())
    assert nothing(_frame()) == []


def test_a_second_detector_is_loaded_only_whole_and_for_the_same_kinds(tmp_path):
    opened = []
    load = lambda: load_second(tmp_path, "reader-1", lambda p: opened.append(p) or _detector(),  # noqa: E731
                               detector_boxes)
    assert load() is None, "none shipped: no second opinion"
    (tmp_path / DETECTOR_FILE).write_bytes(b"onnx")
    with pytest.raises(DicecamError, match="needs second_detector.json and second_diecheck.json"):
        load()
    meta = {"kinds": list(KINDS), "input": {"width": 416, "height": 320}}
    (tmp_path / DETECTOR_FILE).with_suffix(".json").write_text(json.dumps(meta))
    (tmp_path / CHECK_FILE).write_text(json.dumps(_check().to_json() | {"reader": "reader-1"}))
    assert isinstance(load(), SecondOpinion) and opened == [tmp_path / DETECTOR_FILE]
    (tmp_path / DETECTOR_FILE).with_suffix(".json").write_text(json.dumps(meta | {"kinds": ["d6"]}))
    with pytest.raises(DicecamError, match="other classes"):
        load()
    (tmp_path / DETECTOR_FILE).with_suffix(".json").write_text(json.dumps(meta))
    (tmp_path / CHECK_FILE).write_text(json.dumps(_check().to_json() | {"reader": "another"}))
    with pytest.raises(DicecamError, match="another face reader"):
        load()


def test_a_box_round_a_die_already_kept_is_no_new_die():
    sees_dice_everywhere = DieCheck(np.zeros(FEATURES + len(KINDS) + 2, np.float32), 10.0)
    round_two = (50, 50, 160, 110)  # holds all of DIE and the dark knob beside it: IoU with DIE under 0.3
    reader, _ = _reader(_detector(DIE), _detector(DIE, round_two), check=sees_dice_everywhere)
    assert len(reader(_frame())) == 1
    apart, _ = _reader(_detector(DIE), _detector(DIE, UNDER_GLASS), check=sees_dice_everywhere)
    assert len(apart(_frame())) == 2, "a box apart from every kept die is still added"
