"""Where to look in a die's crop for its value numeral, and which way the numeral is turned.

`UpFaceFinder` runs the shipped up-face finder (models/upface.onnx, trained on renders by
models/train_upface.py) on crops framed as the face reader's are (vision/crops.py: a square of the
die's box plus CROP_MARGIN on each side), at the size its .json names (64 px as shipped: the face
reader's own crops; vision/read.py cuts others where a finder takes larger ones). Its answer per
crop, as columns of an (N, 5) array:

- u, v: the value numeral's centre relative to the crop centre, in crop sides (x right, y down).
  For a tilted camera the up face sits above the die's centre; a neighbour's clear numeral is
  not the one named here.
- cos, sin: of the numeral's clockwise turn from upright on screen, normalised; its top points
  along (sin, -cos) in image coordinates. Meaningless on pip d6 faces.
- facing: how squarely the printed face looks at the camera (1 square on, ~0 edge on).

d4: the number naming the value (the up vertex's, or the bottom edges' on base-style dice) on
the face turned most towards the camera.

ONNX Runtime only (no torch): the file is found through importlib.resources, so an installed
package finds its copy.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np

from dicecam.mechanics.errors import DicecamError

from .backends import open_session
from .crops import CROP_MARGIN, CROP_SIZE

MODEL_FILE = "upface.onnx"
COLUMNS = ("u", "v", "cos", "sin", "facing")


def default_path() -> Path:
    return Path(str(resources.files("dicecam.models") / MODEL_FILE))


class UpFaceFinder:
    def __init__(self, session, size: int = CROP_SIZE) -> None:
        self.session, self.size = session, size

    @classmethod
    def load(cls, path: Path | str | None = None, threads: int | None = 1) -> "UpFaceFinder":
        """The finder in `path` (default: the packaged models/upface.onnx). One thread by default:
        it is a few MFLOP per crop, and the detector and reader already hold the cores."""
        path = Path(path) if path else default_path()
        if not path.is_file():
            raise DicecamError(f"no up-face finder weights: {path} is missing")
        size = CROP_SIZE
        meta_path = path.with_suffix(".json")
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())["input"]
            if float(meta["margin"]) != CROP_MARGIN:
                raise DicecamError(f"the up-face finder in {path} expects crops with another margin")
            size = int(meta["size"])
        return cls(open_session(path, "onnxruntime", threads), size)

    def __call__(self, crops: np.ndarray) -> np.ndarray:
        """crops: (N, S, S, 3) uint8 BGR, S the finder's size (its .json; 64 as shipped) -> (N, 5) float32, COLUMNS."""
        crops = np.asarray(crops)
        if crops.ndim != 4 or crops.shape[1:] != (self.size, self.size, 3):
            raise DicecamError(f"the up-face finder takes (N, {self.size}, {self.size}, 3) crops, "
                               f"got shape {crops.shape}")
        if not len(crops):
            return np.zeros((0, len(COLUMNS)), np.float32)
        x = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), np.float32) * np.float32(1 / 255.0)
        out = np.asarray(self.session(x)[0], np.float32).copy()
        norm = np.hypot(out[:, 2], out[:, 3])
        # A numeral that looks the same both ways up (8, 0) can leave (cos, sin) near zero: call it upright.
        flat = norm < 1e-6
        out[:, 2] = np.where(flat, 1.0, out[:, 2] / np.where(flat, 1.0, norm))
        out[:, 3] = np.where(flat, 0.0, out[:, 3] / np.where(flat, 1.0, norm))
        return out


def in_frame(found: np.ndarray, boxes: np.ndarray, margin: float = CROP_MARGIN) -> np.ndarray:
    """(N, 2) frame pixels of each found numeral centre, given the boxes (x1, y1, x2, y2) the
    crops were cut from."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    side = np.maximum(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]), 1.0) * (1 + 2 * margin)
    centre = (boxes[:, :2] + boxes[:, 2:]) / 2
    return centre + np.asarray(found, np.float64)[:, :2] * side[:, None]


def turn_degrees(found: np.ndarray) -> np.ndarray:
    """(N,) the clockwise turn of each numeral from upright on screen, -180..180 degrees."""
    found = np.asarray(found)
    return np.degrees(np.arctan2(found[:, 3], found[:, 2]))
