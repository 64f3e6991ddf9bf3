"""Writers for the three dataset formats: YOLO detection, face-classifier crops, JSON Lines reads.

- yolo:  DIR/images/{train,val}/NAME.jpg, DIR/labels/{train,val}/NAME.txt
         ("class cx cy w h", normalised), DIR/data.yaml with the ABSOLUTE path and class names
         in the fixed order of CLASSES.
- crops: DIR/crops/CLASS/NAME_K.png with CLASS = "<kind>_<value>" (d00 values as 00..90),
         cocked dice under DIR/crops_cocked/CLASS/, and DIR/crops.csv listing every crop
         (path, kind, value, colour, cocked, source image).
- jsonl: DIR/images/NAME.jpg and DIR/reads.jsonl, one ImageRead per line (dice in
         reading order, the shared read format).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from dicecam.mechanics.dice import ImageRead
from dicecam.vision.crops import CROP_MARGIN, face_name, square_crop
from dicecam.vision.crops import KINDS as CLASSES
from dicecam.vision.sources import IMAGE_EXTS

FORMATS = ("yolo", "crops", "jsonl")
CROP_SIZE = 96


def yolo_lines(read: ImageRead) -> list[str]:
    out = []
    for d in read.dice:
        x1, y1, x2, y2 = d.box
        cx, cy = (x1 + x2) / 2 / read.width, (y1 + y2) / 2 / read.height
        w, h = (x2 - x1) / read.width, (y2 - y1) / read.height
        out.append(f"{CLASSES.index(d.type.value)} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}")
    return out


# -- reading the YOLO format back (evaluation, training on real photos, contact sheets) --
def yolo_pairs(root: Path) -> Iterator[tuple[Path, Path]]:
    """(image, label) pairs of a YOLO folder: images/... next to labels/... with the same stem."""
    for img in sorted(root.rglob("*")):
        if img.suffix.lower() not in IMAGE_EXTS or "images" not in img.parts:
            continue
        parts = list(img.parts)
        parts[len(parts) - 1 - parts[::-1].index("images")] = "labels"
        label = Path(*parts).with_suffix(".txt")
        if label.is_file():
            yield img, label


def read_yolo_labels(label: Path) -> list[tuple[int, float, float, float, float]]:
    rows = []
    for line in label.read_text().splitlines():
        p = line.split()
        if len(p) >= 5:
            rows.append((int(p[0]), *map(float, p[1:5])))
    return rows



class Writer:
    """Writes samples of one format under `out`; call `close()` to finish index files."""

    def __init__(self, out: Path, fmt: str, val_every: int = 10) -> None:
        self.out, self.fmt, self.val_every = Path(out), fmt, val_every
        self.count = 0
        self.dice = 0
        self.out.mkdir(parents=True, exist_ok=True)
        self._jsonl = None
        self._csv = None
        if fmt == "jsonl":
            (self.out / "images").mkdir(exist_ok=True)
            self._jsonl = open(self.out / "reads.jsonl", "w", encoding="utf-8")
        elif fmt == "crops":
            self._csv_file = open(self.out / "crops.csv", "w", newline="", encoding="utf-8")
            self._csv = csv.writer(self._csv_file)
            self._csv.writerow(["path", "kind", "value", "colour", "cocked", "image"])
        elif fmt == "yolo":
            for split in ("train", "val"):
                (self.out / "images" / split).mkdir(parents=True, exist_ok=True)
                (self.out / "labels" / split).mkdir(parents=True, exist_ok=True)

    def add(self, name: str, img: np.ndarray | bytes, read: ImageRead) -> None:
        """img: a BGR image, or (yolo/jsonl) the bytes of an already encoded JPEG."""
        self.count += 1
        self.dice += len(read.dice)
        if self.fmt == "yolo":
            split = "val" if self.count % self.val_every == 0 else "train"
            self._write_jpeg(self.out / "images" / split / f"{name}.jpg", img)
            (self.out / "labels" / split / f"{name}.txt").write_text("".join(l + "\n" for l in yolo_lines(read)))
        elif self.fmt == "jsonl":
            rel = f"images/{name}.jpg"
            self._write_jpeg(self.out / rel, img)
            row = read.model_copy(update={"image": rel})
            self._jsonl.write(json.dumps(row.model_dump(mode="json"), separators=(",", ":")) + "\n")
        else:
            if isinstance(img, bytes):
                img = cv2.imdecode(np.frombuffer(img, np.uint8), cv2.IMREAD_COLOR)
            for k, d in enumerate(read.dice):
                sub = "crops_cocked" if d.cocked else "crops"
                cls = face_name(d.type.value, d.value)
                (self.out / sub / cls).mkdir(parents=True, exist_ok=True)
                rel = f"{sub}/{cls}/{name}_{k}.png"
                cv2.imwrite(str(self.out / rel), square_crop(img, d.box, CROP_MARGIN, CROP_SIZE))
                self._csv.writerow([rel, d.type.value, d.value, d.colour or "", int(d.cocked), name])

    @staticmethod
    def _write_jpeg(path: Path, img: np.ndarray | bytes) -> None:
        if not isinstance(img, bytes):
            ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 92])
            img = buf.tobytes()
        path.write_bytes(img)

    def close(self) -> None:
        if self._jsonl:
            self._jsonl.close()
        if self._csv:
            self._csv_file.close()
        if self.fmt == "yolo":
            lines = [
                f"path: {self.out.resolve()}",
                "train: images/train",
                "val: images/val",
                f"nc: {len(CLASSES)}",
                "names:",
                *[f"  {i}: {c}" for i, c in enumerate(CLASSES)],
            ]
            (self.out / "data.yaml").write_text("\n".join(lines) + "\n")
