"""Fake models for reader tests: a detector's raw output, a face network that sees dice in bright crops, and a
numeral reader that counts the windows it reads."""

from __future__ import annotations

import numpy as np

from dicecam.vision.crops import FACE_CLASSES, FACE_INDEX, KINDS
from dicecam.vision.numerals import ALPHABET, NumeralReader


def yolo_raw(boxes_in_input, scores) -> np.ndarray:
    """An exported YOLO detector's output, (1, 4 + kinds, boxes), for xyxy boxes in its input's pixels."""
    if not len(boxes_in_input):
        return np.zeros((1, 4 + len(KINDS), 0), np.float32)
    cols = [[(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, *s] for (x1, y1, x2, y2), s in zip(boxes_in_input, scores)]
    return np.array(cols, np.float32).T[None]


def brightness_faces(calls: list, features: int):
    """A face network whose first feature is the crop's brightness and which reads every crop as a d6 showing
    6, surely; it appends the number of crops of each call to `calls`."""
    def faces(crops):
        calls.append(len(crops))
        n = len(crops)
        out = np.zeros((n, features), np.float32)
        out[:, 0] = crops.mean((1, 2, 3)) / 255
        logits = np.zeros((n, len(FACE_CLASSES)), np.float32)
        logits[:, FACE_INDEX[("d6", 6)]] = 9
        return [logits, np.zeros((n, 3), np.float32), np.full((n, 1), -5.0, np.float32), out]
    return faces


def counting_numerals(windows_read: list) -> NumeralReader:
    """A numeral reader whose recogniser writes nothing legible and notes how many windows each call read."""
    def recogniser(windows):
        windows_read.append(len(windows))
        log_probs = np.full((len(windows), 6, 2 + len(ALPHABET)), np.log(1e-6))
        log_probs[:, :, 0] = 0.0  # blank throughout
        return log_probs
    return NumeralReader(recogniser)


def d20_reader(scores_of, crop_size: int = 16):
    """A reader that finds one d20 at (100, 100, 160, 160) the face network cannot read, whose looks score its
    faces as `scores_of(frame)` says ((looks, F)); its features are the crop's middle pixels."""
    from dicecam.vision.numerals import NumeralEvidence
    from dicecam.vision.read import Reader

    def detector(x):
        return [np.array([[130.0, 130.0, 60.0, 60.0, 0, 0, 0, 0, 0, 0, 0.95]], np.float32).T[None]]

    def faces(crops):
        n = len(crops)
        feats = crops[:, :, 4:12, 4:12].reshape(n, -1) - 128.0
        return [np.zeros((n, len(FACE_CLASSES)), np.float32), np.zeros((n, 1), np.float32),
                np.full((n, 1), -5.0, np.float32), feats]

    reader = Reader(detector, faces, crop_size=crop_size, model_id="fake")
    reader.numerals = lambda frame, boxes, looks, d4_axes=None: NumeralEvidence(  # noqa: E731
        np.repeat(scores_of(frame)[None], len(boxes), 0), np.zeros(len(boxes)))
    return reader
