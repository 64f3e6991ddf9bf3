"""Train the face reader on wide crops, augmenting on the training device, and export it to ONNX.

Augmentation stands in for what the detector and the camera do to a crop at run time: the
box lands a little off (shift, scale), the camera is held nearly level (a small in-plane roll
only: "up" in the crop is away from the camera, which is how the reader tells the top face
from the front face in an oblique view; the renderer already turns each die about the
vertical), the lens blurs, the sensor is noisy, a small die has few pixels (down-then-up
sampling), exposure and white balance drift. Mirroring is never used: mirrored numerals are
wrong labels.

A crop labelled by kind only (real photos sorted by die type) teaches the kind: its loss is
on the kind's total probability, the sum over that kind's faces.
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

from dicecam.vision.crops import CROP_MARGIN, CROP_SIZE, FACE_CLASSES, KIND_OF_FACE, KINDS, face_name

from .data import CROP_STORE_MARGIN, CropSet
from .reader_net import CompactReaderNet, FaceReaderNet

MAX_ROLL = math.radians(10)


@dataclass
class ReaderTrainConfig:
    epochs: int = 30
    batch: int = 512
    lr: float = 3e-3
    weight_decay: float = 5e-4
    width: int = 32
    arch: str = "residual"  # residual (FaceReaderNet, shipped) or compact (CompactReaderNet)
    real_weight: float = 1.0  # sampling weight of a real crop relative to a synthetic one
    seed: int = 0
    device: str = "cpu"
    threads: int = 2
    size: int = CROP_SIZE  # the reader's input side in pixels
    init: str | None = None  # a checkpoint (last.pt) to start from: fine-tuning instead of a fresh start


def augment(x: torch.Tensor, gen: torch.Generator, train: bool, size: int = CROP_SIZE) -> torch.Tensor:
    """(N, S, S, 3) uint8 wide crops -> (N, 3, size, size) float reader input."""
    n = x.shape[0]
    dev = x.device
    img = x.permute(0, 3, 1, 2).float()
    # The stored crop spans (1 + 2 * CROP_STORE_MARGIN) box sides; the reader's view spans (1 + 2 * CROP_MARGIN).
    base = (1 + 2 * CROP_MARGIN) / (1 + 2 * CROP_STORE_MARGIN)

    def u(lo, hi):
        return lo + (hi - lo) * torch.rand(n, device=dev, generator=gen)

    if train:
        scale = base * u(0.85, 1.18)
        angle = (torch.randn(n, device=dev, generator=gen) * (MAX_ROLL / 2)).clamp(-MAX_ROLL, MAX_ROLL)
        tx, ty = u(-0.09, 0.09) * 2 * base, u(-0.09, 0.09) * 2 * base
    else:
        scale = torch.full((n,), base, device=dev)
        angle = torch.zeros(n, device=dev)
        tx = ty = torch.zeros(n, device=dev)
    cos, sin = torch.cos(angle) * scale, torch.sin(angle) * scale
    theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)
    # Area-average the stored crop down to the view's scale first, as the runtime's crop does;
    # bilinear sampling alone would drop thin strokes.
    target = round(size / base)
    if x.shape[1] > target * 1.1:
        img = F.interpolate(img, size=(target, target), mode="area")
    grid = F.affine_grid(theta, (n, 3, size, size), align_corners=False)
    out = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)
    if not train:
        return out
    # Few pixels: shrink a share of crops to 14-48 px and back.
    small = torch.rand(n, device=dev, generator=gen) < 0.35
    if small.any():
        s = int(torch.randint(14, 49, (1,), generator=gen, device=dev).item())
        lo = F.interpolate(out[small], size=(s, s), mode="area")
        out[small] = F.interpolate(lo, size=(size, size), mode="bilinear", align_corners=False)
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
    kind = torch.from_numpy(data.kind).to(dev)
    colour = torch.from_numpy(data.colour).to(dev)
    cocked = torch.from_numpy(data.cocked).to(dev)
    weights = torch.from_numpy(np.where(is_real[tr], cfg.real_weight, 1.0)).double()
    # face logits -> kind logits: log of the summed probability of each kind's faces.
    kind_of_face = torch.from_numpy(KIND_OF_FACE).to(dev)

    model = build_model(cfg, len(colours)).to(dev)
    if cfg.init and cfg.init.endswith(".pt") and not (out / "last.pt").is_file():
        model.load_state_dict(torch.load(cfg.init, map_location=dev)["model"])
        log(f"reader: starting from {cfg.init}")
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
            x = augment(images[idx], gen, train=True, size=cfg.size)
            grey = torch.rand(len(idx), device=dev, generator=gen) < 0.05
            col = colour[idx].clone()
            if grey.any():
                x[grey] = x[grey].mean(dim=1, keepdim=True).expand(-1, 3, -1, -1)
                col[grey] = -1
            fl, cl, kl, _ = model(x)
            f_idx = face[idx]
            valued = f_idx >= 0
            loss = F.cross_entropy(fl[valued], f_idx[valued], label_smoothing=0.05) * valued.float().mean() \
                if valued.any() else fl.sum() * 0
            if (~valued).any():
                loss = loss + F.cross_entropy(kind_logits(fl[~valued], kind_of_face), kind[idx][~valued]) \
                    * (~valued).float().mean()
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
        figures = evaluate(model, images, face, kind, colour, torch.from_numpy(va).to(dev), cfg.batch, cfg.size,
                           kind_of_face)
        figures["real_val"] = evaluate(model, images, face, kind, colour, torch.from_numpy(va[is_real[va]]).to(dev),
                                       cfg.batch, cfg.size, kind_of_face) if is_real[va].any() else None
        figures["epoch"] = epoch + 1
        figures["loss"] = round(total / steps_per_epoch, 4)
        rv = figures["real_val"] or {}
        log(f"reader epoch {epoch + 1}/{cfg.epochs}: loss {figures['loss']} val face {figures['face_acc']:.4f} "
            f"kind {figures['kind_acc']:.4f} colour {figures['colour_acc']:.4f}; real val face {rv.get('face_acc')} "
            f"kind {rv.get('kind_acc')} ({time.perf_counter() - t0:.1f} s)")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                    "epoch": epoch, "config": asdict(cfg)}, ckpt)
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    return {"model": model, "figures": figures}


def build_model(cfg: ReaderTrainConfig, n_colours: int) -> torch.nn.Module:
    """The network to train: a fresh FaceReaderNet, or an exported reader (`init` an .onnx file:
    its graph and weights become a trainable torch module) to fine-tune."""
    if cfg.init and cfg.init.endswith(".onnx"):
        # onnx and onnx2torch only when fine-tuning an exported reader: a fresh training needs neither.
        import onnx
        from onnx2torch import convert

        model = onnx.load(cfg.init)
        if [o.name for o in model.graph.output][:4] != ["face", "colour", "cocked", "features"]:
            model = with_features(model)
        return convert(model)
    net = CompactReaderNet if cfg.arch == "compact" else FaceReaderNet
    return net(len(FACE_CLASSES), n_colours, cfg.width)


def with_features(model):
    """An exported reader of three outputs given its pooled features as a fourth (the input of
    its heads), so a memory can compare dice by them."""
    from onnx import TensorProto, helper

    head = next(n for n in model.graph.node if n.op_type == "Gemm" and "face" in n.output)
    feat = head.input[0]
    for n in model.graph.node:
        n.output[:] = ["features" if o == feat else o for o in n.output]
        n.input[:] = ["features" if i == feat else i for i in n.input]
    model.graph.output.append(helper.make_tensor_value_info("features", TensorProto.FLOAT, ["n", None]))
    return model


def kind_logits(face_logits: torch.Tensor, kind_of_face: torch.Tensor) -> torch.Tensor:
    """(N, faces) -> (N, kinds): log of the summed probability of each kind's faces."""
    cols = [torch.logsumexp(face_logits[:, kind_of_face == k], dim=1) for k in range(len(KINDS))]
    return torch.stack(cols, 1)


