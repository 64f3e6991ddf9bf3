"""`dicecam eval --teach-per-face N`: how well a table's dice memory learns a die from a few photos.

For each physical die of a labelled set, N photos of each face are taught to a fresh memory and
every other photo of that die is read twice, by the general reader alone and with the memory.
Which photos are "one die" is the set's own grouping: a video run's prefix (`d20_wood-12` belongs
to the die `d20_wood`), else one die per kind. Teaching photos are drawn at random (seeded) from
each face's photos, so they are spread over the run like a player's own confirmations.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

from .evaluate import Report, TruthImage, load_truth, score_image
from .memory import DiceMemory
from .read import Reader


def die_of(item: TruthImage) -> str:
    """The physical die a labelled photo shows, as far as the set tells."""
    seq = item.meta.get("sequence")
    if isinstance(seq, str) and "-" in seq:
        return seq.rsplit("-", 1)[0]
    kinds = sorted({d.kind.value for d in item.dice})
    return ",".join(kinds) or "none"


def _surest_box(reader: Reader, img: np.ndarray, item: TruthImage):
    if len(item.dice) == 1 and item.dice[0].box is not None:
        return item.dice[0].box
    dets = reader.detect(img)
    return dets.xyxy[int(np.argmax(dets.confidence))] if len(dets) else None


def teach_and_score(truth: Path, reader: Reader, per_face: int = 3, seed: int = 0) -> dict:
    """Figures before and after teaching, overall and per die."""
    items = [t for t in load_truth(truth) if len(t.dice) == 1 and t.dice[0].value is not None]
    by_die: dict[str, list[TruthImage]] = defaultdict(list)
    for t in items:
        by_die[die_of(t)].append(t)
    rng = random.Random(seed)
    before, after = Report(), Report()
    per_die = {}
    for die, photos in sorted(by_die.items()):
        by_face: dict[int, list[TruthImage]] = defaultdict(list)
        for t in photos:
            by_face[t.dice[0].value].append(t)
        taught: set[int] = set()
        memory = DiceMemory(reader.model_id, reader.crop_size)
        for value, group in sorted(by_face.items()):
            if len(group) <= per_face:
                continue  # no photo of this face would be left to read
            for t in rng.sample(group, per_face):
                img = cv2.imread(str(t.path))
                box = _surest_box(reader, img, t) if img is not None else None
                if box is None:
                    continue
                crop = reader.crops(img, np.asarray(box)[None])
                memory.teach(crop[0], reader.embed(crop)[0], t.dice[0].kind.value, value, die=die, force=True)
                taught.add(id(t))
        rest = [t for t in photos if id(t) not in taught]
        b, a = Report(), Report()
        for t in rest:
            img = cv2.imread(str(t.path))
            if img is None:
                continue
            reader.use_memory(None)
            plain = reader(img)
            reader.use_memory(memory)
            with_memory = reader(img)
            for rep, pred in ((b, plain), (before, plain), (a, with_memory), (after, with_memory)):
                score_image(rep, t.dice, pred, t.single)
        reader.use_memory(None)
        per_die[die] = {"taught": len(memory), "read": b.images,
                        "before": b.to_json()["dice_read_right"], "after": a.to_json()["dice_read_right"]}
    return {"truth": str(truth), "per_face": per_face, "dice": per_die,
            "before": before.to_json()["dice_read_right"], "after": after.to_json()["dice_read_right"],
            "read": before.images}
