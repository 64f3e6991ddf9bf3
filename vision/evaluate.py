"""`dicecam eval`: score the reader against labelled images.

Truth is either a JSON Lines file of reads (the shared read format, images relative to the
file or its `images/` folder), a folder holding one, a folder of such folders (renders made in
chunks), or a YOLO folder of d6-pip photos (class k = a die showing k+1 pips, as the real sets in
../shared/datasets/real are labelled). Predictions match truth one to one by box IoU. The real
sets are scored as they come: a line marked `"single": true` whose die has no box holds exactly
one die, matched to the surest reading (the rest count as extra), and a die given without a value
(a set labelled by kind only) scores its kind, not its value.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Callable, Iterator, Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading, DieType, FACES
from dicecam.mechanics.errors import DicecamError

from .boxes import iou
from .crops import KINDS
from .labels import yolo_boxes, yolo_pairs

MATCH_IOU = 0.5
# Real sets whose parts the training recipe never sees: what `dicecam eval --held-out` scores.
# lurig-d20-values is video: neighbouring frames are near-identical, so whole runs are held out.
HELD_OUT: dict[str, dict[str, tuple[str, ...]]] = {
    "lurig-d20-values": {"sequence": ("d20_color-13", "d20_color-7", "d20_off-angle-5",
                                      "d20_top-10", "d20_top-20", "d20_wood-12", "d20_wood-18", "d20_wood-3")},
    "lurig-types": {"run": ("d4_angle_color", "d6_off-angle", "d8_color", "d10_top", "d12_top", "d20_off-angle-val",
                            "larger")},
}
# Sets that label a shared set's photos by value, naming its images from a folder beside it: lurig-types' d4s, its
# top-down d8, d10 and d12 runs, its angled d8 and d12 runs and one of its d10 runs, its numbered d6s and its
# off-angle d20 (whose up face, the 20, is a picture), labelled by eye (models/MODEL_CARD.md). Each is held out as the
# set whose photos it names holds them out.
LABELLED_BESIDE: dict[str, tuple[str, ...]] = {
    "lurig-types": ("lurig-d4-values", "lurig-top-values", "lurig-d8-values", "lurig-d10-values", "lurig-d12-values",
                    "lurig-d6-values", "lurig-d20-logo-values")}
HELD_OUT.update({labels: HELD_OUT[named] for named, sets in LABELLED_BESIDE.items() for labels in sets})
# The d6-pip sets in YOLO folders, by the folder a photo lies in: nell-byler's published test split is held out, and
# none of Rune55, a set to train on; the recipe leaves out what this names and learns the rest (models/data.select_real).
# A set named nowhere here (burksbuilds-faces) is never trained on: all of it is held out.
HELD_OUT.update({"nell-byler-d6-pips": {"folder": ("test",)}, "rune55-d6-pips": {"folder": ()}})


@dataclass(frozen=True)
class TruthDie:
    """One labelled die; value, box or colour may be unknown in a real set."""

    kind: DieType
    value: int | None = None
    box: tuple[float, float, float, float] | None = None
    colour: str | None = None

    @classmethod
    def of(cls, d: DieReading) -> "TruthDie":
        return cls(d.type, d.value, d.box, d.colour)


@dataclass
class TruthImage:
    path: Path
    dice: list[TruthDie]
    single: bool = False
    meta: dict = field(default_factory=dict)
    image: "np.ndarray | None" = None  # already decoded, when the source had to read it


Truth = Iterator[TruthImage]


def _truth_die(raw: dict, where: str) -> TruthDie:
    if not isinstance(raw, dict) or "type" not in raw:
        raise DicecamError(f"{where}: each die needs a type")
    try:
        kind = DieType(str(raw["type"]).lower())
    except ValueError:
        raise DicecamError(f"{where}: unknown die type {raw['type']!r}") from None
    value = raw.get("value")
    if value is not None and (not isinstance(value, int) or value not in FACES[kind]):
        raise DicecamError(f"{where}: a {kind.value} has no face {value!r}")
    box = raw.get("box")
    if box is not None:
        if not (isinstance(box, list) and len(box) == 4 and all(isinstance(v, (int, float)) for v in box)):
            raise DicecamError(f"{where}: box must be [x1, y1, x2, y2]")
        box = tuple(float(v) for v in box)
    return TruthDie(kind, value, box, raw.get("colour"))


def _resolve_image(folder: Path, name: str) -> Path:
    direct = folder / name
    return direct if direct.exists() or not (folder / "images" / name).exists() else folder / "images" / name


def truth_line(line: str, folder: Path, where: str) -> TruthImage:
    """One line of a read file; a DicecamError says what is wrong with it."""
    try:
        raw = json.loads(line)
    except ValueError as e:
        raise DicecamError(f"{where}: not a JSON line ({e.msg} at character {e.pos + 1})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("image"), str) or not isinstance(raw.get("dice"), list):
        raise DicecamError(f"{where}: a read line needs \"image\" (a name) and \"dice\" (a list)")
    dice = [_truth_die(d, where) for d in raw["dice"]]
    single = bool(raw.get("single")) and len(dice) == 1 and dice[0].box is None
    meta = {k: v for k, v in raw.items() if isinstance(v, (str, int, float))}
    return TruthImage(_resolve_image(folder, raw["image"]), dice, single, meta)


def truth_lines(path: Path) -> Iterator[tuple[str, str]]:
    """(where, line) for each non-blank line of a read file."""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            yield f"{path}:{n}", line


def truth_from_jsonl(path: Path) -> Truth:
    for where, line in truth_lines(path):
        yield truth_line(line, path.parent, where)


def truth_from_yolo(folder: Path) -> Truth:
    for img_path, label in yolo_pairs(folder):
        img = cv2.imread(str(img_path))
        if img is None:
            yield TruthImage(img_path, [])
            continue
        h, w = img.shape[:2]
        dice = [TruthDie(DieType.d6, k + 1, box) for k, box in yolo_boxes(label, w, h) if 0 <= k < 6]
        yield TruthImage(img_path, dice, image=img)


READ_FILES = ("reads.jsonl", "truth.jsonl")


def _read_file(folder: Path) -> Path | None:
    return next((folder / name for name in READ_FILES if (folder / name).is_file()), None)


def read_folders(path: Path) -> list[Path]:
    """The read-format folders at `path` (a folder holding reads.jsonl or truth.jsonl): the folder itself where it
    is one, else its subfolders that are, in name order (renders made in chunks, a seed a folder); [] for neither."""
    path = Path(path)
    if not path.is_dir():
        return []
    if _read_file(path) is not None:
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and _read_file(p) is not None)


def load_truth(path: Path) -> Truth:
    """The labelled images of a read file, a read-format folder, a folder of them, or a YOLO folder."""
    path = Path(path)
    if path.is_file():
        return truth_from_jsonl(path)
    if path.is_dir():
        folders = read_folders(path)
        if folders:
            return chain.from_iterable(truth_from_jsonl(_read_file(f)) for f in folders)
        return truth_from_yolo(path)
    raise FileNotFoundError(2, "No such file or directory", str(path))


def run_of(meta: dict) -> str:
    """lurig-types' video run of an image: its file-name prefix (`d6_wood`, `d4`), `larger` for
    the author's larger photos, `d20_off-angle-val` for the validation slice of its one d20 run."""
    if meta.get("width") != 480:
        return "larger"
    prefix = re.sub(r"\d+$", "", Path(str(meta.get("image", ""))).stem).rstrip("_")
    prefix = "d4" if prefix == "d" else prefix
    if prefix == "d20_off-angle" and meta.get("split") == "val":
        return "d20_off-angle-val"
    return prefix


