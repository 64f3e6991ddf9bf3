"""Frame sources: webcam, video file, image folder, stream URL, and the bundled demo clip.

`FrameSource.frames()` yields (frame_id, frame) forever (or to the end of a file). A live
source runs a capture thread that keeps the newest BACKLOG frames, so the consumer never
falls more than that behind; a dead source is retried with capped exponential backoff and reported
through `on_status`, never raised.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, Iterator

import cv2
import numpy as np

from dicecam.mechanics.errors import DicecamError

from .labels import IMAGE_EXTS

MAX_SIDE = 2000  # frames larger than this are junk for a table camera (and too slow)
# What a camera is asked for; it answers with the nearest size it has. Unasked, webcams send 640x480, where dice
# on a table are a few tens of pixels across, and dice that small are read far worse. 720p gives the same view's dice
# 1.5 times the pixels of 480 lines: lurig-d20-values' training photos set in camera frames so that their d20 is 36,
# 48 or 64 px at 480 lines, read by the whole reader, 42.7 / 64.3 / 74.9 % right at 640x480 and 75.4 / 82.4 / 82.9 % at
# 1280x720, found alike though the detector sees a 16:9 frame smaller (models/MODEL_CARD.md, forty-sixth stop).
# 1080p would give 2.25 times, but decoding it costs a still table 13.8 % of a core against 6.8 % (`dicecam bench
# --live`; the live pipeline's goal is 10 %): ask for it with --camera-size where the machine has cores to spare.
# MJPG, because most USB cameras send uncompressed 720p and 1080p at a few frames a second only.
CAMERA_SIZE = (1280, 720)
MIN_CAMERA_SIDE = 160

StatusFn = Callable[[dict], None]


# Frames a live source holds while its consumer is busy: a second of a 30 fps camera. Reading a still
# table takes many frames' time (10 dice: 300-450 ms median to p95 on 2 cores, up to 650 ms on a busy
# one; 10 frames held lost 6 of 300 while it read) and the motion gate (~0.4 ms a frame) catches up after
# it, so no frame need be lost; a consumer slower than the camera for longer loses the oldest, a second
# behind at most. What it costs: 28 MB of 640x480 frames, 190 MB at 1920x1080.
BACKLOG = 30


class SourceError(DicecamError):
    pass


class QuietOpenCV:
    """OpenCV's logging silenced while a capture is open, and put back as it was after the last one.

    OpenCV's own warnings (a camera index that is not there, a stream that drops) would flood the
    terminal on every retry; a source reports them once, as a status, itself. OpenCV's log level is
    one per process, so open captures share one silence, counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = 0
        self._level: int | None = None

    def __enter__(self) -> "QuietOpenCV":
        with self._lock:
            if self._open == 0:
                self._level = cv2.utils.logging.getLogLevel()
                cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
            self._open += 1
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._open -= 1
            if self._open == 0 and self._level is not None:
                cv2.utils.logging.setLogLevel(self._level)


quiet_opencv = QuietOpenCV()


