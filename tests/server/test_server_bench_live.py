"""The live benchmark scores the events the pipeline publishes: it must keep reading them as the pages do."""

from __future__ import annotations

from dicecam.server.benchmarks.live import _demo, demo_accuracy
from dicecam.vision.read import Reader


def test_the_demo_clip_through_the_shipped_reader_scores_one_right_event_per_roll():
    """The shipped reader reads every roll of the bundled clip (tests/vision/test_vision_demo.py), so the
    benchmark's score of it is exact: one event per roll, none in motion, every reading equal to its label."""
    frames, meta = _demo()
    got = demo_accuracy(frames, meta, Reader.load())
    n = len(meta["rolls"])
    assert (got["rolls"], got["events"], got["exactly_one_event"], got["readings_equal_labels"]) == (n, n, n, n)
    assert got["events_in_motion"] == 0
