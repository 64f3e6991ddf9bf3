"""Frame sources: what a camera is asked for, and OpenCV's logging: silenced only while a capture is open, never by
an import."""

from __future__ import annotations

import subprocess
import sys

import cv2
import numpy as np
import pytest

from dicecam.vision.sources import CAMERA_SIZE, SourceError, memory_source, open_source, parse_camera_size


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


class AskedCapture:
    """A camera that is always there and writes down what it is asked (`asked`, shared by every capture)."""

    asked: list[tuple[int, float]] = []

    def __init__(self, target) -> None:
        self.target = target

    def isOpened(self) -> bool:
        return True

    def set(self, prop: int, value: float) -> bool:
        AskedCapture.asked.append((prop, value))
        return True

    def get(self, prop: int) -> float:
        return 30.0

    def read(self):
        return True, np.zeros((8, 8, 3), np.uint8)

    def release(self) -> None:
        pass


@pytest.fixture
def asked(monkeypatch):
    monkeypatch.setattr(cv2, "VideoCapture", AskedCapture)
    AskedCapture.asked = []
    return AskedCapture.asked


def _size(asked) -> tuple[float, float]:
    given = dict(asked)
    return given[cv2.CAP_PROP_FRAME_WIDTH], given[cv2.CAP_PROP_FRAME_HEIGHT]


def test_a_camera_is_asked_for_720p_in_mjpg_unless_told_otherwise(asked):
    open_source("0").opener()
    assert CAMERA_SIZE == (1280, 720) and _size(asked) == CAMERA_SIZE
    assert dict(asked)[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter_fourcc(*"MJPG")
    asked.clear()
    open_source("/dev/video2", camera_size=(1920, 1080)).opener()
    assert _size(asked) == (1920, 1080)
    asked.clear()
    open_source("0", camera_size=None).opener()  # 'native': whatever it sends unasked
    assert asked == []


def test_a_video_file_is_played_as_it_was_recorded(asked, tmp_path):
    clip = tmp_path / "roll.mp4"
    clip.write_bytes(b"the fake capture reads anything")
    open_source(str(clip)).opener()
    assert asked == []


def test_a_camera_size_is_width_x_height_within_what_a_table_camera_sends():
    assert parse_camera_size("1280x720") == (1280, 720) and parse_camera_size(" 640X480 ") == (640, 480)
    assert parse_camera_size("native") is None
    for bad, words in (("1280", "WIDTHxHEIGHT"), ("x720", "WIDTHxHEIGHT"), ("-5x10", "WIDTHxHEIGHT"),
                       ("100x100", "from 160"), ("4096x2160", "to 2000")):
        with pytest.raises(SourceError, match=words):
            parse_camera_size(bad)


class RefusingCapture(AskedCapture):
    """A camera that sends nothing once asked for a size it cannot send (some drivers take MJPG and then stall)."""

    opened = 0

    def __init__(self, target) -> None:
        super().__init__(target)
        RefusingCapture.opened += 1
        self.was_asked = False

    def set(self, prop: int, value: float) -> bool:
        self.was_asked = True
        return super().set(prop, value)

    def read(self):
        return (False, None) if self.was_asked else super().read()


def test_a_camera_that_cannot_send_the_asked_size_is_opened_again_as_it_was(monkeypatch):
    monkeypatch.setattr(cv2, "VideoCapture", RefusingCapture)
    RefusingCapture.opened = 0
    read = open_source("0").opener()
    frame = read()
    assert frame is not None and frame.shape == (8, 8, 3) and RefusingCapture.opened == 2
