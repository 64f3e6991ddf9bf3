"""Train the up-face finder on rendered crops (datasets/upface.py) and export it to ONNX.

    python -m dicecam.models.train_upface /work/cache/upface/train/upface.npz models/upface.onnx

Whole scenes are held out for validation, not crops: the crops of one die (cut with different
box jitter) are near copies, and would flatter the figures.

Augmentation stands in for what the renderer does not vary enough: exposure, contrast, white
balance, sensor noise, blur and few pixels (a small die), all of which leave the labels alone,
and a small in-plane roll of the camera, which turns the labels with the image. A large roll is
never used: in an oblique view "up" in the crop is away from the camera, and that is how the
finder tells the top face from the front face. Mirroring is never used: a mirrored numeral's
top is not where a real numeral's is.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dicecam.vision.crops import CROP_MARGIN, KINDS

from .upface_net import COLUMNS, UpFaceNet

MAX_ROLL = math.radians(8)


@dataclass
class UpFaceTrainConfig:
    epochs: int = 6
    batch: int = 128
    lr: float = 4e-3
    weight_decay: float = 1e-4
    width: int = 16
    seed: int = 0
    threads: int = 1
    val_every: int = 10  # scene i is held out when i % val_every == val_every - 1
    max_minutes: float = 19.0  # stop early (and still export) past this wall-clock budget
    device: str = "cpu"  # "cuda" on a lent GPU: the crops then live on it, augmentation too
    # Loss weights: a centre error of 0.05 crop sides should matter about as much as a 25-degree turn.
    w_point: float = 8.0
    w_angle: float = 1.0
    w_facing: float = 0.5
    glimpse_jitter: float = 0.025  # crop sides


@dataclass
class UpFaceData:
    crops: np.ndarray  # (N, S, S, 3) uint8 BGR, S the finder's input size (64 or 128)
    targets: np.ndarray  # (N, 5) COLUMNS
    angle_known: np.ndarray  # (N,) bool
    kind: np.ndarray  # (N,) index into KINDS
    scene: np.ndarray  # (N,) the render each crop came from

    @classmethod
    def load(cls, paths: list[Path]) -> "UpFaceData":
        """One or more generated sets, their scene numbers kept apart."""
        parts, offset = [], 0
        for p in paths:
            z = np.load(p)
            scene = z["scene"].astype(np.int64) + offset
            offset = int(scene.max()) + 1 if len(scene) else offset
            parts.append((z["crops"], z["targets"].astype(np.float32), z["angle_known"].astype(bool),
                          z["kind"].astype(np.int64), scene))
        return cls(*(np.concatenate(col) for col in zip(*parts)))


def to_input(crops: torch.Tensor) -> torch.Tensor:
    """(N, S, S, 3) uint8 -> (N, 3, S, S) float 0..1, as the runtime feeds the network."""
    return crops.permute(0, 3, 1, 2).float() * (1.0 / 255.0)


def augment(x: torch.Tensor, y: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """x: (N, 3, S, S) in 0..1, y: (N, 5) targets -> both augmented (y turned with any roll)."""
    n, _, s, _ = x.shape
    dev = x.device  # gen must live there too

    def u(lo: float, hi: float) -> torch.Tensor:
        return lo + (hi - lo) * torch.rand(n, generator=gen, device=dev)

    a = (torch.randn(n, generator=gen, device=dev) * (MAX_ROLL / 2)).clamp(-MAX_ROLL, MAX_ROLL)  # clockwise on screen
    c, sn = torch.cos(a), torch.sin(a)
    # affine_grid maps output to input coordinates: the inverse (anticlockwise) turn.
    zero = torch.zeros(n, device=dev)
    theta = torch.stack([torch.stack([c, sn, zero], 1), torch.stack([-sn, c, zero], 1)], 1)
    grid = F.affine_grid(theta, (n, 3, s, s), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    y = y.clone()
    uu, vv = y[:, 0].clone(), y[:, 1].clone()
    y[:, 0], y[:, 1] = c * uu - sn * vv, sn * uu + c * vv
    ca, sa = y[:, 2].clone(), y[:, 3].clone()
    y[:, 2], y[:, 3] = ca * c - sa * sn, sa * c + ca * sn  # theta + a
    # Few pixels: a share of crops shrunk to 16-40 px (of 64; in proportion for larger crops) and back.
    small = torch.rand(n, generator=gen, device=dev) < 0.25
    if small.any():
        k = int(torch.randint(16, 41, (1,), generator=gen, device=dev)) * s // 64
        x[small] = F.interpolate(F.interpolate(x[small], size=(k, k), mode="area"), size=(s, s), mode="bilinear",
                                 align_corners=False)
    blur = torch.rand(n, generator=gen, device=dev) < 0.2
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0], device=dev)
        k = (k[:, None] * k[None, :]) / 16
        x[blur] = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), k.expand(3, 1, 3, 3), groups=3)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    wb = (1 + (torch.rand(n, 3, generator=gen, device=dev) - 0.5) * 0.2)[:, :, None, None]
    x = ((x - mean) * u(0.7, 1.3)[:, None, None, None] + mean) * u(0.7, 1.3)[:, None, None, None] * wb
    grey = torch.rand(n, generator=gen, device=dev) < 0.05
    if grey.any():
        x[grey] = x[grey].mean(dim=1, keepdim=True).expand(-1, 3, -1, -1)
    x = x + torch.randn(x.shape, generator=gen, device=dev) * u(0, 0.03)[:, None, None, None]
    return x.clamp(0, 1), y


def loss_fn(out: torch.Tensor, y: torch.Tensor, known: torch.Tensor, cfg: UpFaceTrainConfig) -> torch.Tensor:
    # L1 on the point: where two copies of a d4's value are about equally clear, it picks one
    # rather than the midpoint between them.
    point = (out[:, :2] - y[:, :2]).abs().sum(1).mean()
    k = known.float()
    angle = (((out[:, 2:4] - y[:, 2:4]) ** 2).sum(1) * k).sum() / k.sum().clamp(min=1)
    facing = (out[:, 4] - y[:, 4]).abs().mean()
    return cfg.w_point * point + cfg.w_angle * angle + cfg.w_facing * facing


def errors(pred: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per crop: centre error (crop sides), angle error (degrees), facing error."""
    centre = np.hypot(pred[:, 0] - y[:, 0], pred[:, 1] - y[:, 1])
    dang = np.arctan2(pred[:, 3], pred[:, 2]) - np.arctan2(y[:, 3], y[:, 2])
    angle = np.degrees(np.abs((dang + np.pi) % (2 * np.pi) - np.pi))
    return centre, angle, np.abs(pred[:, 4] - y[:, 4])


