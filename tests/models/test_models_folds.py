"""Cross-fitting folds keep a video run whole: a model is never judged on frames of a run it learnt."""

from __future__ import annotations

import numpy as np

from dicecam.models.folds import grouped, run_of_photo


def test_every_run_lies_in_one_fold_and_the_folds_hold_about_as_many_dice():
    runs = [f"run-{i % 7}" for i in range(700)] + [f"big-{i % 2}" for i in range(300)]
    fold = grouped(runs, 5)
    for run in set(runs):
        assert len(set(fold[np.array(runs) == run])) == 1, run
    sizes = np.bincount(fold, minlength=5)
    assert sizes.min() >= 100 and sizes.max() <= 300, sizes


def test_photos_without_a_run_are_cut_into_blocks_of_neighbours():
    fold = grouped([None] * 50, 5)
    assert sorted(np.bincount(fold).tolist()) == [10] * 5
    # Neighbours share a fold: the fold changes only four times along the photos.
    assert int((np.diff(fold) != 0).sum()) == 4


def test_runs_and_lone_photos_mix_and_no_fold_is_left_empty():
    fold = grouped(["a"] * 30 + [None] * 20 + ["b"] * 5, 5)
    assert set(fold.tolist()) == set(range(5))
    assert len(set(fold[:30].tolist())) == 1


def test_a_photo_s_run_is_its_sequence_or_for_lurig_types_its_name_s_prefix():
    assert run_of_photo("lurig-d20-values", {"sequence": "d20_wood-2"}) == "lurig-d20-values/d20_wood-2"
    assert run_of_photo("lurig-types", {"image": "d6_wood012.jpg", "width": 480}) == "lurig-types/d6_wood"
    assert run_of_photo("nell-byler-d6-pips", {"image": "IMG_0012.jpg"}) is None


def test_each_kind_s_runs_are_spread_over_the_folds_before_sizes_are_evened():
    # Two d10 runs, much smaller than the rest: by size alone both could share a fold, and the fit
    # without that fold would never see a real d10.
    runs = ["d6-a"] * 40 + ["d6-b"] * 40 + ["d6-c"] * 40 + ["d10-a"] * 5 + ["d10-b"] * 5
    kinds = [r.split("-")[0] for r in runs]
    fold = grouped(runs, 2, strata=kinds)
    runs = np.array(runs)
    assert fold[runs == "d10-a"][0] != fold[runs == "d10-b"][0]
    assert len({fold[runs == r][0] for r in ("d6-a", "d6-b", "d6-c")}) == 2
