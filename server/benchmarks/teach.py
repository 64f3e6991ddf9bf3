"""The dice memory on real photos: teach a few photos per face of a set's dice, read other rolls.

For each labelled real set (a folder with reads.jsonl/truth.jsonl, or a YOLO folder of d6-pip
photos) whose dice carry values, `per_face` photos of each face are taught (chosen at random,
seeded) and photos not taught are read before and after teaching; the share of dice read right is
reported. Where photos are frames of video runs (a `sequence` per photo, as lurig-d20-values has),
the taught photos of a face come from one run and only the runs nothing was taught from are read:
neighbouring frames of a taught one are nearly the same picture and would flatter the memory
("other runs"). Elsewhere a face with too few photos to leave one to read is taught nothing and
still scored ("other photos"). Figures are reported, never asserted.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from pathlib import Path

from dicecam.vision.evaluate import evaluate, load_truth
from dicecam.vision.memory import DiceMemory, TeachError
from dicecam.vision.read import Reader
from dicecam.vision.teach import Example, check_can_learn, examples_of


def _faces(item) -> tuple:
    return tuple(sorted((d.kind.value, d.value) for d in item.dice))


def _to_teach(items: list, per_face: int, rng: random.Random) -> tuple[set[int], set[int], str]:
    """(photos taught, photos read, protocol) by the module's rules."""
    by_face = defaultdict(list)
    for n, item in enumerate(items):
        by_face[_faces(item)].append(n)
    taught: set[int] = set()
    if all(item.meta.get("sequence") for item in items):
        runs_taught = set()
        for group in by_face.values():
            runs = sorted({items[n].meta["sequence"] for n in group})
            run = rng.choice(runs)
            frames = [n for n in group if items[n].meta["sequence"] == run]
            taught.update(rng.sample(frames, min(per_face, len(frames))))
            runs_taught.add(run)
        read = {n for n, item in enumerate(items) if item.meta["sequence"] not in runs_taught}
        return taught, read, "other runs"
    for group in by_face.values():
        if len(group) > per_face:  # leave at least one photo of the face to read
            taught.update(rng.sample(group, per_face))
    return taught, set(range(len(items))) - taught, "other photos"


def bench_teach_set(reader, folder: Path, per_face: int = 3, seed: int = 0) -> dict:
    items = [i for i in load_truth(folder) if i.dice and all(d.value is not None for d in i.dice)]
    taught, read, protocol = _to_teach(items, per_face, random.Random(seed))
    row = {"bench": "teach-real", "set": folder.name, "per_face": per_face, "protocol": protocol,
           "photos": len(items), "taught_photos": len(taught), "faces": len({_faces(i) for i in items})}
    if not taught or not read:
        row["skipped"] = f"no face has more than {per_face} photos" if not taught else "every run was taught from"
        return row
    paths = {str(items[n].path) for n in read}
    keep = lambda item: str(item.path) in paths  # noqa: E731
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
    for e in examples:
        memory.teach(e.crop, e.feature, e.kind, e.value, colour=e.colour, source="bench", numerals=e.numerals)
    row["teach_s"] = round(time.perf_counter() - t0, 2)
    row["examples"] = len(memory)
    reader.use_memory(memory)
    after = evaluate(folder, reader, keep=keep).to_json()
    reader.use_memory(None)
    row.update(read_photos=before["images"], before=before["dice_read_right"], after=after["dice_read_right"],
               sure_wrong_before=before["sure_wrong"], sure_wrong_after=after["sure_wrong"])
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
