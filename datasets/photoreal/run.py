"""`render_image(seed)`: one photoreal table of dice and the read that is true for it; `one_die_rolls`: one
photoreal die rolled again and again on its own table."""

from __future__ import annotations

import dataclasses
from typing import Iterator, Sequence

import numpy as np

from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics.errors import DicecamError

from .. import effects as fx
from .. import geometry
from ..scene import DIE_RADIUS, check_size, parse_kinds
from . import INSTALL_HINT, bpy_available
from .fonts import system_fonts
from .sample import die_box, sample_scene, truth
from .stage import Stage

DEFAULT_SAMPLES = 12
_STAGE = {}


def stage(device: str = "cpu", samples: int = DEFAULT_SAMPLES):
    """The process's bpy scene, built on first use (per device); samples apply from now on."""
    key = device
    if key not in _STAGE:
        if not bpy_available():
            raise DicecamError(INSTALL_HINT)
        _STAGE.clear()
        _STAGE[key] = Stage(device=device, samples=samples)  # DicecamError when --device gpu finds none
    _STAGE[key].scene.cycles.samples = samples
    return _STAGE[key]


def render_image(seed: int, *, kinds: Sequence[str] | None = None, width: int = 640, height: int = 480,
                 n_dice: int | None = None, device: str = "cpu", samples: int = DEFAULT_SAMPLES,
                 effects_strength: float = 0.6, off_vertical: float | None = None,
                 closeup: bool | None = None) -> tuple[np.ndarray, ImageRead]:
    """BGR uint8 image and its truth (values from the poses, boxes from the bevelled meshes)."""
    check_size(width, height)
    ks = parse_kinds(kinds)
    st = stage(device, samples)
    rng = np.random.default_rng(seed)
    scene = sample_scene(rng, ks, width, height, system_fonts(), n_dice, off_vertical, closeup)
    img = st.render(scene, seed)
    if effects_strength > 0:
        # Webcam noise, colour and blur; no lens distortion (the boxes are projected, not traced).
        eff = dataclasses.replace(fx.sample_effects(rng, effects_strength), distortion=0.0, jpeg=0)
        img = fx.apply(img, eff, jpeg=False)
    return img, truth(scene, f"photoreal-{seed}", st.hull)


# A rolled die's width on screen, as a share of the frame's: a webcam over a table, the die big enough to read.
ROLL_SIZE = (0.07, 0.2)


def one_die_rolls(seed: int, kind: str, rolls: int, *, width: int = 640, height: int = 480, device: str = "cpu",
                  samples: int = DEFAULT_SAMPLES, effects_strength: float = 0.6
                  ) -> Iterator[tuple[np.ndarray, ImageRead]]:
    """One photoreal die rolled again and again on one table under one camera: the photoreal twin of
    `datasets.scene.one_die_rolls`. Its look, the camera, the light, the table and the webcam's character stay
    (all drawn from `seed`); each roll gives it a new pose and place near the middle of the view, and the sensor
    its own noise. What teaching a die is measured on (`dicecam bench --teach-real`): some rolls taught, the
    others read. Clutter and tray walls are left out: a die rolled anew could land in them. Roll i is the same
    image for the same arguments."""
    check_size(width, height)
    if kind not in DIE_RADIUS:
        raise DicecamError(f"unknown die kind {kind!r}")
    st = stage(device, samples)
    rng = np.random.default_rng(seed)
    for _ in range(100):  # a table whose die lies in view at a size people film
        scene = sample_scene(rng, [kind], width, height, system_fonts(), 1, closeup=False)
        scene.props, scene.walls = [], []
        box = die_box(scene, scene.dice[0], st.hull(kind, scene.dice[0].style)) if scene.dice else None
        if box is not None and ROLL_SIZE[0] <= (box[2] - box[0]) / width <= ROLL_SIZE[1]:
            break
    else:
        raise DicecamError(f"no view of a {kind} at a readable size in {width}x{height}")
    die = scene.dice[0]
    mesh = geometry.build(kind, die.style)
    eff = dataclasses.replace(fx.sample_effects(rng, effects_strength), distortion=0.0, jpeg=0)
    for i in range(rolls):
        roll = np.random.default_rng([seed, i])
        R = geometry.resting_rotation(mesh, int(roll.integers(len(mesh.faces))), roll.uniform(0, 2 * np.pi))
        xy = scene.camera.unproject_to_table(width * roll.uniform(0.3, 0.7), height * roll.uniform(0.3, 0.7))[:2]
        rolled = dataclasses.replace(die, R=R, pos=np.array([xy[0], xy[1], geometry.rest_height(mesh, R, die.scale)]),
                                     value=geometry.value_up(mesh, R), cocked=False)
        now = dataclasses.replace(scene, dice=[rolled])
        img = st.render(now, int(roll.integers(2**31)))
        if effects_strength > 0:
            img = fx.apply(img, dataclasses.replace(eff, noise_seed=int(roll.integers(2**31))), jpeg=False)
        yield img, truth(now, f"photoreal-{seed}-roll-{i}", st.hull)
