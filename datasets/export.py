"""Writers for the three dataset formats: YOLO detection, face-classifier crops, JSON Lines reads.

- yolo:  DIR/images/{train,val}/NAME.jpg, DIR/labels/{train,val}/NAME.txt
         (vision/labels.py's YOLO format: classes in KINDS order), DIR/data.yaml with the
         ABSOLUTE path and the class names.
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

import cv2
import numpy as np

from dicecam.mechanics.dice import ImageRead
from dicecam.vision.crops import CROP_MARGIN, face_name, square_crop
from dicecam.vision.labels import data_yaml, yolo_lines

FORMATS = ("yolo", "crops", "jsonl")
# The side of an exported face crop in pixels, framed as the reader frames it but sharper than the
# reader's own input (vision.crops.CROP_SIZE), which a training recipe resizes it to.
EXPORT_CROP_SIZE = 96


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
                cv2.imwrite(str(self.out / rel), square_crop(img, d.box, CROP_MARGIN, EXPORT_CROP_SIZE))
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
            (self.out / "data.yaml").write_text(data_yaml(["images/train"], ["images/val"], root=self.out))