def frame_problem(frame) -> str | None:
    """Why a frame is unusable, or None when it is a fine BGR uint8 image."""
    if frame is None or not isinstance(frame, np.ndarray):
        return "no frame"
    if frame.size == 0 or frame.ndim != 3 or frame.shape[2] != 3:
        return "not a 3-channel image"
    if frame.dtype != np.uint8:
        return "not 8-bit"
    if max(frame.shape[:2]) > MAX_SIDE or min(frame.shape[:2]) < 16:
        return "odd size"
    small = frame[:: max(1, frame.shape[0] // 32), :: max(1, frame.shape[1] // 32)]
    if int(small.max()) - int(small.min()) < 4:
        return "constant frame"
    return None


@dataclass
class FrameSource:
    """A source of BGR frames. `opener` returns a fresh reader: a callable returning a frame
    (None at a glitch) or raising StopIteration at the end of a finite source."""

    spec: str
    opener: Callable[[], Callable[[], np.ndarray | None]]
    fps: float | None = None
    finite: bool = False
    realtime: bool = True
    max_backoff: float = 5.0
    max_retries: int | None = None  # None: retry forever (cameras); a number for tests
    on_status: StatusFn | None = None
    # Told the system whenever the pipeline's changes (the demo picks the rolls that suit it).
    follow: Callable[[str, dict], None] | None = None
    skipped: int = 0
    state: str = "stopped"
    _stop: threading.Event = field(default_factory=threading.Event)

    def status(self, state: str, detail: str = "") -> None:
        self.state = state
        if self.on_status:
            self.on_status({"state": state, "source": self.spec, "detail": detail, "skipped_frames": self.skipped})

    def stop(self) -> None:
        self._stop.set()

    def raw(self) -> Iterator[np.ndarray]:
        """Every good frame in order (junk skipped and counted), with reconnects."""
        with quiet_opencv:  # from the first open to the end of the source, retries included
            yield from self._raw()

    def _raw(self) -> Iterator[np.ndarray]:
        backoff, tries, period = 0.25, 0, (1.0 / self.fps if self.fps and self.realtime else 0.0)
        while not self._stop.is_set():
            try:
                read = self.opener()
            except Exception as e:  # a camera that is not there (yet)
                read, err = None, str(e) or type(e).__name__
            if read is not None:
                self.status("connected")
                tries, backoff, fails = 0, 0.25, 0
                t_next = time.monotonic()
                while not self._stop.is_set():
                    try:
                        frame = read()
                    except StopIteration:
                        return
                    except Exception as e:
                        frame, err = None, str(e) or type(e).__name__
                        fails = 1000
                    if frame is None:
                        fails += 1
                        if fails > 30:  # a live camera returning nothing for a while is gone
                            err = err if fails >= 1000 else "no frames"
                            break
                        self.skipped += 1
                        continue
                    fails = 0
                    if frame_problem(frame):
                        self.skipped += 1
                        continue
                    if period:
                        t_next += period
                        delay = t_next - time.monotonic()
                        if delay > 0:
                            self._stop.wait(delay)
                        else:
                            t_next = time.monotonic()
                    yield frame
            if self._stop.is_set() or (self.finite and read is not None):
                return
            tries += 1
            if self.max_retries is not None and tries > self.max_retries:
                self.status("lost", err)
                return
            self.status("retrying", f"{err}; retry in {backoff:.2f}s")
            self._stop.wait(backoff)
            backoff = min(self.max_backoff, backoff * 2)

    def frames(self) -> Iterator[tuple[int, np.ndarray]]:
        """Realtime: a capture thread, its newest BACKLOG frames in order; otherwise every frame, in order."""
        self._stop.clear()
        if not self.realtime:
            for i, f in enumerate(self.raw()):
                yield i, f
            self.status("stopped", "end of source")
            return
        held: deque = deque(maxlen=BACKLOG)  # a full deque drops its oldest frame
        done = threading.Event()
        cond = threading.Condition()

        def capture() -> None:
            i = 0
            for f in self.raw():
                with cond:
                    held.append((i, f))
                    cond.notify()
                i += 1
            done.set()
            with cond:
                cond.notify()

        t = threading.Thread(target=capture, name=f"capture:{self.spec}", daemon=True)
        t.start()
        try:
            while not self._stop.is_set():
                with cond:
                    while not held and not done.is_set() and not self._stop.is_set():
                        cond.wait(0.5)  # sleep, never busy-wait
                    item = held.popleft() if held else None
                if item is None:
                    if done.is_set():
                        break
                    continue
                yield item
        finally:
            self._stop.set()
            t.join(timeout=2)
            if self.state != "lost":  # "lost" already said why it ended
                self.status("stopped", "end of source" if done.is_set() else "stopped")


def parse_camera_size(text: str) -> tuple[int, int] | None:
    """"WIDTHxHEIGHT" (e.g. 1280x720), or "native" (None: whatever the camera sends unasked)."""
    t = str(text).strip().lower()
    if t == "native":
        return None
    w, sep, h = t.partition("x")
    if not sep or not w.isdigit() or not h.isdigit():
        raise SourceError(f"bad camera size {text!r}: write WIDTHxHEIGHT, e.g. 1280x720, or 'native'")
    size = int(w), int(h)
    if not all(MIN_CAMERA_SIDE <= v <= MAX_SIDE for v in size):
        raise SourceError(f"bad camera size {text!r}: each side from {MIN_CAMERA_SIDE} to {MAX_SIDE} pixels")
    return size


def ask_size(cap, size: tuple[int, int]) -> None:
    """Ask an open camera for `size` (MJPG, so that it can send it at its full frame rate)."""
    cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
    cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
    cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])


def _capture_reader(target, finite: bool, loop: bool = False, size: tuple[int, int] | None = None):
    """Frames through OpenCV. At the end of a file: StopIteration when `finite`; when `loop`, rewind
    and go on (the demo clip, never reported as lost); a live camera returns None at a glitch. `size`: what
    a camera is asked for (`ask_size`); None asks nothing."""
    def capture():
        cap = cv2.VideoCapture(target)
        if not cap.isOpened():
            raise SourceError(f"cannot open {target!r}")
        return cap

    def open_():
        cap = capture()
        if size is not None:
            ask_size(cap, size)
            if not cap.read()[0]:  # a camera that cannot send what it was asked: opened again, asked nothing
                cap.release()
                cap = capture()

        def read():
            ok, frame = cap.read()
            if not ok and loop:
                cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                ok, frame = cap.read()
            if not ok:
                if finite:
                    cap.release()
                    raise StopIteration
                return None
            return frame

        return read

    return open_


