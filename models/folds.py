"""Cross-fitting folds that keep a video run whole.

The held-out parts of the real sets are whole runs (vision/evaluate.HELD_OUT): a model is judged on a
die it never saw under a camera and light it may never have seen. A fold that splits a run lets the
fit see near-identical frames of the dice it is judged on, and its figures come out surer than the
held-out ones. So every cross-fit here (the doubt model's figures and thresholds, the kind heads the
doubt model is measured with) puts each run in one fold.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from dicecam.vision.evaluate import run_of

FOLDS = 5


def run_of_photo(set_name: str, meta: dict) -> str | None:
    """The video run of a real set's photo, or None where the set names none (each photo stands alone)."""
    if meta.get("sequence"):
        return f"{set_name}/{meta['sequence']}"
    if set_name == "lurig-types":  # its runs are its file names' prefixes
        return f"{set_name}/{run_of(meta)}"
    return None


def grouped(groups: Sequence[str | None], folds: int = FOLDS, strata: Sequence | None = None) -> np.ndarray:
    """(M,) a fold for each of M dice: every run (a group) whole in one fold, biggest first into the fold
    with fewest dice. Dice without a run are cut, in their order, into `folds` consecutive blocks that are
    groups of their own (photos measured one after another are often neighbours).

    `strata` (M,), e.g. each die's kind: each stratum's runs are spread over the folds first (into the
    fold with fewest dice of that stratum), as the held-out parts keep other runs of every kind in
    training; a fold holding every run of one kind would judge a fit that never saw that kind."""
    groups = list(groups)
    alone = [i for i, g in enumerate(groups) if g is None]
    label = np.array([g if g is not None else "" for g in groups], object)
    for rank, i in enumerate(alone):
        label[i] = f"\0block {rank * folds // len(alone)}"
    names, first, of_die, sizes = np.unique(label.astype(str), return_index=True, return_inverse=True,
                                             return_counts=True)
    stratum = [str(strata[i]) for i in first] if strata is not None else [""] * len(names)
    fold_of = np.zeros(len(names), np.int64)
    total, of_stratum = np.zeros(folds), {}
    for g in sorted(range(len(names)), key=lambda g: (stratum[g], -sizes[g], names[g])):
        mine = of_stratum.setdefault(stratum[g], np.zeros(folds))
        fold_of[g] = int(np.lexsort((total, mine))[0])
        mine[fold_of[g]] += sizes[g]
        total[fold_of[g]] += sizes[g]
    return fold_of[of_die] if len(groups) else np.zeros(0, np.int64)
