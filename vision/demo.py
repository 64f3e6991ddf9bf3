"""The bundled demo clip as a looping source that plays only the rolls the served system adjudicates.

The clip holds rolls for every system (datasets.demo renders it); demo.json gives each roll's frames
and truth. Under contingency the table shows its d6-d8-d10 rolls, under percentile its d00-d10 roll:
never a loop of "wrong dice for this system". A system no roll suits (a random table with no rows
given) plays the whole clip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import cv2

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.errors import DicecamError

from .sources import FrameSource, SourceError, demo_paths


def suits(system: str, options: Mapping[str, Any] | None, dice: list[DieReading]) -> bool:
    """Whether the system adjudicates these dice with these options."""
    try:
        registry.resolve(system, dice, options)
    except DicecamError:
        return False
    return True


class DemoPlaylist:
    """The clip's frame ranges to play; `follow` is called with each system the table switches to."""

    def __init__(self, rolls: list[dict]):
        self.rolls = [(r["starts_at"], r["ends_at"], [DieReading(**d) for d in r["truth"]["dice"]]) for r in rolls]
        self.ranges: list[tuple[int, int]] | None = None  # None: the whole clip
        self.system: str | None = None

    def follow(self, system: str, options: Mapping[str, Any] | None = None) -> None:
        chosen = [(start, end) for start, end, dice in self.rolls if suits(system, options, dice)]
        self.system = system
        self.ranges = chosen or None  # replaced whole: the capture thread reads it without a lock

    def plays(self, frame: int) -> bool:
        ranges = self.ranges
        return ranges is None or any(start <= frame < end for start, end in ranges)


def _playlist_reader(mp4: Path, playlist: DemoPlaylist, frames: int):
    def open_():
        cap = cv2.VideoCapture(str(mp4))
        if not cap.isOpened():
            raise SourceError(f"cannot open {str(mp4)!r}")
        pos = [0]

        def read():
            # Frames of rolls the system cannot adjudicate are passed over (grabbed, not decoded);
            # at the end of the clip it starts again. Two passes without a frame to show: a broken clip.
            for _ in range(2 * frames + 2):
                if pos[0] >= frames:
                    cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                    pos[0] = 0
                if playlist.plays(pos[0]):
                    ok, frame = cap.read()
                else:
                    ok, frame = cap.grab(), None
                pos[0] += 1
                if not ok:
                    pos[0] = frames  # a short clip: rewind
                    continue
                if frame is not None:
                    return frame
            return None

        return read

    return open_


def demo_source(system: str | None = None, options: Mapping[str, Any] | None = None, **kw) -> FrameSource:
    """The looping demo; the pipeline calls `source.follow(system, options)` as the table changes system."""
    mp4, meta = demo_paths()
    doc = json.loads(meta.read_text())
    playlist = DemoPlaylist(doc["rolls"])
    if system is not None:
        playlist.follow(system, options)
    source = FrameSource("demo", _playlist_reader(mp4, playlist, int(doc["frames"])), fps=float(doc.get("fps", 30)), **kw)
    source.follow = playlist.follow
    return source