def frames_opener(frames, loop: bool = False):
    """An opener over frames held in memory: replays, benchmarks and tests."""
    def open_():
        it = itertools.cycle(frames) if loop else iter(frames)
        return lambda: next(it)

    return open_


def memory_source(frames, *, fps: float | None = None, loop: bool = False, spec: str = "memory") -> FrameSource:
    """Frames from memory: every frame in order when `fps` is None, else paced like a camera."""
    return FrameSource(spec, frames_opener(frames, loop), fps=fps, finite=not loop, realtime=fps is not None)


def is_camera(spec: str) -> bool:
    return spec.strip().isdigit() or spec.strip().startswith("/dev/video")


def probe_camera(spec: str) -> None:
    """Raise SourceError when no camera answers at `spec` (a missing /dev/videoN is known without
    asking OpenCV). Sources open lazily and retry forever, so a command checks once at start."""
    text = spec.strip()
    dev = f"/dev/video{text}" if text.isdigit() else text
    if sys.platform.startswith("linux") and not Path(dev).exists():
        raise SourceError(f"{dev} does not exist")
    with quiet_opencv:
        cap = cv2.VideoCapture(int(text) if text.isdigit() else text)
        try:
            if not cap.isOpened():
                raise SourceError(f"camera {text} did not open")
        finally:
            cap.release()


def demo_paths() -> tuple[Path, Path]:
    root = resources.files("dicecam.vision") / "assets"
    mp4, meta = Path(str(root / "demo.mp4")), Path(str(root / "demo.json"))
    if not mp4.is_file() or not meta.is_file():
        raise SourceError("the bundled demo clip (vision/assets/demo.mp4) is missing from this install")
    return mp4, meta


def demo_frames() -> list[np.ndarray]:
    """Every frame of the bundled demo clip, decoded (benchmarks and tests read it whole)."""
    cap = cv2.VideoCapture(str(demo_paths()[0]))
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    return frames


def open_source(spec: str, *, realtime: bool = True, fps: float = 30.0, loop_demo: bool = True,
                on_status: StatusFn | None = None, max_retries: int | None = None,
                camera_size: tuple[int, int] | None = CAMERA_SIZE) -> FrameSource:
    """`0` | `/dev/videoN` | FILE | DIR | rtsp/http URL | `demo`. A camera is asked for `camera_size`."""
    text = str(spec).strip()
    kw = dict(on_status=on_status, realtime=realtime, max_retries=max_retries)
    # A camera or a stream runs at its own pace whatever was asked: reading it "as fast as possible"
    # would only let its buffer fill with stale frames.
    live = dict(on_status=on_status, realtime=True, max_retries=max_retries)
    if is_camera(text):
        return FrameSource(text, _capture_reader(int(text) if text.isdigit() else text, False, size=camera_size), **live)
    if "://" in text:
        if not text.split("://")[0].lower() in {"rtsp", "rtsps", "http", "https", "rtmp", "udp", "tcp"}:
            raise SourceError(f"unsupported stream URL {text!r} (rtsp, http(s), rtmp, udp, tcp)")
        return FrameSource(text, _capture_reader(text, False), **live)
    if text == "demo":
        mp4, meta = demo_paths()
        clip_fps = float(json.loads(meta.read_text()).get("fps", 30))
        if loop_demo:
            # The looping demo (serve, watch --loop) plays the rolls the pipeline's system adjudicates.
            from .demo import demo_source  # here, not at the top: demo.py builds on this module

            return demo_source(**kw)
        return FrameSource("demo", _capture_reader(str(mp4), True), fps=clip_fps, finite=True, **kw)
    path = Path(text).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_EXTS)
        if not files:
            raise SourceError(f"no images in folder {text!r}")

        def open_dir():
            it = iter(files)
            return lambda: cv2.imread(str(next(it)), cv2.IMREAD_COLOR)

        return FrameSource(text, open_dir, fps=fps, finite=True, **kw)
    if path.is_file():
        with quiet_opencv:
            cap = cv2.VideoCapture(str(path))
            vfps = cap.get(cv2.CAP_PROP_FPS) or fps
            ok = cap.isOpened()
            cap.release()
        if not ok:
            raise SourceError(f"cannot read video {text!r}")
        return FrameSource(text, _capture_reader(str(path), True), fps=vfps if 1 <= vfps <= 240 else fps,
                           finite=True, **kw)
    raise SourceError(f"bad source {text!r}: use a camera index (0), /dev/videoN, a video file, an image folder, a URL or 'demo'")
