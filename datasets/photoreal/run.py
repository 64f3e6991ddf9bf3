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
from ..scene import DIE_RADIUS, ONE_DIE_SPREAD, TABLE_SPREAD, check_size, parse_kinds, spread, table_kinds
from . import INSTALL_HINT, bpy_available
from .fonts import system_fonts
from .legibility import every_die_legible
from .sample import Scene, die_box, sample_scene, truth
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


# A rolled die's width on screen, as a share of the frame's: a webcam over a table, the die big enough to read;
# on a table of several, each no larger than leaves the others room.
ROLL_SIZE = (0.07, 0.2)
TABLE_SIZE = (0.07, 0.14)


def one_die_rolls(seed: int, kind: str, rolls: int, *, width: int = 640, height: int = 480, device: str = "cpu",
                  samples: int = DEFAULT_SAMPLES, effects_strength: float = 0.6
                  ) -> Iterator[tuple[np.ndarray, ImageRead]]:
    """One photoreal die rolled again and again on one table under one camera: the photoreal twin of
    `datasets.scene.one_die_rolls`. Its look, the camera, the light, the table and the webcam's character stay
    (all drawn from `seed`); each roll gives it a new pose and place near the middle of the view, and the sensor
    its own noise. What teaching a die is measured on (`dicecam bench --teach-real`): some rolls taught, the
    others read. Clutter and tray walls are left out: a die rolled anew could land in them. Roll i is the same
    image for the same arguments."""
    if kind not in DIE_RADIUS:
        raise DicecamError(f"unknown die kind {kind!r}")
    return _rolls(seed, [kind], rolls, width, height, device, samples, effects_strength)


def table_rolls(seed: int, n_dice: int, rolls: int, *, kinds: Sequence[str] | None = None, width: int = 640,
                height: int = 480, device: str = "cpu", samples: int = DEFAULT_SAMPLES, effects_strength: float = 0.6
                ) -> Iterator[tuple[np.ndarray, ImageRead]]:
    """A photoreal table of `n_dice` mixed dice (`kinds` in turn) rolled together again and again: the twin of
    `datasets.scene.table_rolls`. Each die keeps its look, the table its camera, light and surface; each roll gives
    every die a new pose and place, none touching another. Roll i is the same image for the same arguments."""
    return _rolls(seed, table_kinds(kinds, n_dice), rolls, width, height, device, samples, effects_strength)


def _rolls(seed: int, kinds: list[str], rolls: int, width: int, height: int, device: str, samples: int,
           effects_strength: float) -> Iterator[tuple[np.ndarray, ImageRead]]:
    check_size(width, height)
    st = stage(device, samples)
    rng = np.random.default_rng(seed)
    scene = rolls_table(rng, st, kinds, width, height, seed)
    eff = dataclasses.replace(fx.sample_effects(rng, effects_strength), distortion=0.0, jpeg=0)
    name = f"photoreal-{seed}" if len(kinds) == 1 else f"photoreal-table-{seed}"
    for i in range(rolls):
        now, roll = rolled(scene, seed, i)
        img = st.render(now, int(roll.integers(2**31)))
        if effects_strength > 0:
            img = fx.apply(img, dataclasses.replace(eff, noise_seed=int(roll.integers(2**31))), jpeg=False)
        yield img, truth(now, f"{name}-roll-{i}", st.hull)


def rolls_table(rng: np.random.Generator, st: Stage, kinds: list[str], width: int, height: int, seed: int) -> Scene:
    """The table, camera, light and dice (`kinds`, one die each) that are rolled on: no clutter, every die at a
    size people film where the first roll (`rolled(scene, seed, 0)`) lands it, their numerals standing out in the
    picture (`legibility`): a die no person could read would be measured in every roll of it, and no maker sells
    one. (Judged where the sampler put them instead, a die rolled to the middle of a tilted view came out a third
    smaller than it was judged.)"""
    for _ in range(300):  # ten dice all at a filmable size take up to ~60 draws
        scene = sample_scene(rng, kinds, width, height, system_fonts(), len(kinds), closeup=False, in_turn=True)
        scene.props, scene.walls = [], []
        if len(scene.dice) != len(kinds):
            continue
        try:
            first, _ = rolled(scene, seed, 0)
        except DicecamError:  # the dice do not fit apart in this view
            continue
        if _filmable(st, first) and legible(st, first):
            return scene
    raise DicecamError(f"no view of {len(kinds)} {'/'.join(sorted(set(kinds)))} at a readable size in {width}x{height}")


def _filmable(st: Stage, scene: Scene) -> bool:
    """Every die lies in view at a size a webcam reads (`ROLL_SIZE`, `TABLE_SIZE`)."""
    lo, hi = ROLL_SIZE if len(scene.dice) == 1 else TABLE_SIZE
    for d in scene.dice:
        box = die_box(scene, d, st.hull(d.kind, d.style))
        if box is None or not lo <= (box[2] - box[0]) / scene.width <= hi:
            return False
    return True


def legible(st: Stage, scene: Scene) -> bool:
    """Every die's paint stands out from its body in the scene's picture (`legibility.every_die_legible`)."""
    boxes = [die_box(scene, d, st.hull(d.kind, d.style)) for d in scene.dice]
    return every_die_legible(st.render(scene), *st.ink_and_cover(scene), [b for b in boxes if b is not None])


def rolled(scene: Scene, seed: int, i: int) -> tuple[Scene, np.random.Generator]:
    """Roll i of the table's dice (each a new resting pose, all new places apart from each other: one die near
    the middle of the view, a table's over most of it), and the roll's generator, which draws its picture's
    noise next."""
    roll = np.random.default_rng([seed, i])
    meshes = [geometry.build(d.kind, d.style) for d in scene.dice]
    poses = [geometry.resting_rotation(m, int(roll.integers(len(m.faces))), roll.uniform(0, 2 * np.pi)) for m in meshes]
    where = ONE_DIE_SPREAD if len(scene.dice) == 1 else TABLE_SPREAD
    spots = spread(roll, scene.camera.unproject_to_table, [d.scale for d in scene.dice], scene.width, scene.height,
                   where)
    dice = [dataclasses.replace(d, R=R, pos=np.array([xy[0], xy[1], geometry.rest_height(m, R, d.scale)]),
                                value=geometry.value_up(m, R), cocked=False)
            for d, m, R, xy in zip(scene.dice, meshes, poses, spots)]
    return dataclasses.replace(scene, dice=dice), roll
