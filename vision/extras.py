"""Which optional install extra provides which module, so a command that needs one says so in one line
instead of a ModuleNotFoundError traceback (the README's plain install has none of them)."""

from __future__ import annotations

import importlib.util

from dicecam.mechanics.errors import MissingExtra

# pyproject.toml's [project.optional-dependencies], by the top-level module each one installs.
EXTRAS: dict[str, tuple[str, ...]] = {
    "synth": ("moderngl", "PIL"),
    "train": ("torch", "ultralytics", "torchvision", "onnx", "onnxslim"),
    "openvino": ("openvino",),
    "test": ("playwright", "pytest", "hypothesis", "httpx"),
}
EXTRA_OF = {module: extra for extra, modules in EXTRAS.items() for module in modules}


def require(extra: str, what: str = "", modules: tuple[str, ...] | None = None) -> None:
    """Raise MissingExtra naming the first module of `extra` (or of `modules`) that is not installed.
    Only looks: nothing is imported (ultralytics, for one, must be set up before its import)."""
    for module in modules or EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(extra, module, what)


def as_missing_extra(error: ModuleNotFoundError, what: str = "") -> MissingExtra | None:
    """The one-line error for a module an extra provides; None for any other missing module (a bug)."""
    top = (error.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    return MissingExtra(extra, top, what) if extra else None
