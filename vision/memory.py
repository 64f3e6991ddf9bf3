"""A table's dice memory: confirmed examples of the table's own dice, recalled by nearest neighbours.

However good the general reader gets, it has never seen *these* dice. The memory holds what the
players confirmed — a crop of the die, the face reader's feature vector for it, the text recogniser's
score and the face network's probability of every face on it, its kind, value, body colour and an
optional die name — and at read time a die is compared with it (`recall`).

Whole-die features tell *which die* it is far better than which face is up: on other runs of a taught
set (lurig-d20-values' training runs), the nearest close example's face is right well under half the
time, while on frames of a run it was taught from it nearly always is. So the memory answers in two parts:
- **the die**: the close examples vote for a taught die, and that die's kind overrides the detector's
  (a d20 the detector calls a d12 is read as the d20 it was taught as);
- **the face, seen as before**: examples nearly identical to the die (the same die lying much as it was
  taught) vote for their face directly — the only way to read a face that is a picture.
The reader blends both into its own belief (vision/read.py), each as far as it is trusted.

- **the face, read as this die reads**: the recogniser's scores of every face of the kind are kept per
  example. Rolled again, the die shows the same numerals — the up face's and its neighbours' at the
  window's edges, in its own font — so its scores fall into the same pattern as a taught example of
  the same face, even under another camera where its crop looks different. The pattern's vote nudges
  the recogniser's scores (`glyph_bias`): a thin 7 that the recogniser takes for a 1 is read as the 7
  this die was taught to be. (A per-die lift of the scores fitted to make the taught photos read as
  taught was tried first: on other runs it made lurig-d20-values worse, 86 % -> 80 %.) The face
  network's face probabilities are kept and voted alike for a die the memory recognises
  (`network_bias`): a die whose 5 the network takes for a 3 is read as the 5 it was taught to be.
- **the camera**: which of the reader's looks read each taught die's face is kept too. A table's camera is
  fixed, and where it shows up faces in a die's outline depends on its tilt, which one die hardly shows; a look
  that clearly missed the taught dice is disfavoured for every die the table reads after (`taught_looks`,
  vision/camera.py).

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

from .camera import LOOKS, looks_agreeing
from .crops import FACE_CLASSES, FACE_INDEX, KIND_COLUMNS, KIND_OF_FACE

MEMORY_FILE = "memory.npz"
# 2 added the recogniser's face scores per example, 3 the face network's face probabilities, 4 which of the
# reader's looks read the taught face; older files load without them.
FORMAT = 4
# Two examples this similar (cosine of their features) are "nearly the same die showing the same
# face": taught with different values, one of them is wrong.
CONTRADICTION_SIM = 0.97
# Neighbours that vote, and how similar a neighbour must be to count as close (the same die).
K = 7
CLOSE_SIM = 0.80
# How similar an example must be for its *face* to vote: the same die seen much as it was taught.
# Measured on lurig-d20-values' training runs, 3 frames per face taught from one run each (3 seeds):
# of other frames of a taught run, the nearest example's face is right 98.6-98.7 % at CLOSE_SIM and
# 99.3-100 % at this; on runs nothing was taught from, 16-42 % at CLOSE_SIM, and almost none reach this.
SAME_VIEW_SIM = 0.90
# A kept face score is no lower than this: "not there at all" is one level, however the recogniser says it.
FLOOR_LL = -30.0
# Close agreeing examples needed before the memory's vote is fully trusted.
TRUST_AT = 3
# The die's own glyphs (`DiceMemory.glyph_bias`): a face's scores, as a distribution over the kind's faces
# at this temperature, are compared with the taught examples'; each votes by exp(similarity / GLYPH_TAU)
# relative to the closest, and the log of each taught face's share against an even share (`_log_vote`),
# times GLYPH_WEIGHT, is added to the scores (in the scores' own units: GLYPH_WEIGHT x GLYPH_T). Chosen on
# lurig-d20-values' training runs (3 photos per face taught from one run, other runs read, 5 seeds; the
# wheel's recogniser): 82.4 -> 92.7 % right; the figure is flat around it (temperature 0.3-1, GLYPH_TAU
# 0.1-0.2, weight 0.25-0.5: 92.1-92.7 %).
GLYPH_T = 0.5
GLYPH_TAU = 0.2
GLYPH_WEIGHT = 0.25
GLYPH_FLOOR = 1e-3  # the least a face is voted: a face no taught example resembles is unlikely, not impossible
# The face network's glyphs (`DiceMemory.network_bias`), for a die the memory recognised: its face distribution
# over the kind's faces (square roots, temperature 1) compared with its taught examples', voted as the numerals'
# are, and the vote's log times NETWORK_GLYPH_WEIGHT added to the network's log-probabilities. Chosen on renders
# only (`dicecam bench --teach`'s dice, seed 0; weight 0.5-2, width 0.1-0.2, temperature 0.5-1 all gave
# 72.6-74.0 % against 71.1 % with the numerals' glyphs alone, and fewer sure dice wrong, 1.0-1.3 % against 1.6).
NETWORK_GLYPH_TAU = 0.2
NETWORK_GLYPH_WEIGHT = 1.0
# The search. Every die is first compared with the examples' coordinates on their INDEX_DIMS principal
# directions: what those leave out of two unit vectors bounds how much closer they can be whole
# (Cauchy-Schwarz), and only the examples that bound lets reach CLOSE_SIM are compared whole. The close
# examples are exactly those a comparison with every example finds, at a fraction of the memory traffic
# (10,000 examples: 10 MB read per frame whole, 3.8 MB so). Real dice features hold 96 % of their energy
# in 96 directions: the bound let through about twice the truly close examples of 10 real training crops
# against 10,000; on the bench's random features about one a die (64 directions: hundreds). Smaller
# memories, or dice the bound cannot narrow, are compared whole.
INDEX_DIMS = 96
INDEX_FROM = 2000
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


# Per kind, its faces' columns in FACE_CLASSES as one table, each row padded with -1 to the kind with most faces
# (so every die's glyph has one width: zeros add nothing to an overlap).
_WIDEST = max(len(c) for c in KIND_COLUMNS)
_PADDED_COLUMNS = np.array([np.pad(c, (0, _WIDEST - len(c)), constant_values=-1) for c in KIND_COLUMNS])


def _glyph(scores: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Recogniser scores of a kind's faces (..., faces) as unit vectors: the square root of their
    distribution at temperature GLYPH_T (so two patterns' dot product is their Bhattacharyya overlap).
    `valid`: which columns are faces (the rest, padding, get zero)."""
    z = np.maximum(np.asarray(scores, np.float64), FLOOR_LL) / GLYPH_T
    p = np.exp(z - z.max(-1, keepdims=True))
    if valid is not None:
        p = p * valid
    return np.sqrt(p / p.sum(-1, keepdims=True)).astype(np.float32)