def shared_set(folder: Path) -> str:
    """Which shared real set `folder` is, or lies in (`nell-byler-d6-pips/images/train` is nell-byler's): the nearest
    of it and its parents that HELD_OUT names; else its own name."""
    folder = Path(folder).resolve()
    return next((p.name for p in (folder, *folder.parents) if p.name in HELD_OUT), folder.name)


def held_out_in(truth: Path) -> Callable[[TruthImage], bool]:
    """Whether each image of `truth` (what `dicecam eval --held-out` scores) is held out: by the rules of the shared set
    its photo lies in, else of the set `truth` is or lies in; so a folder of several sets holds each out by its own."""
    root = shared_set(truth if Path(truth).is_dir() else Path(truth).parent)

    def keep(image: TruthImage) -> bool:
        own = shared_set(image.path.parent)
        return held_out(own if own in HELD_OUT else root, image)
    return keep


def held_out(set_name: str, image: TruthImage) -> bool:
    """Whether the training recipe leaves this image of a shared real set out."""
    rule = HELD_OUT.get(set_name)
    if rule is None:
        return True
    if "folder" in rule:
        return image.path.parent.name in rule["folder"]
    if "sequence" in rule:
        return image.meta.get("sequence") in rule["sequence"]
    return run_of(image.meta) in rule["run"]


