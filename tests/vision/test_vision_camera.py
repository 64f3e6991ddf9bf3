"""Where a table's camera shows up faces: which look to trust, learnt from taught dice and from the live
pipeline's own sure reads."""

from __future__ import annotations

import numpy as np
import pytest

from dicecam.vision.belief import NOT_READ
from dicecam.vision.camera import LOOK_GAP, LOOKS, SEEN_LEAST, CameraSense, look_preference, looks_agreeing
from dicecam.vision.crops import FACE_CLASSES, FACE_INDEX


def _scores(*per_look: int | None) -> np.ndarray:
    """(LOOKS, F) a d20's looks, each reading the value named for it clearly (None: the look read nothing)."""
    scores = np.full((LOOKS, len(FACE_CLASSES)), -25.0, np.float32)
    for g, value in enumerate(per_look):
        if value is None:
            scores[g] = NOT_READ
        else:
            scores[g, FACE_INDEX[("d20", value)]] = -0.2
    return scores


def test_a_look_that_clearly_missed_the_dice_is_disfavoured_and_the_others_are_left_alone():
    bias = look_preference(np.array([18, 17, 4]), 20)
    assert bias[0] == bias[1] == 0 and bias[2] < -0.5


def test_a_look_about_as_good_as_the_best_is_left_alone_and_no_dice_say_nothing():
    assert not look_preference(np.array([18, 18, 18 - 0.3 * 21]), 20).any(), "within the gap"
    assert not look_preference(np.zeros(LOOKS), 0).any()
    assert LOOK_GAP > 0.3


def test_each_look_agrees_when_its_own_best_face_of_the_dies_kind_is_the_answer():
    seven, thirteen = FACE_INDEX[("d20", 7)], FACE_INDEX[("d20", 13)]
    face_ll = np.stack([_scores(7, 7, 13), _scores(None, 13, 13)])
    got = looks_agreeing(face_ll, np.array([seven, thirteen]))
    np.testing.assert_array_equal(got[0], [1, 1, 0])
    assert np.isnan(got[1, 0]) and list(got[1, 1:]) == [1, 1], "a look that read nothing says nothing"
    d8_seven = FACE_INDEX[("d8", 7)]
    assert looks_agreeing(_scores(7, 7, 13)[None], np.array([d8_seven]))[0, 0] == 0, "a d20's 7 is no d8's"
    with pytest.raises(ValueError, match="look scores"):
        looks_agreeing(np.zeros((1, LOOKS, 5)), np.array([seven]))


def test_the_live_camera_says_nothing_until_enough_sure_dice_and_keeps_only_the_latest():
    sense = CameraSense(window=SEEN_LEAST + 5)
    sense.observe(np.array([[1, 1, 0], [np.nan, 1, 1]], np.float32))
    right, count = sense.counts()
    assert count == 1 and list(right) == [1, 1, 0], "a die whose looks were not all read adds nothing"
    for _ in range(3 * SEEN_LEAST):
        sense.observe(np.array([[1, 1, 0]], np.float32))
    right, count = sense.counts()
    assert count == SEEN_LEAST + 5 and list(right) == [SEEN_LEAST + 5] * 2 + [0]
    for _ in range(SEEN_LEAST + 5):  # the camera moved: now the finder's look reads them and the centre does not
        sense.observe(np.array([[0, 1, 1]], np.float32))
    assert list(sense.counts()[0]) == [0, SEEN_LEAST + 5, SEEN_LEAST + 5]


def _frame(seed: int) -> np.ndarray:
    frame = np.full((320, 416, 3), 60, np.uint8)
    frame[100:160, 100:160] = np.random.default_rng(seed).integers(0, 255, (6, 6, 3), np.uint8).repeat(10, 0).repeat(10, 1)
    return frame


def test_the_live_reader_learns_from_its_own_sure_reads_which_look_misses_under_its_camera():
    from fake_models import d20_reader

    # Under this camera the finder's look (the third) falls on a neighbour: most dice read right by the centre
    # looks, while the finder's look reads the die's 13 less clearly. Then a die whose neighbour is the clearer.
    plain_roll = _scores(7, 7, 13)
    plain_roll[2, FACE_INDEX[("d20", 13)]] = -2.0
    tricky = _scores(7, 7, 13)
    tricky[2, FACE_INDEX[("d20", 13)]] = -0.05
    frames = {seed: _frame(seed) for seed in range(2 * SEEN_LEAST + 1)}
    reader = d20_reader(lambda f: tricky if f is frames[0] else plain_roll)
    read = lambda r, f: [(d.type.value, d.value, d.uncertain) for d in r(f)]  # noqa: E731
    assert read(reader, frames[0])[0][:2] == ("d20", 13), "the case is built: the clearer neighbour wins"
    watching = reader.watching()
    sure = [read(watching, frames[seed])[0] for seed in range(1, 2 * SEEN_LEAST + 1)]
    assert all(s == ("d20", 7, False) for s in sure), "the plain rolls are read, and read sure"
    assert watching.camera.counts()[1] == 2 * SEEN_LEAST
    assert read(watching, frames[0])[0][:2] == ("d20", 7), "its own reads taught it the finder's look misses here"
    assert read(reader, frames[0])[0][:2] == ("d20", 13), "a photo read otherwise neither teaches nor uses it"


def test_taught_dice_and_the_live_reads_are_pooled_once_either_has_its_least():
    from dicecam.vision.camera import TAUGHT_LEAST, camera_preference

    few = (np.array([1.0, 1.0, 0.0]), 1)
    assert not camera_preference(few, few).any(), "neither has enough on its own"
    taught = (np.array([TAUGHT_LEAST, TAUGHT_LEAST, 0.0]), TAUGHT_LEAST)
    np.testing.assert_array_equal(camera_preference(taught), look_preference(*taught))
    np.testing.assert_array_equal(camera_preference(taught, few),
                                  look_preference(taught[0] + few[0], taught[1] + few[1]))
