"""One frame at a time: motion gate → settle window → read a few still frames → vote → Roll.

`Watcher` holds no thread and no source, so tests can step it frame by frame; the
`Pipeline` drives it from a source. The reader is a plain callable (frame → readings), so
tests pass a fake and the real `Reader` slots in unchanged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll

from .assembly import RollSession
from .motion import Motion, MotionGate
from .boxes import iou
from .vote import vote

ReaderFn = Callable[[np.ndarray], list[DieReading]]


class PipelineSettings(BaseModel):
    """How the live pipeline decides the table is still and how much it reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    settle_frames: int = Field(default=6, ge=1, le=120, title="Settle window",
                               description="Quiet frames in a row before the dice count as at rest")
    vote_frames: int = Field(default=3, ge=1, le=15, title="Frames voted",
                             description="Still frames read and voted into one roll (a majority that agrees ends it early)")
    motion_width: int = Field(default=160, ge=32, le=640, title="Motion image width",
                              description="Width in pixels the grey frame is shrunk to before differencing")
    pixel_threshold: int = Field(default=6, ge=1, le=255, title="Pixel change",
                                 description="Grey levels a shrunk pixel must change by to count as moved")
    changed_fraction: float = Field(default=0.002, gt=0.0, le=0.5, title="Changed share",
                                    description="Share of moved pixels above which the frame shows motion")
    same_roll_iou: float = Field(default=0.5, ge=0.05, le=1.0, title="Same-roll overlap",
                                 description="Box overlap above which dice read again after a nudge or a shadow are "
                                             "the roll already announced, not a new one")
    base_colour: str | None = Field(default=None, min_length=1, max_length=32, title="Emergence base colour",
                                    description="Colour of Emergence's base die (default: the first in reading order)")

    def gate(self) -> MotionGate:
        return MotionGate(width=self.motion_width, pixel_threshold=self.pixel_threshold,
                          changed_fraction=self.changed_fraction, settle_frames=self.settle_frames)


class Phase(StrEnum):
    ARMED = "armed"  # waiting for the table to come to rest
    READING = "reading"  # still: reading frames for the vote
    DONE = "done"  # this throw is told; wait for motion before the next


@dataclass
class Watcher:
    reader: ReaderFn
    session: RollSession
    settings: PipelineSettings = field(default_factory=PipelineSettings)

    def __post_init__(self) -> None:
        self.gate = self.settings.gate()
        # What lies on the table when the camera starts is not a throw: a roll is the table coming to
        # rest after motion. (A clutter object the detector takes for a die would otherwise be announced
        # before anyone threw.)
        self.phase = Phase.DONE
        self.fed = 0  # frames seen
        self.votes: list[list[DieReading]] = []
        self.told: list[DieReading] = []  # the dice of the last roll announced (empty once the table was seen empty)
        self.shown: list[DieReading] = []  # what the live view draws on the newest frame
        self.reads = 0
        self.still_frame: int | None = None  # the first still frame of this rest (the settle window's end)

    def feed(self, frame_id: int, frame: np.ndarray) -> Roll | None:
        """The roll this frame completes, or None."""
        first, self.fed = self.fed == 0, self.fed + 1
        motion = self.gate.update(frame)
        if motion is Motion.MOVING:
            if not first:  # the gate counts the first frame as movement: it has nothing to compare with
                self.phase, self.votes, self.shown = Phase.ARMED, [], []
            return None
        if motion is Motion.SETTLING or self.phase is Phase.DONE:
            return None
        if self.phase is Phase.ARMED:
            self.still_frame = frame_id
        readings = self.reader(frame)
        self.reads += 1
        self.phase = Phase.READING
        self.votes.append(list(readings))
        self.shown = list(readings)
        if not self._decided():
            return None
        return self._finish(frame_id)

    def _decided(self) -> bool:
        if len(self.votes) >= self.settings.vote_frames:
            return True
        # Once a majority of the planned frames agree exactly, more frames cannot change the vote.
        top = Counter(_signature(r) for r in self.votes).most_common(1)[0][1]
        return top >= self.settings.vote_frames // 2 + 1

    def _finish(self, frame_id: int) -> Roll | None:
        dice = vote(self.votes)
        self.phase, self.votes, self.shown = Phase.DONE, [], dice
        if not dice:
            self.told = []
            return None
        if same_dice(dice, self.told, self.settings.same_roll_iou):
            return None  # the dice already announced, seen again after a nudge, a hand or a shadow
        self.told = dice
        return self.session.add(dice, frame_id=frame_id)


def _signature(readings: Sequence[DieReading]) -> tuple:
    return tuple(sorted((d.type.value, d.value, d.colour or "", d.cocked, d.uncertain) for d in readings))


def same_dice(a: Sequence[DieReading], b: Sequence[DieReading], min_iou: float) -> bool:
    """The same dice showing the same faces in (nearly) the same places. Without boxes nobody can
    tell a re-roll that came up the same from a second look, so boxless dice never match."""
    if not a or len(a) != len(b) or _signature(a) != _signature(b):
        return False
    left = list(b)
    for d in a:
        match = next((o for o in left if _signature([o]) == _signature([d])
                      and d.box is not None and o.box is not None and iou(d.box, o.box) >= min_iou), None)
        if match is None:
            return False
        left.remove(match)
    return True
