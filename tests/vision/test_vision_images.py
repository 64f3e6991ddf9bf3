"""One image loader for `dicecam read` and the server's upload: a photo cut short is refused (never read
with its missing part filled grey), and the server's byte and pixel caps hold on the command line too."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib

import cv2
import numpy as np
import pytest

from dicecam.vision.images import (MAX_PIXELS, ImageRefused, ImageTooLarge, NotAnImage, decode_image, image_size,
                                   is_complete, load_image)


def png_header_only(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    rng = np.random.default_rng(12)
    img = np.full((480, 640, 3), (40, 90, 40), np.uint8)
    img[200:260, 300:360] = 240
    return cv2.GaussianBlur(img + rng.integers(0, 30, img.shape, dtype=np.uint8), (3, 3), 0)


def encoded(photo, ext: str) -> bytes:
    ok, buf = cv2.imencode(ext, photo)
    assert ok
    return buf.tobytes()


@pytest.mark.parametrize("ext", [".jpg", ".png", ".bmp", ".webp"])
def test_whole_images_load_and_cut_short_ones_are_refused(photo, ext):
    data = encoded(photo, ext)
    fmt, w, h = image_size(data)
    assert (w, h) == (640, 480) and is_complete(fmt, data)
    assert decode_image(data).shape == (480, 640, 3)
    cut = data[: len(data) * 2 // 3]
    assert not is_complete(fmt, cut)
    with pytest.raises(ImageRefused, match="cut short"):
        decode_image(cut)


def test_refusals_say_why(photo):
    with pytest.raises(ImageTooLarge, match="20000x20000 = 400000000 pixels, over the limit of 40000000"):
        decode_image(png_header_only(20000, 20000))
    with pytest.raises(ImageTooLarge, match="1000 bytes"):
        decode_image(encoded(photo, ".png"), max_bytes=1000)
    with pytest.raises(NotAnImage):
        decode_image(b"hello, not an image")
    with pytest.raises(ImageRefused, match="empty"):
        decode_image(b"")
    assert ImageTooLarge.status == 413 and NotAnImage.status == 415 and ImageRefused.status == 400


def test_load_image_reads_no_more_than_the_cap(tmp_path, photo):
    big = tmp_path / "big.png"
    big.write_bytes(encoded(photo, ".png"))
    with pytest.raises(ImageTooLarge):
        load_image(big, max_bytes=2048)
    assert load_image(big).shape == (480, 640, 3)


def dicecam(*args):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_cli_read_refuses_what_the_server_refuses(tmp_path, photo):
    """The same bytes get the same one-line reason from `dicecam read` and from POST /api/read."""
    from fastapi.testclient import TestClient

    from dicecam.server.app import create_app
    from dicecam.server.settings import ServerSettings
    from dicecam.server.store import RollStore

    cases = {"cut.jpg": encoded(photo, ".jpg")[:20_000], "bomb.png": png_header_only(20000, 20000),
             "text.png": b"not an image at all"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    r = dicecam("read", *(tmp_path / n for n in cases))
    assert r.returncode == 1 and r.stdout == "", "nothing is read from a refused image"
    said = r.stderr.strip().splitlines()
    assert len(said) == len(cases) and "Traceback" not in r.stderr

    s = ServerSettings(data_dir=tmp_path / "data", allowed_hosts=["testserver"])
    store = RollStore(s.db_path)

    def reader(frame):
        raise AssertionError("a refused image must never reach the reader")

    with TestClient(create_app(s, store, reader=reader)) as c:
        for (name, data), line in zip(cases.items(), said):
            got = c.post("/api/read", files={"image": (name, data, "application/octet-stream")})
            assert got.status_code in (400, 413, 415)
            assert line == f"dicecam read: cannot read {tmp_path / name}: {got.json()['detail']}"
    assert store.count() == 0
    store.close()
    assert "cut short" in said[0] and "pixels" in said[1]
    assert MAX_PIXELS == s.max_upload_pixels