def _network_glyph(p: np.ndarray) -> np.ndarray:
    """The face network's probabilities of a kind's faces (..., faces) as unit vectors (square roots of the
    distribution among them: two patterns' dot product is their Bhattacharyya overlap)."""
    p = np.maximum(np.asarray(p, np.float64), 1e-9)
    return np.sqrt(p / p.sum(-1, keepdims=True)).astype(np.float32)


def _padded(patterns: np.ndarray) -> np.ndarray:
    """(P, faces) glyphs of one kind as (P, _WIDEST), zeros after the kind's faces."""
    out = np.zeros((len(patterns), _WIDEST), np.float32)
    out[:, :patterns.shape[1]] = patterns
    return out


def _vote(mine: np.ndarray, patterns: list[np.ndarray], faces: list[np.ndarray],
          tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, _WIDEST) each of n dice's vote over its kind's faces: its glyph `mine[i]` against its voters'
    `patterns[i]` (P_i, _WIDEST), each voting for its face `faces[i]` by exp(overlap / tau) relative to the
    closest; (n, _WIDEST) which faces its voters show (were taught); and (n,) how far it shows one of those at
    all. Dice with the same voters (one recognised die's examples, or one kind's pool: the same cached arrays)
    are compared in one matrix product, and no pool is copied a frame."""
    out = np.zeros((len(faces), _WIDEST))
    taught = np.zeros((len(faces), _WIDEST), bool)
    closest = np.zeros(len(faces))
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (voters, voted) in enumerate(zip(patterns, faces)):
        groups.setdefault((id(voters), id(voted)), []).append(i)
    for rows in groups.values():
        voters, voted = patterns[rows[0]], faces[rows[0]]
        if not len(voted):
            continue
        sims = mine[rows] @ voters.T  # (dice, P)
        top = sims.max(1, keepdims=True)
        weight = np.exp((sims - top) / tau)
        out[rows] = [np.bincount(voted, w, _WIDEST) for w in weight]
        taught[rows] = np.bincount(voted, minlength=_WIDEST) > 0
        closest[rows] = top[:, 0]
    # A face of the kind that nothing taught shows is a rival to every taught one: a die plain in it overlaps that
    # face's clean pattern (all its share there) by the square root of its share, which `mine` holds (zero only in
    # the padding after the kind's faces). The die shows a taught face as far as its closest taught example overlaps
    # it more (logistic, at the vote's own tau); where every face is taught there is no rival.
    untaught = ~taught & (mine > 0)
    rival = np.where(untaught, mine, 0.0).max(1)
    shows_taught = np.where(untaught.any(1), 1.0 / (1.0 + np.exp((rival - closest) / tau)), 1.0)
    return out, taught, shows_taught


def _log_vote(n: int, rows: np.ndarray, columns: np.ndarray, vote: np.ndarray, taught: np.ndarray,
              shows_taught: np.ndarray) -> np.ndarray:
    """(n, F): per voted die, how much likelier than an even share of its vote (`vote`, (len(rows), _WIDEST), over
    the kind's faces in `columns`, -1 padded) each taught face (`taught`, as `vote`) got, in logs (GLYPH_FLOOR
    added to both); zero for dice not voted. Where a die may show an untaught face (`shows_taught`, (len(rows),),
    under 1) its vote is mixed with an even share so far: a d12 taught its 2 and rolled showing its 12, whose "2"
    the recogniser reads nearly as well, was tipped to the 2 by the vote alone (lurig-d12-values, one camera a
    table; fifty-ninth stop, models/MODEL_CARD.md). A face of the kind that nothing taught shows is told nothing
    by the vote, and neither is any face of another kind: both stay at zero. At the floor instead, a die taught two
    faces was pushed towards them on every roll (lurig-d20-values, one camera a table: 89.4 -> 83.3 % with the
    glyphs); and with the kind's untaught faces at an even share's log, below zero, every face of the kind was
    lowered against the other kinds', so a die read in doubt between a d10's 3 and a d6's 3 became a d6 once two
    other faces of the d10 were taught (fifty-fourth stop, models/MODEL_CARD.md). The kind is the recognised die's
    vote (`Recall.kind_prior`), not the glyphs'."""
    out = np.zeros((n, len(FACE_CLASSES)), np.float32)
    valid = columns >= 0
    even = 1.0 / np.maximum(taught.sum(1, keepdims=True), 1)
    t = shows_taught[:, None]
    share = t * vote / vote.sum(1, keepdims=True) + (1 - t) * even
    level = np.log(np.where(taught, share, even) + GLYPH_FLOOR) - np.log(even + GLYPH_FLOOR)
    out[np.repeat(rows, valid.sum(1)), columns[valid]] = level[valid]
    return out


