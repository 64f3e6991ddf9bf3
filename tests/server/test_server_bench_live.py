"""The live benchmark scores the events the pipeline publishes: it must keep reading them as the pages do."""

from __future__ import annotations

from dicecam.server.benchmarks.live import _demo, _score, demo_accuracy
from dicecam.vision.read import Reader


def test_the_demo_clip_through_the_shipped_reader_scores_one_right_event_per_roll():
    """The shipped reader reads every roll of the bundled clip (tests/vision/test_vision_demo.py), so the
    benchmark's score of it is exact: one event per roll, none in motion, every reading equal to its label."""
    frames, meta = _demo()
    got = demo_accuracy(frames, meta, Reader.load())
    n = len(meta["rolls"])
    assert (got["rolls"], got["events"], got["exactly_one_event"], got["readings_equal_labels"]) == (n, n, n, n)
    assert got["events_in_motion"] == 0


def test_an_event_of_one_clip_counts_against_its_own_roll_only():
    """Clips run one by one and laid end to end: clip 2's early event (frame 110, before its roll settles at 140)
    is its roll's event in motion, not a second event of clip 1's roll."""
    dice = [{"type": "d6", "value": 3}]
    rolls = [{"settled_at": 40, "moves_at": 100, "dice": dice, "from": 0, "to": 100},
             {"settled_at": 140, "moves_at": 200, "dice": dice, "from": 100, "to": 200}]
    events = [{"frame_id": f, "dice": dice} for f in (44, 110, 144)]
    got = _score(events, rolls, 200)
    assert (got["exactly_one_event"], got["events_in_motion"], got["readings_equal_labels"]) == (1, 1, 1)
    without_clips = [{k: v for k, v in r.items() if k not in ("from", "to")} for r in rolls]
    assert _score(events, without_clips, 200)["exactly_one_event"] == 0, "one continuous video: the windows overlap"
