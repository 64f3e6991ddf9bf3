"""Train the face reader on wide crops, augmenting on the training device, and export it to ONNX.

Augmentation stands in for what the detector and the camera do to a crop at run time: the
box lands a little off (shift, scale), the die lies at any angle on the table (rotation is
label-preserving; mirroring is not — mirrored numerals are wrong labels), the lens blurs,
the sensor is noisy, a small die has few pixels (down-then-up sampling), exposure and white
balance drift.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dicecam.vision.crops import CROP_MARGIN, CROP_SIZE, FACE_CLASSES, face_name

from .data import CROP_STORE_MARGIN, CropSet
from .reader_net import FaceReaderNet


@dataclass
class ReaderTrainConfig:
    epochs: int = 30
    batch: int = 512
    lr: float = 3e-3
    weight_decay: float = 5e-4
    width: int = 32
    real_weight: float = 1.0  # sampling weight of a real crop relative to a synthetic one
    seed: int = 0
    device: str = "cpu"
    threads: int = 2


def augment(x: torch.Tensor, gen: torch.Generator, train: bool) -> torch.Tensor:
    """(N, S, S, 3) uint8 wide crops -> (N, 3, CROP_SIZE, CROP_SIZE) float reader input."""
    n = x.shape[0]
    dev = x.device
    img = x.permute(0, 3, 1, 2).float()
    # The stored crop spans (1 + 2 * CROP_STORE_MARGIN) box sides; the reader's view spans (1 + 2 * CROP_MARGIN).
    base = (1 + 2 * CROP_MARGIN) / (1 + 2 * CROP_STORE_MARGIN)

    def u(lo, hi):
        return lo + (hi - lo) * torch.rand(n, device=dev, generator=gen)

    if train:
        scale = base * u(0.85, 1.18)
        angle = u(0, 2 * math.pi)
        tx, ty = u(-0.09, 0.09) * 2 * base, u(-0.09, 0.09) * 2 * base
    else:
        scale = torch.full((n,), base, device=dev)
        angle = torch.zeros(n, device=dev)
        tx = ty = torch.zeros(n, device=dev)
    cos, sin = torch.cos(angle) * scale, torch.sin(angle) * scale
    theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)
    grid = F.affine_grid(theta, (n, 3, CROP_SIZE, CROP_SIZE), align_corners=False)
    out = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)
    if not train:
        return out
    # Few pixels: shrink a share of crops to 14-48 px and back.
    small = torch.rand(n, device=dev, generator=gen) < 0.35
    if small.any():
        s = int(torch.randint(14, 49, (1,), generator=gen, device=dev).item())
        lo = F.interpolate(out[small], size=(s, s), mode="area")
        out[small] = F.interpolate(lo, size=(CROP_SIZE, CROP_SIZE), mode="bilinear", align_corners=False)
    # Blur: a 3x3 Gaussian of random strength on a share of crops.
    blur = torch.rand(n, device=dev, generator=gen) < 0.3
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0], device=dev)
        k = (k[:, None] * k[None, :]) / 16
        b = F.conv2d(F.pad(out[blur], (1, 1, 1, 1), mode="replicate"), k.expand(3, 1, 3, 3), groups=3)
        out[blur] = b
    # Exposure, contrast, white balance, noise.
    gain = u(0.7, 1.3)[:, None, None, None]
    wb = (1 + (torch.rand(n, 3, device=dev, generator=gen) - 0.5) * 0.16)[:, :, None, None]
    mean = out.mean(dim=(1, 2, 3), keepdim=True)
    contrast = u(0.75, 1.25)[:, None, None, None]
    out = ((out - mean) * contrast + mean) * gain * wb
    out = out + torch.randn(out.shape, device=dev, generator=gen) * u(0, 8)[:, None, None, None]
    # Greyscale webcams and photos: a few crops lose their colour (their colour label is kept off below).
    return out.clamp(0, 255)


def _split(n: int, rng: np.random.Generator, val_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    idx = rng.permutation(n)
    k = max(1, int(n * val_fraction))
    return idx[k:], idx[:k]


def train_reader(synthetic: CropSet, real: CropSet | None, out: Path, colours: list[str], cfg: ReaderTrainConfig,
                 log=print) -> dict:
    """Train, checkpoint every epoch under `out` (resumes from out/last.pt), return figures."""
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    dev = torch.device(cfg.device)
    rng = np.random.default_rng(cfg.seed)
    data = CropSet.concat([synthetic, real]) if real is not None and len(real) else synthetic
    is_real = np.zeros(len(data), bool)
    if real is not None:
        is_real[len(synthetic):] = True
    tr, va = _split(len(data), rng, 0.05)
    images = torch.from_numpy(data.images).to(dev)
    face = torch.from_numpy(data.face).to(dev)
    colour = torch.from_numpy(data.colour).to(dev)
    cocked = torch.from_numpy(data.cocked).to(dev)
    weights = torch.from_numpy(np.where(is_real[tr], cfg.real_weight, 1.0)).double()

    model = FaceReaderNet(len(FACE_CLASSES), len(colours), cfg.width).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps_per_epoch = max(1, len(tr) // cfg.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.epochs * steps_per_epoch, pct_start=0.15)
    start = 0
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "last.pt"
    if ckpt.is_file():
        state = torch.load(ckpt, map_location=dev)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start = state["epoch"] + 1
        log(f"reader: resuming at epoch {start + 1}/{cfg.epochs}")
    gen = torch.Generator(device=dev)
    gen.manual_seed(cfg.seed)
    tr_t = torch.from_numpy(tr).to(dev)
    figures: dict = {}
    for epoch in range(start, cfg.epochs):
        model.train()
        t0 = time.perf_counter()
        order = torch.multinomial(weights, steps_per_epoch * cfg.batch, replacement=True).to(dev)
        total = 0.0
        for s in range(steps_per_epoch):
            idx = tr_t[order[s * cfg.batch:(s + 1) * cfg.batch]]
            x = augment(images[idx], gen, train=True)
            grey = torch.rand(len(idx), device=dev, generator=gen) < 0.05
            col = colour[idx].clone()
            if grey.any():
                x[grey] = x[grey].mean(dim=1, keepdim=True).expand(-1, 3, -1, -1)
                col[grey] = -1
            fl, cl, kl = model(x)
            loss = F.cross_entropy(fl, face[idx], label_smoothing=0.05)
            if (col >= 0).any():
                loss = loss + 0.5 * F.cross_entropy(cl, col, ignore_index=-1)
            known = cocked[idx] >= 0
            if known.any():
                loss = loss + 0.3 * F.binary_cross_entropy_with_logits(kl[known, 0], cocked[idx][known].float())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        figures = evaluate(model, images, face, colour, torch.from_numpy(va).to(dev), cfg.batch)
        figures["epoch"] = epoch + 1
        figures["loss"] = round(total / steps_per_epoch, 4)
        log(f"reader epoch {epoch + 1}/{cfg.epochs}: loss {figures['loss']} val face {figures['face_acc']:.4f} "
            f"colour {figures['colour_acc']:.4f} ({time.perf_counter() - t0:.1f} s)")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                    "epoch": epoch, "config": asdict(cfg)}, ckpt)
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    return {"model": model, "figures": figures}


@torch.no_grad()
def evaluate(model, images, face, colour, idx, batch: int) -> dict:
    model.eval()
    ok = okc = nc = 0
    for s in range(0, len(idx), batch):
        j = idx[s:s + batch]
        fl, cl, _ = model(augment(images[j], None, train=False))
        ok += int((fl.argmax(1) == face[j]).sum())
        known = colour[j] >= 0
        okc += int((cl.argmax(1)[known] == colour[j][known]).sum())
        nc += int(known.sum())
    return {"face_acc": ok / max(1, len(idx)), "colour_acc": okc / max(1, nc), "val_crops": int(len(idx))}


def export_reader(model, path: Path, colours: list[str], width: int, figures: dict) -> None:
    """ONNX with a dynamic batch, and the sidecar JSON the runtime needs to decode it."""
    model = model.to("cpu").eval()
    x = torch.zeros(2, 3, CROP_SIZE, CROP_SIZE)
    torch.onnx.export(model, x, str(path), input_names=["crops"], output_names=["face", "colour", "cocked"],
                      dynamic_axes={"crops": {0: "n"}, "face": {0: "n"}, "colour": {0: "n"}, "cocked": {0: "n"}},
                      opset_version=17, dynamo=False)
    meta = {
        "input": {"size": CROP_SIZE, "margin": CROP_MARGIN, "channels": "BGR", "scale": "0-255"},
        "faces": [face_name(k, v) for k, v in FACE_CLASSES],
        "colours": colours,
        "width": width,
        "figures": figures,
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
