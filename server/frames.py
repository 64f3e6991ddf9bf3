"""A roll's picture for the roll store: the frame it was read from, each die boxed and labelled,
downscaled and JPEG-encoded — the proof shown when a roll is disputed."""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading

from .store import Frame
from .video import annotate, jpeg

LONGEST_SIDE = 960  # big enough to read every label, small enough that 500 of them are ~50 MB
QUALITY = 80


def proof_frame(frame: np.ndarray, dice: Sequence[DieReading], longest: int = LONGEST_SIDE,
                quality: int = QUALITY) -> Frame:
    """Downscaled first, the boxes scaled with it, then drawn: labels stay crisp at the stored size."""
    h, w = frame.shape[:2]
    scale = min(1.0, longest / max(h, w))
    if scale < 1.0:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        frame = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
        dice = [d.model_copy(update={"box": tuple(v * scale for v in d.box)}) if d.box else d for d in dice]
    return Frame(jpeg(annotate(frame, dice), quality), frame.shape[1], frame.shape[0])
