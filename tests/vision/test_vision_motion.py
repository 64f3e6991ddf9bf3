"""The motion gate: the detector runs only once the table has been still for `settle_frames`
frames, and dice still easing to rest, a sub-pixel creep at a time, do not count as still."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dicecam.vision.motion import Motion, MotionGate

H, W = 480, 640
DIE = 60  # side of the square "die" in source pixels

# A cloth-like texture in 8-pixel blocks: real tables are not flat grey, and the texture must
# not itself read as motion.
_BLOCKS = np.random.default_rng(7).integers(60, 140, size=(H // 8, W // 8)).astype(np.float32)
BACKGROUND = cv2.resize(_BLOCKS, (W, H), interpolation=cv2.INTER_NEAREST)


def _coverage(n: int, start: float) -> np.ndarray:
    """How much of each pixel 0..n-1 lies inside [start, start + DIE): sub-pixel edges."""
    px = np.arange(n)
    return np.clip(np.minimum(px + 1, start + DIE) - np.maximum(px, start), 0.0, 1.0)


def scene(x: float = 100.0, y: float = 200.0, *, noise: int = 0, rng: np.random.Generator | None = None) -> np.ndarray:
    """A BGR frame with a bright square die at (x, y); fractional positions blend the edges."""
    alpha = np.outer(_coverage(H, y), _coverage(W, x))
    grey = BACKGROUND * (1 - alpha) + 235 * alpha
    if noise:
        grey = grey + rng.integers(-noise, noise + 1, size=grey.shape)
    grey = np.clip(np.rint(grey), 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


def feed(gate: MotionGate, frames) -> list[Motion]:
    return [gate.update(f) for f in frames]


def settled_gate(**kwargs) -> MotionGate:
    gate = MotionGate(**kwargs)
    feed(gate, [scene()] * (gate.settle_frames + 1))
    assert gate.state is Motion.STILL
    return gate


def test_the_first_frame_counts_as_movement():
    gate = MotionGate()
    assert gate.update(scene()) is Motion.MOVING
    assert gate.last_fraction == 1.0


@pytest.mark.parametrize("settle", [6, 3])
def test_a_still_scene_settles_then_is_still_after_exactly_settle_frames_quiet_frames(settle):
    gate = MotionGate(settle_frames=settle)
    states = feed(gate, [scene()] * (settle + 3))
    assert states == [Motion.MOVING] + [Motion.SETTLING] * (settle - 1) + [Motion.STILL] * 3


def test_a_moving_die_resets_the_gate_to_moving():
    gate = settled_gate()
    assert gate.update(scene(x=120)) is Motion.MOVING
    assert gate.quiet == 0
    # The die lies still at its new place: the settle count starts again.
    assert feed(gate, [scene(x=120)] * 2) == [Motion.SETTLING, Motion.SETTLING]


def test_a_die_creeping_under_a_pixel_a_frame_never_reads_as_still():
    """Half a pixel a frame is under the threshold frame to frame, but three pixels over a settle
    window: the comparison against the anchor frame must catch it."""
    creep = [scene(x=100 + 0.5 * i) for i in range(40)]
    gate = MotionGate()
    small = [gate.small(f) for f in creep]
    frame_to_frame = [gate._changed(b, a) for a, b in zip(small, small[1:])]
    assert max(frame_to_frame) <= gate.changed_fraction, "the creep must be invisible frame to frame"

    states = feed(gate, creep)
    assert Motion.STILL not in states
    assert states.count(Motion.MOVING) > 1, "the drift keeps restarting the settle count"

    # Once the die stops, the gate settles within one settle window.
    rest = feed(gate, [creep[-1]] * gate.settle_frames)
    assert rest[-1] is Motion.STILL


def test_sensor_noise_alone_still_reaches_still():
    rng = np.random.default_rng(3)
    gate = MotionGate()
    states = feed(gate, [scene(noise=3, rng=rng) for _ in range(gate.settle_frames + 1)])
    assert states[-1] is Motion.STILL


def test_reset_makes_the_next_frame_count_as_movement():
    gate = settled_gate()
    gate.reset()
    assert gate.state is Motion.MOVING
    assert feed(gate, [scene(), scene()]) == [Motion.MOVING, Motion.SETTLING]


def test_a_new_frame_shape_counts_as_movement():
    gate = settled_gate()
    assert gate.update(scene()[:360]) is Motion.MOVING  # 16:9 instead of 4:3
    assert gate.last_fraction == 1.0


def test_the_same_scene_at_another_resolution_of_the_same_shape_stays_still():
    """The gate compares a fixed-width thumbnail, so only the picture counts, not its pixel size."""
    gate = settled_gate()
    half = cv2.resize(scene(), (W // 2, H // 2), interpolation=cv2.INTER_AREA)
    assert gate.update(half) is Motion.STILL


def test_grey_frames_are_gated_like_colour_ones():
    gate = MotionGate()
    grey = cv2.cvtColor(scene(), cv2.COLOR_BGR2GRAY)
    assert feed(gate, [grey] * (gate.settle_frames + 1))[-1] is Motion.STILL
    assert gate.update(cv2.cvtColor(scene(x=130), cv2.COLOR_BGR2GRAY)) is Motion.MOVING
