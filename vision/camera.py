"""Where a table's camera shows a die's up face: which of the reader's looks to trust under it.

The numeral reader looks for the up face's numeral in a few places per die (vision/numerals: the crop's centre,
a tenth of the die above it, the up-face finder's point). Where the up face really lies depends on how far the
camera leans across the table, and one die's crop hardly shows that: a d20 looked at along a face's normal looks
the same whether that face is up under a camera above it, or a neighbour is up and the camera leans 42° onto it
(model card, sixteenth stop). The finder judges the lean from cues that differ by camera and misjudges some: on
lurig-d20-values' wood runs its point lies on a neighbour for most dice, while the centre reads them right.

A table's camera is fixed, though, and its dice say which looks read their faces:
- taught dice (vision/memory: each example keeps which looks read its taught face);
- in the live pipeline, the dice it reads without a doubt flag (`CameraSense`): which looks agreed with the
  answer. No player has to do anything; a die read wrong but sure adds a wrong row, and the few there are (about
  2 % of sure numeral dice) move no share by LOOK_GAP.

A look whose share of those dice read right falls clearly below the best look's is disfavoured for every die read
under that camera (`look_preference`). Chosen on lurig-d20-values' training runs (each camera a table: 3 photos of
2 runs taught, or those 2 runs read first with no labels; the camera's other runs read; 6 seeds, simulated on
cached scores): 89.0 % read right untaught; 92.9 % with the taught looks; 91.8 % with the reads' own (20 or more
sure dice: 10 give 91.6 %). Without the gap, a preference taught under four cameras at once cost 3 points (93.2 ->
90.0 %); with it, nothing moves there.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from .belief import UNREAD
from .crops import FACE_CLASSES, KIND_COLUMNS, KIND_OF_FACE

LOOKS = 3  # the reader's looks per die (vision/numerals.finder_looks, FALLBACK)
# A look is disfavoured when its share of dice read right, smoothed as (k + 1/2) / (n + 1), is more than LOOK_GAP
# below the best look's: by LOOK_WEIGHT x log(its share / the best's), added to every face score of that look (the
# recogniser's log-likelihood units).
LOOK_GAP = 0.35
LOOK_WEIGHT = 0.5
TAUGHT_LEAST = 4  # taught numeral dice before they say anything of the camera
SEEN_LEAST = 20  # or dice the live pipeline read without a doubt flag
SEEN_WINDOW = 200  # the live pipeline's most recent such dice (each read a few frames): a camera moved is relearnt


def look_preference(right: np.ndarray, count: int) -> np.ndarray:
    """(LOOKS,) what to add to each look's face scores, from `count` dice of which `right[g]` look g read right:
    zero for looks about as good as the best one, negative for those clearly worse."""
    bias = np.zeros(LOOKS, np.float32)
    if count <= 0:
        return bias
    share = (np.asarray(right, np.float64) + 0.5) / (count + 1)
    behind = share < share.max() - LOOK_GAP
    bias[behind] = LOOK_WEIGHT * np.log(share[behind] / share.max())
    return bias


def camera_preference(taught: tuple[np.ndarray, int] | None = None,
                      seen: tuple[np.ndarray, int] | None = None) -> np.ndarray:
    """(LOOKS,) the camera's preference (`look_preference`) from the taught dice's and the live pipeline's sure
    reads' (per look right, count), pooled; zero until either has its least (TAUGHT_LEAST, SEEN_LEAST)."""
    right, count, enough = np.zeros(LOOKS), 0, False
    for counted, least in ((taught, TAUGHT_LEAST), (seen, SEEN_LEAST)):
        if counted is not None:
            right, count, enough = right + counted[0], count + counted[1], enough or counted[1] >= least
    return look_preference(right, count) if enough else np.zeros(LOOKS, np.float32)


def looks_agreeing(face_ll: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(N, LOOKS) per die and look: 1 where the look's own best face of the die's kind is `faces[i]` (a face class),
    0 where another, NaN where the look read nothing. `face_ll`: (N, G, F) the looks' face scores."""
    face_ll = np.asarray(face_ll, np.float32)
    out = np.full((len(faces), LOOKS), np.nan, np.float32)
    if face_ll.ndim != 3 or face_ll.shape[2] != len(FACE_CLASSES):
        raise ValueError(f"look scores must be (dice, looks, {len(FACE_CLASSES)}), got {face_ll.shape}")
    for i, face in enumerate(np.asarray(faces, np.int64)):
        cols = KIND_COLUMNS[int(KIND_OF_FACE[face])]
        for g, row in enumerate(face_ll[i, :LOOKS][:, cols]):
            if np.isfinite(row).all() and row.max() > UNREAD:
                out[i, g] = float(cols[int(row.argmax())] == face)
    return out


class CameraSense:
    """What the live pipeline's own sure reads say of its camera: the looks of its last SEEN_WINDOW numeral dice
    read without a doubt flag. The pipeline reads a still roll a few frames and then waits for motion
    (vision/watcher.py), so a die counts a few times at most, however long it lies there."""

    def __init__(self, window: int = SEEN_WINDOW) -> None:
        self._rows: deque[np.ndarray] = deque(maxlen=window)
        self._right = np.zeros(LOOKS, np.float32)  # the rows' sum, kept as they come and go: read every frame
        self._lock = threading.Lock()

    def observe(self, agree: np.ndarray) -> None:
        """Add the dice of one frame (`looks_agreeing` rows); a die whose looks were not all read adds nothing."""
        rows = [row for row in np.asarray(agree, np.float32).reshape(-1, LOOKS) if np.isfinite(row).all()]
        with self._lock:
            for row in rows:
                if len(self._rows) == self._rows.maxlen:
                    self._right -= self._rows[0]
                self._rows.append(row)
                self._right += row

    def counts(self) -> tuple[np.ndarray, int]:
        """(per look, how many of the dice it read right; how many dice)."""
        with self._lock:
            return self._right.copy(), len(self._rows)
