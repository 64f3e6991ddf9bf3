"""`Detections`: one frozen struct-of-arrays per frame, from the detector's raw output to readings.

The detector fills boxes, kind scores and confidence; the face reader fills value, colour and
the cocked flag. Boolean masks index it; `to_readings()` turns it into the shared DieReading list.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dicecam.mechanics.dice import DieReading, reading_order

from .boxes import nms, xywh_from_centres, xyxy_from_xywh
from .crops import KINDS


@dataclass(frozen=True)
class Detections:
    xyxy: np.ndarray  # (N, 4) float32, source pixels
    kind_scores: np.ndarray  # (N, len(KINDS)) float32, the detector's per-kind scores
    confidence: np.ndarray  # (N,) float32
    kind: np.ndarray  # (N,) int64 index into KINDS
    value: np.ndarray  # (N,) int64 face value, -1 until read
    colour: np.ndarray  # (N,) object: colour name or None
    cocked: np.ndarray  # (N,) bool
    uncertain: np.ndarray  # (N,) bool
    doubt: np.ndarray | None = None  # (N,) object: why a die is uncertain, in a few words, or None

    def __post_init__(self) -> None:
        n = len(self.xyxy)
        if self.xyxy.shape != (n, 4) or self.kind_scores.shape != (n, len(KINDS)):
            raise ValueError(f"bad shapes: xyxy {self.xyxy.shape}, kind_scores {self.kind_scores.shape}")
        if self.doubt is None:
            object.__setattr__(self, "doubt", np.full(n, None, object))
        for name in ("confidence", "kind", "value", "colour", "cocked", "uncertain", "doubt"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, expected ({n},)")

    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, mask) -> "Detections":
        return Detections(**{f: getattr(self, f)[mask] for f in self.__dataclass_fields__})

    def concat(self, other: "Detections") -> "Detections":
        """These detections followed by `other`'s."""
        return Detections(**{f: np.concatenate([getattr(self, f), getattr(other, f)]) for f in self.__dataclass_fields__})

    def with_faces(self, **fields) -> "Detections":
        return replace(self, **fields)

    @classmethod
    def empty(cls) -> "Detections":
        return cls.from_arrays(np.zeros((0, 4), np.float32), np.zeros((0, len(KINDS)), np.float32))

    @classmethod
    def from_arrays(cls, xyxy: np.ndarray, kind_scores: np.ndarray) -> "Detections":
        n = len(xyxy)
        kind = kind_scores.argmax(1) if n else np.zeros(0, np.int64)
        conf = kind_scores.max(1) if n else np.zeros(0, np.float32)
        return cls(xyxy.astype(np.float32), kind_scores.astype(np.float32), conf.astype(np.float32),
                   kind.astype(np.int64), np.full(n, -1, np.int64), np.full(n, None, object),
                   np.zeros(n, bool), np.zeros(n, bool))

    @classmethod
    def from_yolo(cls, raw: np.ndarray, scale: float, pad: tuple[float, float], size: tuple[int, int], *,
                  min_score: float = 0.3, iou: float = 0.5) -> "Detections":
        """Decode an ultralytics export, (1, 4 + kinds, anchors) of centre boxes in input pixels.

        NMS runs across kinds: a die is one die whatever the detector's doubt about its kind.
        """
        pred = raw[0].T
        scores = pred[:, 4:]
        best = scores.max(1)
        keep = best >= min_score
        pred, scores, best = pred[keep], scores[keep], best[keep]
        if not len(pred):
            return cls.empty()
        xywh = xywh_from_centres(pred[:, :4])
        idx = nms(xywh, best, min_score=min_score, max_iou=iou)
        xyxy = xyxy_from_xywh(xywh[idx])
        xyxy = (xyxy - np.array([pad[0], pad[1], pad[0], pad[1]], np.float32)) / scale
        width, height = size
        xyxy = np.clip(xyxy, 0, [width, height, width, height])
        return cls.from_arrays(xyxy, scores[idx])

    def to_readings(self) -> list[DieReading]:
        """The shared reading type, in reading order; undecoded dice (value -1) are left out."""
        out = []
        for i in range(len(self)):
            if self.value[i] < 0:
                continue
            out.append(DieReading(
                type=KINDS[int(self.kind[i])], value=int(self.value[i]),
                box=tuple(round(float(v), 1) for v in self.xyxy[i]),
                confidence=round(float(self.confidence[i]), 4), colour=self.colour[i],
                cocked=bool(self.cocked[i]), uncertain=bool(self.uncertain[i]),
                doubt=self.doubt[i] if self.uncertain[i] else None))
        return reading_order(out)
