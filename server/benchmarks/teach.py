"""The dice memory on real photos: teach a few photos per face of a set's die, read the others.

For each labelled real set (a folder with reads.jsonl/truth.jsonl, or a YOLO folder of d6-pip
photos) whose dice carry values: `per_face` photos of each face are taught (chosen at random,
seeded), every other photo is read before and after teaching, and the share of dice read right is
reported. A face with too few photos to leave one to read is taught nothing and still scored.
Figures are reported, never asserted.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from dicecam.vision.evaluate import evaluate, load_truth
from dicecam.vision.memory import DiceMemory, TeachError
from dicecam.vision.read import Reader
from dicecam.vision.teach import Example, check_can_learn, examples_of


def _faces(item) -> tuple:
    return tuple(sorted((d.kind.value, d.value) for d in item.dice))


def bench_teach_set(reader, folder: Path, per_face: int = 3, seed: int = 0) -> dict:
    items = [i for i in load_truth(folder) if i.dice and all(d.value is not None for d in i.dice)]
    by_face = defaultdict(list)
    for n, item in enumerate(items):
        by_face[_faces(item)].append(n)
    rng = random.Random(seed)
    taught: set[int] = set()
    for group in by_face.values():
        if len(group) > per_face:  # leave at least one photo of the face to read
            taught.update(rng.sample(group, per_face))
    paths = {str(items[n].path) for n in taught}
    row = {"bench": "teach-real", "set": folder.name, "per_face": per_face, "photos": len(items),
           "taught_photos": len(taught), "faces": len(by_face)}
    if not taught:
        row["skipped"] = f"no face has more than {per_face} photos"
        return row
    keep = lambda item: str(item.path) not in paths and bool(item.dice) and all(d.value is not None for d in item.dice)  # noqa: E731
    reader.use_memory(None)
    before = evaluate(folder, reader, keep=keep).to_json()
    memory = DiceMemory(reader.model_id, reader.crop_size)
    t0 = time.perf_counter()
    examples: list[Example] = []
    for n in sorted(taught):
        try:
            examples += examples_of(reader, items[n], str(items[n].path), None)
        except TeachError:
            continue
    if examples:
        feats = reader.embed(np.stack([e.crop for e in examples]))
        for e, f in zip(examples, feats):
            memory.teach(e.crop, f, e.kind, e.value, colour=e.colour, source="bench")
    row["teach_s"] = round(time.perf_counter() - t0, 2)
    row["examples"] = len(memory)
    reader.use_memory(memory)
    after = evaluate(folder, reader, keep=keep).to_json()
    reader.use_memory(None)
    row.update(read_photos=before["images"], before=before["dice_read_right"], after=after["dice_read_right"])
    return row


def bench_teach_real(root: Path, per_face: int = 3) -> list[dict]:
    reader = Reader.load()
    try:
        check_can_learn(reader)
    except Exception as e:  # noqa: BLE001
        return [{"bench": "teach-real", "skipped": str(e)}]
    root = Path(root)
    if not root.is_dir():
        return [{"bench": "teach-real", "skipped": f"no folder {root}"}]
    folders = [root] if any((root / n).exists() for n in ("truth.jsonl", "reads.jsonl", "images")) else \
        sorted(p for p in root.iterdir() if p.is_dir())
    return [bench_teach_set(reader, f, per_face) for f in folders]
