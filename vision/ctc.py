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
    # In probabilities, not logs: sums and products instead of logaddexp (a third of the reader's
    # non-network time went to it). Each step's alphas are scaled to a maximum of 1 and the scales' logs
    # kept, so no length of output underflows.
    emit = np.exp(log_probs)[:, :, ext]  # (W, T, n, s)
    alpha = np.zeros((w, n, s))
    alpha[:, :, 0] = emit[:, 0, :, 0]
    if s > 1:
        alpha[:, :, 1] = np.where(lengths[None, :] > 1, emit[:, 0, :, 1], 0.0)
    scale = np.zeros(w)
    for step in range(1, t):
        top = np.maximum(alpha.max(axis=(1, 2)), 1e-300)
        alpha = alpha / top[:, None, None]
        scale += np.log(top)
        moved = alpha.copy()
        moved[:, :, 1:] += alpha[:, :, :-1]
        moved[:, :, 2:] += np.where(skip[None, :, 2:], alpha[:, :, :-2], 0.0)
        alpha = np.where(valid[None], moved * emit[:, step], 0.0)
    last = lengths - 1
    rows = np.arange(n)
    total = alpha[:, rows, last] + np.where(last > 0, alpha[:, rows, np.maximum(last - 1, 0)], 0.0)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(total) + scale[:, None], NEG)
