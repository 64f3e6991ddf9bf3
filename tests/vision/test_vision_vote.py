"""Voting the readings of a few still frames into one set of dice: matched by box overlap,
majority value, flickers dropped, disagreement made visible."""

from __future__ import annotations

import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.vision.boxes import iou
from dicecam.vision.vote import vote


def die(kind: str, value: int, x: float = 0.0, y: float = 0.0, size: float = 40.0, confidence: float = 0.9,
        **fields) -> DieReading:
    """A die whose box has its top-left corner at (x, y)."""
    return DieReading(type=kind, value=value, box=(x, y, x + size, y + size), confidence=confidence, **fields)


def values(dice) -> list[tuple[str, int]]:
    return [(d.type.value, d.value) for d in dice]


def test_iou_of_equal_disjoint_and_half_shifted_boxes():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (20, 0, 30, 10)) == 0.0
    # Shifted by half its width: overlap 50, union 150.
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(1 / 3)
    assert iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0


def test_no_frames_or_only_empty_frames_give_no_dice():
    assert vote([]) == []
    assert vote([[], [], []]) == []


def test_each_die_takes_the_value_most_frames_read():
    frames = [[die("d6", 4)], [die("d6", 5)], [die("d6", 4)]]
    assert values(vote(frames)) == [("d6", 4)]


def test_dice_are_matched_across_frames_by_box_not_by_list_position():
    """The reader lists dice in any order and boxes jitter by a few pixels between frames."""
    frames = [
        [die("d6", 4, x=0), die("d8", 7, x=200)],
        [die("d8", 7, x=203, y=2), die("d6", 4, x=2, y=-1)],
        [die("d6", 4, x=-2), die("d8", 7, x=198)],
    ]
    voted = vote(frames)
    assert values(voted) == [("d6", 4), ("d8", 7)]
    assert not any(d.uncertain for d in voted)


def test_a_reading_far_from_every_earlier_box_is_a_different_die():
    """Too little overlap to be the same die: the far reading is a flicker of its own, and the
    die at the first place keeps only its own frames' value."""
    frames = [[die("d6", 4, x=0)], [die("d6", 4, x=0)], [die("d6", 1, x=300)]]
    voted = vote(frames)
    assert values(voted) == [("d6", 4)]
    assert voted[0].box == (0.0, 0.0, 40.0, 40.0)


def test_a_die_seen_in_under_half_the_frames_is_dropped_as_a_flicker():
    steady = die("d6", 4, x=0)
    frames = [[steady, die("d8", 2, x=200)], [steady], [steady], [steady]]
    assert values(vote(frames)) == [("d6", 4)]


def test_a_die_seen_in_half_the_frames_is_kept():
    steady = die("d6", 4, x=0)
    frames = [[steady, die("d8", 2, x=200)], [steady, die("d8", 2, x=200)], [steady], [steady]]
    assert values(vote(frames)) == [("d6", 4), ("d8", 2)]


def test_frames_that_disagree_mark_the_die_uncertain_and_lower_its_confidence():
    agreed = vote([[die("d6", 4)], [die("d6", 4)], [die("d6", 4)]])[0]
    split = vote([[die("d6", 4)], [die("d6", 4)], [die("d6", 5)]])[0]
    assert (agreed.uncertain, agreed.confidence) == (False, pytest.approx(0.9))
    # Two frames of three agree: confidence is that agreement times the readers' 0.9.
    assert (split.uncertain, split.confidence) == (True, pytest.approx(0.6))


def test_a_frame_that_missed_the_die_lowers_its_confidence_not_its_certainty():
    """Seen in two frames of three, both reading 4 at 0.9: the die stays sure (no frame disagreed),
    but its confidence is 2/3 of 0.9."""
    frames = [[die("d6", 4)], [], [die("d6", 4)]]
    voted = vote(frames)[0]
    assert (voted.value, voted.uncertain) == (4, False)
    assert voted.confidence == pytest.approx(2 / 3 * 0.9)


def test_two_touching_dice_stay_two_dice_through_three_frames():
    """Two dice side by side overlap enough (IoU 1/3) to pass for one jittering die; a die already
    matched in this frame cannot take a second reading of the same frame."""
    left, right = die("d6", 2, x=0), die("d6", 5, x=20)
    assert iou(left.box, right.box) >= 0.3
    voted = vote([[left, right]] * 3)
    assert values(voted) == [("d6", 2), ("d6", 5)]
    assert not any(d.uncertain for d in voted)


def test_a_large_majority_is_trusted_at_a_lower_confidence():
    voted = vote([[die("d6", 4)]] * 4 + [[die("d6", 5)]])[0]
    assert voted.value == 4
    assert voted.uncertain is False
    assert voted.confidence == pytest.approx(0.8 * 0.9)


def test_confidence_averages_only_the_frames_that_read_the_winning_value():
    frames = [[die("d6", 4, confidence=1.0)], [die("d6", 4, confidence=0.8)], [die("d6", 2, confidence=0.1)]]
    assert vote(frames)[0].confidence == pytest.approx(2 / 3 * 0.9)


def test_colour_is_the_majority_of_the_frames_that_read_the_winning_value():
    """Over all five frames orange is the commoner colour, but the frames that misread the face
    do not get a say in its colour."""
    frames = [
        [die("d6", 4, colour="red")],
        [die("d6", 4, colour="red")],
        [die("d6", 4, colour="orange")],
        [die("d6", 5, colour="orange")],
        [die("d6", 5, colour="orange")],
    ]
    voted = vote(frames)[0]
    assert (voted.value, voted.colour) == (4, "red")