def figures(pred: np.ndarray, data: UpFaceData, idx: np.ndarray) -> dict:
    """Median and p90 centre and angle errors, overall and per kind (angles where known)."""
    centre, angle, facing = errors(pred, data.targets[idx])
    known = data.angle_known[idx]
    kinds = data.kind[idx]

    def block(m: np.ndarray) -> dict:
        a = angle[m & known]
        return {"crops": int(m.sum()),
                "centre_median": round(float(np.median(centre[m])), 4) if m.any() else None,
                "centre_p90": round(float(np.percentile(centre[m], 90)), 4) if m.any() else None,
                "angle_median_deg": round(float(np.median(a)), 1) if len(a) else None,
                "angle_p90_deg": round(float(np.percentile(a, 90)), 1) if len(a) else None,
                "facing_mae": round(float(facing[m].mean()), 3) if m.any() else None}

    return {"all": block(np.ones(len(idx), bool)), **{k: block(kinds == i) for i, k in enumerate(KINDS)}}


@torch.no_grad()
def predict(model: torch.nn.Module, crops: np.ndarray, batch: int = 512) -> np.ndarray:
    model.eval()
    dev = next(model.parameters()).device
    out = [model(to_input(torch.from_numpy(crops[s:s + batch]).to(dev))).cpu().numpy()
           for s in range(0, len(crops), batch)]
    return np.concatenate(out) if out else np.zeros((0, len(COLUMNS)), np.float32)


