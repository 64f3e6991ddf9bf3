"""The die check: whether a detector's box holds a die, judged from what the face network sees in it.

The detector learnt dice from renders. On real tables it scores some dice under its threshold (touching
dice, big dice on wood, a die half in shadow: 12 % of rendered dice and 1-8 % of the real sets' under
0.3) and some things that are no dice above it (a light box's round knobs, a tower's ramp, wood grain).
The face network's features tell a die from wood, paper, ink and knobs far better than the detector's
score does: a logistic regression on them, the detector's kind scores and score, and the box's size
(`models/train_diecheck.py`, fitted on the real sets' training parts and renders) is the check.

With a check the detector is read down to `floor`: a box scored between `floor` and the detector's own
threshold (`trusted`) is kept only where the check is sure it holds a die (`keep_low`), and a box above
`trusted` is dropped only where the check is sure it does not (`drop_high`). So a die the detector was
sure of is lost only to a clear verdict, and a box it was unsure of needs a clear one to count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dicecam.mechanics.errors import DicecamError

FILE = "diecheck.json"
# The detector's kind scores are read as logs; this keeps a score of 0 finite (as the kind head's).
EPS = 1e-4
# Chosen on the check's left-one-source-out figures (models/train_diecheck.py, models/MODEL_CARD.md).
FLOOR, TRUSTED, KEEP_LOW, DROP_HIGH = 0.15, 0.3, 0.9, 0.1


def check_inputs(features: np.ndarray, kind_scores: np.ndarray, score: np.ndarray, side: np.ndarray
                 ) -> np.ndarray:
    """(N, D + K + 2): [face-network features, log kind scores, log score, log box side / frame side]."""
    return np.concatenate([features, np.log(kind_scores + EPS), np.log(np.maximum(score, EPS))[:, None],
                           np.log(np.maximum(side, EPS))[:, None]], 1).astype(np.float32)


def relative_side(xyxy: np.ndarray, width: int, height: int) -> np.ndarray:
    """Each box's longer side over the frame's longer side."""
    return np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]) / max(width, height, 1)


def boxes_inputs(features: np.ndarray, dets, width: int, height: int) -> np.ndarray:
    """`check_inputs` of detections (boxes, kind scores, scores) in a width x height frame."""
    return check_inputs(features, dets.kind_scores, dets.confidence, relative_side(dets.xyxy, width, height))


@dataclass(frozen=True)
class DieCheck:
    w: np.ndarray  # (D + K + 2,) weights of the log-odds that a box holds a die
    b: float
    floor: float = FLOOR  # the detector's score down to which boxes are looked at
    trusted: float = TRUSTED  # the detector's own threshold: above it a box is a die unless clearly not
    keep_low: float = KEEP_LOW  # a box under `trusted` is kept at this chance of a die or more
    drop_high: float = DROP_HIGH  # a box above `trusted` is dropped under this chance
    reader: str = ""  # the face reader whose features it was fitted on

    def __post_init__(self) -> None:
        if not 0 < self.floor <= self.trusted <= 1 or not 0 <= self.drop_high <= self.keep_low <= 1:
            raise ValueError(f"thresholds out of order: floor {self.floor}, trusted {self.trusted}, "
                             f"drop_high {self.drop_high}, keep_low {self.keep_low}")

    def chance(self, x: np.ndarray) -> np.ndarray:
        """(N,) the chance that each box holds a die, from `check_inputs` rows."""
        if x.shape[1:] != self.w.shape:
            raise ValueError(f"the die check reads {self.w.shape[0]} inputs, got {x.shape[1:]}")
        return 1 / (1 + np.exp(-(x @ self.w + self.b)))

    def keep(self, chance: np.ndarray, score: np.ndarray) -> np.ndarray:
        """(N,) bool: which boxes count as dice."""
        unsure = (score >= self.floor) & (chance >= self.keep_low)
        return np.where(score >= self.trusted, chance >= self.drop_high, unsure)

    def to_json(self, **meta) -> dict:
        return {"weights": [round(float(v), 6) for v in self.w], "bias": round(float(self.b), 6),
                "floor": self.floor, "trusted": self.trusted, "keep_low": self.keep_low,
                "drop_high": self.drop_high, "reader": self.reader, **meta}

    @classmethod
    def from_json(cls, raw: dict) -> "DieCheck":
        return cls(np.asarray(raw["weights"], np.float32), float(raw["bias"]), float(raw["floor"]),
                   float(raw["trusted"]), float(raw["keep_low"]), float(raw["drop_high"]), str(raw["reader"]))

    @classmethod
    def load(cls, path: Path, reader: str) -> "DieCheck":
        """The check in `path`, refused when it was fitted on another face reader's features."""
        refit = "refit it (dicecam train --stages diecheck)"
        try:
            check = cls.from_json(json.loads(Path(path).read_text()))
        except (ValueError, KeyError, TypeError) as e:
            raise DicecamError(f"the die check {path} cannot be used ({e}): {refit}") from None
        if check.reader != reader:
            raise DicecamError(f"the die check {path} was fitted on another face reader: {refit}")
        return check
