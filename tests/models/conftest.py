"""Fixtures of the training tests: a few renders, and a copy of the shipped weights to refit beside."""

from __future__ import annotations

import shutil

import pytest

from dicecam.vision.read import models_dir


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    render = pytest.importorskip("dicecam.datasets.render")
    ok, why = render.egl_available()
    if not ok:
        pytest.skip(f"no headless OpenGL (EGL) context: {why}")
    from dicecam.datasets.synth import generate

    out = tmp_path_factory.mktemp("renders")
    generate(out, 8, 31, None, "jsonl", progress=False)
    return out


@pytest.fixture
def shipped_copy(tmp_path):
    """The shipped weights in a folder of their own, so a refit never touches models/."""
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("detector.onnx", "detector.json", "reader.onnx", "reader.json", "upface.onnx", "upface.json"):
        shutil.copy(models_dir() / name, folder / name)
    return folder
