"""Train the die detector (YOLO11n, one class per die kind) with ultralytics, offline, and export ONNX.

ultralytics reaches for the network in several places; everything below keeps it offline:
environment flags before import, a project config folder holding a font (it would download
Arial.ttf), the model built from its .yaml (no weights download), and the AMP self-check
(which downloads a reference model) replaced by a plain yes on CUDA.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from dicecam.datasets.render import FONT_DIR
from dicecam.vision.crops import KINDS
from dicecam.vision.labels import data_yaml

# Run-time detector input (height, width): 640x480 frames letterbox into it with no padding waste.
EXPORT_SHAPE = (320, 416)


@dataclass
class DetectorTrainConfig:
    epochs: int = 40
    imgsz: int = 416
    batch: int = 64
    workers: int = 8
    device: str = "cpu"
    seed: int = 0
    model: str = "yolo11n.yaml"
    cache: bool | str = False  # "ram" on a training machine with memory to spare: no JPEG decode per step
    hours: float | None = None  # a wall-clock budget: ultralytics then fits the epochs into it


def offline_ultralytics(config_dir: Path, threads: int | None = None):
    """Import ultralytics with no network: call before anything else imports it."""
    config_dir.mkdir(parents=True, exist_ok=True)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "false"
    os.environ["YOLO_CONFIG_DIR"] = str(config_dir.resolve())
    font = config_dir / "Arial.ttf"
    if not font.is_file():
        # Any TTF will do for its plots; ours ships with the synthetic renderer.
        shutil.copy(FONT_DIR / "LiberationSans-Bold.ttf", font)
    import ultralytics
    import ultralytics.engine.trainer as trainer
    import ultralytics.utils.torch_utils as tu

    tu.NUM_THREADS = threads or os.cpu_count() or 1
    trainer.check_amp = lambda model: True
    # Its checkpoints embed results.csv read through polars, a 50 MB wheel training machines may
    # lack; the csv module reads the same file.
    trainer.BaseTrainer.read_results_csv = _read_results_csv
    return ultralytics


def _read_results_csv(self) -> dict:
    try:
        with open(self.csv, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError:
        return {}
    return {k.strip(): [float(r[k]) for r in rows] for k in (rows[0] if rows else {})}


def write_data_yaml(path: Path, train: list[Path], val: list[Path]) -> Path:
    path.write_text(data_yaml([str(p.resolve()) for p in train], [str(p.resolve()) for p in val]))
    return path


def train_detector(data_yaml: Path, project: Path, cfg: DetectorTrainConfig, config_dir: Path, resume: bool = True) -> Path:
    """Train (resuming project/detector/weights/last.pt when there) and return best.pt."""
    offline_ultralytics(config_dir)
    from ultralytics import YOLO

    run = project / "detector"
    last = run / "weights" / "last.pt"
    if resume and last.is_file():
        try:
            YOLO(str(last)).train(resume=True)
            return run / "weights" / "best.pt"
        except Exception as e:  # a finished run cannot resume: ultralytics says so by raising
            if "nothing to resume" not in str(e).lower() and "is finished" not in str(e).lower():
                raise
            return run / "weights" / "best.pt"
    model = YOLO(cfg.model)
    model.train(
        data=str(data_yaml.resolve()), epochs=cfg.epochs, imgsz=cfg.imgsz, batch=cfg.batch, workers=cfg.workers,
        device=cfg.device, seed=cfg.seed, project=str(project.resolve()), name="detector", exist_ok=True,
        plots=False, fliplr=0.0, flipud=0.0, mosaic=1.0, close_mosaic=max(1, cfg.epochs // 8), degrees=0.0,
        hsv_h=0.01, scale=0.5, translate=0.1, patience=0, pretrained=False, verbose=False, val=True, cache=cfg.cache,
        **({"time": cfg.hours} if cfg.hours else {}),
    )
    return run / "weights" / "best.pt"


def export_detector(best: Path, out: Path, config_dir: Path, figures: dict | None = None) -> Path:
    """ONNX at EXPORT_SHAPE (simplified), plus the sidecar JSON the runtime reads."""
    offline_ultralytics(config_dir)
    from ultralytics import YOLO

    onnx = Path(YOLO(str(best)).export(format="onnx", imgsz=list(EXPORT_SHAPE), simplify=True, dynamic=False,
                                       opset=17, verbose=False))
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(onnx, out)
    meta = {"kinds": list(KINDS), "input": {"height": EXPORT_SHAPE[0], "width": EXPORT_SHAPE[1], "channels": "RGB",
                                           "scale": "0-1", "letterbox": 114}, "figures": figures or {}}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    return out


def detector_figures(project: Path) -> dict:
    """The last validation row of the ultralytics run (mAP etc.)."""
    csv = project / "detector" / "results.csv"
    if not csv.is_file():
        return {}
    rows = [r.split(",") for r in csv.read_text().splitlines()]
    head = [h.strip() for h in rows[0]]
    last = [v.strip() for v in rows[-1]]
    keep = ("epoch", "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)")
    return {k: float(v) for k, v in zip(head, last) if k in keep}

