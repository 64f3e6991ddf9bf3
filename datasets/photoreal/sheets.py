"""Pictures to check the photoreal renders by eye.

- label sheet: close-ups of rendered dice, each crop with its label (kind:value) drawn beside it;
- realism sheet: one row per die kind, real photos (datasets/real) on the left, renders of the
  same kind on the right, every die at the same size in its tile.

    python -m dicecam.datasets.photoreal.sheets --renders DIR --real DIR --labels OUT.jpg --realism OUT.jpg

DIR of renders: a jsonl export (reads.jsonl + images), or any folder with reads.jsonl whose
lines name the images relative to it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from dicecam.mechanics.dice import ImageRead
from dicecam.vision.crops import KINDS, face_label

TILE = 160
DIE_FRACTION = 0.55  # of the tile's width taken by the die, real and rendered alike


def crop_die(img: np.ndarray, box, tile: int = TILE, fraction: float = DIE_FRACTION) -> np.ndarray:
    x1, y1, x2, y2 = box
    side = max(x2 - x1, y2 - y1) / fraction
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    s = tile / side
    M = np.array([[s, 0, tile / 2 - s * cx], [0, s, tile / 2 - s * cy]], np.float32)
    # Shrink with area averaging (as a camera would), not bilinear point sampling.
    if s < 1:
        k = max(1, int(round(1 / s)))
        img = cv2.resize(img, (max(1, img.shape[1] // k), max(1, img.shape[0] // k)), interpolation=cv2.INTER_AREA)
        M[:, :2] *= k
    return cv2.warpAffine(img, M, (tile, tile), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=(40, 40, 40))


def _label(tile: np.ndarray, text: str, colour=(255, 255, 255)) -> np.ndarray:
    out = tile.copy()
    cv2.rectangle(out, (0, 0), (out.shape[1], 18), (0, 0, 0), -1)
    cv2.putText(out, text, (4, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
    return out


def _grid(tiles: list[np.ndarray], cols: int) -> np.ndarray:
    blank = np.zeros_like(tiles[0])
    tiles = tiles + [blank] * (-len(tiles) % cols)
    return np.vstack([np.hstack(tiles[i : i + cols]) for i in range(0, len(tiles), cols)])


def load_reads(folder: Path) -> list[tuple[np.ndarray, ImageRead, dict]]:
    out = []
    for line in (folder / "reads.jsonl").read_text().splitlines():
        row = json.loads(line)
        extra = {k: row.pop(k) for k in list(row) if k not in ImageRead.model_fields}
        read = ImageRead.model_validate(row)
        img = cv2.imread(str(folder / read.image))
        if img is not None:
            out.append((img, read, extra))
    return out


def label_sheet(renders: list[tuple[np.ndarray, ImageRead, dict]], cols: int = 6) -> np.ndarray:
    tiles = []
    for img, read, extra in renders:
        for d in read.dice:
            style = extra.get("style", "")
            text = f"{d.type.value}:{face_label(d.type.value, d.value)}" + (f" {style}" if style in ("vertex", "base", "pips") else "")
            tiles.append(_label(crop_die(img, d.box, 200, 0.75), text, (0, 255, 255) if d.cocked else (255, 255, 255)))
    return _grid(tiles, cols)


def real_examples(real: Path, kind: str, n: int) -> list[np.ndarray]:
    """Up to n crops of real dice of one kind from the shared sets (boxed ones cropped by box,
    single-die frames without a box cropped around the frame's centre)."""
    out = []
    for name in ("burksbuilds-faces", "lurig-types", "lurig-d20-values"):
        path = real / name / "truth.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(l) for l in path.read_text().splitlines()]
        rows = [r for r in rows if r["dice"] and r["dice"][0]["type"] == kind]
        take = 1 if name == "burksbuilds-faces" else n - len(out)  # one tray photo, the rest varied
        for r in rows[:: max(1, len(rows) // max(take, 1))][:take]:
            img = cv2.imread(str(real / name / "images" / r["image"]))
            if img is None:
                continue
            box = r["dice"][0].get("box")
            if box is None:  # one die, about half the frame wide, near the centre (README)
                h, w = img.shape[:2]
                box = (w * 0.27, h * 0.27, w * 0.73, h * 0.73)
            out.append(crop_die(img, box))
            if len(out) >= n:
                return out
    return out


def realism_sheet(renders: list[tuple[np.ndarray, ImageRead, dict]], real: Path,
                  kinds=KINDS, per_side: int = 3) -> np.ndarray:
    rows = []
    for kind in kinds:
        reals = real_examples(real, kind, per_side)
        rend = [crop_die(img, d.box) for img, read, _ in renders for d in read.dice if d.type.value == kind]
        rend = rend[:per_side]
        if not reals or not rend:
            continue
        blank = np.full((TILE, TILE, 3), 40, np.uint8)
        left = [_label(t, f"real {kind}") for t in reals] + [blank] * (per_side - len(reals))
        right = [_label(t, f"render {kind}", (0, 255, 255)) for t in rend] + [blank] * (per_side - len(rend))
        gap = np.full((TILE, 8, 3), 255, np.uint8)
        rows.append(np.hstack([*left, gap, *right]))
    return np.vstack(rows)


def write_jpeg(path: Path, img: np.ndarray, max_bytes: int = 1_000_000) -> None:
    for q in (90, 85, 80, 70, 60, 50):
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
        if len(buf) <= max_bytes:
            break
    Path(path).write_bytes(buf.tobytes())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--renders", type=Path, required=True)
    p.add_argument("--real", type=Path, default=Path("../shared/datasets/real"),
                   help="the shared real photos (default ../shared/datasets/real, as dicecam train --real)")
    p.add_argument("--labels", type=Path)
    p.add_argument("--realism", type=Path)
    a = p.parse_args(argv)
    renders = load_reads(a.renders)
    if a.labels:
        write_jpeg(a.labels, label_sheet(renders))
    if a.realism:
        write_jpeg(a.realism, realism_sheet(renders, a.real))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