@pytest.mark.parametrize(("cocked_frames", "cocked"), [(0, False), (1, False), (2, True), (3, True)])
def test_a_die_is_cocked_when_most_frames_see_it_cocked(cocked_frames, cocked):
    frames = [[die("d6", 4, cocked=i < cocked_frames)] for i in range(3)]
    assert vote(frames)[0].cocked is cocked


def test_the_voted_dice_come_out_in_reading_order():
    bottom, top_right, top_left = die("d6", 1, x=100, y=200), die("d6", 2, x=200, y=0), die("d6", 3, x=0, y=10)
    frames = [[bottom, top_right, top_left]] * 3
    assert values(vote(frames)) == [("d6", 3), ("d6", 2), ("d6", 1)]


def test_boxless_readings_are_matched_by_their_place_in_the_list():
    frames = [[DieReading(type="d6", value=3), DieReading(type="d8", value=8)],
              [DieReading(type="d6", value=3), DieReading(type="d8", value=8)],
              [DieReading(type="d6", value=5), DieReading(type="d8", value=8)]]
    assert values(vote(frames)) == [("d6", 3), ("d8", 8)]


@pytest.mark.parametrize("flag", ["cocked", "uncertain"])
def test_a_tie_of_doubtful_frames_is_doubtful(flag):
    """Two frames of four see the die cocked (or unsure): better to ask than to trust it."""
    frames = [[die("d6", 4, **{flag: i < 2})] for i in range(4)]
    assert getattr(vote(frames)[0], flag) is True


def test_a_die_the_reader_doubted_in_most_frames_stays_uncertain():
    frames = [[die("d6", 4, uncertain=True)], [die("d6", 4, uncertain=True)], [die("d6", 4)]]
    assert vote(frames)[0].uncertain is True


def test_boxes_stacked_in_one_column_do_not_overlap():
    """Overlap needs both directions: a die right under another shares its columns, not its rows."""
    assert iou((0, 0, 10, 10), (0, 20, 10, 30)) == 0.0


def test_the_overlap_of_boxes_in_fractions_of_the_frame():
    """Boxes may be given as fractions of the picture: a union far below one pixel is still an overlap."""
    assert iou((0.1, 0.1, 0.3, 0.3), (0.1, 0.1, 0.3, 0.3)) == pytest.approx(1.0)


def test_a_die_that_moved_exactly_as_far_as_the_overlap_allows_is_the_same_die():
    """Shifted by half its width the box overlaps by exactly 1/3: at min_iou=1/3 that is still the same die."""
    frames = [[die("d6", 4, x=0)], [die("d6", 4, x=20)]]
    assert iou(frames[0][0].box, frames[1][0].box) == 1 / 3
    assert values(vote(frames, min_iou=1 / 3)) == [("d6", 4)]


def test_a_boxed_reading_never_joins_a_boxless_die_by_its_place_in_the_list():
    """Only boxless readings are matched by position; a boxed one seen after a boxless one is another die."""
    frames = [[DieReading(type="d6", value=3)], [die("d6", 5)]]
    assert sorted(values(vote(frames))) == [("d6", 3), ("d6", 5)]


def test_two_touching_dice_in_a_single_frame_are_two_dice():
    """A die that has just started a track cannot take a second reading of its own frame."""
    left, right = die("d6", 2, x=0), die("d6", 5, x=20)
    assert values(vote([[left, right]])) == [("d6", 2), ("d6", 5)]


def test_a_die_that_comes_to_rest_beside_another_mid_throw_is_a_second_die():
    """The right die shows up from the second frame on, overlapping the left one: each frame's left
    reading has taken the left die's track, so the right reading starts its own."""
    left, right = die("d6", 2, x=0), die("d6", 5, x=20)
    voted = vote([[left], [left, right], [left, right]])
    assert values(voted) == [("d6", 2), ("d6", 5)]
    assert not any(d.uncertain for d in voted)


def test_a_flicker_before_a_steady_die_drops_only_the_flicker():
    steady = die("d6", 4, x=200)
    frames = [[die("d8", 2, x=0), steady], [steady], [steady], [steady]]
    assert values(vote(frames)) == [("d6", 4)]


def test_confidence_is_given_to_four_decimals_and_counts_missed_frames_without_reader_confidence():
    """No frame gave a confidence: the share of frames that saw the die is its confidence, 2/3 as 0.6667."""
    frames = [[die("d6", 4, confidence=None)], [die("d6", 4, confidence=None)], []]
    assert vote(frames)[0].confidence == 0.6667


def test_an_agreement_of_exactly_the_required_share_is_sure():
    frames = [[die("d6", 4)]] * 3 + [[die("d6", 5)]]
    assert vote(frames, min_agreement=0.75)[0].uncertain is False
    assert vote(frames, min_agreement=0.76)[0].uncertain is True


def test_the_voted_die_lies_where_the_last_frame_that_read_it_saw_it():
    """The box jitters; the voted die keeps the latest box of its winning value."""
    frames = [[die("d6", 4, x=0)], [die("d6", 4, x=2)], [die("d6", 4, x=4)]]
    assert vote(frames)[0].box == (4.0, 0.0, 44.0, 40.0)
