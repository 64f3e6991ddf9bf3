"""A scripted table for pipeline tests: coloured squares slide in, rest, are swept off.

Every frame is known, so an oracle reader can answer exactly what a perfect reader would see
in it — and answer *wrongly* for a frame in motion, so a pipeline that reads a moving
table emits a roll the test can catch. Frames carry faint sensor noise like a webcam.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from dicecam.mechanics.dice import DieReading
from dicecam.vision.sources import FrameSource, memory_source

H, W = 480, 640
SIDE = 60
BGR = {"red": (40, 40, 210), "white": (235, 235, 235), "blue": (200, 90, 30), "green": (60, 180, 60)}


@dataclass(frozen=True)
class Die:
    kind: str
    value: int
    colour: str
    x: int  # resting top-left corner
    y: int
    cocked: bool = False

    def reading(self, x: int | None = None, y: int | None = None, value: int | None = None) -> DieReading:
        x, y = (self.x if x is None else x), (self.y if y is None else y)
        return DieReading(type=self.kind, value=self.value if value is None else value, colour=self.colour,
                          box=(float(x), float(y), float(x + SIDE), float(y + SIDE)), confidence=0.95,
                          cocked=self.cocked)


@dataclass
class Script:
    frames: list[np.ndarray] = field(default_factory=list)
    seen: dict[str, list[DieReading]] = field(default_factory=dict)  # frame hash -> what a perfect reader reads
    moving: set[str] = field(default_factory=set)  # hashes of frames in which something moves
    rolls: list[dict] = field(default_factory=list)  # per roll: settled_at, moves_at, dice (truth)

    def oracle(self) -> Callable[[np.ndarray], list[DieReading]]:
        """A reader that reads a still frame perfectly and a moving one as nonsense (every die a 1)."""
        calls = []

        def read(frame: np.ndarray) -> list[DieReading]:
            key = digest(frame)
            calls.append(key)
            dice = self.seen.get(key, [])
            if key in self.moving:
                return [d.model_copy(update={"value": 1 if d.type.value != "d00" else 10}) for d in dice]
            return list(dice)

        read.calls = calls  # type: ignore[attr-defined]
        return read

    def source(self, *, realtime: bool = False, fps: float = 30.0) -> FrameSource:
        return memory_source(self.frames, fps=fps if realtime else None, spec="script")


def digest(frame: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(frame).tobytes(), digest_size=16).hexdigest()


class Table:
    """Builds a Script frame by frame."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        base = self.rng.integers(60, 110, (H // 8, W // 8, 3), dtype=np.uint8)
        self.background = np.kron(base, np.ones((8, 8, 1), np.uint8))  # a coarse felt texture
        self.script = Script()

    def _frame(self, placed: Sequence[tuple[Die, int, int]], moving: bool, hand: tuple[int, int] | None = None) -> None:
        img = self.background.copy()
        for die, x, y in placed:
            img[y:y + SIDE, x:x + SIDE] = BGR[die.colour]
            img[y + 25:y + 35, x + 25:x + 35] = 20  # a "pip" so a die has an inside
        if hand is not None:
            hx, hy = hand
            img[max(0, hy):hy + 160, max(0, hx):hx + 120] = (120, 150, 200)
        noise = self.rng.integers(-2, 3, img.shape, dtype=np.int16)
        img = np.clip(img.astype(np.int16) + noise, 0, 255).astype(np.uint8)
        key = digest(img)
        s = self.script
        s.frames.append(img)
        s.seen[key] = [d.reading(x, y) for d, x, y in placed if 0 <= x <= W - SIDE and 0 <= y <= H - SIDE]
        if moving:
            s.moving.add(key)

    def empty(self, n: int) -> "Table":
        for _ in range(n):
            self._frame([], False)
        return self

    def roll(self, dice: Sequence[Die], *, tumble: int = 12, rest: int = 30, sweep: int = 8,
             hand_over_at: int | None = None) -> "Table":
        """Dice slide in from the left over `tumble` frames, rest, then slide off to the right.
        `hand_over_at`: a hand passes over the resting dice starting that many frames into the rest."""
        for i in range(tumble):
            k = tumble - i
            self._frame([(d, d.x - 9 * k, d.y) for d in dice], True)
        settled_at = len(self.script.frames)
        for i in range(rest):
            hand = None
            if hand_over_at is not None and hand_over_at <= i < hand_over_at + 10:
                hand = (40 * (i - hand_over_at), 150)
            self._frame([(d, d.x, d.y) for d in dice], hand is not None, hand)
        moves_at = len(self.script.frames)
        for i in range(1, sweep + 1):
            self._frame([(d, d.x + 25 * i, d.y) for d in dice], True)
        self.script.rolls.append({"settled_at": settled_at, "moves_at": moves_at,
                                  "dice": [d.reading() for d in dice]})
        return self

    def tumbling(self, dice: Sequence[Die], n: int) -> "Table":
        """Dice that never come to rest."""
        for i in range(n):
            self._frame([(d, d.x + (7 * i) % 200, d.y + (5 * i) % 90) for d in dice], True)
        return self


def labels(readings: Sequence) -> list[tuple]:
    """(type, value, colour) of each die, in the order given; accepts DieReadings or their JSON."""
    out = []
    for d in readings:
        d = d if isinstance(d, dict) else d.model_dump(mode="json")
        out.append((d["type"], d["value"], d.get("colour")))
    return out
