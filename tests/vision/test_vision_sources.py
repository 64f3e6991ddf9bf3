"""Frame sources and OpenCV's logging: silenced only while a capture is open, never by an import."""

from __future__ import annotations

import subprocess
import sys

import cv2
import numpy as np

from dicecam.vision.sources import memory_source, open_source


def _frames(n: int) -> list[np.ndarray]:
    return [np.random.default_rng(i).integers(0, 255, (48, 64, 3), np.uint8) for i in range(n)]


def test_importing_the_sources_leaves_opencvs_logging_as_it_was():
    code = ("import cv2; cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_WARNING); "
            "import dicecam.vision.sources, dicecam.vision.pipeline; print(cv2.utils.logging.getLogLevel())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert int(out.stdout) == cv2.utils.logging.LOG_LEVEL_WARNING


def test_opencv_is_silent_while_a_source_is_read_and_speaks_again_after_it_ends():
    before = cv2.utils.logging.getLogLevel()
    assert before != cv2.utils.logging.LOG_LEVEL_SILENT
    frames = _frames(3)
    during = [cv2.utils.logging.getLogLevel() for _ in memory_source(frames).raw()]
    assert during == [cv2.utils.logging.LOG_LEVEL_SILENT] * 3
    assert cv2.utils.logging.getLogLevel() == before


def test_two_sources_open_at_once_share_the_silence_until_the_last_one_ends():
    before = cv2.utils.logging.getLogLevel()
    frames = _frames(2)
    a, b = memory_source(frames).raw(), memory_source(frames).raw()
    next(a), next(b)
    a.close()  # the first one done: the other capture is still open
    assert cv2.utils.logging.getLogLevel() == cv2.utils.logging.LOG_LEVEL_SILENT
    b.close()
    assert cv2.utils.logging.getLogLevel() == before


def test_a_video_that_cannot_be_read_is_refused_and_leaves_the_logging_as_it_was(tmp_path):
    before = cv2.utils.logging.getLogLevel()
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video")
    try:
        open_source(str(bad))
    except Exception as e:  # noqa: BLE001 - the kind of error is the sources' own
        assert "cannot read video" in str(e)
    else:
        raise AssertionError("a broken video was accepted")
    assert cv2.utils.logging.getLogLevel() == before
