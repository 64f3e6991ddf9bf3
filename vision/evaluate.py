"""`dicecam eval`: score the reader against labelled images.

Truth is either a JSON Lines file of reads (the shared read format, images relative to the
file) or a YOLO folder of d6-pip photos (class k = a die showing k+1 pips, as the real sets
in ../shared/datasets/real are labelled). Predictions match truth one to one by box IoU.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading, ImageRead
from dicecam.mechanics.errors import DicecamError

from .crops import KINDS
from .vote import iou

MATCH_IOU = 0.5


Truth = Iterator[tuple[Path, list[DieReading], "np.ndarray | None"]]  # image path, dice, image if already read


def truth_from_jsonl(path: Path) -> Truth:
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            read = ImageRead.model_validate_json(line)
        except ValueError as e:
            raise DicecamError(f"{path}:{n}: not a read line ({str(e).splitlines()[0]})") from None
        yield path.parent / read.image, read.dice, None


def truth_from_yolo(folder: Path) -> Truth:
    from dicecam.datasets.export import read_yolo_labels, yolo_pairs

    for img_path, label in yolo_pairs(folder):
        img = cv2.imread(str(img_path))
        if img is None:
            yield img_path, [], None
            continue
        h, w = img.shape[:2]
        dice = []
        for k, cx, cy, bw, bh in read_yolo_labels(label):
            if 0 <= k < 6:
                dice.append(DieReading(type="d6", value=k + 1,
                                       box=((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)))
        yield img_path, dice, img


def load_truth(path: Path) -> Truth:
    path = Path(path)
    if path.is_file():
        return truth_from_jsonl(path)
    if path.is_dir():
        if (path / "reads.jsonl").is_file():
            return truth_from_jsonl(path / "reads.jsonl")
        return truth_from_yolo(path)
    raise FileNotFoundError(2, "No such file or directory", str(path))


@dataclass
class KindScore:
    truth: int = 0
    predicted: int = 0
    found: int = 0  # truth dice with a matching box of the right kind
    right: int = 0  # ... and the right value
    colour_known: int = 0
    colour_right: int = 0


@dataclass
class Report:
    images: int = 0
    exact: int = 0
    failed: int = 0
    kinds: dict[str, KindScore] = field(default_factory=lambda: {k: KindScore() for k in KINDS})
    confusion: Counter = field(default_factory=Counter)

    def to_json(self) -> dict:
        per_kind = {}
        for k, s in self.kinds.items():
            if not s.truth and not s.predicted:
                continue
            per_kind[k] = {
                "truth": s.truth, "predicted": s.predicted,
                "recall": _ratio(s.found, s.truth), "precision": _ratio(s.found, s.predicted),
                "value_accuracy": _ratio(s.right, s.found), "read_right": _ratio(s.right, s.truth),
                "colour_accuracy": _ratio(s.colour_right, s.colour_known),
            }
        truth = sum(s.truth for s in self.kinds.values())
        return {
            "images": self.images, "unreadable": self.failed, "images_exact": _ratio(self.exact, self.images),
            "dice": truth, "dice_read_right": _ratio(sum(s.right for s in self.kinds.values()), truth),
            "colour_accuracy": _ratio(sum(s.colour_right for s in self.kinds.values()),
                                      sum(s.colour_known for s in self.kinds.values())),
            "per_kind": per_kind,
            "confusion": [{"truth": t, "read": p, "count": c} for (t, p), c in self.confusion.most_common(20)],
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _label(d: DieReading | None) -> str:
    return "missed" if d is None else f"{d.type.value} {d.value}"


def score_image(report: Report, truth: list[DieReading], pred: list[DieReading]) -> None:
    pairs = sorted(((iou(t.box, p.box), i, j) for i, t in enumerate(truth) for j, p in enumerate(pred)
                    if t.box and p.box), reverse=True)
    t_used: dict[int, int] = {}
    p_used: set[int] = set()
    for v, i, j in pairs:
        if v < MATCH_IOU:
            break
        if i not in t_used and j not in p_used:
            t_used[i] = j
            p_used.add(j)
    exact = len(pred) == len(truth)
    for p in pred:
        report.kinds[p.type.value].predicted += 1
    for i, t in enumerate(truth):
        s = report.kinds[t.type.value]
        s.truth += 1
        p = pred[t_used[i]] if i in t_used else None
        if p is not None and p.type is t.type:
            s.found += 1
            s.right += p.value == t.value
            if t.colour:
                s.colour_known += 1
                s.colour_right += p.colour == t.colour
        if p is None or (p.type, p.value) != (t.type, t.value):
            exact = False
            report.confusion[(_label(t), _label(p))] += 1
    report.images += 1
    report.exact += exact


def evaluate(truth_path: Path, reader: Callable, limit: int | None = None, on_error=None) -> Report:
    report = Report()
    for n, (img_path, truth, img) in enumerate(load_truth(truth_path)):
        if limit is not None and n >= limit:
            break
        img = img if img is not None else cv2.imread(str(img_path))
        if img is None:
            report.failed += 1
            if on_error:
                on_error(f"cannot read {img_path}")
            continue
        score_image(report, truth, reader(img))
    return report

