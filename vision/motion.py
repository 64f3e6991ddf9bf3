"""The cheap motion gate: is the table still long enough to read the dice?

Grey, downscaled, blurred frame differencing against the previous frame. A frame is
"quiet" when the fraction of changed pixels is under a threshold; after `settle_frames`
quiet frames in a row the gate is STILL and the detector may run.
"""

from __future__ import annotations

from enum import StrEnum

import cv2
import numpy as np


class Motion(StrEnum):
    MOVING = "moving"
    SETTLING = "settling"
    STILL = "still"


class MotionGate:
    def __init__(self, *, width: int = 160, pixel_threshold: int = 18, changed_fraction: float = 0.002,
                 settle_frames: int = 6) -> None:
        self.width = width
        self.pixel_threshold = pixel_threshold
        self.changed_fraction = changed_fraction
        self.settle_frames = settle_frames
        self._prev: np.ndarray | None = None
        self.quiet = 0
        self.state = Motion.MOVING
        self.last_fraction = 1.0

    def small(self, frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        nh = max(1, round(h * self.width / w))
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        grey = cv2.resize(grey, (self.width, nh), interpolation=cv2.INTER_AREA)
        return cv2.GaussianBlur(grey, (5, 5), 0)

    def update(self, frame: np.ndarray) -> Motion:
        cur = self.small(frame)
        if self._prev is None or self._prev.shape != cur.shape:
            fraction = 1.0  # first frame: nothing to compare; count as movement so a roll waits a settle window
        else:
            diff = cv2.absdiff(cur, self._prev)
            fraction = float(np.count_nonzero(diff > self.pixel_threshold)) / diff.size
        self._prev = cur
        self.last_fraction = fraction
        if fraction > self.changed_fraction:
            self.quiet = 0
            self.state = Motion.MOVING
        else:
            self.quiet += 1
            self.state = Motion.STILL if self.quiet >= self.settle_frames else Motion.SETTLING
        return self.state
