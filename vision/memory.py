"""A table's dice memory: confirmed examples of the table's own dice, voted by nearest neighbours.

However good the general reader gets, it has never seen *these* dice. The memory holds what the
players confirmed — a crop of the die, the face reader's feature vector for it, its kind, value,
body colour and an optional die name — and at read time a die is compared with it: the k most
similar examples vote, and the memory's answer is trusted in proportion to how many close
examples agree (`vote`). The reader blends that with its own belief (vision/read.py).

Crops are kept beside the features so a new reader can re-embed them (`reembed`): a table's
memory outlives a model upgrade. On disk it is one `.npz` file per table (atomic writes, so a
crash never leaves half a memory); export and import move that same file between tables.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from dicecam.mechanics.dice import DieType, FACES
from dicecam.mechanics.errors import DicecamError

from .crops import FACE_CLASSES, FACE_INDEX

MEMORY_FILE = "memory.npz"
FORMAT = 1
# Two examples this similar (cosine of their features) are "nearly the same die showing the same
# face": taught with different values, one of them is wrong.
CONTRADICTION_SIM = 0.97
# Neighbours that vote, and how similar a neighbour must be to count as close.
K = 7
CLOSE_SIM = 0.80
# Close agreeing examples needed before the memory's vote is fully trusted.
TRUST_AT = 3
MAX_EXAMPLES = 50_000

Embed = Callable[[np.ndarray], np.ndarray]  # (N, S, S, 3) uint8 crops -> (N, D) features


class TeachError(DicecamError):
    """A teaching example or memory file that cannot be used; the message says why."""


@dataclass(frozen=True)
class Example:
    kind: str
    value: int
    colour: str | None
    die: str | None
    source: str
    taught_at: float


@dataclass(frozen=True)
class Taught:
    """What became of one teaching example."""

    learnt: bool
    reason: str | None = None  # why not, when not learnt
    conflict_with: int | None = None  # the example it contradicts


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def die_key(kind: str, colour: str | None, die: str | None) -> str:
    """How a physical die is named in listings: its given name, else colour and kind."""
    return die or (f"{colour} {kind}" if colour else kind)


class DiceMemory:
    def __init__(self, model_id: str, crop_size: int, path: Path | None = None) -> None:
        self.model_id = model_id
        self.crop_size = crop_size
        self.path = Path(path) if path else None
        self.features = np.zeros((0, 0), np.float32)
        self.crops = np.zeros((0, crop_size, crop_size, 3), np.uint8)
        self.examples: list[Example] = []
        self._face = np.zeros(0, np.int64)
        # The live pipeline votes on its own thread while the server teaches or forgets: features,
        # crops and faces change together under this lock, so a vote never pairs mismatched rows.
        self.lock = threading.RLock()

    # --- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.examples)

    def vote(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per die: the memory's probability over FACE_CLASSES and how much to trust it (0-1).

        The K most similar examples vote, each by its similarity; only close ones (CLOSE_SIM)
        count. Trust grows with the number of close examples agreeing with the winner, so one
        stray example cannot overrule the reader."""
        n = len(features)
        probs = np.zeros((n, len(FACE_CLASSES)), np.float32)
        trust = np.zeros(n, np.float32)
        with self.lock:
            if not len(self) or not n:
                return probs, trust
            sims = _unit(features) @ self.features.T
            known = self._face
        # Only close examples vote, and a table's dice are few: pick them out with one comparison,
        # then rank just those (argpartition over all 10,000 similarities cost more than the rest).
        rows, cols = np.nonzero(sims >= CLOSE_SIM)
        faces = np.full((n, K), -1, np.int64)
        wk = np.zeros((n, K), np.float32)
        for i in np.unique(rows):
            c = cols[rows == i]
            s = sims[i, c]
            if len(c) > K:
                keep = np.argpartition(-s, K - 1)[:K]
                c, s = c[keep], s[keep]
            faces[i, :len(c)] = known[c]
            wk[i, :len(c)] = (s - CLOSE_SIM) / (1 - CLOSE_SIM) + 0.05
        close = faces >= 0
        np.add.at(probs, (np.repeat(np.arange(n), K)[close.ravel()], faces[close]), wk[close])
        total = probs.sum(1, keepdims=True)
        has = total[:, 0] > 0
        probs[has] /= total[has]
        best = probs.argmax(1)
        agreeing = (close & (faces == best[:, None])).sum(1)
        trust = np.where(has, np.minimum(1.0, agreeing / TRUST_AT) * probs[np.arange(n), best], 0.0).astype(np.float32)
        return probs, trust

    # --- teaching ----------------------------------------------------------------------------

    def teach(self, crop: np.ndarray, feature: np.ndarray, kind: str, value: int, *, colour: str | None = None,
              die: str | None = None, source: str = "teach", force: bool = False) -> Taught:
        """Learn one confirmed die. A value the kind cannot show is refused; an example nearly
        identical to one already taught with another face is flagged and not learnt (unless
        `force`: the player said the earlier one was wrong, which is then forgotten)."""
        try:
            t = DieType(str(kind).lower())
        except ValueError:
            raise TeachError(f"unknown die type {kind!r}") from None
        if value not in FACES[t]:
            lo, hi = FACES[t][0], FACES[t][-1]
            raise TeachError(f"a {t.value} has no face {value} (faces {lo}-{hi})")
        if crop.shape != (self.crop_size, self.crop_size, 3):
            raise TeachError(f"a crop must be {self.crop_size}x{self.crop_size} BGR, got {crop.shape}")
        if len(self) >= MAX_EXAMPLES:
            raise TeachError(f"the memory is full ({MAX_EXAMPLES} examples): forget a die first")
        f = _unit(feature.reshape(1, -1))
        face = FACE_INDEX[(t.value, value)]
        with self.lock:
            return self._add(crop, f, face, t.value, int(value), colour, die, source, force)

    def _add(self, crop, f, face, kind, value, colour, die, source, force) -> Taught:
        if len(self):
            if self.features.shape[1] != f.shape[1]:
                raise TeachError("this feature does not come from the reader the memory was taught with")
            sims = (self.features @ f[0])
            j = int(np.argmax(sims))
            if sims[j] >= CONTRADICTION_SIM and self._face[j] != face:
                if not force:
                    old = self.examples[j]
                    return Taught(False, f"this looks like the {old.kind} already taught as {old.value}; "
                                         f"confirm to replace that example", conflict_with=j)
                self._drop(np.arange(len(self)) == j)
        colour = colour.strip().lower() or None if colour else None
        die = die.strip() or None if die else None
        self._append(f, crop[None].astype(np.uint8), [Example(kind, value, colour, die, source, time.time())],
                     np.array([face], np.int64))
        return Taught(True)

    def _append(self, features: np.ndarray, crops: np.ndarray, examples: list[Example], faces: np.ndarray) -> None:
        """Add rows (unit features, crops, examples, face indices) together; the caller holds the lock."""
        self.features = features if not len(self) else np.concatenate([self.features, features])
        self.crops = np.concatenate([self.crops, crops])
        self.examples += examples
        self._face = np.concatenate([self._face, faces])

    def forget(self, die: str | None = None) -> int:
        """Forget one die (by its listing name) or, with no name, everything; returns how many
        examples went."""
        with self.lock:
            if die is None:
                gone = len(self)
                self._drop(np.ones(len(self), bool))
                return gone
            mask = np.array([die_key(e.kind, e.colour, e.die) == die for e in self.examples], bool)
            self._drop(mask)
            return int(mask.sum())

    def _drop(self, mask: np.ndarray) -> None:
        keep = ~mask
        self.features = self.features[keep] if len(self.features) else self.features
        self.crops = self.crops[keep]
        self._face = self._face[keep]
        self.examples = [e for e, k in zip(self.examples, keep) if k]

    def dice(self) -> list[dict]:
        """What is known, per physical die: kind, colour, faces taught (value -> examples), and
        whether every face is known."""
        by: dict[str, dict] = {}
        for e in self.examples:
            key = die_key(e.kind, e.colour, e.die)
            d = by.setdefault(key, {"die": key, "kind": e.kind, "colour": e.colour, "named": e.die is not None,
                                    "faces": {}, "examples": 0})
            d["faces"][e.value] = d["faces"].get(e.value, 0) + 1
            d["examples"] += 1
        for d in by.values():
            d["faces"] = dict(sorted(d["faces"].items()))
            d["missing"] = [v for v in FACES[DieType(d["kind"])] if v not in d["faces"]]
            d["known"] = not d["missing"]
        return sorted(by.values(), key=lambda d: d["die"])

    def reembed(self, embed: Embed, model_id: str) -> None:
        """Recompute every feature with another reader (after a model upgrade)."""
        self.features = _unit(embed(self.crops)) if len(self) else np.zeros((0, 0), np.float32)
        self.model_id = model_id

    # --- files -------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        meta = {"format": FORMAT, "model_id": self.model_id, "crop_size": self.crop_size,
                "examples": [e.__dict__ for e in self.examples]}
        buf = io.BytesIO()
        np.savez_compressed(buf, features=self.features, crops=self.crops,
                            meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
        return buf.getvalue()

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_bytes(self.to_bytes())
        os.replace(tmp, self.path)

    @classmethod
    def from_bytes(cls, data: bytes, crop_size: int, model_id: str, embed: Embed | None = None,
                   path: Path | None = None) -> "DiceMemory":
        """Read a memory file. One taught with another reader is re-embedded when `embed` is
        given (its crops are kept for that), else refused."""
        try:
            z = np.load(io.BytesIO(data), allow_pickle=False)
            meta = json.loads(bytes(z["meta"]).decode())
            features, crops = z["features"].astype(np.float32), z["crops"]
            examples = [Example(**e) for e in meta["examples"]]
        except Exception:  # noqa: BLE001 - any malformed file gets the same one-line answer
            raise TeachError("not a dicecam memory file") from None
        if meta.get("format") != FORMAT:
            raise TeachError(f"memory file format {meta.get('format')} is not supported (expected {FORMAT})")
        if meta.get("crop_size") != crop_size or crops.shape[1:] != (crop_size, crop_size, 3) \
                or len(crops) != len(examples):
            raise TeachError("the memory file's crops do not fit this reader")
        for e in examples:
            if e.kind not in {t.value for t in DieType} or e.value not in FACES[DieType(e.kind)]:
                raise TeachError(f"the memory file holds an impossible die ({e.kind} {e.value})")
        m = cls(meta["model_id"], crop_size, path)
        m.crops, m.examples = crops.astype(np.uint8), examples
        m._face = np.array([FACE_INDEX[(e.kind, e.value)] for e in examples], np.int64)
        m.features = features if len(examples) else np.zeros((0, 0), np.float32)
        if m.model_id != model_id:
            if embed is None:
                raise TeachError("the memory was taught with another reader")
            m.reembed(embed, model_id)
        return m

    @classmethod
    def open(cls, path: Path, crop_size: int, model_id: str, embed: Embed | None = None) -> "DiceMemory":
        """The memory at `path` (a new, empty one when there is none yet)."""
        path = Path(path)
        if not path.is_file():
            return cls(model_id, crop_size, path)
        return cls.from_bytes(path.read_bytes(), crop_size, model_id, embed, path)

    def merge(self, other: "DiceMemory") -> tuple[int, int]:
        """Import another memory's examples (same reader); returns (learnt, flagged). An example
        contradicting this memory is flagged and left out; one already held (same face, same
        feature) is skipped, so importing a file twice does not double it. All or nothing: a
        memory that would overflow is refused before anything changes."""
        if not len(other):
            return 0, 0
        with self.lock:
            if len(self) + len(other) > MAX_EXAMPLES:
                raise TeachError(f"the memory would hold over {MAX_EXAMPLES} examples: forget a die first")
            if len(self) and self.features.shape[1] != other.features.shape[1]:
                raise TeachError("the imported memory comes from another reader")
            # One matrix product, one concatenation: a 10,000-example import stays quick.
            take = np.ones(len(other), bool)
            flagged = 0
            if len(self):
                sims = _unit(other.features) @ self.features.T
                j = sims.argmax(1)
                best = sims[np.arange(len(other)), j]
                same = self._face[j] == other._face
                clash = (best >= CONTRADICTION_SIM) & ~same
                held = (best >= 0.999) & same
                flagged = int(clash.sum())
                take = ~clash & ~held
            if take.any():
                self._append(_unit(other.features[take]), other.crops[take],
                             [e for e, t in zip(other.examples, take) if t], other._face[take])
            return int(take.sum()), flagged


def model_fingerprint(path: Path) -> str:
    """Identifies the reader weights whose features a memory holds."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
