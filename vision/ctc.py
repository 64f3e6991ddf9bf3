"""Constrained CTC decoding: how likely a recogniser's output makes each of a few given strings.

A text recogniser trained with CTC emits, per time step, a distribution over its characters plus a
blank. Greedy decoding reads whatever the network saw; a die, though, can only show its own faces.
So instead of decoding we *score*: the log-probability of each legal face string under the
recogniser's per-step output (the CTC forward algorithm, summed over every alignment), and the
reader keeps the best. A die can then only ever answer a face it has.

>>> import numpy as np
>>> steps = np.log(np.array([[0.1, 0.9, 0.0], [0.9, 0.1, 0.0]]) + 1e-12)  # blank, "1", "2"
>>> round(float(np.exp(ctc_log_likelihood(steps, [1]))), 3)
0.91
>>> round(float(np.exp(ctc_log_likelihood(steps, [2]))), 3)
0.0
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

BLANK = 0
NEG = -1e30


def ctc_log_likelihood(log_probs: np.ndarray, label: Sequence[int]) -> float:
    """log P(label | one window's (T, C) log-probabilities), blank at index 0."""
    return float(ctc_batch(log_probs[None], [list(label)])[0, 0])


def ctc_batch(log_probs: np.ndarray, labels: Sequence[Sequence[int]]) -> np.ndarray:
    """(W, L) log-likelihoods: every window of a (W, T, C) batch against every label.

    Vectorised over windows and labels at once (labels are padded to one length and masked), so
    scoring a die's 20 faces over its dozens of windows is a few array operations per time step.
    The empty label is allowed: its likelihood is that of all-blank output (nothing written)."""
    log_probs = np.asarray(log_probs, np.float64)
    w, t, _ = log_probs.shape
    n = len(labels)
    longest = max((len(lab) for lab in labels), default=0)
    s = 2 * longest + 1
    # The extended label: blank, c1, blank, c2, ..., blank; padded positions are never reachable.
    ext = np.full((n, s), BLANK, np.int64)
    lengths = np.array([2 * len(lab) + 1 for lab in labels])
    for i, lab in enumerate(labels):
        ext[i, 1:2 * len(lab):2] = lab
    valid = np.arange(s)[None, :] < lengths[:, None]
    # A skip from s-2 to s is allowed onto a character that differs from the one two back.
    skip = np.zeros((n, s), bool)
    skip[:, 2:] = (ext[:, 2:] != BLANK) & (ext[:, 2:] != ext[:, :-2])
    emit = log_probs[:, :, ext]  # (W, T, n, s)
    alpha = np.full((w, n, s), NEG)
    alpha[:, :, 0] = emit[:, 0, :, 0]
    if s > 1:
        alpha[:, :, 1] = np.where(lengths[None, :] > 1, emit[:, 0, :, 1], NEG)
    for step in range(1, t):
        stay = alpha
        prev = np.concatenate([np.full((w, n, 1), NEG), alpha[:, :, :-1]], axis=2)
        prev2 = np.concatenate([np.full((w, n, 2), NEG), alpha[:, :, :-2]], axis=2)
        prev2 = np.where(skip[None], prev2, NEG)
        alpha = np.logaddexp(np.logaddexp(stay, prev), prev2) + emit[:, step]
        alpha = np.where(valid[None], alpha, NEG)
    last = lengths - 1
    end = alpha[:, np.arange(n), last]
    before = np.where(last > 0, alpha[:, np.arange(n), np.maximum(last - 1, 0)], NEG)
    return np.logaddexp(end, before)
