"""The kind head: which kind of die a crop shows, from the face reader's features and the detector's scores.

The detector alone tells real dice's kinds poorly (56 % on lurig-types' held-out runs): it learnt
kinds from renders. The face reader's features, though, tell *which die* a crop shows well, and a
die's kind is part of that. A multinomial logistic regression on [features, log detector scores],
fitted on real photos' training runs and on renders (so that every kind, d00 included, and many
looks are in it), is the kind head. Photoreal renders (Cycles: swirled, speckled, pearl, gem and metal bodies,
tilted cameras, trays), where given, are fitted on too: of every render, their dice look most like dice
nobody here has photographed. It is a matrix product: exported as a two-node ONNX graph that
the runtime opens like any other shipped model (no scikit-learn, no torch at run time).

Fitted with scipy's L-BFGS on standardised inputs; the standardisation is folded into the weights.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import cv2
import numpy as np
from scipy.optimize import minimize

from dicecam.mechanics.errors import DicecamError
from dicecam.vision.crops import KINDS
from dicecam.vision.evaluate import held_out, load_truth, matching_detection, read_folders
from dicecam.vision.read import KIND_HEAD_EPS, Reader, kind_head_inputs

from .folds import FOLDS, grouped, run_of_photo

# The real sets the head is fitted on; their held-out parts (`dicecam eval --held-out`) stay out.
KIND_SETS = ("lurig-types", "lurig-d20-values")
L2 = 1e-2


@dataclass(frozen=True)
class KindSample:
    x: np.ndarray  # (D,) features then log detector kind scores
    kind: int
    source: str
    photo: str = ""  # the photo's path
    run: str | None = None  # its video run (models/folds.run_of_photo), None where the set names none


def samples(reader: Reader, truth: Path, source: str, keep=lambda item: True, limit: int | None = None
            ) -> Iterable[KindSample]:
    """The kind head's inputs for every labelled die the detector finds, one detection pass per photo."""
    n = 0
    for item in load_truth(truth):
        if not keep(item):
            continue
        img = item.image if item.image is not None else cv2.imread(str(item.path))
        if img is None:
            continue
        dets = reader.detect(img)
        found = [(die, matching_detection(die.box, dets.xyxy, dets.confidence)) for die in item.dice
                 if die.box is not None or item.single]
        found = [(die, j) for die, j in found if j is not None]
        if found:
            rows = np.array([j for _, j in found])
            x = kind_head_inputs(reader.embed(reader.crops(img, dets.xyxy[rows])), dets.kind_scores[rows])
            run = run_of_photo(source, item.meta)
            for (die, _), xi in zip(found, x):
                yield KindSample(xi, KINDS.index(die.kind.value), source, str(item.path), run)
        n += 1
        if limit is not None and n >= limit:
            return


def fit_logistic(x: np.ndarray, y: np.ndarray, classes: int, lam: float = 1e-2) -> tuple[np.ndarray, np.ndarray]:
    """(W, b) of a multinomial logistic regression on raw inputs (standardisation folded in)."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    d = z.shape[1]
    rows = np.arange(len(y))

    def loss(w):
        W, b = w[:d * classes].reshape(d, classes), w[d * classes:]
        s = z @ W + b
        s -= s.max(1, keepdims=True)
        lse = np.log(np.exp(s).sum(1))
        p = np.exp(s - lse[:, None])
        p[rows, y] -= 1
        p /= len(y)
        nll = -(s[rows, y] - lse).mean()
        return nll + lam * (W ** 2).sum(), np.concatenate([(z.T @ p + 2 * lam * W).ravel(), p.sum(0)])

    w = minimize(loss, np.zeros(d * classes + classes), jac=True, method="L-BFGS-B", options={"maxiter": 1000}).x
    W, b = w[:d * classes].reshape(d, classes), w[d * classes:]
    return (W / sd[:, None]).astype(np.float32), (b - (mu / sd) @ W).astype(np.float32)


def export_kind_head(W: np.ndarray, b: np.ndarray, path: Path, meta: dict) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["s"]), helper.make_node("Add", ["s", "b"], ["kind_logits"])],
        "kind_head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", W.shape[0]])],
        [helper.make_tensor_value_info("kind_logits", TensorProto.FLOAT, ["N", W.shape[1]])],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def photoreal_folders(photoreal: Path | None) -> list[Path]:
    """The read-format folders of photoreal renders under `photoreal`: the folder itself where it is one
    (`dicecam synth --renderer photoreal --format jsonl`), else each of its subfolders that is (renders made
    in chunks, a seed each), in name order."""
    if photoreal is None:
        return []
    found = read_folders(photoreal)
    if not found:
        raise DicecamError(f"no photoreal renders (a folder with reads.jsonl, or folders of them) in {photoreal}")
    return found


def harvest(reader: Reader, real: Path | None, synthetic: Path | None, log=print, photoreal: Path | None = None
            ) -> list[KindSample]:
    """What the kind head is fitted on: the real sets' training parts under `real`, the renders in
    `synthetic` (a read-format folder from `dicecam synth --format jsonl`) and the photoreal renders under
    `photoreal` (`photoreal_folders`)."""
    found: list[KindSample] = []
    for name in KIND_SETS if real is not None else ():
        truth = Path(real) / name / "truth.jsonl"
        if truth.is_file():
            got = list(samples(reader, truth, name, keep=lambda item, n=name: not held_out(n, item)))
            log(f"kind head: {len(got)} crops from {name} (training part)")
            found += got
    if synthetic is not None:
        got = list(samples(reader, Path(synthetic), "synthetic"))
        log(f"kind head: {len(got)} crops from renders in {synthetic}")
        found += got
    folders = photoreal_folders(photoreal)
    if folders:
        got = [s for f in folders for s in samples(reader, f, "photoreal")]
        log(f"kind head: {len(got)} crops from photoreal renders in {len(folders)} folders under {photoreal}")
        found += got
    return found


@dataclass(frozen=True)
class KindFold:
    """A kind head of the cross-fit: fitted as the shipped one, without `photos` (whole runs of them).
    Called like the shipped head's ONNX session."""

    W: np.ndarray
    b: np.ndarray
    photos: frozenset[str]

    def __call__(self, x: np.ndarray) -> list[np.ndarray]:
        return [x @ self.W + self.b]


