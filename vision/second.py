"""A second detector's opinion on which boxes hold a die.

The shipped detector learnt dice from renders without much around them, and boxes what holds a die (a glass
dome, a bowl) or round things that are no dice (coins, counters, knobs) as dice. The same detector fine-tuned on
renders with those things (models/MODEL_CARD.md, twelfth stop) reads far fewer of them, and boxes dice under a dome
far better, but its kind scores and boxes read some real dice worse when it replaces the shipped one. So it only
gives its opinion beside it:
- **veto**: a die the shipped detector and its check keep is dropped where the second detector has no box on it
  (IoU >= VETO_IOU) scored VETO_SCORE or more;
- **add**: a box of the second detector that overlaps no die kept (IoU < ADD_IOU), holds no die kept mostly inside
  it (ADD_INSIDE of its box: the fine-tuned detector boxes two touching real dice as one), and that its own die
  check keeps (vision/diecheck.py, fitted on its scores) is added.
A die both detectors find keeps the shipped detector's box and kind scores, so it reads exactly as it does without
the second opinion; the face network looks only at the boxes added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from dicecam.mechanics.errors import DicecamError

from .boxes import covered, pairwise_iou
from .crops import KINDS
from .detections import Detections
from .diecheck import DieCheck, boxes_inputs

DETECTOR_FILE = "second_detector.onnx"  # with its sidecar second_detector.json, as detector.onnx
CHECK_FILE = "second_diecheck.json"
# Screened on the training parts and renders only (models/MODEL_CARD.md, twelfth stop).
VETO_SCORE, VETO_IOU, ADD_IOU, ADD_INSIDE = 0.05, 0.3, 0.3, 0.5

Model = Callable[[np.ndarray], list[np.ndarray]]


@dataclass(frozen=True)
class Opinion:
    """What the second detector says of a frame's dice: which of them to keep, and which of its boxes to add."""

    keep: np.ndarray  # (N,) bool, per die of the first detector
    looked_at: Detections  # its boxes where the first detector kept none, whose features it was given
    add: np.ndarray  # (len(looked_at),) bool: those that count as dice

    @property
    def added(self) -> Detections:
        return self.looked_at[self.add]


@dataclass
class SecondOpinion:
    boxes: Callable[[np.ndarray, float], Detections]  # (frame, min_score) -> the second detector's boxes
    check: DieCheck  # fitted on the second detector's scores
    veto_score: float = VETO_SCORE
    veto_iou: float = VETO_IOU
    add_iou: float = ADD_IOU
    add_inside: float = ADD_INSIDE

    def on(self, frame: np.ndarray, dets: Detections, features: Callable[[Detections], np.ndarray]) -> Opinion:
        """Its opinion of the dice `dets` found in `frame`; `features(boxes)` is the face network's feature
        vectors of boxes (called only for boxes it would add)."""
        theirs = self.boxes(frame, min(self.veto_score, self.check.floor))
        overlap = pairwise_iou(dets.xyxy, theirs.xyxy)
        seen = (overlap >= self.veto_iou) & (theirs.confidence >= self.veto_score)[None, :]
        keep = seen.any(1) if len(theirs) else np.zeros(len(dets), bool)
        kept = dets.xyxy[keep]
        # A box round a die already kept (two touching dice in one box, say) is no new die.
        new = (theirs.confidence >= self.check.floor) & ~(pairwise_iou(theirs.xyxy, kept) >= self.add_iou).any(1) \
            & ~(covered(theirs.xyxy, kept) >= self.add_inside).any(1)
        looked_at, add = theirs[new], np.zeros(int(new.sum()), bool)
        if len(looked_at):
            h, w = frame.shape[:2]
            add = self.check.keep(self.check.chance(boxes_inputs(features(looked_at), looked_at, w, h)),
                                  looked_at.confidence)
        return Opinion(keep, looked_at, add)


def load_second(folder: Path, model_id: str, session: Callable[[Path], Model],
                boxes: Callable[[Model, int, int], Callable[[np.ndarray, float], Detections]]) -> SecondOpinion | None:
    """The second opinion, when its detector and its die check are shipped beside the reader (`session` opens
    an ONNX file; `boxes(model, width, height)` reads a frame's boxes with it, as the first detector's are)."""
    det, check = folder / DETECTOR_FILE, folder / CHECK_FILE
    if not det.is_file():
        return None
    if not check.is_file() or not det.with_suffix(".json").is_file():
        raise DicecamError(f"the second detector in {folder} needs {det.with_suffix('.json').name} and {CHECK_FILE} beside it")
    meta = json.loads(det.with_suffix(".json").read_text())
    if meta.get("kinds") != list(KINDS):
        raise DicecamError(f"the second detector in {folder} was trained for other classes")
    return SecondOpinion(boxes(session(det), int(meta["input"]["width"]), int(meta["input"]["height"])),
                         DieCheck.load(check, model_id))
