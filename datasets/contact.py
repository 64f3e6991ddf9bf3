"""Contact sheets: a grid of samples with every die's box and label drawn, to check by eye."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading, ImageRead
from dicecam.mechanics.errors import DicecamError, LimitError
from dicecam.vision.crops import KINDS, face_label
from dicecam.vision.labels import yolo_boxes, yolo_pairs

from .render import Renderer
from .scene import parse_kinds, render_image, render_scene, sample_scene
from .synth import image_seed

MAX_SAMPLES = 400


def annotate(img: np.ndarray, read: ImageRead) -> np.ndarray:
    out = img.copy()
    scale = max(0.35, out.shape[1] / 1400)
    for d in read.dice:
        x1, y1, x2, y2 = (int(round(v)) for v in d.box)
        col = (0, 0, 255) if d.cocked else (0, 255, 0)
        cv2.rectangle(out, (x1, y1), (x2 - 1, y2 - 1), col, 1)
        text = f"{d.type.value}:{face_label(d.type.value, d.value)}" + (" C" if d.cocked else "")
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        ty = y1 - 3 if y1 - th - 4 > 0 else y2 + th + 3
        cv2.rectangle(out, (x1, ty - th - 2), (x1 + tw + 2, ty + 2), (0, 0, 0), -1)
        cv2.putText(out, text, (x1 + 1, ty), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def _from_folder(src: Path, count: int) -> list[tuple[np.ndarray, ImageRead]]:
    items = []
    if (src / "reads.jsonl").exists():
        for line in (src / "reads.jsonl").read_text().splitlines()[:count]:
            read = ImageRead.model_validate_json(line)
            items.append((cv2.imread(str(src / read.image)), read))
    elif (src / "labels").is_dir():
        for img_path, lab in list(yolo_pairs(src))[:count]:
            img = cv2.imread(str(img_path))
            if img is None:
                continue
            h, w = img.shape[:2]
            dice = []
            for c, box in yolo_boxes(lab, w, h):
                kind = KINDS[c]
                dice.append(DieReading(type=kind, value=0 if kind in ("d10", "d00") else 1, box=box))
            items.append((img, ImageRead(image=str(img_path), width=w, height=h, dice=dice)))
    else:
        raise DicecamError(f"{src} holds neither reads.jsonl nor a labels/ folder")
    if not items:
        raise DicecamError(f"no samples found in {src}")
    return items


def contact_sheet(out: Path, *, count: int = 24, seed: int = 0, kinds: Sequence[str] | str | None = None,
                  source: Path | None = None, cols: int = 6, tile: int = 320, n_dice: int | None = None, per_kind: int = 0,
                  width: int = 640, height: int = 480) -> int:
    if not 1 <= count <= MAX_SAMPLES:
        raise LimitError(f"count must be 1-{MAX_SAMPLES}, got {count}")
    if not 1 <= cols <= 20 or not 64 <= tile <= 1280:
        raise LimitError("cols must be 1-20 and tile 64-1280")
    if source is not None:
        items = _from_folder(Path(source), count)
    elif per_kind:
        # One row per kind, larger dice than the random mix, for checking labels by eye.
        items = []
        with Renderer() as gl:
            for k in parse_kinds(kinds):
                for i in range(per_kind):
                    rng = np.random.default_rng(image_seed(seed, 1000 * len(items) + i))
                    lay = sample_scene(rng, [k], width, height, int(rng.integers(2, 5)), px_range=(70, 150))
                    items.append(render_scene(gl, lay.scene, None, f"{k}-{i}"))
        cols = per_kind
    else:
        with Renderer() as gl:
            items = [render_image(image_seed(seed, i), renderer=gl, kinds=kinds, n_dice=n_dice, width=width,
                                  height=height) for i in range(count)]
    tiles = []
    for img, read in items:
        a = annotate(img, read)
        th = int(round(a.shape[0] * tile / a.shape[1]))
        tiles.append(cv2.resize(a, (tile, th), interpolation=cv2.INTER_AREA))
    th = max(t.shape[0] for t in tiles)
    rows = []
    for r in range(0, len(tiles), cols):
        row = [np.pad(t, ((0, th - t.shape[0]), (0, 0), (0, 0))) for t in tiles[r : r + cols]]
        row += [np.zeros((th, tile, 3), np.uint8)] * (cols - len(row))
        rows.append(np.hstack(row))
    sheet = np.vstack(rows)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), sheet):
        raise DicecamError(f"cannot write {out} (use a .png or .jpg name)")
    return len(items)
