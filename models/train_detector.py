"""Train the die detector (YOLO11n, one class per die kind) with ultralytics, offline, and export ONNX.

ultralytics reaches for the network in several places; everything below keeps it offline:
environment flags before import, a project config folder holding a font (it would download
Arial.ttf), the model built from its .yaml (no weights download), and the AMP self-check
(which downloads a reference model) replaced by a plain yes on CUDA.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

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
    # Fine-tune instead of training from scratch: an exported detector (.onnx, as shipped) or an ultralytics
    # checkpoint (.pt), trained on at `lr0` with plain SGD and a short warm-up.
    init: str | None = None
    lr0: float = 0.002


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
    common = dict(
        data=str(data_yaml.resolve()), epochs=cfg.epochs, imgsz=cfg.imgsz, batch=cfg.batch, workers=cfg.workers,
        device=cfg.device, seed=cfg.seed, project=str(project.resolve()), name="detector", exist_ok=True,
        plots=False, fliplr=0.0, flipud=0.0, mosaic=1.0, degrees=0.0, hsv_h=0.01, scale=0.5, translate=0.1,
        patience=0, verbose=False, val=True, cache=cfg.cache, **({"time": cfg.hours} if cfg.hours else {}))
    if cfg.init:
        start = Path(cfg.init)
        if start.suffix == ".onnx":
            start = checkpoint_from_onnx(start, first_images(data_yaml), project / "init.pt", config_dir)
        YOLO(str(start)).train(**common, pretrained=True, close_mosaic=2, optimizer="SGD", lr0=cfg.lr0, lrf=0.2,
                               momentum=0.9, warmup_epochs=0.3, warmup_bias_lr=0.0, amp=False)
    else:
        YOLO(cfg.model).train(**common, pretrained=False, close_mosaic=max(1, cfg.epochs // 8))
    return run / "weights" / "best.pt"


# Images whose activations set the rebuilt batch norms' statistics (checkpoint_from_onnx).
BN_IMAGES = 256


def first_images(data: Path, count: int = BN_IMAGES) -> list[Path]:
    """The first `count` images (by name) of the first training folder of the ultralytics data file `data`."""
    import yaml

    train = yaml.safe_load(Path(data).read_text())["train"]
    folder = Path(train[0] if isinstance(train, list) else train)
    return sorted(folder.glob("*.jpg"))[:count]


def checkpoint_from_onnx(onnx_path: Path, images: list[Path], out: Path, config_dir: Path) -> Path:
    """An ultralytics YOLO11n checkpoint that computes what an exported detector computes, to fine-tune it.

    Export folds each batch norm into its convolution, and the folded weights cannot be split back into
    the two. But any split that gives the same product will do: with each convolution's own output mean
    and variance over `images` as the norm's statistics, its scale their deviation and its shift the folded
    bias plus the mean, the rebuilt network computes the export's function in eval mode, and in training
    mode (batch statistics) nearly so — training starts where the shipped detector is."""
    if not images:  # with no statistics the norms would be identities, and the function another
        raise ValueError("no images to take the batch norms' statistics from")
    offline_ultralytics(config_dir)
    import onnx
    import torch
    from onnx import numpy_helper
    from ultralytics.nn.tasks import DetectionModel

    weights = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
               for t in onnx.load(str(onnx_path)).graph.initializer}
    model = DetectionModel("yolo11n.yaml", nc=len(KINDS), verbose=False)
    folded = copy.deepcopy(model).fuse()
    state = folded.state_dict()
    absent = [k for k in state if k not in weights and not k.endswith("num_batches_tracked")]
    if absent:
        raise ValueError(f"{onnx_path} is not a YOLO11n detector of {len(KINDS)} kinds (no {absent[0]})")
    folded.load_state_dict({k: weights.get(k, v) for k, v in state.items()})
    moments = _conv_moments(folded.eval(), images)

    state = {k: weights.get(k, v) for k, v in model.state_dict().items()}
    modules = dict(model.named_modules())
    for name, (mean, var) in moments.items():
        state[f"{name}.bn.running_mean"] = mean.float()
        state[f"{name}.bn.running_var"] = var.float()
        state[f"{name}.bn.weight"] = torch.sqrt(var + modules[name].bn.eps).float()
        state[f"{name}.bn.bias"] = (weights[f"{name}.conv.bias"].double() + mean).float()
    model.load_state_dict(state)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.eval(), "ema": None, "updates": None, "optimizer": None, "epoch": -1,
                "best_fitness": None, "train_args": {"task": "detect", "imgsz": max(EXPORT_SHAPE)}}, out)
    return out


def _conv_moments(folded, images: list[Path]) -> dict:
    """Per folded convolution (ultralytics' Conv, by module name): the mean and variance over `images`
    (letterboxed as the runtime does) of each output channel before its bias."""
    import torch
    from ultralytics.nn.modules import Conv

    from dicecam.vision.read import Letterbox

    h, w = EXPORT_SHAPE
    sums: dict[str, list] = {}
    def record(name: str):
        def hook(module, _, output):
            z = output.detach().double() - module.bias.detach().double().view(1, -1, 1, 1)
            s = sums.setdefault(name, [0.0, 0.0, 0])
            s[0], s[1], s[2] = s[0] + z.sum((0, 2, 3)), s[1] + (z ** 2).sum((0, 2, 3)), s[2] + z.numel() // z.shape[1]
        return hook

    convs = {n: m for n, m in folded.named_modules() if isinstance(m, Conv)}
    handles = [m.conv.register_forward_hook(record(n)) for n, m in convs.items()]
    with torch.no_grad():
        for i in range(0, len(images), 16):
            folded(torch.from_numpy(np.concatenate([Letterbox.input(cv2.imread(str(p)), w, h)[1]
                                                    for p in images[i:i + 16]])))
    for handle in handles:
        handle.remove()
    return {n: (t / c, (q / c - (t / c) ** 2).clamp(min=1e-6)) for n, (t, q, c) in sums.items()}


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

