"""The die check (`vision/diecheck.py`): fitted on the detector's boxes down to the check's floor.

Every box the shipped detector draws at the floor or above on a labelled photo is a sample: a die where it
matches a labelled die (box overlap 0.5 or more; on a photo of one die given without a box, the surest
box), no die where it overlaps none by 0.2 (half-boxes of a die in between are left out: they are
neither). Sources: the real sets' training parts (the parts `dicecam eval --held-out` scores stay out)
and renders; each capped, so that no one of them decides alone. A binary logistic regression on
`diecheck.check_inputs`, with the kind head's fit (standardised, L2).

Its figures are each source read by a check fitted without it (leave one source out): the boxes a new
table's camera would show it are things it never saw, and that is the figure that says whether the
floor may come down. The thresholds (`DieCheck` defaults) were chosen on these figures.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from dicecam.mechanics.errors import DicecamError
from dicecam.vision.boxes import iou
from dicecam.vision.diecheck import FILE, FLOOR, DieCheck, boxes_inputs
from dicecam.vision.evaluate import TruthImage, held_out, load_truth
from dicecam.vision.read import Reader

from .train_kind import L2, fit_logistic

# (folder under --real, which images) as the doubt model's sources; the rest of each set is held out.
CHECK_SETS = (("lurig-d20-values", "training part"), ("lurig-types", "training part"),
              ("nell-byler-d6-pips/images/train", "all"), ("rune55-d6-pips", "all"))
PER_SOURCE = 3000  # boxes at most from each source
DIE_IOU, NO_DIE_IOU = 0.5, 0.2


@dataclass(frozen=True)
class Boxes:
    """The samples of one source: check inputs, and 1 where the box holds a die."""

    x: np.ndarray
    die: np.ndarray


def labels(item: TruthImage, xyxy: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """Per box 1 (a labelled die), 0 (no die) or -1 (part of one: left out)."""
    if item.single:
        surest = int(np.argmax(confidence))
        out = np.array([0 if iou(xyxy[surest], b) < NO_DIE_IOU else -1 for b in xyxy])
        out[surest] = 1
        return out
    known = [d.box for d in item.dice if d.box is not None]
    best = np.array([max([iou(k, b) for k in known] or [0.0]) for b in xyxy])
    return np.where(best >= DIE_IOU, 1, np.where(best < NO_DIE_IOU, 0, -1))


def samples(reader: Reader, items, cap: int = PER_SOURCE, seed: int = 0) -> Boxes:
    """The check's samples on labelled photos, `cap` boxes at most (a seeded draw)."""
    xs, ys = [], []
    for item in items:
        img = item.image if item.image is not None else cv2.imread(str(item.path))
        if img is None or not (item.single or any(d.box is not None for d in item.dice)):
            continue
        dets = reader.boxes(img, min_score=FLOOR)
        if not len(dets):
            continue
        y = labels(item, dets.xyxy, dets.confidence)
        keep = y >= 0
        if keep.any():
            h, w = img.shape[:2]
            boxed = dets[keep]
            xs.append(boxes_inputs(reader.seen(img, boxed).out[3], boxed, w, h))
            ys.append(y[keep])
    if not xs:
        return Boxes(np.zeros((0, 0), np.float32), np.zeros(0, int))
    x, y = np.concatenate(xs), np.concatenate(ys)
    if len(y) > cap:
        pick = np.sort(np.random.default_rng(seed).choice(len(y), cap, replace=False))
        x, y = x[pick], y[pick]
    return Boxes(x, y)


def harvest(reader: Reader, real: Path | None, synthetic: Path | None, log=print) -> dict[str, Boxes]:
    """Samples per source: the real sets' training parts under `real`, the renders in `synthetic`."""
    found: dict[str, Boxes] = {}
    for folder, which in CHECK_SETS if real is not None else ():
        path = Path(real) / folder
        if not path.exists():
            continue
        set_name = folder.split("/")[0]
        items = load_truth(path)
        if which == "training part":
            items = (i for i in items if not held_out(set_name, i))
        found[set_name] = samples(reader, items)
    if synthetic is not None:
        found["synthetic"] = samples(reader, load_truth(Path(synthetic)))
    for name, b in found.items():
        log(f"die check: {name}: {int(b.die.sum())} dice, {int((b.die == 0).sum())} boxes that are none")
    return {n: b for n, b in found.items() if len(b.die)}


def fit(x: np.ndarray, die: np.ndarray, lam: float = L2) -> tuple[np.ndarray, float]:
    """(w, b) of the log-odds that a box holds a die."""
    W, b = fit_logistic(x, die.astype(int), 2, lam)
    return (W[:, 1] - W[:, 0]).astype(np.float32), float(b[1] - b[0])


def left_out(found: dict[str, Boxes], check: DieCheck, lam: float = L2) -> dict[str, dict]:
    """Each source read by a check fitted on the others: dice and non-dice kept, with the detector's
    threshold alone and with the check."""
    out = {}
    for name, b in found.items():
        rest = [o for n, o in found.items() if n != name]
        if not rest or len({int(v) for o in rest for v in o.die}) < 2:
            continue
        w, bias = fit(np.concatenate([o.x for o in rest]), np.concatenate([o.die for o in rest]), lam)
        score = np.exp(b.x[:, -2])  # the detector's score, as check_inputs keeps it
        probe = DieCheck(w, bias, check.floor, check.trusted, check.keep_low, check.drop_high)
        kept = probe.keep(probe.chance(b.x), score)
        alone = score >= check.trusted
        die, none = b.die == 1, b.die == 0
        out[name] = {"dice": int(die.sum()), "found_alone": _share(alone[die]), "found_checked": _share(kept[die]),
                     "none": int(none.sum()), "none_kept_alone": int(alone[none].sum()),
                     "none_kept_checked": int(kept[none].sum())}
    return out


def _share(v: np.ndarray) -> float | None:
    return round(float(v.mean()), 4) if len(v) else None


def train_diecheck(real: Path | None, synthetic: Path | None, out: Path, *, reader_folder: Path | None = None,
                   lam: float = L2, log=print) -> dict:
    """Fit the die check on the face reader in `reader_folder` (default: the shipped one) and write
    `out`/diecheck.json with its left-one-source-out figures."""
    t0 = time.perf_counter()
    reader = Reader.load(reader_folder, backend="onnxruntime", kind_head=False, doubt=False, check=False)
    found = harvest(reader, real, synthetic, log)
    x = np.concatenate([b.x for b in found.values()]) if found else np.zeros((0, 0))
    die = np.concatenate([b.die for b in found.values()]) if found else np.zeros(0)
    if len(set(die.tolist())) < 2:
        raise DicecamError("the die check needs boxes with dice and boxes without: give --real and renders")
    w, b = fit(x, die, lam)
    check = DieCheck(w, b, reader=reader.model_id)
    figures = left_out(found, check, lam)
    for name, f in figures.items():
        log(f"die check, {name} left out: dice found {f['found_alone']} -> {f['found_checked']}, "
            f"boxes that are none kept {f['none_kept_alone']} -> {f['none_kept_checked']} of {f['none']}")
    meta = {"fitted_on": {n: {"dice": int(o.die.sum()), "none": int((o.die == 0).sum())} for n, o in found.items()},
            "l2": lam, "left_one_source_out": figures, "seconds": round(time.perf_counter() - t0, 1)}
    path = Path(out) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(check.to_json(**meta), indent=1) + "\n")
    log(f"die check: {len(die)} boxes, written to {path}")
    return {"left_one_source_out": figures}
