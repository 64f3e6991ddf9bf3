"""Labels on disk, in one place: which files are images, and the YOLO label format, written and read back.

A YOLO folder holds images/.../NAME.jpg next to labels/.../NAME.txt, one line per die:
"class cx cy w h", the box normalised to the image size. Our exports number the classes in KINDS
order (datasets/export.py, server/store.py); the shared real d6-pip sets use class k for a die
showing k+1 pips (vision/evaluate.py, models/data.py read them so). Both are read here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from dicecam.mechanics.dice import ImageRead

from .boxes import PixelBox, normalised, pixel_box
from .crops import KINDS

__all__ = ["IMAGE_EXTS", "data_yaml", "pixel_box", "read_yolo_labels", "yolo_boxes", "yolo_line", "yolo_lines", "yolo_pairs"]

# The image files a folder is read for: `dicecam read DIR`, a folder of frames, YOLO folders.
IMAGE_EXTS = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp"})


def yolo_line(kind: int, box, width: int, height: int) -> str:
    """One label line: a die's kind (its index in KINDS) and its pixel box in a width x height picture."""
    cx, cy, w, h = normalised(box, width, height)
    return f"{kind} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}"


def yolo_lines(read: ImageRead) -> list[str]:
    """The label file's lines for one read: each die's kind as its index in KINDS."""
    return [yolo_line(KINDS.index(d.type.value), d.box, read.width, read.height) for d in read.dice]


def data_yaml(train: list[str], val: list[str], root: Path | None = None) -> str:
    """An ultralytics data.yaml for image folders labelled in KINDS order: with `root`, one folder per
    split relative to it (an export); without, lists of absolute folders (a training run's mix)."""
    if root is not None:
        lines = [f"path: {root.resolve()}", f"train: {train[0]}", f"val: {val[0]}"]
    else:
        lines = ["train:", *[f"  - {f}" for f in train], "val:", *[f"  - {f}" for f in val]]
    lines += [f"nc: {len(KINDS)}", "names:", *[f"  {i}: {k}" for i, k in enumerate(KINDS)]]
    return "\n".join(lines) + "\n"


def yolo_pairs(root: Path) -> Iterator[tuple[Path, Path]]:
    """(image, label) pairs of a YOLO folder: images/... next to labels/... with the same stem."""
    for img in sorted(Path(root).rglob("*")):
        if img.suffix.lower() not in IMAGE_EXTS or "images" not in img.parts:
            continue
        parts = list(img.parts)
        parts[len(parts) - 1 - parts[::-1].index("images")] = "labels"
        label = Path(*parts).with_suffix(".txt")
        if label.is_file():
            yield img, label


def read_yolo_labels(label: Path) -> list[tuple[int, float, float, float, float]]:
    """(class, cx, cy, w, h) per line, normalised as written; short lines are skipped."""
    rows = []
    for line in Path(label).read_text().splitlines():
        p = line.split()
        if len(p) >= 5:
            rows.append((int(p[0]), *map(float, p[1:5])))
    return rows


def yolo_boxes(label: Path, width: int, height: int) -> list[tuple[int, PixelBox]]:
    """(class, box in pixels of a width x height image) per line of a label file."""
    return [(k, pixel_box(*row, width, height)) for k, *row in read_yolo_labels(label)]