@torch.no_grad()
def evaluate(model, images, face, kind, colour, idx, batch: int, size: int, kind_of_face) -> dict:
    """Face accuracy where the value is known, kind accuracy on every crop, colour where known."""
    model.eval()
    ok = nf = okk = okc = nc = 0
    for s in range(0, len(idx), batch):
        j = idx[s:s + batch]
        fl, cl, _, _ = model(augment(images[j], None, train=False, size=size))
        valued = face[j] >= 0
        ok += int((fl.argmax(1)[valued] == face[j][valued]).sum())
        nf += int(valued.sum())
        okk += int((kind_logits(fl, kind_of_face).argmax(1) == kind[j]).sum())
        known = colour[j] >= 0
        okc += int((cl.argmax(1)[known] == colour[j][known]).sum())
        nc += int(known.sum())
    return {"face_acc": round(ok / max(1, nf), 4), "kind_acc": round(okk / max(1, len(idx)), 4),
            "colour_acc": round(okc / max(1, nc), 4), "val_crops": int(len(idx))}


def export_reader(model, path: Path, colours: list[str], width: int, figures: dict, size: int = CROP_SIZE,
                  init: str | None = None) -> None:
    """ONNX with a dynamic batch, and the sidecar JSON the runtime needs to decode it."""
    model = model.to("cpu").eval()
    x = torch.zeros(2, 3, size, size)
    names = ["face", "colour", "cocked", "features"]
    torch.onnx.export(model, x, str(path), input_names=["crops"], output_names=names,
                      dynamic_axes={"crops": {0: "n"}, **{n: {0: "n"} for n in names}},
                      opset_version=17, dynamo=False)
    meta = {
        "input": {"size": size, "margin": CROP_MARGIN, "channels": "BGR", "scale": "0-255"},
        "faces": [face_name(k, v) for k, v in FACE_CLASSES],
        "colours": colours,
        # A network fine-tuned from an exported reader keeps that reader's shape, not FaceReaderNet's.
        "width": None if init and init.endswith(".onnx") else width,
        "fine_tuned_from": Path(init).name if init else None,
        "figures": figures,
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
