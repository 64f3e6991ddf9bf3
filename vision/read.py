"""The dice reader: detector (where, which kind) then face reader (value, colour, cocked) per crop.

`Reader(detector, faces, ...)` takes the two models as callables so tests can pass fakes;
`Reader.load()` opens the shipped ONNX files. Calling a reader on a BGR frame returns the
dice in reading order as `DieReading`s — the one reading type from camera to page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.errors import DicecamError

from .backends import open_session
from .crops import CROP_MARGIN, CROP_SIZE, FACE_CLASSES, KINDS, crop_batch
from .detections import Detections

Model = Callable[[np.ndarray], list[np.ndarray]]
# Below this joint probability a reading is flagged uncertain rather than trusted.
UNCERTAIN_BELOW = 0.6
COCKED_ABOVE = 0.5
# Per face class: the detector kind it belongs to, and its value (made once, used on every frame).
_KIND_OF_FACE = np.array([KINDS.index(k) for k, _ in FACE_CLASSES])
_VALUE_OF_FACE = np.array([v for _, v in FACE_CLASSES], np.int64)


def models_dir() -> Path:
    return Path(str(resources.files("dicecam.models")))


@dataclass(frozen=True)
class Letterbox:
    """How a frame maps into the detector's input: scale, then pad (left, top)."""

    scale: float
    pad: tuple[float, float]

    @classmethod
    def fit(cls, width: int, height: int, in_w: int, in_h: int) -> "Letterbox":
        s = min(in_w / width, in_h / height)
        return cls(s, ((in_w - round(width * s)) / 2, (in_h - round(height * s)) / 2))

    def apply(self, frame: np.ndarray, in_w: int, in_h: int) -> np.ndarray:
        h, w = frame.shape[:2]
        nw, nh = round(w * self.scale), round(h * self.scale)
        small = cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_AREA if self.scale < 1 else cv2.INTER_LINEAR)
        left, top = int(self.pad[0]), int(self.pad[1])
        return cv2.copyMakeBorder(small, top, in_h - nh - top, left, in_w - nw - left, cv2.BORDER_CONSTANT,
                                  value=(114, 114, 114))


class Reader:
    def __init__(self, detector: Model, faces: Model, *, input_size: tuple[int, int] = (416, 320),
                 colours: list[str] | None = None, min_score: float = 0.3, backend: str = "custom") -> None:
        self.detector, self.faces = detector, faces
        self.in_w, self.in_h = input_size
        self.colours = colours or []
        self.min_score = min_score
        self.backend = backend

    @classmethod
    def load(cls, folder: Path | None = None, backend: str = "auto", threads: int | None = None) -> "Reader":
        folder = Path(folder) if folder else models_dir()
        det, faces = folder / "detector.onnx", folder / "reader.onnx"
        for f in (det, faces, det.with_suffix(".json"), faces.with_suffix(".json")):
            if not f.is_file():
                raise DicecamError(f"no shipped weights: {f} is missing")
        dmeta = json.loads(det.with_suffix(".json").read_text())
        fmeta = json.loads(faces.with_suffix(".json").read_text())
        if dmeta["kinds"] != list(KINDS) or len(fmeta["faces"]) != len(FACE_CLASSES):
            raise DicecamError(f"the weights in {folder} were trained for other classes")
        if fmeta["input"]["size"] != CROP_SIZE or fmeta["input"]["margin"] != CROP_MARGIN:
            raise DicecamError(f"the face reader in {folder} expects other crops")
        from .backends import default_backend

        name = default_backend() if backend == "auto" else backend
        return cls(open_session(det, name, threads), open_session(faces, name, threads),
                   input_size=(dmeta["input"]["width"], dmeta["input"]["height"]), colours=fmeta["colours"],
                   backend=name)

    def detect(self, frame: np.ndarray) -> Detections:
        h, w = frame.shape[:2]
        lb = Letterbox.fit(w, h, self.in_w, self.in_h)
        x = lb.apply(frame, self.in_w, self.in_h)
        x = np.ascontiguousarray(x[:, :, ::-1].transpose(2, 0, 1)[None], np.float32) * (1 / 255.0)
        raw = self.detector(x)[0]
        return Detections.from_yolo(raw, lb.scale, lb.pad, (w, h), min_score=self.min_score)

    def read_faces(self, frame: np.ndarray, dets: Detections) -> Detections:
        if not len(dets):
            return dets
        crops = crop_batch(frame, dets.xyxy).transpose(0, 3, 1, 2).astype(np.float32)
        face_logits, colour_logits, cocked_logit = self.faces(crops)[:3]
        face_p = _softmax(face_logits)
        # Joint belief: the detector's kind score times the face reader's (kind, value) probability.
        joint = face_p * dets.kind_scores[:, _KIND_OF_FACE]
        best = joint.argmax(1)
        conf = joint[np.arange(len(best)), best] / np.maximum(joint.sum(1), 1e-9)
        colour_p = _softmax(colour_logits)
        colours = np.array([self.colours[i] if i < len(self.colours) else None for i in colour_p.argmax(1)], object)
        cocked = 1 / (1 + np.exp(-cocked_logit.reshape(-1))) > COCKED_ABOVE
        return dets.with_faces(
            kind=_KIND_OF_FACE[best], value=_VALUE_OF_FACE[best],
            confidence=(conf * dets.confidence).astype(np.float32), colour=colours, cocked=cocked,
            uncertain=conf < UNCERTAIN_BELOW)

    def read(self, frame: np.ndarray) -> Detections:
        return self.read_faces(frame, self.detect(frame))

    def __call__(self, frame: np.ndarray) -> list[DieReading]:
        return self.read(frame).to_readings()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)
