"""Photoreal dice renders with Blender's Python module (Cycles), for training on real-looking dice.

- `fonts`, `looks`, `faces`, `sample`: what to draw (fonts, materials, numeral textures, cameras,
  poses and the truth read off the geometry). Pure numpy/PIL: no bpy, testable anywhere.
- `stage`: the one bpy scene, built once per process and re-dressed for every image.
- `run`: `render_image(seed)`, an image and its `ImageRead`, as `datasets.scene` gives for the
  moderngl renderer.

bpy is an optional extra (`pip install 'dicecam[photoreal]'`); nothing here imports it at import time.
"""

from __future__ import annotations

INSTALL_HINT = "the photoreal renderer needs Blender's Python module: pip install 'dicecam[photoreal]' (or: pip install bpy)"


def bpy_available() -> bool:
    try:
        import bpy  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken bpy wheel fails in many ways; any of them means "not here"
        return False
    return True
