"""How the camera's tilt moves the reading: the same random tables rendered looking straight down and from 20, 40
and 60 degrees off vertical, read by the shipped reader.

A webcam clamped over the table looks straight down; one on a monitor or a tripod beside it looks across the table.
Seen from the side, a die's up face is foreshortened and the face turned to the camera is the clearer one, and the
reader then reads that face, without a doubt flag more often than the 2 % it is held to (models/MODEL_CARD.md). The
tables of one seed differ only by the camera's tilt (its turn about the table, distance and lens stay; the same dice,
the same faces up, in the same light, spread over what the camera sees), so the rows compare like with like.

Per tilt: the dice the labels box (dice of 40 pixels or more, which a 720p webcam gives a die on a table of ordinary
size), how many the reader boxes, reads right (kind and value) and right in kind, how many it reads without a doubt
flag and how many of those are wrong, and the up-face finder's median `facing` (how squarely it judges the up faces
to face the camera: what the reader itself sees of the tilt). Figures are reported, never asserted.
"""

from __future__ import annotations

import numpy as np

from dicecam.datasets import effects as fx
from dicecam.datasets.render import Renderer
from dicecam.datasets.scene import parse_kinds, render_scene, sample_scene
from dicecam.vision.crops import KINDS
from dicecam.vision.evaluate import matching_detection, wrong_up_to
from dicecam.vision.read import Reader

TILTS = (0, 20, 40, 60)  # degrees off vertical
FIRST_SEED = 70_000
MIN_SIDE = 40  # pixels: smaller dice are read poorly at any tilt, and would hide the tilt's part


def tilted_table(seed: int, tilt: float, width: int = 640, height: int = 480):
    """(layout, effects) of table `seed` under a camera `tilt` degrees off vertical: with the tilt given, the camera
    draws nothing for it, so every tilt of a seed rolls the same dice, the same faces up, in the same light."""
    rng = np.random.default_rng(seed)
    lay = sample_scene(rng, parse_kinds(None), width, height, elevation=90.0 - tilt)
    return lay, fx.sample_effects(rng, 1.0)


def _counts() -> dict:
    return {"dice": 0, "boxed": 0, "right": 0, "kind": 0, "sure": 0, "sure_wrong": 0, "facing": []}


def _score(reader: Reader, img: np.ndarray, dice) -> dict:
    """Counts for the labelled `dice` of one picture (DieReading truths with boxes)."""
    found = reader.read(img)
    facing = reader.up_faces(img, found.xyxy, reader.crops(img, found.xyxy)) if len(found) else None
    out = _counts()
    for d in dice:
        out["dice"] += 1
        j = matching_detection(d.box, found.xyxy, found.confidence)
        if j is None:
            continue
        kind_ok = KINDS[int(found.kind[j])] == d.type.value
        right = kind_ok and int(found.value[j]) == d.value
        sure = not (bool(found.uncertain[j]) or bool(found.cocked[j]))
        out["boxed"] += 1
        out["right"] += right
        out["kind"] += kind_ok
        out["sure"] += sure
        out["sure_wrong"] += sure and not right
        if facing is not None:
            out["facing"].append(float(facing[j, 4]))
    return out


def bench_tilt(quick: bool = False, reader: Reader | None = None, tables: int | None = None,
               tilts: tuple[float, ...] = TILTS) -> list[dict]:
    reader = reader or Reader.load()  # the general reader, no table's dice memory
    tables = tables or (40 if quick else 150)
    rows = []
    with Renderer() as gl:
        for tilt in tilts:
            totals = _counts()
            for seed in range(FIRST_SEED, FIRST_SEED + tables):
                lay, eff = tilted_table(seed, tilt)
                img, truth = render_scene(gl, lay.scene, eff, f"tilt-{tilt:g}-{seed}")
                dice = [d for d in truth.dice if d.value is not None and not d.cocked
                        and max(d.box[2] - d.box[0], d.box[3] - d.box[1]) >= MIN_SIDE]
                for k, v in _score(reader, img, dice).items():
                    totals[k] += v
            n, sure = max(totals["dice"], 1), totals["sure"]
            rows.append({"bench": "tilt", "off_vertical_deg": tilt, "tables": tables, "dice": totals["dice"],
                         "boxed": round(totals["boxed"] / n, 4), "read_right": round(totals["right"] / n, 4),
                         "kind_right": round(totals["kind"] / n, 4), "sure": sure, "sure_wrong": totals["sure_wrong"],
                         "sure_wrong_share": round(totals["sure_wrong"] / sure, 4) if sure else None,
                         "sure_wrong_up_to": wrong_up_to(totals["sure_wrong"], sure),
                         "finder_facing_median": round(float(np.median(totals["facing"])), 3)
                         if totals["facing"] else None})
    return rows
