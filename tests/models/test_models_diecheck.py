"""The die check cannot rot: it fits on a few renders with the shipped detector and reader, the runtime
reader loads what it writes, and its samples are labelled as the boxes overlap the labelled dice."""

from __future__ import annotations

import numpy as np

from dicecam.mechanics.dice import DieType
from dicecam.vision.evaluate import TruthDie, TruthImage
from dicecam.vision.memory import model_fingerprint
from dicecam.vision.read import Reader


def test_the_die_check_fits_on_renders_and_the_reader_loads_it(renders, shipped_copy):
    from dicecam.models.train_diecheck import train_diecheck

    said: list[str] = []
    train_diecheck(None, renders, shipped_copy, reader_folder=shipped_copy, log=said.append)
    assert any("synthetic" in m and "dice" in m for m in said), said
    reader = Reader.load(shipped_copy, backend="onnxruntime")
    assert reader.check is not None and reader.check.reader == model_fingerprint(shipped_copy / "reader.onnx")
    assert reader.check.floor < reader.min_score


def test_a_box_is_a_die_where_it_matches_one_none_where_it_misses_all_and_left_out_in_between():
    from dicecam.models.train_diecheck import labels

    item = TruthImage(path=None, dice=[TruthDie(DieType.d6, 3, (0, 0, 10, 10))])
    boxes = np.array([[0, 0, 10, 11], [30, 30, 40, 40], [5, 0, 15, 10]], np.float32)
    assert labels(item, boxes, np.array([0.9, 0.5, 0.4])).tolist() == [1, 0, -1]
    one = TruthImage(path=None, dice=[TruthDie(DieType.d20, 7)], single=True)
    assert labels(one, boxes, np.array([0.2, 0.5, 0.4])).tolist() == [0, 1, 0]