def _per_face(values: np.ndarray | None, what: str) -> np.ndarray:
    """(1, F) float32: one example's value per face class, NaN throughout where it was not measured."""
    row = np.full((1, len(FACE_CLASSES)), np.nan, np.float32)
    if values is not None:
        if np.shape(values) != (len(FACE_CLASSES),):
            raise TeachError(f"{what} must be one per face class ({len(FACE_CLASSES)}), got {np.shape(values)}")
        row[0] = np.asarray(values, np.float32)
    return row


def die_key(kind: str, colour: str | None, die: str | None) -> str:
    """How a physical die is named in listings: its given name, else colour and kind."""
    return die or (f"{colour} {kind}" if colour else kind)


def _nearest(sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(columns (N, K), similarities (N, K)): each row's K most similar close examples, -1 padded.

    A table's dice are few: the close ones are picked out first, then only those are ranked
    (argpartition over all 10,000 similarities cost more than the rest of the vote)."""
    n = len(sims)
    cols, sim = np.full((n, K), -1, np.int64), np.zeros((n, K), np.float32)
    # Only the rows with a close example are searched (a row's max is a tenth of the cost of a 2-D
    # nonzero over every similarity, which most rows, dice nothing was taught like, do not need).
    for i in np.flatnonzero(sims.max(1) >= CLOSE_SIM):
        c = np.flatnonzero(sims[i] >= CLOSE_SIM)
        s = sims[i, c]
        if len(c) > K:
            keep = np.argpartition(-s, K - 1)[:K]
            c, s = c[keep], s[keep]
        cols[i, :len(c)], sim[i, :len(c)] = c, s
    return cols, sim


def _tally(labels: np.ndarray, weight: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(P (N, classes), trust (N,)) from each row's voters' labels (-1: no voter) and weights: trust is
    the winner's share, scaled down while fewer than TRUST_AT voters agree on it."""
    n = len(labels)
    voted = labels >= 0
    at = (np.arange(n)[:, None] * classes + labels)[voted]
    probs = np.bincount(at, weight[voted], n * classes).reshape(n, classes).astype(np.float32)
    total = probs.sum(1, keepdims=True)
    has = total[:, 0] > 0
    probs[has] /= total[has]
    best = probs.argmax(1)
    agreeing = (voted & (labels == best[:, None])).sum(1)
    trust = np.where(has, np.minimum(1.0, agreeing / TRUST_AT) * probs[np.arange(n), best], 0.0)
    return probs, trust.astype(np.float32)


@dataclass(frozen=True)
class Recall:
    """What the memory says of N dice (see the module's docstring)."""

    face_p: np.ndarray  # (N, F) the face vote of nearly identical examples
    face_trust: np.ndarray  # (N,) 0-1
    kind: np.ndarray  # (N,) the recognised die's kind (index into KINDS), -1 where none is
    die_trust: np.ndarray  # (N,) 0-1
    die: np.ndarray | None = None  # (N,) the recognised die (DiceMemory's own numbering), -1 where none is

    def kind_prior(self, prior: np.ndarray) -> np.ndarray:
        """The reader's (N, K) kind prior, moved towards the recognised die's kind as far as it is trusted."""
        known = self.kind >= 0
        if not known.any():
            return prior
        p = prior / np.maximum(prior.sum(1, keepdims=True), 1e-12)
        onehot = np.zeros_like(p)
        onehot[np.flatnonzero(known), self.kind[known]] = 1.0
        t = self.die_trust[:, None]
        return np.where(known[:, None], (1 - t) * p + t * onehot, p)


@dataclass(frozen=True)
class _Dice:
    """The taught dice, derived from the examples: each example's die, and each die's kind."""

    of_example: np.ndarray  # (M,) index into the dice
    kind: np.ndarray  # (D,)
    colour: tuple[str | None, ...]  # (D,) the body colour it was taught with most often, None if never said


@dataclass(frozen=True)
class _Index:
    """The examples' principal directions, and per example its coordinates on them and the norm of what
    they leave out of it (see INDEX_DIMS)."""

    basis: np.ndarray  # (INDEX_DIMS, D)
    bound: np.ndarray  # (INDEX_DIMS + 1, M) each example's coordinates, then the norm of its rest

    @classmethod
    def of(cls, features: np.ndarray) -> "_Index":
        _, vectors = np.linalg.eigh(features.T.astype(np.float64) @ features)  # ascending
        basis = np.ascontiguousarray(vectors[:, ::-1][:, :INDEX_DIMS].T, np.float32)
        coords = basis @ features.T
        rest = np.sqrt(np.maximum((features ** 2).sum(1) - (coords ** 2).sum(0), 0))  # any norm, not only 1
        return cls(basis, np.ascontiguousarray(np.vstack([coords, rest[None]]), np.float32))

    def similarities(self, q: np.ndarray, features: np.ndarray, by_column: np.ndarray) -> np.ndarray:
        coords = q @ self.basis.T
        rest = np.sqrt(np.maximum(1 - (coords ** 2).sum(1), 0))
        # An upper bound of every cosine (the coordinates' product plus the rests' norms' product), in one
        # matrix product: the bound's (97, 10,000) read is most of a recall, and the outer product and sum
        # beside it were a sixth more. Compared a little low, for float32's rounding.
        sims = np.concatenate([coords, rest[:, None]], 1) @ self.bound
        reach = sims >= CLOSE_SIM - 1e-4
        if np.count_nonzero(reach) * 4 > reach.size:  # the bound narrows too little: compare whole
            return q @ by_column
        cols = np.flatnonzero(reach.any(0))
        whole = (features[cols] @ q.T).T  # one gather of every example some die may be close to
        sims[:, cols] = np.where(reach[:, cols], whole, sims[:, cols])
        return sims


class DiceMemory:
    def __init__(self, model_id: str, crop_size: int, path: Path | None = None) -> None:
        self.model_id = model_id
        self.crop_size = crop_size
        self.path = Path(path) if path else None
        self.features = np.zeros((0, 0), np.float32)
        self.crops = np.zeros((0, crop_size, crop_size, 3), np.uint8)
        # Per example the recogniser's score of every face; NaN where it was not measured (an example
        # from a format-1 file, or a reader without the recogniser).
        self.numerals = np.zeros((0, len(FACE_CLASSES)), np.float32)
        # Per example the face network's probability of every face; NaN where it was not kept (an example
        # from an older file, or re-embedded for another reader, whose network reads otherwise).
        self.network = np.zeros((0, len(FACE_CLASSES)), np.float32)
        # Per example and look: 1 where the look's own best face of the kind was the taught face, 0 where another,
        # NaN where it was not read (pips, an older file, or re-embedded for another reader).
        self.looks = np.zeros((0, LOOKS), np.float32)
        self._taught_looks: tuple[np.ndarray, int] | None = None  # taught_looks(), until the examples change
        self.examples: list[Example] = []
        self._face = np.zeros(0, np.int64)
        self._dice: _Dice | None = None
        self._patterns: list | None = None  # _glyphs()
        self._network_patterns: list = []  # built with them: per die, the face network's glyphs and faces
        self._pooled: dict = {}  # _kind_glyphs()
        # The live pipeline votes on its own thread while the server teaches or forgets: features,
        # crops and faces change together under this lock, so a vote never pairs mismatched rows.
        self.lock = threading.RLock()

    # --- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.examples)

    @property
    def features(self) -> np.ndarray:
        """(M, D) unit feature vectors, one per example."""
        return self._features

    @features.setter
    def features(self, value: np.ndarray) -> None:
        # Kept transposed as well, contiguous: every frame multiplies by it, and a contiguous (D, M)
        # operand is a fifth faster than the transposed view at p50 and steadier at p95 (10,000 examples).
        self._features = value
        self._by_column = np.ascontiguousarray(value.T)
        self._index: _Index | None = None  # built on the first recall that needs it

    def _similarities(self, features: np.ndarray) -> np.ndarray:
        """(N, M) the dice's cosine with every example wherever it can reach CLOSE_SIM; elsewhere a value
        under CLOSE_SIM (its bound). The caller holds the lock."""
        q = _unit(features)
        if len(self) < INDEX_FROM or self.features.shape[1] <= INDEX_DIMS:
            return q @ self._by_column
        if self._index is None:
            self._index = _Index.of(self.features)
        return self._index.similarities(q, self.features, self._by_column)

    def vote(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per die: the face vote of nearly identical examples over FACE_CLASSES, and its trust (0-1)."""
        r = self.recall(features)
        return r.face_p, r.face_trust

    def recall(self, features: np.ndarray) -> Recall:
        """Which taught die each of N dice is (if any), with its kind, and the face vote of the examples
        nearly identical to it.

        The K most similar close examples (CLOSE_SIM) vote for their die, each by its similarity; those
        at SAME_VIEW_SIM or more also vote for their face. Trust grows with the number of agreeing
        voters (TRUST_AT for full trust), so one stray example cannot overrule the reader."""
        n = len(features)
        with self.lock:
            if not len(self) or not n:
                return Recall(np.zeros((n, len(FACE_CLASSES)), np.float32), np.zeros(n, np.float32),
                              np.full(n, -1, np.int64), np.zeros(n, np.float32))
            sims = self._similarities(features)
            known, dice = self._face, self._taught_dice()
        cols, sim = _nearest(sims)
        close = cols >= 0
        weight = np.where(close, (sim - CLOSE_SIM) / (1 - CLOSE_SIM) + 0.05, 0.0).astype(np.float32)
        die_p, die_trust = _tally(np.where(close, dice.of_example[np.maximum(cols, 0)], -1), weight, len(dice.kind))
        same = close & (sim >= SAME_VIEW_SIM)
        face_p, face_trust = _tally(np.where(same, known[np.maximum(cols, 0)], -1), weight, len(FACE_CLASSES))
        die = np.where(die_trust > 0, die_p.argmax(1), -1)
        return Recall(face_p, face_trust, np.where(die >= 0, dice.kind[np.maximum(die, 0)], -1), die_trust, die)

    def glyph_bias(self, recall: Recall, scores: np.ndarray, kinds: np.ndarray | None = None,
                   colours: list[str | None] | None = None) -> np.ndarray:
        """(N, F) what to add to N dice's recogniser face scores (`scores`, (N, F), each face's best look):
        the log of the vote of taught examples, by how like theirs a die's scores' pattern over its kind's
        faces is. Whose examples: the die's, where the memory recognised it; else, given the dice's
        likeliest kinds (indices into KINDS) and read body colours, every taught die of that kind and
        colour (or taught with no colour) — the same die rolled under another light or camera is often
        not recognised by its looks, but its numerals read as they did. A die of a colour or kind nothing
        was taught as gets zero."""
        bias = np.zeros((len(scores), len(FACE_CLASSES)), np.float32)
        if not len(self) or not len(scores):
            return bias
        with self.lock:
            chosen = []  # (die's row, its kind, its voters' patterns, the faces they show)
            for i in range(len(scores)):
                if recall.die is not None and recall.die[i] >= 0:
                    kind, patterns, faces = self._glyphs()[int(recall.die[i])]
                elif kinds is not None and colours is not None:
                    kind, patterns, faces = self._kind_glyphs(int(kinds[i]), colours[i])
                else:
                    continue
                if len(faces):
                    chosen.append((i, kind, patterns, faces))
        if not chosen:
            return bias
        # Every die at once, each die's glyph padded to the widest kind's (a dozen array operations a frame,
        # not a dozen a die: 0.40 -> 0.19 ms for 12 dice, the same votes).
        rows = np.array([c[0] for c in chosen])
        columns = _PADDED_COLUMNS[[c[1] for c in chosen]]
        valid = columns >= 0
        mine = _glyph(scores[rows[:, None], np.maximum(columns, 0)], valid)
        vote = _vote(mine, [c[2] for c in chosen], [c[3] for c in chosen], GLYPH_TAU)
        return GLYPH_WEIGHT * GLYPH_T * _log_vote(len(scores), rows, columns, *vote)

    def network_bias(self, recall: Recall, face_p: np.ndarray) -> np.ndarray:
        """(N, F) what to add to N dice's face-network log-probabilities (`face_p`, (N, F)): the log of the
        vote of the recognised die's taught examples, by how like theirs the die's face distribution over its
        kind's faces is (the numerals' glyphs, `glyph_bias`, for the reader that reads pips and renders).
        Zero for a die the memory did not recognise."""
        bias = np.zeros((len(face_p), len(FACE_CLASSES)), np.float32)
        if not len(self) or recall.die is None:
            return bias
        with self.lock:
            glyphs = self._network_glyphs()
            chosen = [(i, *glyphs[int(recall.die[i])]) for i in np.flatnonzero(recall.die >= 0)]
        chosen = [c for c in chosen if len(c[2])]
        if not chosen:
            return bias
        # Every recognised die at once, as `glyph_bias` does (patterns padded to the widest kind).
        rows = np.array([c[0] for c in chosen])
        columns = _PADDED_COLUMNS[recall.kind[rows]]
        valid = columns >= 0
        mine = _network_glyph(np.where(valid, face_p[rows[:, None], np.maximum(columns, 0)], 0.0)) * valid
        vote = _vote(mine, [c[1] for c in chosen], [c[2] for c in chosen], NETWORK_GLYPH_TAU)
        return NETWORK_GLYPH_WEIGHT * _log_vote(len(face_p), rows, columns, *vote)

    def taught_looks(self) -> tuple[np.ndarray, int]:
        """(per look of the reader, how many taught numeral dice it read right; how many such dice there are),
        counted once per change of the examples (the reader asks every frame)."""
        with self.lock:
            if self._taught_looks is None:
                known = np.isfinite(self.looks).all(1)
                self._taught_looks = (self.looks[known].sum(0), int(known.sum()))
            return self._taught_looks

    def _kind_glyphs(self, kind: int, colour: str | None) -> tuple[int, np.ndarray, np.ndarray]:
        """`_glyphs` pooled over every taught die of `kind` taught as `colour` or with no colour (kept until
        the examples change; the caller holds the lock)."""
        glyphs, key = self._glyphs(), (kind, colour)  # first: a rebuild of the patterns empties the pool
        if key not in self._pooled:
            dice = self._taught_dice()
            voters = [d for d in range(len(dice.kind)) if dice.kind[d] == kind and dice.colour[d] in (None, colour)]
            self._pooled[key] = (kind, np.concatenate([glyphs[d][1] for d in voters]),
                                 np.concatenate([glyphs[d][2] for d in voters])) if voters else \
                (kind, np.zeros((0, _WIDEST), np.float32), np.zeros(0, np.int64))
        return self._pooled[key]

    def _glyphs(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Per taught die: its kind, its examples' score patterns over the kind's faces (`_glyph`, padded
        to the widest kind; those whose scores were not measured left out) and which of the kind's faces
        each shows. Rebuilt after the examples change (the caller holds the lock)."""
        if self._patterns is None:
            dice = self._taught_dice()
            out, network = [], []
            for d, kind in enumerate(dice.kind):
                cols = KIND_COLUMNS[int(kind)]
                rows = np.flatnonzero(dice.of_example == d)
                rows = rows[np.isin(self._face[rows], cols)]
                kept = rows[np.isfinite(self.numerals[np.ix_(rows, cols)]).all(1)]
                out.append((int(kind), _padded(_glyph(self.numerals[np.ix_(kept, cols)])),
                            np.searchsorted(cols, self._face[kept])))
                kept = rows[np.isfinite(self.network[np.ix_(rows, cols)]).all(1)]
                network.append((_padded(_network_glyph(self.network[np.ix_(kept, cols)])),
                                np.searchsorted(cols, self._face[kept])))
            self._patterns, self._network_patterns, self._pooled = out, network, {}
        return self._patterns

    def _network_glyphs(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per taught die: its examples' face-network patterns (`_network_glyph`, padded; those without
        probabilities left out) and which of the kind's faces each shows. Built with `_glyphs` (the caller
        holds the lock)."""
        self._glyphs()
        return self._network_patterns

    def _taught_dice(self) -> _Dice:
        """The dice table, rebuilt after the examples change (the caller holds the lock)."""
        if self._dice is None:
            keys = [die_key(e.kind, e.colour, e.die) for e in self.examples]
            names, of_example = np.unique(np.array(keys, object), return_inverse=True)
            # A named die taught as two kinds is the kind it was taught as more often.
            kind = np.array([np.bincount(KIND_OF_FACE[self._face[of_example == d]]).argmax()
                             for d in range(len(names))], np.int64)
            said: list[list[str]] = [[] for _ in names]
            for e, d in zip(self.examples, of_example):
                if e.colour:
                    said[d].append(e.colour)
            colours = tuple(max(set(c), key=c.count) if c else None for c in said)
            self._dice = _Dice(of_example.astype(np.int64), kind, colours)
        return self._dice

    # --- teaching ----------------------------------------------------------------------------

    def teach(self, crop: np.ndarray, feature: np.ndarray, kind: str, value: int, *, colour: str | None = None,
              die: str | None = None, source: str = "teach", force: bool = False,
              numerals: np.ndarray | None = None, network: np.ndarray | None = None,
              looks: np.ndarray | None = None) -> Taught:
        """Learn one confirmed die. A value the kind cannot show is refused; an example nearly
        identical to one already taught with another face is flagged and not learnt (unless
        `force`: the player said the earlier one was wrong, which is then forgotten). `numerals`: the
        recogniser's (F,) face scores on it (Reader.learnable), which teach the die's own adjustment;
        `network`: the face network's (F,) face probabilities on it, likewise; `looks`: the recogniser's (G, F)
        face scores per look (Reader.learnable), which teach the table's camera (`taught_looks`)."""
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
        name = die.strip() if die else None
        if name:
            with self.lock:
                known = next((e.kind for e in self.examples if e.die == name and e.kind != t.value), None)
            if known is not None:
                raise TeachError(f"{name} is already known as a {known}, not a {t.value}: name this die otherwise")
        f = _unit(feature.reshape(1, -1))
        face = FACE_INDEX[(t.value, value)]
        scores = np.maximum(_per_face(numerals, "face scores"), FLOOR_LL)  # NaN (not measured) stays NaN
        net = _per_face(network, "face probabilities")
        read = _looks_read(looks, face)
        with self.lock:
            return self._add(crop, f, scores, net, read, face, t.value, int(value), colour, die, source, force)

    def _add(self, crop, f, scores, net, read, face, kind, value, colour, die, source, force) -> Taught:
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
        self._append(f, crop[None].astype(np.uint8), scores, net, read[None],
                     [Example(kind, value, colour, die, source, time.time())], np.array([face], np.int64))
        return Taught(True)

    def _append(self, features: np.ndarray, crops: np.ndarray, scores: np.ndarray, network: np.ndarray,
                looks: np.ndarray, examples: list[Example], faces: np.ndarray) -> None:
        """Add rows (unit features, crops, face scores, face probabilities, looks read right, examples, face
        indices) together; the caller holds the lock."""
        self.features = features if not len(self) else np.concatenate([self.features, features])
        self.crops = np.concatenate([self.crops, crops])
        self.numerals = np.concatenate([self.numerals, scores.astype(np.float32)])
        self.network = np.concatenate([self.network, network.astype(np.float32)])
        self.looks = np.concatenate([self.looks, looks.astype(np.float32)])
        self.examples += examples
        self._face = np.concatenate([self._face, faces])
        self._changed()

    def _changed(self) -> None:
        """Forget what was built from the examples (the caller holds the lock)."""
        self._dice = None
        self._patterns = None
        self._taught_looks = None

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
        self.numerals = self.numerals[keep]
        self.network = self.network[keep]
        self.looks = self.looks[keep]
        self._face = self._face[keep]
        self.examples = [e for e, k in zip(self.examples, keep) if k]
        self._changed()

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
        """Recompute every feature with another reader (after a model upgrade). The old reader's face
        probabilities say nothing of how the new one reads, nor its looks of where the new finder looks: they are
        dropped (taught again as dice are)."""
        self.features = _unit(embed(self.crops)) if len(self) else np.zeros((0, 0), np.float32)
        self.network = np.full_like(self.network, np.nan)
        self.looks = np.full_like(self.looks, np.nan)
        self._changed()
        self.model_id = model_id

    # --- files -------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        meta = {"format": FORMAT, "model_id": self.model_id, "crop_size": self.crop_size,
                "examples": [e.__dict__ for e in self.examples]}
        buf = io.BytesIO()
        np.savez_compressed(buf, features=self.features, crops=self.crops, numerals=self.numerals,
                            network=self.network, looks=self.looks, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
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
            numerals = z["numerals"].astype(np.float32) if "numerals" in z.files else None
            network = z["network"].astype(np.float32) if "network" in z.files else None
            looks = z["looks"].astype(np.float32) if "looks" in z.files else None
        except Exception:  # noqa: BLE001 - any malformed file gets the same one-line answer
            raise TeachError("not a dicecam memory file") from None
        if meta.get("format") not in (1, 2, 3, FORMAT):
            raise TeachError(f"memory file format {meta.get('format')} is not supported (expected {FORMAT})")
        if numerals is None:  # format 1: taught before the recogniser's scores were kept
            numerals = np.full((len(examples), len(FACE_CLASSES)), np.nan, np.float32)
        if network is None:  # formats 1 and 2: taught before the face network's probabilities were kept
            network = np.full((len(examples), len(FACE_CLASSES)), np.nan, np.float32)
        if looks is None:  # formats 1-3: taught before the looks were kept
            looks = np.full((len(examples), LOOKS), np.nan, np.float32)
        if numerals.shape != (len(examples), len(FACE_CLASSES)) or network.shape != numerals.shape \
                or looks.shape != (len(examples), LOOKS):
            raise TeachError("the memory file's face scores do not fit its examples")
        if meta.get("crop_size") != crop_size or crops.shape[1:] != (crop_size, crop_size, 3) \
                or len(crops) != len(examples):
            raise TeachError("the memory file's crops do not fit this reader")
        for e in examples:
            if e.kind not in {t.value for t in DieType} or e.value not in FACES[DieType(e.kind)]:
                raise TeachError(f"the memory file holds an impossible die ({e.kind} {e.value})")
        m = cls(meta["model_id"], crop_size, path)
        m.crops, m.examples, m.numerals, m.network, m.looks = crops.astype(np.uint8), examples, numerals, network, looks
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
        contradicting this memory (another face for nearly the same picture, or another kind for a die
        it knows by name) is flagged and left out; one already held (same face, same
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
                # A die this table knows by name as one kind, imported as another, is a contradiction too.
                kind_of = {e.die: e.kind for e in self.examples if e.die}
                renamed = np.array([e.die in kind_of and kind_of[e.die] != e.kind for e in other.examples], bool)
                clash = ((best >= CONTRADICTION_SIM) & ~same) | renamed
                held = (best >= 0.999) & same
                flagged = int(clash.sum())
                take = ~clash & ~held
            if take.any():
                self._append(_unit(other.features[take]), other.crops[take], other.numerals[take],
                             other.network[take], other.looks[take], [e for e, t in zip(other.examples, take) if t], other._face[take])
            return int(take.sum()), flagged


def _looks_read(looks: np.ndarray | None, face: int) -> np.ndarray:
    """(LOOKS,) per look: 1 where its best face of the taught face's kind is that face, 0 where another, NaN
    where the look read nothing or was not measured."""
    if looks is None:
        return np.full(LOOKS, np.nan, np.float32)
    try:
        return looks_agreeing(np.asarray(looks, np.float32)[None], np.array([face]))[0]
    except ValueError as e:
        raise TeachError(str(e)) from None


def model_fingerprint(path: Path) -> str:
    """Identifies the reader weights whose features a memory holds."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