def cross_fit(found: list[KindSample], folds: int = FOLDS, lam: float = L2) -> list[KindFold]:
    """Kind heads each fitted without one fold of the photos (runs kept whole, models/folds.grouped).

    The kind head learnt the photos the doubt model is fitted on; read by it, their kinds come out righter
    and surer than on any new die (lurig-types' training runs 98 % against 90 % on runs left out), and a
    doubt model fitted on that trusts the kind too far. So the doubt stage reads each of them with the
    head here that did not learn it (models/train_doubt.py). Each kind's runs are spread over the folds,
    so every head learnt some real dice of every kind, as the shipped head did."""
    if not found:
        return []
    x = np.stack([s.x for s in found])
    y = np.array([s.kind for s in found])
    fold = grouped([s.run for s in found], folds, strata=y)
    out = []
    for k in range(folds):
        learnt = fold != k
        if len(np.unique(y[learnt])) < 2:
            continue
        W, b = fit_logistic(x[learnt], y[learnt], len(KINDS), lam)
        out.append(KindFold(W, b, frozenset(s.photo for s, f in zip(found, fold) if f == k)))
    return out


def train_kind_head(real: Path | None, synthetic: Path | None, out: Path, *, reader_folder: Path | None = None,
                    lam: float = L2, photoreal: Path | None = None, log=print) -> dict:
    """Fit the kind head on the real sets' training parts under `real`, the renders in `synthetic`
    (a read-format folder from `dicecam synth --format jsonl`) and the photoreal renders under `photoreal`
    (`photoreal_folders`), write `out`/kind.onnx and kind.json.
    The features are those of the face reader in `reader_folder` (default: the shipped one)."""
    t0 = time.perf_counter()
    reader = Reader.load(reader_folder, backend="onnxruntime", kind_head=False)
    found = harvest(reader, real, synthetic, log, photoreal)
    if len({s.kind for s in found}) < 2:
        raise DicecamError("the kind head needs crops of at least two kinds: give --real and rendered crops")
    x = np.stack([s.x for s in found])
    y = np.array([s.kind for s in found])
    W, b = fit_logistic(x, y, len(KINDS), lam)
    fitted = float(((x @ W + b).argmax(1) == y).mean())
    counts = {src: sum(s.source == src for s in found) for src in sorted({s.source for s in found})}
    meta = {"kinds": list(KINDS), "input": {"features": int(x.shape[1] - len(KINDS)), "detector_scores": len(KINDS),
                                            "eps": KIND_HEAD_EPS},
            "fitted_on": counts, "l2": lam, "training_accuracy": round(fitted, 4),
            "reader": reader.model_id, "seconds": round(time.perf_counter() - t0, 1)}
    export_kind_head(W, b, Path(out) / "kind.onnx", meta)
    log(f"kind head: {len(y)} crops, training accuracy {fitted:.3f}, written to {Path(out) / 'kind.onnx'}")
    return meta
