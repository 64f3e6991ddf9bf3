"""The cheap motion gate: is the table still long enough to read the dice?

Grey, downscaled, blurred frame differencing. A frame is "quiet" when the fraction of changed
pixels is under a threshold both against the previous frame and against the last frame that
showed motion (the anchor): dice easing to rest move less than a pixel per frame, which
frame-to-frame differencing alone calls still while they still creep. After `settle_frames`
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
    def __init__(self, *, width: int = 160, pixel_threshold: int = 6, changed_fraction: float = 0.002,
                 settle_frames: int = 6) -> None:
        self.width = width
        self.pixel_threshold = pixel_threshold
        self.changed_fraction = changed_fraction
        self.settle_frames = settle_frames
        self._prev: np.ndarray | None = None
        self._anchor: np.ndarray | None = None
        self.quiet = 0
        self.state = Motion.MOVING
        self.last_fraction = 1.0

    def small(self, frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        nh = max(1, round(h * self.width / w))
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        grey = cv2.resize(grey, (self.width, nh), interpolation=cv2.INTER_AREA)
        return cv2.GaussianBlur(grey, (5, 5), 0)

    def _changed(self, a: np.ndarray, b: np.ndarray | None) -> float:
        if b is None or a.shape != b.shape:
            return 1.0  # nothing to compare (first frame, new size): count as movement
        return float(np.count_nonzero(cv2.absdiff(a, b) > self.pixel_threshold)) / a.size

    def update(self, frame: np.ndarray) -> Motion:
        cur = self.small(frame)
        fraction = max(self._changed(cur, self._prev), self._changed(cur, self._anchor))
        self._prev = cur
        self.last_fraction = fraction
        if fraction > self.changed_fraction:
            self.quiet = 0
            self._anchor = cur
            self.state = Motion.MOVING
        else:
            self.quiet += 1
            self.state = Motion.STILL if self.quiet >= self.settle_frames else Motion.SETTLING
        return self.state

    def reset(self) -> None:
        """Forget the past: the next frame counts as movement (a new source, a reconnect)."""
        self._prev = self._anchor = None
        self.quiet = 0
        self.state = Motion.MOVING
