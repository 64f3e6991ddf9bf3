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

from .backends import default_backend, open_session
from .crops import CROP_MARGIN, CROP_SIZE, FACE_CLASSES, KIND_OF_FACE, KINDS, VALUE_OF_FACE, crop_batch
from .detections import Detections
from .memory import DiceMemory, model_fingerprint

Model = Callable[[np.ndarray], list[np.ndarray]]
# Below this joint probability a reading is flagged uncertain rather than trusted.
UNCERTAIN_BELOW = 0.6
COCKED_ABOVE = 0.5


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
                 colours: list[str] | None = None, min_score: float = 0.3, backend: str = "custom",
                 crop_size: int = CROP_SIZE, model_id: str = "custom") -> None:
        self.detector, self.faces = detector, faces
        self.model_id = model_id
        # A table's dice memory (vision/memory.py), blended into every reading when set.
        self.memory: DiceMemory | None = None
        self.in_w, self.in_h = input_size
        self.colours = colours or []
        self.min_score = min_score
        self.backend = backend
        self.crop_size = crop_size

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
        if not 16 <= fmeta["input"]["size"] <= 256 or fmeta["input"]["margin"] != CROP_MARGIN:
            raise DicecamError(f"the face reader in {folder} expects other crops")
        name = default_backend() if backend == "auto" else backend
        return cls(open_session(det, name, threads), open_session(faces, name, threads),
                   input_size=(dmeta["input"]["width"], dmeta["input"]["height"]), colours=fmeta["colours"],
                   backend=name, crop_size=int(fmeta["input"]["size"]), model_id=model_fingerprint(faces))

    def detect(self, frame: np.ndarray) -> Detections:
        h, w = frame.shape[:2]
        lb = Letterbox.fit(w, h, self.in_w, self.in_h)
        x = lb.apply(frame, self.in_w, self.in_h)
        x = np.ascontiguousarray(x[:, :, ::-1].transpose(2, 0, 1)[None], np.float32) * (1 / 255.0)
        raw = self.detector(x)[0]
        return Detections.from_yolo(raw, lb.scale, lb.pad, (w, h), min_score=self.min_score)

    def crops(self, frame: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """(N, S, S, 3) uint8: the face reader's view of each box."""
        return crop_batch(frame, np.asarray(boxes, np.float32).reshape(-1, 4), size=self.crop_size)

    def embed(self, crops: np.ndarray) -> np.ndarray:
        """The face reader's feature vector per crop (what the dice memory compares)."""
        out = self.faces(crops.transpose(0, 3, 1, 2).astype(np.float32))
        if len(out) < 4:
            raise DicecamError("these face-reader weights give no features: the dice memory needs newer weights")
        return out[3]

    def use_memory(self, memory: "DiceMemory | None") -> None:
        self.memory = memory

    def read_faces(self, frame: np.ndarray, dets: Detections) -> Detections:
        if not len(dets):
            return dets
        crops = self.crops(frame, dets.xyxy).transpose(0, 3, 1, 2).astype(np.float32)
        out = self.faces(crops)
        face_logits, colour_logits, cocked_logit = out[:3]
        face_p = _softmax(face_logits)
        # Joint belief: the detector's kind score times the face reader's (kind, value) probability.
        joint = face_p * dets.kind_scores[:, KIND_OF_FACE]
        joint /= np.maximum(joint.sum(1, keepdims=True), 1e-9)
        if self.memory is not None and len(self.memory) and len(out) >= 4:
            # The table's own dice: the memory's vote, trusted as far as it has close examples.
            mem_p, trust = self.memory.vote(out[3])
            joint = (1 - trust[:, None]) * joint + trust[:, None] * mem_p
        best = joint.argmax(1)
        conf = joint[np.arange(len(best)), best] / np.maximum(joint.sum(1), 1e-9)
        colour_p = _softmax(colour_logits)
        colours = np.array([self.colours[i] if i < len(self.colours) else None for i in colour_p.argmax(1)], object)
        cocked = 1 / (1 + np.exp(-cocked_logit.reshape(-1))) > COCKED_ABOVE
        return dets.with_faces(
            kind=KIND_OF_FACE[best], value=VALUE_OF_FACE[best],
            confidence=(conf * dets.confidence).astype(np.float32), colour=colours, cocked=cocked,
            uncertain=conf < UNCERTAIN_BELOW)

    def read(self, frame: np.ndarray) -> Detections:
        return self.read_faces(frame, self.detect(frame))

    def __call__(self, frame: np.ndarray) -> list[DieReading]:
        return self.read(frame).to_readings()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)
