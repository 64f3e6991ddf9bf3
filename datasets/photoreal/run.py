"""`render_image(seed)`: one photoreal table of dice and the read that is true for it."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics.errors import DicecamError

from .. import effects as fx
from ..scene import check_size, parse_kinds
from . import INSTALL_HINT, bpy_available
from .fonts import system_fonts
from .sample import sample_scene, truth
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
