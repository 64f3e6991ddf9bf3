"""The dice memory: teach a few photos per face of a set's dice, read other rolls.

On real photos (`bench_teach_real`):

For each labelled real set (a folder with reads.jsonl/truth.jsonl, or a YOLO folder of d6-pip
photos) whose dice carry values, `per_face` photos of each face are taught (chosen at random,
seeded) and photos not taught are read before and after teaching; the share of dice read right is
reported. Where photos are frames of video runs (a `sequence` per photo, as lurig-d20-values has),
the taught photos of a face come from one run and only the runs nothing was taught from are read:
neighbouring frames of a taught one are nearly the same picture and would flatter the memory
("other runs"). Where photos show several dice (a table of mixed dice), each photo teaches many faces at
once: photos are taught in a random order while one shows a face taught fewer than `per_face` times, up to half of
them, and the others are read ("other photos of the table"; the issue's ten mixed dice taught from a few dozen
photos). Elsewhere a face with too few photos to leave one to read is taught nothing and still scored ("other
photos"). The folders `dicecam synth --one-die` writes (one die rolled on its own table, a
folder a die) are such sets: each die is taught `per_face` rolls of each face and read in its other rolls, the
issue's own measure, which the shared real sets cannot give (lurig-d20's runs are one face each, of several dice).

Those runs come from several cameras, and one memory learns them all; a table has one camera. So where runs
are named `<camera>-<value>` (lurig-d20-values: four cameras), each camera is also a table of its own ("one
camera"): 3 photos of each of `runs` of its runs are taught into a memory of its own, and its other runs are
read before and after; the figures are pooled over the cameras. Its faces read are not the faces taught: what
carries is what the memory learns of the camera (`DiceMemory.taught_looks`) and of the dice. "watching" is the live
pipeline's way, with nothing taught: the same 2 runs are read first with no labels (`Reader.watching`, whose sure
reads teach it the camera: vision/camera.py), then the camera's other runs.

On renders (`bench_teach_renders`): the real sets cannot say which physical die a photo shows, but the
issue's measure is one die taught and then read in its other rolls. So each die is rendered rolling on
its own table (`datasets.scene.one_die_rolls`: its look, camera, light and surface fixed, a new pose each
roll), the first `per_face` rolls showing each face are taught, all into one memory (a table of mixed
dice), and every other roll is read before and after. Each die also has a table of its own (its memory taught
only its own rolls, "after_own_table"): a table has one camera, and what the memory learns of it
(`DiceMemory.taught_looks`) holds for that camera alone. And each die is watched as the live pipeline would, with
nothing taught ("watching"): its taught rolls read first with no labels, then its other rolls (`Reader.watching`,
vision/camera.py). Figures are reported, never asserted.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

from dicecam.mechanics.dice import FACES, DieType
from dicecam.vision.crops import KINDS
from dicecam.vision.evaluate import TruthDie, TruthImage, evaluate, load_truth, matching_detection, wrong_up_to
from dicecam.vision.memory import DiceMemory, TeachError
from dicecam.vision.read import Reader
from dicecam.vision.teach import check_can_learn, examples_of


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
    if any(len(item.dice) > 1 for item in items):
        # A table of several dice: each photo shows many faces at once, so photos are taught in a random order
        # while one shows a face taught fewer than per_face times, up to half the photos; the others are read.
        order = list(range(len(items)))
        rng.shuffle(order)
        seen: Counter = Counter()
        for n in order:
            faces = [(d.kind.value, d.value) for d in items[n].dice]
            if len(taught) < len(items) // 2 and any(seen[f] < per_face for f in faces):
                taught.add(n)
                seen.update(faces)
        return taught, set(range(len(items))) - taught, "other photos of the table"
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
    scored = {"before": evaluate(folder, reader, keep=keep)}
    memory = DiceMemory(reader.model_id, reader.crop_size)
    t0 = time.perf_counter()
    _taught_into(reader, memory, [items[n] for n in sorted(taught)])
    row["teach_s"] = round(time.perf_counter() - t0, 2)
    # The target is per 100 photos; photos of many dice take longer than the teach bench's one-die renders.
    row["teach_s_per_100_photos"] = round(row["teach_s"] * 100 / len(taught), 2)
    row["examples"] = len(memory)
    reader.use_memory(memory)
    scored["after"] = evaluate(folder, reader, keep=keep)
    reader.use_memory(None)
    before, after = (scored[w].to_json() for w in ("before", "after"))
    row.update(read_photos=before["images"], before=before["dice_read_right"], after=after["dice_read_right"],
               sure_wrong_before=before["sure_wrong"], sure_wrong_after=after["sure_wrong"])
    for when, got in scored.items():  # the counts, so that sets can be pooled (`_pooled`)
        row.update({f"n_{what}_{when}": got.total(what) for what in COUNTS})
    return row


COUNTS = ("right", "valued", "sure", "sure_wrong")  # EvalResult totals a teach-real row carries as n_<total>_<when>


def _pooled(rows: list[dict]) -> dict:
    """One row over sets read with one protocol (one-die folders: a table of all their dice): their dice pooled,
    not their shares averaged. Rows that read nothing are passed over."""
    done = [r for r in rows if "n_right_before" in r]
    row = {"bench": "teach-real", "set": "all", "sets": len(done), "protocol": done[0]["protocol"],
           "taught_photos": sum(r["taught_photos"] for r in done),
           "read_dice": sum(r["n_valued_before"] for r in done)}
    for when in ("before", "after"):
        right, valued, sure, wrong = (sum(r[f"n_{what}_{when}"] for r in done) for what in COUNTS)
        row[when] = round(right / valued, 4) if valued else None
        row[f"sure_{when}"] = sure
        row[f"sure_wrong_{when}_dice"] = wrong
        row[f"sure_wrong_{when}"] = round(wrong / sure, 4) if sure else None
        row[f"sure_wrong_{when}_up_to"] = wrong_up_to(wrong, sure)
    return row


def _camera(item) -> str | None:
    """The camera of a photo whose run is named `<camera>-<value>` (None where runs are not named so)."""
    run = item.meta.get("sequence")
    return re.sub(r"-\d+$", "", run) if isinstance(run, str) and re.search(r"-\d+$", run) else None


def _learn(memory: DiceMemory, examples) -> None:
    """Teach `memory` the examples (`teach.examples_of`) with all they carry."""
    for e in examples:
        memory.teach(e.crop, e.feature, e.kind, e.value, colour=e.colour, die=e.die, source="bench",
                     numerals=e.numerals, network=e.network, looks=e.looks)


def _taught_into(reader, memory: DiceMemory, items: list) -> int:
    """Teach `items` into `memory`; how many examples it learnt."""
    before = len(memory)
    for item in items:
        try:
            examples = examples_of(reader, item, str(item.path), None)
        except TeachError:
            continue
        _learn(memory, examples)
    return len(memory) - before


def bench_teach_cameras(reader, folder: Path, per_face: int = 3, runs: int = 2, seed: int = 0) -> dict | None:
    """The "one camera" protocol (module docstring); None for a set whose runs name no cameras."""
    items = [i for i in load_truth(folder) if i.dice and all(d.value is not None for d in i.dice)]
    cameras = sorted({c for c in map(_camera, items) if c})
    if not cameras or any(_camera(i) is None for i in items):
        return None
    rng = random.Random(seed)
    totals = {when: [0, 0, 0, 0] for when in ("before", "after", "watching")}  # right, valued, sure wrong, sure
    taught_photos = examples = 0
    for camera in cameras:
        mine = [i for i in items if _camera(i) == camera]
        frames = defaultdict(list)
        for i in mine:
            frames[i.meta["sequence"]].append(i)
        if len(frames) <= runs:
            continue
        chosen = set(rng.sample(sorted(frames), runs))
        taught = [i for run in sorted(chosen) for i in rng.sample(frames[run], min(per_face, len(frames[run])))]
        taught_runs = [i for run in sorted(chosen) for i in frames[run]]
        paths = {str(i.path) for i in mine if i.meta["sequence"] not in chosen}
        keep = lambda item: str(item.path) in paths  # noqa: E731
        memory = DiceMemory(reader.model_id, reader.crop_size)
        examples += _taught_into(reader, memory, taught)
        taught_photos += len(taught)
        reader.use_memory(None)
        watching = reader.watching()
        for i in taught_runs:
            watching(cv2.imread(str(i.path)))  # unlabelled: only the reader's own sure reads teach it
        for when, used, read in (("before", None, reader), ("after", memory, reader), ("watching", None, watching)):
            reader.use_memory(used)
            got = evaluate(folder, read, keep=keep)
            totals[when] = [t + got.total(what) for t, what in zip(totals[when], ("right", "valued", "sure_wrong", "sure"))]
    reader.use_memory(None)
    row = {"bench": "teach-real", "set": folder.name, "per_face": per_face, "protocol": "one camera",
           "cameras": len(cameras), "runs_taught_per_camera": runs, "taught_photos": taught_photos, "examples": examples,
           "read_dice": totals["before"][1]}
    for when, (right, dice, wrong, sure) in totals.items():
        row[when] = round(right / dice, 4) if dice else None
        row[f"sure_wrong_{when}"] = round(wrong / sure, 4) if sure else None
        row[f"sure_wrong_{when}_dice"] = wrong
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
    rows = []
    for f in folders:
        rows.append(bench_teach_set(reader, f, per_face))
        per_camera = bench_teach_cameras(reader, f, per_face)
        if per_camera is not None:
            rows.append(per_camera)
    read = [r for r in rows if "n_right_before" in r]
    if len(read) > 1 and len({r["protocol"] for r in read}) == 1:  # sets read alike: one table of all their dice
        rows.append(_pooled(read))
    return rows


RENDERED_KINDS = ("d4", "d6", "d8", "d10", "d00", "d12", "d20")


def _read_right(reader, img, truth: TruthDie) -> tuple[bool, bool]:
    """(read right, read without a doubt flag) of the one die in `img`; a die not found is wrong and unsure."""
    found = reader.read(img)
    j = matching_detection(truth.box, found.xyxy, found.confidence)
    if j is None:
        return False, False
    right = KINDS[int(found.kind[j])] == truth.kind.value and int(found.value[j]) == truth.value
    return bool(right), not (bool(found.uncertain[j]) or bool(found.cocked[j]))


def _rolls(gl, kinds, dice_per_kind: int, rolls_per_face: int, per_face: int, seed: int):
    """(kind, the die's name, image, truth, taught) of every roll of every die, the same each time it is
    called: the first `per_face` rolls showing a face are the taught ones."""
    from dicecam.datasets.scene import one_die_rolls

    for k, kind in enumerate(kinds):
        for d in range(dice_per_kind):
            shown: dict[int, int] = defaultdict(int)
            count = len(FACES[DieType(kind)]) * rolls_per_face
            for img, read in one_die_rolls(seed + 1000 * k + d, kind, count, renderer=gl):
                if read.dice:  # else rolled out of view
                    truth = TruthDie.of(read.dice[0])
                    shown[truth.value] += 1
                    yield kind, f"{kind} no. {d + 1}", img, truth, shown[truth.value] <= per_face


def bench_teach_renders(quick: bool = False, *, dice_per_kind: int | None = None, rolls_per_face: int | None = None,
                        per_face: int = 3, kinds: tuple[str, ...] = RENDERED_KINDS, seed: int = 0,
                        reader=None) -> list[dict]:
    """Rows per kind and for all: rolls read right before and after teaching (into the one memory of all the dice,
    and into each die's own), and of the sure ones, wrong. The rolls are rendered twice (the same pictures) rather
    than kept: a thousand frames is a gigabyte."""
    from dicecam.datasets.render import Renderer

    dice_per_kind = dice_per_kind or (1 if quick else 2)
    rolls_per_face = rolls_per_face or (6 if quick else 8)
    reader = reader or Reader.load()
    check_can_learn(reader)
    memory = DiceMemory(reader.model_id, reader.crop_size)
    own: dict[str, DiceMemory] = defaultdict(lambda: DiceMemory(reader.model_id, reader.crop_size))
    watching = defaultdict(reader.watching)  # each die's camera, learnt from its own reads alone
    kept, scored, teach_s = reader.memory, {"before": [], "after": [], "after_own_table": [], "watching": []}, 0.0
    read_kinds, taught_kinds = [], []
    with Renderer() as gl:
        reader.use_memory(None)
        rolls = _rolls(gl, kinds, dice_per_kind, rolls_per_face, per_face, seed)
        for n, (kind, name, img, truth, taught) in enumerate(rolls):
            if not taught:
                scored["before"].append(_read_right(reader, img, truth))
                read_kinds.append(kind)
                continue
            taught_kinds.append(kind)
            watching[name].read(img)
            t0 = time.perf_counter()
            examples = examples_of(reader, TruthImage(Path(f"roll-{n}"), [truth], image=img), f"roll-{n}", name)
            _learn(memory, examples)
            teach_s += time.perf_counter() - t0
            _learn(own[name], examples)
        for _, name, img, truth, taught in _rolls(gl, kinds, dice_per_kind, rolls_per_face, per_face, seed):
            if not taught:
                for when, used, read in (("after", memory, reader), ("after_own_table", own[name], reader),
                                         ("watching", None, watching[name])):
                    reader.use_memory(used)
                    scored[when].append(_read_right(read, img, truth))
    reader.use_memory(kept)
    read_kinds, taught_kinds = np.array(read_kinds), np.array(taught_kinds)
    rows = []
    for kind in (*kinds, "all"):
        m = np.ones(len(read_kinds), bool) if kind == "all" else read_kinds == kind
        row = {"bench": "teach-renders", "kind": kind, "dice": dice_per_kind * (len(kinds) if kind == "all" else 1),
               "taught_rolls": int(len(taught_kinds) if kind == "all" else (taught_kinds == kind).sum()),
               "read_rolls": int(m.sum())}
        for when, got in scored.items():
            right, sure = (np.array([g[i] for g in got], bool)[m] for i in (0, 1))
            row[when] = round(float(right.mean()), 4) if m.any() else None
            row[f"sure_wrong_{when}"] = round(float((sure & ~right).sum() / sure.sum()), 4) if sure.any() else None
        if kind == "all":
            row.update(examples=len(memory), teach_s=round(teach_s, 2))
        rows.append(row)
    return rows