@dataclass
class KindScore:
    truth: int = 0
    valued: int = 0  # truth dice whose value is known
    predicted: int = 0
    found: int = 0  # truth dice with a matching reading of the right kind
    found_valued: int = 0
    right: int = 0  # ... and the right value
    colour_known: int = 0
    colour_right: int = 0
    sure: int = 0  # truth dice matched by a reading without a doubt flag (neither uncertain nor cocked)
    sure_wrong: int = 0  # ... whose kind or known value is wrong: the worst answer a reader gives


@dataclass(frozen=True)
class Misread:
    """A labelled die read wrong: its kind, or its value where the label gives one, or no reading found it."""

    image: str
    truth: str  # "d20 7"; the kind alone where the label gives no value
    read: str  # "d20 1"; "missed" where no reading matched the die
    sure: bool  # read without a doubt flag: the worst answer a reader gives
    box: tuple[float, float, float, float] | None  # the reading's box in the image, else the label's
    doubt: str | None = None  # the reader's own reason to doubt it, where it gave one

    def to_json(self) -> dict:
        return {"image": self.image, "truth": self.truth, "read": self.read, "sure": self.sure,
                "box": None if self.box is None else [round(float(v), 1) for v in self.box], "doubt": self.doubt}


@dataclass
class Report:
    images: int = 0
    exact: int = 0
    failed: int = 0
    kinds: dict[str, KindScore] = field(default_factory=lambda: {k: KindScore() for k in KINDS})
    confusion: Counter = field(default_factory=Counter)
    boxed: int = 0  # labelled dice matched to a reading, whatever its kind
    extra: int = 0  # readings that match no labelled die (on a photo of one die, all but the surest)
    fit: list[float] = field(default_factory=list)  # box overlap of each matched die whose label has a box
    misreads: list[Misread] = field(default_factory=list)  # every die read wrong, in the order read (not in to_json)

    def total(self, what: str) -> int:
        """A KindScore count summed over the kinds ("right", "valued", "sure", "sure_wrong"...)."""
        return sum(getattr(s, what) for s in self.kinds.values())

    def to_json(self) -> dict:
        per_kind = {}
        for k, s in self.kinds.items():
            if not s.truth and not s.predicted:
                continue
            per_kind[k] = {
                "truth": s.truth, "predicted": s.predicted,
                "recall": _ratio(s.found, s.truth), "precision": _ratio(s.found, s.predicted),
                "value_accuracy": _ratio(s.right, s.found_valued), "read_right": _ratio(s.right, s.valued),
                "colour_accuracy": _ratio(s.colour_right, s.colour_known),
                "sure": s.sure, "sure_wrong": _ratio(s.sure_wrong, s.sure),
                "sure_wrong_up_to": wrong_up_to(s.sure_wrong, s.sure),
            }
        total = self.total
        return {
            "images": self.images, "unreadable": self.failed, "images_exact": _ratio(self.exact, self.images),
            "dice": total("truth"), "dice_read_right": _ratio(total("right"), total("valued")),
            "kind_right": _ratio(total("found"), total("truth")),
            "colour_accuracy": _ratio(total("colour_right"), total("colour_known")),
            # Of the dice read without a doubt flag, the share that is wrong (kind, or value where known).
            "read_sure": _ratio(total("sure"), total("truth")), "sure_wrong": _ratio(total("sure_wrong"), total("sure")),
            # ...and how large that share may well be on more photos like these: "0 of 18" is no promise.
            "sure_dice": total("sure"), "sure_wrong_up_to": wrong_up_to(total("sure_wrong"), total("sure")),
            # Boxes: the labelled dice some reading matches (any kind), how well the boxes fit the labelled
            # ones, and readings of no labelled die (a set that labels every die: things read as dice).
            "dice_boxed": _ratio(self.boxed, total("truth")),
            "box_iou_median": round(float(np.median(self.fit)), 4) if self.fit else None,
            "extra_readings": self.extra,
            "per_kind": per_kind,
            "confusion": [{"truth": t, "read": p, "count": c} for (t, p), c in self.confusion.most_common(20)],
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


# How many standard errors above the measured share `wrong_up_to` reaches: one-sided, about 90 %.
UP_TO_Z = 1.28


def wrong_up_to(wrong: int, sure: int, z: float = UP_TO_Z) -> float | None:
    """The Wilson score interval's upper end for a share measured as `wrong` of `sure`: what the share of
    sure dice that are wrong may well be on more photos like these (None with no sure dice)."""
    if not sure:
        return None
    p, z2 = wrong / sure, z * z
    spread = z * np.sqrt(p * (1 - p) / sure + z2 / (4 * sure * sure))
    return round(float((p + z2 / (2 * sure) + spread) / (1 + z2 / sure)), 4)


def _label(d: TruthDie | DieReading | None) -> str:
    if d is None:
        return "missed"
    kind = d.kind.value if isinstance(d, TruthDie) else d.type.value
    return kind if d.value is None else f"{kind} {d.value}"


def matching_detection(box, xyxy: np.ndarray, confidence: np.ndarray) -> int | None:
    """Which detection a labelled die is: the one its box overlaps by MATCH_IOU or more, or the surest
    when the label has no box (a photo of a single die); None when none matches."""
    if not len(xyxy):
        return None
    if box is None:
        return int(np.argmax(confidence))
    overlaps = [iou(box, b) for b in xyxy]
    j = int(np.argmax(overlaps))
    return j if overlaps[j] >= MATCH_IOU else None


def detected_photos(reader, items):
    """Per photo the reader finds dice in: (its truth, image, detections, [(labelled die, its detection)]),
    the dice no detection matches left out. What every fit on labelled photos walks through."""
    for item in items:
        img = item.image if item.image is not None else cv2.imread(str(item.path))
        if img is None:
            continue
        dets = reader.detect(img)
        if not len(dets):
            continue
        pairs = [(die, matching_detection(die.box, dets.xyxy, dets.confidence)
                  if die.box is not None or item.single else None) for die in item.dice]
        yield item, img, dets, [(die, j) for die, j in pairs if j is not None]


def _match(truth: list[TruthDie], pred: list[DieReading], single: bool) -> dict[int, int]:
    """truth index -> prediction index, one to one."""
    if single:
        if not pred:
            return {}
        return {0: max(range(len(pred)), key=lambda j: pred[j].confidence or 0.0)}
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
    return t_used


def score_image(report: Report, truth: Sequence[TruthDie | DieReading], pred: list[DieReading],
                single: bool = False, image: str = "") -> None:
    """Score one image (`image`: its path, which the report's misreads name). `single`: the image holds exactly one
    die, given without a box."""
    truth = [t if isinstance(t, TruthDie) else TruthDie.of(t) for t in truth]
    t_used = _match(truth, pred, single)
    exact = len(pred) == len(truth)
    report.boxed += len(t_used)
    report.extra += len(pred) - len(t_used)
    report.fit += [iou(truth[i].box, pred[j].box) for i, j in t_used.items() if truth[i].box and pred[j].box]
    for p in pred:
        report.kinds[p.type.value].predicted += 1
    for i, t in enumerate(truth):
        s = report.kinds[t.kind.value]
        s.truth += 1
        s.valued += t.value is not None
        p = pred[t_used[i]] if i in t_used else None
        kind_right = p is not None and p.type is t.kind
        wrong = not kind_right or (t.value is not None and p.value != t.value)
        sure = p is not None and not (p.uncertain or p.cocked)
        if sure:
            s.sure += 1
            s.sure_wrong += wrong
        if kind_right:
            s.found += 1
            if t.value is not None:
                s.found_valued += 1
                s.right += p.value == t.value
            if t.colour:
                s.colour_known += 1
                s.colour_right += p.colour == t.colour
        if wrong:
            exact = False
            read = _label(p) if t.value is not None or p is None else p.type.value
            report.confusion[(_label(t), read)] += 1
            report.misreads.append(Misread(image, _label(t), read, sure, p.box if p is not None and p.box else t.box,
                                           None if p is None else p.doubt))
    report.images += 1
    report.exact += exact


def evaluate(truth_path: Path, reader: Callable, limit: int | None = None, on_error=None,
             keep: Callable[[TruthImage], bool] | None = None) -> Report:
    """Score `reader` on the labelled images at `truth_path`; `keep` picks which images count."""
    report = Report()
    n = 0
    for item in load_truth(truth_path):
        if keep is not None and not keep(item):
            continue
        if limit is not None and n >= limit:
            break
        n += 1
        img = item.image if item.image is not None else cv2.imread(str(item.path))
        if img is None:
            report.failed += 1
            if on_error:
                on_error(f"cannot read {item.path}")
            continue
        score_image(report, item.dice, reader(img), item.single, str(item.path))
    return report
