"""`dicecam train`: the whole recipe, one command, resumable stage by stage.

Stages, each skipped when its output is already in the work folder:
1. render synthetic training images (work/synth: YOLO folder + face-reader crops),
2. copy the real photos (work/real), when --real is given: the d6-pip sets for both models, the
   single-die sets in the read format (lurig-d20-values by value, lurig-types by kind) as reader
   crops; every part that `dicecam eval --held-out` scores is left out,
3. train the detector (work/runs/detector, ultralytics resume),
4. train the face reader (work/reader, per-epoch checkpoints),
5. export both to ONNX under --export with their sidecar JSON and the model card,
6. fit the kind head (renders in work/kind_synth and the real photos' training parts), then the die check
   (which of the detector's boxes hold a die) on the same photos,
7. fine-tune the text recogniser on dice (models/train_recogniser.py; renders in work/recogniser_synth),
   and the cross-fit's recognisers, each without part of the real runs (work/recogniser_folds),
8. fit the doubt model on all of them as they will ship (photos the recogniser learnt read by the fold's
   recogniser that did not).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from dicecam.datasets.render import BODY_COLOURS
from dicecam.mechanics.errors import DicecamError
from dicecam.vision.numerals import FINE_TUNED
from dicecam.vision.read import models_dir

from dicecam.datasets.synth import generate

from .data import DETECTOR_TRAIN, DETECTOR_VAL, CropSet, prepare_real, prepare_real_reads, render_synthetic
from .train_doubt import train_doubt
from .train_recogniser import RecogniserTrainConfig, train_recogniser
from .train_diecheck import train_diecheck
from .train_kind import train_kind_head
from .train_detector import DetectorTrainConfig, detector_figures, export_detector, train_detector, write_data_yaml
from .train_reader import ReaderTrainConfig, build_model, export_reader, train_reader


@dataclass
class Recipe:
    work: Path
    export: Path
    real: Path | None = None
    # Which real sets feed the reader: "pips" (the YOLO d6-pip sets) and the single-die read sets.
    real_sets: tuple[str, ...] = ("pips", "lurig-d20-values", "lurig-types")
    images: int = 20000
    seed: int = 1000  # evaluation sets use other seeds (see README / model card)
    workers: int = 2
    detector: DetectorTrainConfig = field(default_factory=DetectorTrainConfig)
    reader: ReaderTrainConfig = field(default_factory=ReaderTrainConfig)
    stages: tuple[str, ...] = ("synth", "real", "detector", "reader", "export", "kind", "diecheck", "doubt")  # "recogniser" on request
    kind_images: int = 600  # renders the kind head is fitted on beside the real photos (seed + 1)
    recogniser_images: int = 800  # renders the text recogniser is fine-tuned on (seed + 2)
    recogniser: RecogniserTrainConfig = field(default_factory=RecogniserTrainConfig)
    # Photoreal renders the kind head learns beside the others (train_kind.photoreal_folders). They are
    # rendered apart, in chunks across sessions (`dicecam synth --renderer photoreal`: ~0.18 images/s on 2 cores).
    photoreal: Path | None = None


FOLDS = "recogniser_folds"  # WORK/FOLDS: the recognisers of the cross-fit (train_recogniser.fine_tune_fold)
# What a reader folder holds beside the text recogniser (the doubt model is refitted after it).
SHIPPED_BESIDE = ("detector.onnx", "detector.json", "reader.onnx", "reader.json", "upface.onnx", "upface.json",
                  "kind.onnx", "kind.json", "diecheck.json")


def _colours() -> list[str]:
    return list(BODY_COLOURS)


def run(r: Recipe, log=print) -> dict:
    t_start = time.perf_counter()
    r.work.mkdir(parents=True, exist_ok=True)
    synth, real = r.work / "synth", r.work / "real"
    timings: dict[str, float] = {}
    if "synth" in r.stages and not (synth / "done.json").is_file():
        t = time.perf_counter()
        log(f"render {r.images} synthetic images (seed {r.seed}) into {synth}")
        render_synthetic(synth, r.images, r.seed, _colours(), workers=r.workers)
        timings["synth_s"] = round(time.perf_counter() - t, 1)
    if r.real is not None and "real" in r.stages and not (real / "sets.json").is_file():
        t = time.perf_counter()
        log(f"copy real photos from {r.real} into {real}")
        real.mkdir(parents=True, exist_ok=True)
        if "pips" in r.real_sets:
            prepare_real(r.real, real)
        reads = tuple(n for n in r.real_sets if n != "pips")
        if reads:
            prepare_real_reads(r.real, real, sets=reads)
        (real / "sets.json").write_text(json.dumps(list(r.real_sets)) + "\n")
        timings["real_s"] = round(time.perf_counter() - t, 1)
    has_real = (real / "sets.json").is_file()
    figures: dict = {}
    config_dir = r.work / "ultralytics"
    if "detector" in r.stages:
        if not (synth / "done.json").is_file():
            raise DicecamError(f"no synthetic images in {synth}: run the synth stage first")
        # The real stage's photos for the detector (data.prepare_real, data.prepare_real_reads), where it copied them.
        copied = [f for f in (*DETECTOR_TRAIN, *DETECTOR_VAL) if has_real and (real / f / "images").is_dir()]
        train = [synth / "yolo" / "images" / "train"] + [real / f / "images" for f in copied if f in DETECTOR_TRAIN]
        val = [synth / "yolo" / "images" / "val"] + [real / f / "images" for f in copied if f in DETECTOR_VAL]
        val = [v for v in val if v.is_dir() and any(v.iterdir())]
        data = write_data_yaml(r.work / "detector.yaml", train, val)
        t = time.perf_counter()
        train_detector(data, r.work / "runs", r.detector, config_dir)
        timings["detector_s"] = round(time.perf_counter() - t, 1)
        figures["detector"] = detector_figures(r.work / "runs")
    reader_result = None
    if "reader" in r.stages:
        t = time.perf_counter()
        reals = CropSet.concat([CropSet.load(real / f) for f in ("crops.npz", "reads.npz") if (real / f).is_file()]) \
            if has_real else None
        reader_result = train_reader(CropSet.load(synth / "crops.npz"), reals, r.work / "reader", _colours(), r.reader)
        timings["reader_s"] = round(time.perf_counter() - t, 1)
        figures["reader"] = reader_result["figures"]
    if "export" in r.stages:
        export(r, figures, log)
    # The kind head and the die check read the face reader's features: each is fitted on the reader it will
    # ship beside, on the same photos and renders.
    for stage, fit, extra in (("kind", train_kind_head, {"photoreal": r.photoreal}), ("diecheck", train_diecheck, {})):
        if stage in r.stages:
            t = time.perf_counter()
            kind_synth = _rendered(r, "kind_synth", r.kind_images, r.seed + 1, "the kind head and the die check", log)
            reader_folder = r.export if (r.export / "reader.onnx").is_file() else None
            figures[stage] = fit(r.real, kind_synth, r.export, reader_folder=reader_folder, log=log, **extra)
            timings[f"{stage}_s"] = round(time.perf_counter() - t, 1)
    if "recogniser" in r.stages:
        t = time.perf_counter()
        rendered = _rendered(r, "recogniser_synth", r.recogniser_images, r.seed + 2, "the text recogniser", log)
        # The recogniser is read beside a detector and a face reader: where this run trained none, the
        # shipped ones go beside it, so the doubt stage reads the export whole.
        if not (r.export / "reader.onnx").is_file():
            r.export.mkdir(parents=True, exist_ok=True)
            for name in SHIPPED_BESIDE:
                if not (r.export / name).is_file():  # a kind head this run fitted stays
                    shutil.copy(models_dir() / name, r.export / name)
        figures["recogniser"] = train_recogniser(r.real, rendered, r.export, reader_folder=r.export,
                                                 cache=r.work / "recogniser_dice.npz", cfg=r.recogniser,
                                                 folds_folder=r.work / FOLDS, log=log)["history"]
        timings["recogniser_s"] = round(time.perf_counter() - t, 1)
    if "doubt" in r.stages:
        t = time.perf_counter()
        kind_synth = r.work / "kind_synth"
        if not (kind_synth / "summary.json").is_file():
            raise DicecamError(f"no renders in {kind_synth}: run the kind stage first")
        # The doubt model weighs the readers as they will ship: the exported ones, or the shipped ones.
        folder = r.export if (r.export / "reader.onnx").is_file() else None
        # Photos the exported recogniser learnt are read by the cross-fit's recogniser that did not.
        folds = r.work / FOLDS if (folder / FINE_TUNED if folder else models_dir() / FINE_TUNED).is_file() else None
        figures["doubt"] = train_doubt(r.real, kind_synth, r.export, reader_folder=folder,
                                       cache=r.work / "doubt_samples.npz", folds=folds, photoreal=r.photoreal,
                                       log=log)
        timings["doubt_s"] = round(time.perf_counter() - t, 1)
    timings["total_s"] = round(time.perf_counter() - t_start, 1)
    report = {"figures": figures, "timings": timings, "recipe": _jsonable(asdict(r))}
    (r.work / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def _rendered(r: Recipe, name: str, count: int, seed: int, what: str, log) -> Path:
    """WORK/name, rendered (read format) unless it already is."""
    folder = r.work / name
    if not (folder / "summary.json").is_file():
        log(f"render {count} images for {what} (seed {seed}) into {folder}")
        generate(folder, count, seed, None, "jsonl", progress=False, workers=r.workers)
    return folder


def export(r: Recipe, figures: dict, log=print) -> None:
    r.export.mkdir(parents=True, exist_ok=True)
    best = r.work / "runs" / "detector" / "weights" / "best.pt"
    if best.is_file():
        export_detector(best, r.export / "detector.onnx", r.work / "ultralytics", figures.get("detector"))
        log(f"exported {r.export / 'detector.onnx'}")
    ckpt = r.work / "reader" / "last.pt"
    if ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu")
        model = build_model(ReaderTrainConfig(**state["config"]), len(_colours()))
        model.load_state_dict(state["model"])
        saved = r.work / "reader" / "figures.json"  # an export-only run reports the training's figures
        reader_figures = figures.get("reader") or (json.loads(saved.read_text()) if saved.is_file() else {})
        export_reader(model, r.export / "reader.onnx", _colours(), state["config"]["width"], reader_figures,
                      state["config"]["size"], state["config"].get("init"))
        log(f"exported {r.export / 'reader.onnx'}")


def _jsonable(d):
    if isinstance(d, dict):
        return {k: _jsonable(v) for k, v in d.items()}
    if isinstance(d, (list, tuple)):
        return [_jsonable(v) for v in d]
    return str(d) if isinstance(d, Path) else d
