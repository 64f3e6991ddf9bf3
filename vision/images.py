"""The one image loader: photos given to `dicecam read` and uploads to the server pass the same checks.

The header is read before any pixel is decoded, so a 20000x20000 image is refused at once instead of
taking seconds and gigabytes; and a file cut short is refused instead of being read with its missing
part filled grey (where the reader would find dice that are not there).

OpenCV is imported when an image is decoded: the server's settings take the caps from here, and a
command that loads those settings to decode nothing (`dicecam fairness`) does without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dicecam.mechanics.errors import DicecamError, LimitError

MAX_BYTES = 10_000_000
MAX_PIXELS = 40_000_000
FORMATS = "PNG, JPEG, BMP or WebP"


class ImageRefused(DicecamError):
    """An image that is not read: corrupt, cut short, empty. `status` is the HTTP answer."""

    status = 400


class NotAnImage(ImageRefused):
    status = 415


class ImageTooLarge(ImageRefused, LimitError):
    status = 413


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


def is_complete(fmt: str, data: bytes) -> bool:
    """Whether the file reaches its end marker (decoders fill a cut-short image with grey, silently)."""
    if fmt == "jpeg":
        # The end-of-image marker must follow the last scan; stuffed entropy data never holds FF DA or FF D9.
        return data.rfind(b"\xff\xd9") > data.rfind(b"\xff\xda") > 0
    if fmt == "png":
        return b"IEND" in data[-64:]
    if fmt == "webp":
        return int.from_bytes(data[4:8], "little") + 8 <= len(data)
    if fmt == "bmp":
        return int.from_bytes(data[2:6], "little") <= len(data)
    return True


def decode_image(data: bytes, *, max_bytes: int = MAX_BYTES, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """BGR pixels of a whole, capped image, or ImageRefused saying why not (one line)."""
    import cv2

    if len(data) > max_bytes:
        raise ImageTooLarge(f"image is over the size limit of {max_bytes} bytes")
    if not data:
        raise ImageRefused("the file is empty")
    head = image_size(data)
    if head is None:
        raise NotAnImage(f"not a {FORMATS} image")
    fmt, w, h = head
    if w <= 0 or h <= 0:
        raise ImageRefused(f"the {fmt} header gives no image size")
    if w * h > max_pixels:
        raise ImageTooLarge(f"image is {w}x{h} = {w * h} pixels, over the limit of {max_pixels}")
    if not is_complete(fmt, data):
        raise ImageRefused(f"the {fmt} file is cut short (truncated): it could not be decoded whole")
    frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if frame is None:
        raise ImageRefused(f"the {fmt} image could not be decoded (corrupt or unsupported)")
    return frame


def load_image(path: Path, *, max_bytes: int = MAX_BYTES, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """decode_image of a file, never reading more than the byte cap allows."""
    path = Path(path)
    with path.open("rb") as f:  # FileNotFoundError and friends: the CLI names the file
        data = f.read(max_bytes + 1)
    return decode_image(data, max_bytes=max_bytes, max_pixels=max_pixels)
