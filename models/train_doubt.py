"""The doubt model: each reader's chance of being right on a die, from a few plain measures.

`vision/belief.py` asks two readers (the text recogniser's numerals, the face network) and believes
the one likelier to be right, with that chance as the die's confidence. The chances come from two
logistic regressions over `belief.FEATURES`, fitted here on dice whose truth we know and that the
held-out scores never see: the training parts of lurig-d20-values (real d20 by value),
lurig-types (real dice of every kind; kind only), nell-byler's d6-pip training photos, Rune55 (d6 pips,
a training-only set), and renders.
Each source is capped so that no one of them decides alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

import cv2
import numpy as np
from scipy.optimize import minimize

from dicecam.vision.belief import FEATURES, UNCERTAIN_BELOW, Doubt, confidence_inputs, gate_inputs
from dicecam.vision.crops import KIND_OF_FACE, KINDS, VALUE_OF_FACE
from dicecam.vision.evaluate import TruthImage, held_out, load_truth, matching_detection
from dicecam.vision.read import Reader

# (folder under --real, which images) the model is fitted on; the rest of each set is held out.
DOUBT_SETS = (("lurig-d20-values", "training part"), ("lurig-types", "training part"),
              ("nell-byler-d6-pips/images/train", "all"), ("rune55-d6-pips", "all"))
PER_SOURCE = 600  # dice at most from each source


def samples(reader: Reader, truth: Path, keep: Callable[[TruthImage], bool], cap: int = PER_SOURCE
            ) -> tuple[np.ndarray, np.ndarray]:
    """(features (M, 2, F), right (M, 2)): per die, each reader's measures and whether its answer is
    right (its kind, and its value where the truth has one)."""
    items = [t for t in load_truth(truth) if keep(t)]
    step = max(1, round(sum(len(t.dice) for t in items) / cap))
    feats, right = [], []
    for item in items[::step]:
        img = item.image if item.image is not None else cv2.imread(str(item.path))
        if img is None:
            continue
        dets = reader.detect(img)
        if not len(dets):
            continue
        seen, _ = reader.readings(img, dets)
        for die in item.dice:
            j = matching_detection(die.box, dets.xyxy, dets.confidence) if die.box is not None or item.single else None
            if j is None:
                continue
            answers = seen.answers[j]
            ok = [KINDS[KIND_OF_FACE[a]] == die.kind.value and (die.value is None or VALUE_OF_FACE[a] == die.value)
                  for a in answers]
            feats.append(seen.features[j])
            right.append(ok)
    return np.array(feats).reshape(-1, 2, len(FEATURES)), np.array(right, float).reshape(-1, 2)


def fit_logistic(x: np.ndarray, y: np.ndarray, lam: float = 1e-2) -> tuple[np.ndarray, float]:
    z = np.c_[x, np.ones(len(x))]

    def loss(w):
        p = np.clip(1 / (1 + np.exp(-np.clip(z @ w, -50, 50))), 1e-9, 1 - 1e-9)
        nll = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
        return nll + lam * (w[:-1] ** 2).sum(), z.T @ (p - y) / len(y) + np.r_[2 * lam * w[:-1], 0.0]

    w = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x
    return w[:-1], float(w[-1])


def train_doubt(real: Path | None, synthetic: Path | None, out: Path, *, reader_folder: Path | None = None,
                cache: Path | None = None, log=print) -> dict:
    """Fit the doubt model and write `out`/doubt.json (with how it was fitted, and its figures).
    `cache`: an .npz that keeps the measured dice, so a refit after an interruption or a change of
    the fit alone does not read every photo again (it is measured anew for another reader)."""
    t0 = time.perf_counter()
    reader = Reader.load(reader_folder, backend="onnxruntime")
    parts = _cached(cache, reader.model_id)
    if parts is None:
        parts = _measure(reader, real, synthetic, log)
        if cache is not None:
            np.savez(cache, reader=reader.model_id, names=list(parts),
                     **{f"x{i}": p[0] for i, p in enumerate(parts.values())},
                     **{f"y{i}": p[1] for i, p in enumerate(parts.values())})
    x = np.concatenate([p[0] for p in parts.values()])
    y = np.concatenate([p[1] for p in parts.values()])
    if len(y) < 20 or len(np.unique(y)) < 2:
        raise ValueError("the doubt model needs dice both readers get right and wrong: give --real and renders")
    # The gate learns from the dice where one reader is right and the other wrong; the confidence from
    # every die, as the gate chooses.
    one = y[:, 0] != y[:, 1]
    gate_coef, gate_bias = fit_logistic(gate_inputs(x[one]), y[one, 0], lam=1e-3)
    gate = 1 / (1 + np.exp(-np.clip(gate_inputs(x) @ gate_coef + gate_bias, -50, 50)))
    pick = (gate < 0.5).astype(np.int64)
    rows = np.arange(len(pick))
    # Per reader, on the dice the gate hands it (on all dice when it is handed too few to fit on).
    inputs, right = confidence_inputs(x, pick, gate), y[rows, pick]
    conf = [fit_logistic(inputs[m], right[m], lam=1e-3) for m in
            ((pick == r) if (pick == r).sum() >= 20 and len(np.unique(right[pick == r])) == 2 else np.ones_like(pick, bool)
             for r in range(2))]
    doubt = Doubt(gate_coef, gate_bias, np.stack([c for c, _ in conf]), np.array([b for _, b in conf]))
    figures = {}
    for name, (xx, yy) in parts.items():
        p, chance = doubt.choose(xx)
        right = yy[np.arange(len(p)), p]
        sure = chance >= UNCERTAIN_BELOW
        figures[name] = {"dice": len(yy), "right": round(float(right.mean()), 4), "sure": round(float(sure.mean()), 4),
                         "sure_wrong": round(float(((1 - right) * sure).sum() / max(1, sure.sum())), 4)}
    meta = {**doubt.to_json(), "fitted_on": figures, "reader": reader.model_id,
            "seconds": round(time.perf_counter() - t0, 1)}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "doubt.json").write_text(json.dumps(meta, indent=1) + "\n")
    log(f"doubt: fitted on {len(y)} dice: {figures}")
    return meta


def _measure(reader: Reader, real: Path | None, synthetic: Path | None, log) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    parts = {}
    for name, which in DOUBT_SETS if real is not None else ():
        truth = Path(real) / name
        if not truth.exists():
            continue
        set_name = name.split("/")[0]
        keep = (lambda t: True) if which == "all" else (lambda t, n=set_name: not held_out(n, t))
        parts[name] = samples(reader, truth, keep)
        log(f"doubt: {len(parts[name][1])} dice from {name} ({which})")
    if synthetic is not None:
        parts["synthetic"] = samples(reader, Path(synthetic), lambda t: True)
        log(f"doubt: {len(parts['synthetic'][1])} dice from renders in {synthetic}")
    return parts


def _cached(cache: Path | None, reader_id: str) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    if cache is None or not Path(cache).is_file():
        return None
    data = np.load(cache)
    if str(data["reader"]) != reader_id:
        return None
    return {str(n): (data[f"x{i}"], data[f"y{i}"]) for i, n in enumerate(data["names"])}
