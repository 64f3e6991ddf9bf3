"""Teaching a table's dice memory from photos, and opening the memory a reader reads with.

`dicecam teach`, `read`, `watch`, `eval` and `serve` all find the memory the same way
(`memory_dir`): the data folder's `memory/` by default, another folder with `--memory DIR`,
none with `--memory none`. `attach` opens it for a reader (re-embedding it from its crops when
it was taught with other weights); `teach_truth` turns a labelled read file into examples,
refusing each bad one with a reason.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from dicecam.mechanics.errors import DicecamError

from .evaluate import TruthDie, TruthImage, load_truth, truth_line, truth_lines
from .memory import MEMORY_FILE, DiceMemory, TeachError

MEMORY_SUBDIR = "memory"
# A second detection this sure, and this close to the surest, means the photo holds several dice.
SECOND_DIE_SCORE = 0.5
SECOND_DIE_RATIO = 0.75


def default_data_dir() -> Path:
    """The data folder every command uses by default (the server's settings take it from here:
    the reader's commands cannot import the server, which sits above them)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dicecam"


def memory_dir(spec: str | None, data_dir: Path | None = None) -> Path | None:
    """Where the memory lives: `spec` as given on the command line, else the data folder's."""
    if spec is None:
        return Path(data_dir or default_data_dir()) / MEMORY_SUBDIR
    if spec.strip().lower() == "none":
        return None
    return Path(spec).expanduser()


def check_can_learn(reader) -> None:
    """Raise a DicecamError when the reader's weights give no features (older weights)."""
    if not hasattr(reader, "embed"):
        raise DicecamError("this reader cannot learn dice (it gives no features)")
    reader.embed(np.zeros((1, reader.crop_size, reader.crop_size, 3), np.uint8))


def open_memory(reader, folder: Path) -> DiceMemory:
    """The memory in `folder` for this reader; one taught with other weights is re-embedded from
    its crops and saved so (its crops stay, so nothing is lost)."""
    check_can_learn(reader)
    memory = DiceMemory.open(Path(folder) / MEMORY_FILE, reader.crop_size, reader.model_id, embed=reader.embed)
    if memory.path is not None and memory.path.is_file() and len(memory) and _stale(memory.path, reader.model_id):
        memory.save()
    return memory


def _stale(path: Path, model_id: str) -> bool:
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(bytes(z["meta"]).decode()).get("model_id") != model_id
    except Exception:  # noqa: BLE001 - an unreadable file was refused by open already
        return False


def attach(reader, spec: str | None, data_dir: Path | None, warn: Callable[[str], None]) -> DiceMemory | None:
    """Give the reader its memory. An explicit `--memory DIR` that cannot be used is an error; the
    default memory is skipped with a warning (reading still works with the general reader)."""
    folder = memory_dir(spec, data_dir)
    if folder is None:
        return None
    try:
        memory = open_memory(reader, folder)
    except DicecamError as e:
        if spec is not None:
            raise DicecamError(f"cannot use the dice memory in {folder}: {e}") from None
        if (folder / MEMORY_FILE).is_file():
            warn(f"reading without the dice memory in {folder}: {e}")
        return None
    reader.use_memory(memory)
    return memory


@dataclass
class Example:
    """A die to teach: what the memory keeps of it (crop, features, the recogniser's face scores, the face
    network's face probabilities), what it is, and where it came from (for messages)."""

    crop: np.ndarray
    feature: np.ndarray
    numerals: np.ndarray | None
    kind: str
    value: int
    colour: str | None
    die: str | None
    where: str
    network: np.ndarray | None = None
    looks: np.ndarray | None = None  # (G, F) the recogniser's face scores per look


@dataclass
class TeachReport:
    photos: int = 0
    learnt: int = 0
    flagged: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def examples(self) -> int:
        return self.learnt + len(self.flagged) + len(self.refused)


def _single_box(reader, img: np.ndarray) -> np.ndarray:
    dets = reader.detect(img)
    if not len(dets):
        raise TeachError("no die found")
    order = np.argsort(-dets.confidence)
    if len(order) > 1:
        first, second = dets.confidence[order[0]], dets.confidence[order[1]]
        if second >= SECOND_DIE_SCORE and second >= SECOND_DIE_RATIO * first:
            raise TeachError(f"{len(dets)} dice found where one was meant")
    return dets.xyxy[order[0]]


def examples_of(reader, item: TruthImage, where: str, die: str | None) -> list[Example]:
    """The dice of one labelled photo, each with its crop; a TeachError says why none can be used."""
    img = item.image if item.image is not None else (cv2.imread(str(item.path)) if item.path.is_file() else None)
    if img is None:
        why = "no such file" if not item.path.exists() else "not an image OpenCV can decode"
        raise TeachError(f"cannot read {item.path.name}: {why}")
    if not item.dice:
        raise TeachError("the line names no die")
    unboxed = [d for d in item.dice if d.box is None]
    if unboxed and len(item.dice) > 1:
        raise TeachError("several dice where one was meant: give each die its box")
    boxes: list[tuple[TruthDie, np.ndarray]] = []
    if unboxed:
        boxes.append((item.dice[0], _single_box(reader, img)))
    else:
        boxes = [(d, np.asarray(d.box, np.float32)) for d in item.dice]
    name = die or (item.meta.get("die") if isinstance(item.meta.get("die"), str) else None)
    for d, _ in boxes:
        if d.value is None:
            raise TeachError(f"the {d.kind.value} has no value (a kind-only label cannot teach a face)")
    seen = reader.learnable(img, np.stack([box for _, box in boxes]), [d.kind.value for d, _ in boxes])
    return [Example(seen.crops[i], seen.features[i], seen.scores(i), d.kind.value, int(d.value), d.colour, name, where,
                    seen.face_p(i), seen.look_scores(i)) for i, (d, _) in enumerate(boxes)]


def _items(truth: Path):
    """(where, TruthImage or why the line cannot be used) per photo: a bad line is refused by
    itself, the others still teach."""
    path = Path(truth)
    if path.is_dir():
        for name in ("reads.jsonl", "truth.jsonl"):
            if (path / name).is_file():
                path = path / name
                break
    if path.is_file():
        for where, line in truth_lines(path):
            try:
                yield where, truth_line(line, path.parent, where)
            except DicecamError as e:
                yield where, str(e).removeprefix(f"{where}: ")
        return
    for item in load_truth(path):  # a YOLO folder (or a missing path: FileNotFoundError)
        yield str(item.path), item


def teach_truth(reader, memory: DiceMemory, truth: Path, *, die: str | None = None, force: bool = False,
                on_problem: Callable[[str], None] = lambda m: None) -> TeachReport:
    """Teach every labelled die of a read file."""
    report = TeachReport()

    def refuse(where: str, why: str) -> None:
        report.refused.append(f"{where}: {why}")
        on_problem(f"{where}: refused: {why}")

    examples: list[Example] = []
    for where, item in _items(truth):
        report.photos += 1
        if isinstance(item, str):
            refuse(where, item)
            continue
        try:
            examples += examples_of(reader, item, where, die)
        except TeachError as e:
            refuse(where, str(e))
    for e in examples:
        try:
            got = memory.teach(e.crop, e.feature, e.kind, e.value, colour=e.colour, die=e.die, source="teach",
                               force=force, numerals=e.numerals, network=e.network, looks=e.looks)
        except TeachError as err:
            refuse(e.where, str(err))
            continue
        if got.learnt:
            report.learnt += 1
        else:
            report.flagged.append(f"{e.where}: {got.reason}")
            on_problem(f"{e.where}: not learnt: {got.reason} (--force replaces it)")
    return report
