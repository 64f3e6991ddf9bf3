"""Constrained CTC scoring: the likelihood of a given string, summed over every alignment."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecam.vision.ctc import ctc_batch, ctc_log_likelihood


def collapse(path: tuple[int, ...]) -> tuple[int, ...]:
    """CTC's reading of one alignment: merge repeats, then drop blanks (0)."""
    merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
    return tuple(c for c in merged if c != 0)


def brute_force(log_probs: np.ndarray, label: tuple[int, ...]) -> float:
    t, c = log_probs.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        if collapse(path) == label:
            total += float(np.exp(sum(log_probs[i, k] for i, k in enumerate(path))))
    return np.log(total) if total > 0 else -np.inf


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), steps=st.integers(1, 5),
       label=st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple))
def test_the_score_is_the_sum_over_every_alignment(seed, steps, label):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(steps, 4)) * 2
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    want = brute_force(log_probs, label)
    got = ctc_log_likelihood(log_probs, label)
    if np.isinf(want):
        assert got < -1e20  # too long to fit: impossible
    else:
        assert got == pytest.approx(want, abs=1e-9)


def test_a_repeated_digit_needs_a_blank_between_its_copies():
    # Two steps that both say "1" read as one "1", never "11".
    log_probs = np.log(np.array([[1e-9, 1.0, 1e-9], [1e-9, 1.0, 1e-9]]))
    assert np.exp(ctc_log_likelihood(log_probs, (1,))) == pytest.approx(1.0)
    assert np.exp(ctc_log_likelihood(log_probs, (1, 1))) < 1e-8


def test_batches_score_every_window_against_every_label():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(4, 6, 5))
    log_probs = logits - np.log(np.exp(logits).sum(2, keepdims=True))
    labels = [(1,), (2, 3), (4, 4), (), (1, 2, 3)]
    table = ctc_batch(log_probs, labels)
    assert table.shape == (4, 5)
    for w in range(4):
        for j, lab in enumerate(labels):
            assert table[w, j] == pytest.approx(ctc_log_likelihood(log_probs[w], lab))


def log_domain(log_probs: np.ndarray, label: tuple[int, ...]) -> float:
    """The textbook forward pass in logs, one window and one label: what long outputs are checked against."""
    ext = [0]
    for c in label:
        ext += [c, 0]
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = log_probs[0, ext[0]]
    if len(ext) > 1:
        alpha[1] = log_probs[0, ext[1]]
    for t in range(1, len(log_probs)):
        new = np.full(len(ext), -np.inf)
        for s, c in enumerate(ext):
            terms = [alpha[s]] + ([alpha[s - 1]] if s > 0 else [])
            if s > 1 and c != 0 and c != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + log_probs[t, c]
        alpha = new
    return float(np.logaddexp(alpha[-1], alpha[-2]) if len(ext) > 1 else alpha[-1])


def test_a_long_faint_output_is_scored_without_underflow():
    # 400 steps of an output sure of nothing (8 characters alike, a little noise): every alignment is
    # about 8^-400 likely, past what a float64 probability holds (1e-308 is e^-709).
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(400, 8)) * 0.1
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    for label in [(1, 2, 3), (4, 4), (2,)]:
        want = log_domain(log_probs, label)
        assert -2000 < want < -709
        assert ctc_log_likelihood(log_probs, label) == pytest.approx(want, rel=1e-9)
