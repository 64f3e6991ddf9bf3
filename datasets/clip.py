"""Short clips: dice tumble in, bounce and come to rest; per-frame truth and a settle marker.

The table, camera and light stay fixed for a clip; each die follows a scripted path from
off-table to its resting pose (position eased out, bounces decaying, spin unwinding onto
the final rotation). Per-frame values come from the pose in that frame, like stills.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from dicecam.mechanics.dice import DieReading, ImageRead
from dicecam.mechanics.errors import LimitError

from . import effects as fx
from . import geometry
from .render import DieSpec, Renderer
from .scene import check_size, parse_kinds, render_scene, sample_scene

MAX_FRAMES = 3000


@dataclass
class Clip:
    frames: list[np.ndarray]
    per_frame: list[ImageRead]
    settled_at: int  # first frame at which every die is at rest
    truth: ImageRead  # the read of the final frame
    fps: int = 30

    def oracle(self) -> Callable[[np.ndarray], list[DieReading]]:
        """A perfect reader for this clip: each frame's own labels (the pose in that frame, moving or
        not), found by the frame's bytes — so it also answers for a lossless copy (PNG) of the frame."""
        seen = {_frame_key(f): r.dice for f, r in zip(self.frames, self.per_frame)}
        return lambda frame: list(seen.get(_frame_key(frame), []))


def _frame_key(frame: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(frame).tobytes(), digest_size=16).digest()


@dataclass
class Motion:
    """A die's scripted path: from `start` (xy) at t0 to its resting pose at t1."""

    final: DieSpec
    start: np.ndarray
    t0: float
    t1: float
    axis: np.ndarray
    spin: float
    bounce: float

    def at(self, t: float) -> DieSpec | None:
        d = copy.copy(self.final)
        if t >= self.t1:
            return d
        u = max(0.0, (t - self.t0) / (self.t1 - self.t0))
        e = 1 - (1 - u) ** 3
        xy = self.start + (self.final.pos[:2] - self.start) * e
        R = geometry.axis_angle(self.axis, self.spin * (1 - e)) @ self.final.R
        mesh = geometry.build(d.kind, d.style)
        z_rest = geometry.rest_height(mesh, R, d.scale)
        hop = self.bounce * (1 - u) ** 2 * abs(np.sin(3.5 * np.pi * u))
        d.R = R
        d.pos = np.array([xy[0], xy[1], z_rest + hop])
        d.value = geometry.value_up(mesh, R)
        d.cocked = self.final.cocked and u >= 1
        return d


def plan_roll(rng: np.random.Generator, dice: Sequence[DieSpec], t_start: float, from_dir: float) -> list[Motion]:
    """Paths that bring `dice` in from direction `from_dir` (radians) starting at t_start."""
    out = []
    for d in dice:
        ang = from_dir + rng.normal(0, 0.25)
        dist = rng.uniform(260, 380)
        start = d.pos[:2] + dist * np.array([np.cos(ang), np.sin(ang)])
        t0 = t_start + rng.uniform(0, 0.25)
        axis = geometry._unit(rng.normal(size=3))
        out.append(Motion(d, start, t0, t0 + rng.uniform(0.8, 1.3), axis, rng.uniform(6, 14), rng.uniform(10, 35)))
    return out


def sweep(d: DieSpec, t: float, t_move: float, direction: np.ndarray) -> DieSpec | None:
    """The die pushed off the table after t_move (accelerating); None once far away."""
    if t < t_move:
        return d
    s = t - t_move
    dist = 900 * s * s + 60 * s
    if dist > 700:
        return None
    out = copy.copy(d)
    out.pos = d.pos + np.array([direction[0], direction[1], 0.0]) * dist
    spin = geometry.axis_angle([-direction[1], direction[0], 0.0], dist / max(d.scale, 1e-3) * 0.5)
    out.R = spin @ d.R
    mesh = geometry.build(d.kind, d.style)
    out.pos[2] = geometry.rest_height(mesh, out.R, d.scale)
    out.value = geometry.value_up(mesh, out.R)
    out.cocked = False
    return out


def render_clip(seed: int, *, renderer: Renderer, kinds: Sequence[str] | None = None, width: int = 640,
                height: int = 480, fps: int = 30, n_dice: int | None = None, hold_s: float = 1.0,
                effects_strength: float = 0.6) -> Clip:
    """One roll, drawn by `renderer`: dice tumble in and rest for `hold_s` seconds."""
    check_size(width, height)
    if not 1 <= fps <= 120:
        raise LimitError(f"fps must be 1-120, got {fps}")
    ks = parse_kinds(kinds)
    rng = np.random.default_rng(seed)
    layout = sample_scene(rng, ks, width, height, n_dice if n_dice is not None else int(rng.integers(1, 7)),
                          px_range=(30, 140))
    eff = fx.sample_effects(rng, effects_strength)
    eff = dataclasses.replace(eff, motion=0.0)
    motions = plan_roll(rng, layout.scene.dice, 0.15, rng.uniform(0, 2 * np.pi))
    t_end = max((m.t1 for m in motions), default=0.0)
    settled_at = int(np.ceil(t_end * fps))
    n_frames = min(MAX_FRAMES, settled_at + int(round(hold_s * fps)) + 1)
    frames, reads = [], []
    for i in range(n_frames):
        t = i / fps
        scene = copy.copy(layout.scene)
        # A die not yet thrown is still in the hand, not lying motionless where its path begins.
        scene.dice = [m.at(t) for m in motions if t >= m.t0]
        img, read = render_scene(renderer, scene, eff, f"frame-{i:05d}")
        frames.append(img)
        reads.append(read)
    return Clip(frames, reads, settled_at, reads[-1], fps)
