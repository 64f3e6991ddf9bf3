"""Frames for the page: the newest camera frame with each die boxed and labelled, as JPEG."""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading

OK = (80, 200, 80)  # BGR
DOUBT = (0, 190, 255)


def annotate(frame: np.ndarray, dice: Sequence[DieReading]) -> np.ndarray:
    out = frame.copy()
    scale = max(out.shape[0], out.shape[1]) / 1280
    thick = max(2, round(3 * scale))
    for d in dice:
        if d.box is None:
            continue
        x1, y1, x2, y2 = (int(round(v)) for v in d.box)
        colour = DOUBT if (d.uncertain or d.cocked) else OK
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, thick)
        label = d.label() + ("?" if d.uncertain or d.cocked else "")
        fs = 0.7 * max(scale, 0.75)
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, fs, thick)
        ty = y1 - 4 if y1 - th - 8 > 0 else y2 + th + 4
        cv2.rectangle(out, (x1, ty - th - 4), (x1 + tw + 6, ty + base), (0, 0, 0), -1)
        cv2.putText(out, label, (x1 + 3, ty - 2), cv2.FONT_HERSHEY_SIMPLEX, fs, colour, thick, cv2.LINE_AA)
    return out


def jpeg(frame: np.ndarray, quality: int = 80) -> bytes:
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("could not encode the frame")
    return buf.tobytes()
