"""The live pipeline: a frame source driving a `Watcher` on a thread, publishing events.

`Pipeline(source, reader, system, options)` is what the server and `dicecam watch` run:
- `roll.settled` / `roll.uncertain` events carry a `Roll` and the frame it was read from (`stream.py`);
- `camera.status` events tell the source's state (connected, retrying, lost, stopped) with
  the count of junk frames skipped, so a camera that disappears is a status, never a crash;
- `latest_frame()` is the newest frame with the dice the live view should box;
- `attach(session)` feeds another `RollSession` (the server's table makes the one it shares with rolls
  entered by hand); without it the pipeline feeds one of its own.
A reader that fails on a frame costs that frame, counted in `stats`, not the pipeline.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from dicecam.mechanics.dice import DieReading

from .assembly import RollSession
from .sources import FrameSource
from .stream import CameraStatus, StreamEvent, make_event
from .watcher import PipelineSettings, ReaderFn, Watcher

log = logging.getLogger("dicecam.vision.pipeline")

Subscriber = Callable[[StreamEvent], None]

MESSAGES = {
    "connected": "Camera connected.",
    "retrying": "Camera lost: retrying.",
    "lost": "Camera lost: gave up retrying.",
    "stopped": "Camera stopped.",
}


@dataclass
class PipelineStats:
    """What the pipeline has done since it started (read by the benchmark and tests)."""

    frames: int = 0  # frames fed to the motion gate
    dropped: int = 0  # frames the camera delivered that were lost while we were busy (beyond the source's BACKLOG)
    reads: int = 0  # frames the reader ran on
    rolls: int = 0
    reader_errors: int = 0


class Pipeline:
    def __init__(self, source: FrameSource, reader: ReaderFn, system: str, options: Mapping[str, Any] | None = None,
                 settings: PipelineSettings | None = None, *, warm_up: bool = True) -> None:
        self.source = source
        self.settings = settings or PipelineSettings()
        # The bundled demo clip's rolls are not the table's: they say so (source "demo") wherever they go.
        session = RollSession(system, options, source="demo" if self.demo else "camera",
                              base_colour=self.settings.base_colour)
        self.watcher = Watcher(reader, session, self.settings)
        self.warm_up = warm_up
        self.status = "starting"
        self.stats = PipelineStats()
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        self._pending: tuple[str, dict[str, Any]] | None = None
        self._latest: tuple[int, np.ndarray, list[DieReading]] | None = None
        self._thread: threading.Thread | None = None
        self._outer_status = source.on_status
        source.on_status = self._on_source_status
        if source.follow is not None:
            source.follow(system, dict(options or {}))

    # -- the server's side ------------------------------------------------------------------------
    @property
    def demo(self) -> bool:
        """Whether the frames come from the bundled demo clip (its rolls are demo rolls)."""
        return self.source.spec == "demo"

    def attach(self, session: RollSession) -> None:
        """Feed `session` from now on (before start): the server's table shares it with rolls entered by hand,
        so a luck die typed in joins the check the camera read."""
        if session.base_colour is None:  # the camera's own setting (watch --base-colour) still applies
            session.base_colour = self.watcher.session.base_colour
        self.watcher.session = session

    def subscribe(self, callback: Subscriber) -> None:
        self._subscribers.append(callback)

    def configure(self, system: str, options: Mapping[str, Any] | None = None) -> None:
        """Takes effect before the next frame (applied on the pipeline's own thread)."""
        with self._lock:
            self._pending = (system, dict(options or {}))

    def latest_frame(self) -> tuple[int, np.ndarray, list[DieReading]] | None:
        with self._lock:
            return self._latest

    def start(self) -> None:
        """Run on a background thread (the server); returns at once."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self.run, name="dicecam-pipeline", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.source.stop()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> None:
        """Feed every frame the source gives to the watcher until the source ends or stop()."""
        if self.warm_up:
            self._warm()
        last_id = -1
        for frame_id, frame in self.source.frames():
            self._apply_config()
            if frame_id > last_id + 1:  # the capture thread moved on while we were busy (or starting)
                self.stats.dropped += frame_id - last_id - 1
            last_id = frame_id
            self.stats.frames += 1
            try:
                roll = self.watcher.feed(frame_id, frame)
            except Exception as e:  # a reader that fails on one frame must not end the pipeline
                self.stats.reader_errors += 1
                log.warning("reader failed on frame %d: %s", frame_id, e)
                roll = None
            self.stats.reads = self.watcher.reads
            with self._lock:
                self._latest = (frame_id, frame, list(self.watcher.shown))
            if roll is not None:
                self.stats.rolls += 1
                self._publish(make_event(f"roll.{roll.status}", roll, frame=frame))

    def _warm(self) -> None:
        """One read of a blank frame, so the first roll does not pay the runtime's start-up."""
        try:
            self.watcher.reader(np.full((480, 640, 3), 90, np.uint8))
        except Exception as e:
            log.warning("reader warm-up failed: %s", e)

    def _apply_config(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            session = self.watcher.session
            # The table that attached the session may have configured it already: configuring it again
            # would forget the roll a follow-up throw joins.
            if (session.system, session.options) != pending:
                session.configure(*pending)
            if self.source.follow is not None:
                self.source.follow(*pending)

    def _on_source_status(self, info: dict) -> None:
        state = info.get("state", "stopped")
        self.status = {"connected": "running"}.get(state, state)
        message = MESSAGES.get(state, state)
        if self.source.spec == "demo" and state == "connected":
            message = "Showing the bundled demo clip, not a camera."
        if state == "stopped" and info.get("detail") == "end of source":
            message = "The source ended."
        elif info.get("detail") and state in ("retrying", "lost"):
            message = f"{message[:-1]} ({info['detail']})."
        data = CameraStatus(status=self.status, message=message, source=self.source.spec,
                            skipped_frames=int(info.get("skipped_frames", 0)))
        self._publish(make_event("camera.status", data))
        if self._outer_status is not None:
            self._outer_status(info)

    def _publish(self, event: StreamEvent) -> None:
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:  # one bad subscriber must not silence the others or stop the camera
                log.exception("a pipeline subscriber failed")
