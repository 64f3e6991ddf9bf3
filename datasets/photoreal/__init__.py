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


def bpy_problem() -> str | None:
    """Why bpy cannot be used here, in one line; None when it imports. An installed bpy that fails to
    load (a shared library missing, a numpy it was not built for) is told apart from no bpy at all:
    installing the extra again does not help the first."""
    try:
        import bpy  # noqa: F401
    except Exception as e:  # noqa: BLE001 - a broken bpy wheel fails in many ways; each is told as it is
        if isinstance(e, ModuleNotFoundError) and e.name == "bpy":
            return "bpy (the photoreal extra) is not installed"
        first = (str(e).strip().splitlines() or [""])[0]
        return f"bpy is installed but does not load: {type(e).__name__}: {first}"
    return None


def bpy_available() -> bool:
    return bpy_problem() is None