def one_cycle(peak: float, done: float, warm: float = 0.1) -> float:
    """The learning rate when `done` (0..1) of the training has run: up for `warm`, then a cosine to ~0."""
    if done < warm:
        return peak * (0.04 + 0.96 * done / warm)
    return peak * 0.5 * (1 + math.cos(math.pi * (done - warm) / (1 - warm)))


def train(data: UpFaceData, cfg: UpFaceTrainConfig, log=print) -> tuple[UpFaceNet, dict]:
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    val = data.scene % cfg.val_every == cfg.val_every - 1
    tr, va = np.flatnonzero(~val), np.flatnonzero(val)
    dev = torch.device(cfg.device)
    crops = torch.from_numpy(data.crops).to(dev)
    targets = torch.from_numpy(data.targets).to(dev)
    known = torch.from_numpy(data.angle_known).to(dev)
    model = UpFaceNet(cfg.width, size=data.crops.shape[1]).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=one_cycle(cfg.lr, 0.0), weight_decay=cfg.weight_decay)
    steps = max(1, len(tr) // cfg.batch)
    total_steps = cfg.epochs * steps
    gen = torch.Generator(dev).manual_seed(cfg.seed)
    t_start = time.perf_counter()
    log(f"upface: {len(tr)} training crops, {len(va)} validation crops, "
        f"{sum(p.numel() for p in model.parameters())} parameters")
    stopped = False
    for epoch in range(cfg.epochs):
        model.train()
        t0 = time.perf_counter()
        order = torch.from_numpy(tr).to(dev)[torch.randperm(len(tr), generator=gen, device=dev)]
        total = 0.0
        for s in range(steps):
            j = order[s * cfg.batch:(s + 1) * cfg.batch]
            x, y = augment(to_input(crops[j]), targets[j], gen)
            # The glimpse is taken at the labelled point, off by about what the found point is.
            look_at = y[:, :2] + torch.randn(len(j), 2, generator=gen, device=dev) * cfg.glimpse_jitter
            loss = loss_fn(model(x, look_at), y, known[j], cfg)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            # One cycle (a tenth warming up, then a cosine down) over whichever runs out first, the
            # epochs or the minutes, so that a run stopped at its budget still ends with a small step.
            done = max((epoch * steps + s + 1) / total_steps, (time.perf_counter() - t_start) / 60 / cfg.max_minutes)
            for g in opt.param_groups:
                g["lr"] = one_cycle(cfg.lr, min(done, 1.0))
            total += loss.item()
            if done >= 1.0 and epoch * steps + s + 1 < total_steps:
                stopped = True
                break
        fig = figures(predict(model, data.crops[va]), data, va)["all"]
        log(f"upface epoch {epoch + 1}/{cfg.epochs}: loss {total / max(1, s + 1):.4f} val centre median "
            f"{fig['centre_median']} p90 {fig['centre_p90']}, angle median {fig['angle_median_deg']} p90 "
            f"{fig['angle_p90_deg']} ({time.perf_counter() - t0:.0f} s)")
        if stopped:
            log(f"upface: stopped at the {cfg.max_minutes}-minute budget")
            break
    result = {"validation": figures(predict(model, data.crops[va]), data, va),
              "train_minutes": round((time.perf_counter() - t_start) / 60, 1), "train_crops": int(len(tr)),
              "val_crops": int(len(va)), "epochs_run": epoch + 1, "stopped_early": stopped}
    return model, result


# Written into the sidecar JSON: how the data was made and what the figures mean for a user.
NOTES = {
    "data_command": "DICECAM_SYSTEM_FONTS=1 python -m dicecam.datasets.upface OUT --count 9000 --seed S "
                    "(S = 1 and 2; all kinds, camera 0-65 degrees off vertical, box jitter +-8 %)",
    "train_command": "python -m dicecam.models.train_upface OUT1/upface.npz OUT2/upface.npz models/upface.onnx",
    "limits": "the centre is found on every kind; the angle only where the die's shape or a large numeral gives "
              "it away (d4, d8, d10, d00). On d12, d20 and numbered d6 the rendered numeral is about 5 px tall "
              "in a 64-px crop and the angle is close to a guess: try every turn there. d4 centre errors "
              "include near-ties, where another face shows the same number about as squarely.",
}


def export(model: UpFaceNet, path: Path, result: dict, cfg: UpFaceTrainConfig, data_meta: dict) -> None:
    """ONNX with a dynamic batch, and the sidecar JSON that says what goes in and comes out."""
    model = model.to("cpu").eval()
    path = Path(path)
    torch.onnx.export(model, torch.zeros(2, 3, model.size, model.size), str(path), input_names=["crops"],
                      output_names=["upface"], dynamic_axes={"crops": {0: "n"}, "upface": {0: "n"}},
                      opset_version=17, dynamo=False)
    meta = {
        "input": {"name": "crops", "size": model.size, "margin": CROP_MARGIN, "channels": "BGR", "scale": "0-1",
                  "layout": "NCHW", "framing": "vision.crops.square_crop of the die's box (the face reader's crop)"},
        "output": {"name": "upface", "columns": list(COLUMNS), "meaning": {
            "u, v": "centre of the value numeral relative to the crop centre, in crop sides (x right, y down)",
            "cos, sin": "of the numeral's clockwise turn from upright on screen: its top points along "
                        "(sin, -cos) in image coordinates; not normalised (vision.upface normalises)",
            "facing": "dot of the printed face's normal with the direction to the camera (1 = square on)",
            "which numeral": "the up face's; d4: the up vertex's number (vertex style) or the bottom-edge number "
                             "(base style) on the face turned most towards the camera; d6 pips: the up face's "
                             "centre, angle meaningless (90-degree symmetric)"}},
        "training": {"data": data_meta, "config": asdict(cfg), **{k: v for k, v in result.items() if k != "validation"}},
        **NOTES,
        "validation": result["validation"],
        "validation_note": "held-out rendered scenes (every tenth); centre errors in crop sides, angles in degrees "
                           "over crops with a known angle (pip d6 and nearly edge-on faces excluded)",
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Train the up-face finder and export it to ONNX.")
    ap.add_argument("data", type=Path, nargs="+", help="upface.npz files from `python -m dicecam.datasets.upface`")
    ap.add_argument("out", type=Path, help="the .onnx to write (its .json goes beside it)")
    ap.add_argument("--epochs", type=int, default=UpFaceTrainConfig.epochs)
    ap.add_argument("--minutes", type=float, default=UpFaceTrainConfig.max_minutes)
    ap.add_argument("--checkpoint", type=Path, default=None, help="also save the torch weights here")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda on a lent GPU")
    ap.add_argument("--batch", type=int, default=UpFaceTrainConfig.batch)
    ap.add_argument("--lr", type=float, default=UpFaceTrainConfig.lr)
    ap.add_argument("--threads", type=int, default=UpFaceTrainConfig.threads)
    a = ap.parse_args(argv)
    cfg = UpFaceTrainConfig(epochs=a.epochs, max_minutes=a.minutes, device=a.device, batch=a.batch, lr=a.lr,
                            threads=a.threads)
    data = UpFaceData.load(a.data)
    data_meta = [json.loads(p.with_suffix(".json").read_text()) if p.with_suffix(".json").is_file()
                 else {"file": str(p)} for p in a.data]
    model, result = train(data, cfg)
    if a.checkpoint:
        torch.save({"model": model.state_dict(), "config": asdict(cfg)}, a.checkpoint)
    export(model, a.out, result, cfg, data_meta)
    print(json.dumps(result["validation"], indent=1))


if __name__ == "__main__":
    main()
