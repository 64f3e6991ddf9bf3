"""Training data for the two models: YOLO folders for the detector, crop arrays for the face reader.

Synthetic images are rendered once and feed both: each image and its labels go to a YOLO
folder, and every die is also cut (from the JPEG as written, artefacts included) into a wide
crop for the face reader. Real photos (d6 pips, ../shared/datasets/real) are copied into the
same two shapes, their YOLO classes remapped from "k+1 pips" to our kind class d6.

Crops are stored wider than the reader's view (CROP_STORE_MARGIN) so training can jitter the
box the way a detector would and still find pixels there.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import random
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from dicecam.datasets.scene import parse_kinds
from dicecam.datasets.synth import _render_one, open_worker_renderer, worker_renderer
from dicecam.mechanics.errors import DicecamError
from dicecam.vision.crops import FACE_INDEX, KIND_OF_FACE, KINDS, square_crop
from dicecam.vision.evaluate import HELD_OUT, held_out, load_truth
from dicecam.vision.labels import pixel_box, read_yolo_labels, yolo_line, yolo_lines, yolo_pairs
from dicecam.vision.read import Reader


CROP_STORE_SIZE = 128
CROP_STORE_MARGIN = 0.4
D6 = KINDS.index("d6")
# The YOLO folders `dicecam eval --held-out` scores (vision/evaluate.HELD_OUT: nell-byler's published test split, the
# real benchmark) are never trained on.
HELD_OUT_REAL = tuple(f"{name}/images/{folder}" for name, rule in HELD_OUT.items() for folder in rule.get("folder", ()))


@dataclass
class CropSet:
    """Wide crops and their labels; -1 marks a label the source does not give (real photos: colour)."""

    images: np.ndarray  # (N, S, S, 3) uint8 BGR
    face: np.ndarray  # (N,) int64 index into FACE_CLASSES, -1 where only the kind is known
    colour: np.ndarray  # (N,) int64 index into the colour list, -1 unknown
    cocked: np.ndarray  # (N,) int64 0/1, -1 unknown
    kind: np.ndarray | None = None  # (N,) int64 index into KINDS; derived from face when not given

    def __post_init__(self) -> None:
        if self.kind is None:
            self.kind = np.where(self.face >= 0, KIND_OF_FACE[np.maximum(self.face, 0)], -1).astype(np.int64)

    FIELDS = ("images", "face", "colour", "cocked", "kind")

    def save(self, path: Path) -> None:
        np.savez(path, **{f: getattr(self, f) for f in self.FIELDS})

    @classmethod
    def load(cls, path: Path) -> "CropSet":
        z = np.load(path)
        return cls(*(z[f] if f in z else None for f in cls.FIELDS))

    @classmethod
    def concat(cls, sets: list["CropSet"]) -> "CropSet":
        return cls(*(np.concatenate([getattr(s, f) for s in sets]) for f in cls.FIELDS))

    def __len__(self) -> int:
        return len(self.face)


def _crop_rows(img: np.ndarray, dice, colours: list[str]) -> list[tuple]:
    return [(square_crop(img, d.box, CROP_STORE_MARGIN, CROP_STORE_SIZE), FACE_INDEX[(d.type.value, d.value)],
             colours.index(d.colour) if d.colour in colours else -1, int(d.cocked)) for d in dice]


def _render_and_write(job) -> tuple[int, list[tuple]]:
    """Render image i, write it and its YOLO label, return (dice, crop rows of a training image).
    Runs in a worker process (its renderer opened by the pool's initializer), so the main process
    only gathers crops."""
    out, seed, i, kinds, val_every, colours = job
    img, read = _render_one((seed, i, kinds, 640, 480), worker_renderer())
    split = "val" if (i + 1) % val_every == 0 else "train"
    name = f"s{seed}_{i:06d}"
    ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 92])
    (out / "images" / split / f"{name}.jpg").write_bytes(jpg.tobytes())
    (out / "labels" / split / f"{name}.txt").write_text("".join(line + "\n" for line in yolo_lines(read)))
    if split == "val":
        return len(read.dice), []
    # Crops come from the JPEG as written, so the reader learns its artefacts too.
    return len(read.dice), _crop_rows(cv2.imdecode(jpg, cv2.IMREAD_COLOR), read.dice, colours)


def render_synthetic(out: Path, count: int, seed: int, colours: list[str], *, workers: int = 1,
                     val_every: int = 10, progress: bool = True) -> None:
    """Render `count` images into out/yolo (detector; every `val_every`th image to val) and
    out/crops.npz (face reader, training images only)."""
    yolo = out / "yolo"
    for split in ("train", "val"):
        (yolo / "images" / split).mkdir(parents=True, exist_ok=True)
        (yolo / "labels" / split).mkdir(parents=True, exist_ok=True)
    jobs = [(yolo, seed, i, parse_kinds(None), val_every, colours) for i in range(count)]
    rows, dice = [], 0
    # Always render in worker processes: a GL context in the training process itself has
    # crashed torch's CUDA build at start-up.
    with mp.get_context("spawn").Pool(max(1, workers), initializer=open_worker_renderer) as pool:
        for n, r in tqdm(pool.imap(_render_and_write, jobs, chunksize=8), total=count,
                         disable=not progress, desc="render", unit="img"):
            dice += n
            rows += r
    _rows_to_set(rows).save(out / "crops.npz")
    (out / "done.json").write_text(json.dumps({"count": count, "seed": seed, "dice": dice, "crops": len(rows)}) + "\n")


def _rows_to_set(rows) -> CropSet:
    if not rows:
        raise DicecamError("no dice to crop")
    imgs, face, colour, cocked = zip(*rows)
    return CropSet(np.stack(imgs), np.array(face, np.int64), np.array(colour, np.int64), np.array(cocked, np.int64))


# --- real photos -------------------------------------------------------------------------------


def _source_photo(name: str) -> str:
    # Roboflow exports name augmented copies "<photo>_jpg.rf.<hash>": group them by photo.
    return name.split(".rf.")[0]


def select_real(real: Path, copies_per_photo: int, seed: int = 0) -> list[tuple[Path, Path]]:
    """The (image, label) pairs under `real` to train on: HELD_OUT_REAL left out, and at most
    `copies_per_photo` augmented copies of one source photo."""
    real = Path(real)
    if not real.is_dir():
        raise DicecamError(f"{real} is not a folder of real photos")
    rng = random.Random(seed)
    by_photo: dict[str, list] = {}
    for i, l in yolo_pairs(real):
        if not any(h in i.as_posix() for h in HELD_OUT_REAL):
            by_photo.setdefault(f"{i.parent}/{_source_photo(i.name)}", []).append((i, l))
    kept = []
    for group in by_photo.values():
        rng.shuffle(group)
        kept += group[:copies_per_photo]
    return sorted(kept)


def _shrink(img: np.ndarray, max_side: int) -> np.ndarray:
    h, w = img.shape[:2]
    s = min(1.0, max_side / max(h, w))
    return cv2.resize(img, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA) if s < 1 else img


def prepare_real(real: Path, out: Path, *, max_side: int = 1024, copies_per_photo: int = 1, seed: int = 0,
                 progress: bool = True) -> dict:
    """Copy the real d6-pip photos under `real` (YOLO labels, class k = k+1 pips) into
    out/yolo/{train,val}/{images,labels} with class d6, and cut their crops into out/crops.npz
    (at full resolution, before the copy is shrunk to `max_side`)."""
    real = Path(real)
    rows, images, dice = [], 0, 0
    for img_path, label in tqdm(select_real(real, copies_per_photo, seed), disable=not progress, desc="real", unit="img"):
        img = cv2.imread(str(img_path))
        if img is None:
            continue
        h, w = img.shape[:2]
        labels = [r for r in read_yolo_labels(label) if 0 <= r[0] < 6]
        for k, *row in labels:
            rows.append((square_crop(img, pixel_box(*row, w, h), CROP_STORE_MARGIN, CROP_STORE_SIZE), FACE_INDEX[("d6", k + 1)], -1, 0))
        rel = img_path.relative_to(real)
        split = "val" if "val" in rel.parts else "train"
        dst = out / "yolo" / split / "images" / f"{'_'.join(rel.parts[:-1])}__{img_path.stem}.jpg"
        dst.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(dst), _shrink(img, max_side), [cv2.IMWRITE_JPEG_QUALITY, 90])
        lab = out / "yolo" / split / "labels" / f"{dst.stem}.txt"
        lab.parent.mkdir(parents=True, exist_ok=True)
        lab.write_text("".join(f"{D6} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}\n" for _, cx, cy, bw, bh in labels))
        images += 1
        dice += len(labels)
    _rows_to_set(rows).save(out / "crops.npz")
    summary = {"images": images, "dice": dice, "crops": len(rows), "source": str(real)}
    (out / "done.json").write_text(json.dumps(summary) + "\n")
    return summary


# The real stage's folders the detector trains and validates on, relative to WORK/real (recipe.run's detector
# stage reads them; pack_for_detector copies them).
DETECTOR_TRAIN, DETECTOR_VAL = ("yolo/train", "reads_yolo/train"), ("yolo/val",)
DETECTOR_FOLDERS = DETECTOR_TRAIN + DETECTOR_VAL


def pack_for_detector(real_work: Path, out: Path, *, max_side: int = 416, quality: int = 85) -> dict:
    """A small copy of the real stage's detector photos (WORK/real), for a training machine that has no
    shared sets: each photo shrunk to `max_side` (the detector's training size: it would shrink them there
    anyway), its YOLO labels as they are (they are in fractions of the photo), and the stage's sets.json.
    Placed at that machine's WORK/real, the real stage is skipped and the detector stage trains on it; the
    face reader's crops stay behind (a detector run needs none, and they are most of the folder)."""
    real_work, out = Path(real_work), Path(out)
    if not (real_work / "sets.json").is_file():
        raise DicecamError(f"no real photos in {real_work}: run the real stage first (--stages real)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DicecamError(f"{out} is not empty: pack into a new folder")
    counts = {}
    for folder in DETECTOR_FOLDERS:
        images = real_work / folder / "images"
        if not images.is_dir():
            continue
        (out / folder / "images").mkdir(parents=True, exist_ok=True)
        (out / folder / "labels").mkdir(parents=True, exist_ok=True)
        n = 0
        for path in sorted(images.glob("*.jpg")):
            label = real_work / folder / "labels" / f"{path.stem}.txt"
            img = cv2.imread(str(path))
            if img is None or not label.is_file():
                continue
            cv2.imwrite(str(out / folder / "images" / path.name), _shrink(img, max_side),
                        [cv2.IMWRITE_JPEG_QUALITY, quality])
            (out / folder / "labels" / label.name).write_bytes(label.read_bytes())
            n += 1
        counts[folder] = n
    (out / "sets.json").write_bytes((real_work / "sets.json").read_bytes())
    return {"photos": counts, "max_side": max_side, "bytes": sum(f.stat().st_size for f in out.rglob("*") if f.is_file())}


# --- real photos labelled in the read format (one die each, value or kind only) ----------------

# The sets trained on, under `real`; burksbuilds-faces (one photo per face) stays a test set.
READ_SETS = ("lurig-d20-values", "lurig-types")


# Every this many of a read set's training photos also goes to the detector, whole, with its box and kind.
READS_FOR_DETECTOR_EVERY = 3


def prepare_real_reads(real: Path, out: Path, *, sets: tuple[str, ...] = READ_SETS, progress: bool = True,
                       detector_every: int = READS_FOR_DETECTOR_EVERY) -> dict:
    """Crops of the single-die photos under `real`/SET/truth.jsonl, leaving out what `dicecam eval
    --held-out` scores. A line without a box gets the shipped detector's surest box; a photo where
    it finds nothing is skipped. Dice labelled by kind only get face -1 and their kind.

    Every `detector_every`-th training photo is also copied whole into out/reads_yolo/train with that box
    and the truth's kind: real numeral dice for the detector, whose renders alone never showed it one
    (neighbouring video frames are near copies, hence not every one)."""
    detector = Reader.load()
    rows, skipped, counts = [], 0, {}
    yolo = out / "reads_yolo" / "train"
    for name in sets:
        truth = Path(real) / name / "truth.jsonl"
        if not truth.is_file():
            continue
        items = [t for t in load_truth(truth) if not held_out(name, t)]
        for k, item in enumerate(tqdm(items, disable=not progress, desc=name, unit="img")):
            img = cv2.imread(str(item.path))
            if img is None or len(item.dice) != 1:
                skipped += 1
                continue
            die = item.dice[0]
            box = die.box
            if box is None:
                dets = detector.detect(img)
                if not len(dets):
                    skipped += 1
                    continue
                box = dets.xyxy[int(np.argmax(dets.confidence))]
            if detector_every and k % detector_every == 0:
                _write_yolo(yolo, f"{name}__{item.path.stem}", img, box, KINDS.index(die.kind.value))
            face = FACE_INDEX[(die.kind.value, die.value)] if die.value is not None else -1
            rows.append((square_crop(img, box, CROP_STORE_MARGIN, CROP_STORE_SIZE), face, -1, 0,
                         KINDS.index(die.kind.value)))
            counts[name] = counts.get(name, 0) + 1
    imgs, face, colour, cocked, kind = zip(*rows)
    CropSet(np.stack(imgs), *(np.array(a, np.int64) for a in (face, colour, cocked, kind))).save(out / "reads.npz")
    summary = {"crops": counts, "skipped": skipped}
    (out / "reads.json").write_text(json.dumps(summary) + "\n")
    return summary


def _write_yolo(folder: Path, stem: str, img: np.ndarray, box, kind: int) -> None:
    """One photo and its one die (pixel box, kind index) in YOLO form under folder/{images,labels}."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "labels").mkdir(parents=True, exist_ok=True)
    h, w = img.shape[:2]
    cv2.imwrite(str(folder / "images" / f"{stem}.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, 92])
    (folder / "labels" / f"{stem}.txt").write_text(yolo_line(kind, tuple(float(v) for v in box), w, h) + "\n")
