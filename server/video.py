"""Frames for the page: the newest camera frame with each die boxed and labelled, as JPEG."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from dicecam.mechanics.dice import DieReading

OK = (80, 200, 80)  # BGR
DOUBT = (0, 190, 255)


def annotate(frame: np.ndarray, dice: Sequence[DieReading]) -> np.ndarray:
    import cv2

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
    import cv2

    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("could not encode the frame")
    return buf.tobytes()


def image_size(data: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) read from the header alone, before any pixel is decoded."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return "png", int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"BM" and len(data) >= 26:
        w = int.from_bytes(data[18:22], "little", signed=True)
        h = int.from_bytes(data[22:26], "little", signed=True)
        return "bmp", abs(w), abs(h)
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
                i += 1 if marker == 0xFF else 2
                continue
            seg = int.from_bytes(data[i + 2:i + 4], "big")
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                h = int.from_bytes(data[i + 5:i + 7], "big")
                w = int.from_bytes(data[i + 7:i + 9], "big")
                return "jpeg", w, h
            i += 2 + seg
        return None
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return "webp", 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
        if chunk == b"VP8 ":
            return "webp", int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF
        if chunk == b"VP8L" and len(data) >= 25:
            b = int.from_bytes(data[21:25], "little")
            return "webp", (b & 0x3FFF) + 1, ((b >> 14) & 0x3FFF) + 1
    return None
