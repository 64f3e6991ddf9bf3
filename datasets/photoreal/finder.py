"""Up-face finder labels for photoreal renders: where each die's value numeral is, in its crop.

A photoreal folder (`dicecam synth --renderer photoreal`) keeps images and their reads, not the
geometry. Its scenes are drawn from seeds without bpy (`sample.sample_scene`), so each image's scene
is drawn again from its seed and each die's value glyph projected through its camera, exactly as
`datasets/upface` labels a moderngl render. The numbering is one for both renderers (`faces.py`).

A die is left out when no one die of the redrawn scene matches it (kind, value, and the box around its
projected corners; a machine whose fonts differ from the render's may draw other looks, but the same
dice), when the frame cuts it, when its numeral lies behind a nearer die, or when its printed face
turns away from the camera. The crops are cut from the rendered image with a detector's box jitter.

    python -m dicecam.datasets.photoreal.finder OUT.npz FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import cv2
import numpy as np

from dicecam.vision.crops import CROP_SIZE

from .. import geometry
from ..scene import parse_kinds
from ..synth import image_seed
from ..upface import FinderRows, glyph_target
from .fonts import system_fonts
from .sample import Scene, sample_scene

SEED_STRIDE = 1000  # a crop's scene number: its folder's seed times this, plus the image's index


@dataclass(frozen=True)
class Labelled:
    box: np.ndarray  # the die's box as the read gives it
    point: np.ndarray  # its value numeral's centre, pixels
    top: np.ndarray  # unit image direction of the numeral's top
    facing: float
    angle_known: bool
    kind: str


def image_index(read: dict) -> int:
    """Which image of its folder a read is (synth names image i `p{seed}_{i:06d}`)."""
    return int(Path(read["image"]).stem.rsplit("_", 1)[1])


def redrawn(summary: dict, read: dict, fonts: tuple[str, ...]) -> Scene:
    """The scene of one image of a photoreal folder (its summary.json, one line of its reads), drawn again from
    its seed (`synth.image_seed`)."""
    rng = np.random.default_rng(image_seed(int(summary["seed"]), image_index(read)))
    return sample_scene(rng, parse_kinds(summary.get("kinds")), int(read["width"]), int(read["height"]), fonts)


def labelled_dice(scene: Scene, read: dict, skipped: Counter) -> list[Labelled]:
    """The read's dice that can be labelled (module notes), with their labels; `skipped` counts the rest."""
    cam = scene.camera
    project = lambda pts: cam.project(pts)[0]  # noqa: E731
    corners = [project(geometry.build(d.kind, d.style).vertices @ d.R.T * d.scale + d.pos) for d in scene.dice]
    depth = [float(np.linalg.norm(d.pos - cam.eye)) for d in scene.dice]
    out = []
    for die in read["dice"]:
        box = np.asarray(die["box"], np.float32)
        mine = [k for k, d in enumerate(scene.dice) if d.kind == die["type"] and d.value == die["value"]
                and _inside(corners[k].mean(0), box, 2.0)]
        if len(mine) != 1:
            skipped["unmatched"] += 1
            continue
        k = mine[0]
        if box[0] <= 0 or box[1] <= 0 or box[2] >= read["width"] - 1 or box[3] >= read["height"] - 1:
            skipped["cut by the frame"] += 1
            continue
        point, top, facing, known = glyph_target(project, cam.eye, scene.dice[k])
        if facing <= 0:
            skipped["face turned away"] += 1
            continue
        if any(depth[o] < depth[k] and _covers(corners[o], point) for o in range(len(scene.dice)) if o != k):
            skipped["numeral hidden"] += 1
            continue
        out.append(Labelled(box, point, top, facing, known, die["type"]))
    return out


def _inside(p: np.ndarray, box: np.ndarray, slack: float) -> bool:
    return box[0] - slack <= p[0] <= box[2] + slack and box[1] - slack <= p[1] <= box[3] + slack


def _covers(corners: np.ndarray, point: np.ndarray) -> bool:
    hull = cv2.convexHull(corners.astype(np.float32))
    return cv2.pointPolygonTest(hull, (float(point[0]), float(point[1])), False) >= 0


def folder_labels(folder: Path, fonts: tuple[str, ...] | None = None, skipped: Counter | None = None
                  ) -> Iterator[tuple[int, np.ndarray, list[Labelled]]]:
    """(image index, image, labelled dice) for every image of a photoreal folder."""
    folder = Path(folder)
    fonts = system_fonts() if fonts is None else fonts
    skipped = Counter() if skipped is None else skipped
    summary = json.loads((folder / "summary.json").read_text())
    for line in (folder / "reads.jsonl").read_text().splitlines():
        read = json.loads(line)
        img = cv2.imread(str(folder / read["image"]))
        if img is None:
            skipped["image unreadable"] += len(read["dice"])
            continue
        yield image_index(read), img, labelled_dice(redrawn(summary, read, fonts), read, skipped)


def generate(out: Path, folders: Sequence[Path], crops_per_die: int = 2, size: int = CROP_SIZE, seed: int = 0) -> dict:
    """Write the finder's training set (datasets/upface's arrays) for the photoreal folders; returns a summary.
    Scene numbers are the folder's seed times SEED_STRIDE plus the image's index, so whole folders or
    images can be held out."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x0F1D]))
    fonts, skipped = system_fonts(), Counter()
    rows = FinderRows()
    for folder in folders:
        base = int(json.loads((Path(folder) / "summary.json").read_text())["seed"]) * SEED_STRIDE
        for index, img, dice in folder_labels(folder, fonts, skipped):
            for die in dice:
                rows.add(img, die.box, die.point, die.top, die.facing, die.angle_known, die.kind, base + index, rng,
                         crops_per_die, size)
    if not len(rows):
        raise ValueError("no die in these folders could be labelled")
    rows.save(Path(out))
    return {"folders": [str(f) for f in folders], "crops": len(rows), "dice": len(rows) // crops_per_die,
            "left_out": dict(skipped)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Up-face finder labels for photoreal render folders.")
    ap.add_argument("out", type=Path, help="the .npz to write")
    ap.add_argument("folders", type=Path, nargs="+")
    ap.add_argument("--crops-per-die", type=int, default=2)
    a = ap.parse_args(argv)
    print(json.dumps(generate(a.out, a.folders, a.crops_per_die)))


if __name__ == "__main__":
    main()
