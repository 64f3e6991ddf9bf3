"""Die readings: how a die is named to a person, the reading order of the dice on a table, and the
one-line reason a validation error becomes."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from dicecam.mechanics.dice import DieReading, reading_order
from dicecam.mechanics.errors import DiceError, first_problem


def die(kind: str, value: int, x: float, y: float, size: float = 40.0, **fields) -> DieReading:
    """A die whose box has its top-left corner at (x, y)."""
    return DieReading(type=kind, value=value, box=(x, y, x + size, y + size), **fields)


@pytest.mark.parametrize(("spec", "label"), [
    ("d00:30", "d00 30"), ("d00:0", "d00 00"), ("d10:0", "d10 0"), ("d6:5:Red", "red d6 5"), ("d20:20", "d20 20"),
])
def test_a_die_is_named_colour_kind_face_with_the_tens_die_in_two_digits(spec, label):
    assert DieReading.parse(spec).label() == label


def test_a_percentile_die_printed_100_reads_as_0_and_colours_are_plain_lower_case():
    assert DieReading.parse("d00:100").value == 0
    assert DieReading.parse("d6:3: Blue ").colour == "blue"
    assert DieReading(type="d6", value=3, colour="  ").colour is None


WRITE = "write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red"


@pytest.mark.parametrize(("spec", "shown"), [
    ("d6:" + "x" * 37, repr("d6:" + "x" * 37)),  # 40 characters: shown whole
    ("d6:" + "x" * 38, repr("d6:" + "x" * 27) + "…"),  # 41: its first 30 and an ellipsis
    ("d6:" + "y" * 200, repr("d6:" + "y" * 27) + "…"),
])
def test_a_bad_die_is_quoted_whole_up_to_40_characters_and_cut_to_30_beyond(spec, shown):
    """A one-line error quotes what was typed, but a pasted paragraph is cut short."""
    with pytest.raises(DiceError) as e:
        DieReading.parse(spec)
    assert str(e.value) == f"bad die {shown}: {WRITE}"


@pytest.mark.parametrize(("spec", "face"), [
    ("d6:1000", "1000"),  # four digits: no die has such a face (d00's 100 is the longest)
    ("d20:-1000", "-1000"),
    ("d6:12345:red", "12345"),  # the face, not the colour
    ("d6:1234567890", "1234567890"),  # ten digits are shown whole
    ("d6:12345678901", "1234567890…"),  # beyond ten, the first ten and an ellipsis
])
def test_a_face_of_four_digits_or_more_is_no_die_s_face(spec, face):
    with pytest.raises(DiceError) as e:
        DieReading.parse(spec)
    assert str(e.value) == f"bad die {spec!r}: no die has a face {face}"


def test_three_digits_reach_the_die_which_names_its_faces():
    assert DieReading.parse("d00:100").value == 0
    with pytest.raises(DiceError) as e:
        DieReading.parse("d6:999")
    assert str(e.value) == "a d6 has no face 999 (faces 1-6)"


def test_reading_order_is_rows_top_first_then_left_to_right():
    """Rows by box centre: a die a little lower than its neighbour (under half a die) shares its row."""
    a, b, c = die("d6", 1, x=200, y=0), die("d6", 2, x=0, y=15), die("d6", 3, x=100, y=5)
    d, e = die("d8", 4, x=150, y=100), die("d8", 5, x=10, y=110)
    assert [x.value for x in reading_order([d, a, e, b, c])] == [2, 3, 1, 5, 4]


def test_a_die_half_a_die_lower_starts_a_new_row():
    high, low = die("d6", 1, x=100, y=0), die("d6", 2, x=0, y=20)
    assert [x.value for x in reading_order([high, low])] == [1, 2]
    just_in = die("d6", 2, x=0, y=19.9)
    assert [x.value for x in reading_order([high, just_in])] == [2, 1]


def test_the_smaller_die_sets_how_far_a_row_reaches():
    """A small d4 beside a big d20: the rows are told apart by the d4's height, not the d20's."""
    big, small = die("d20", 7, x=0, y=0, size=100), die("d4", 2, x=-200, y=60, size=20)
    # centres 50 and 70: 20 apart, over half the d4 (10) though under half the d20 (50): two rows
    assert [x.type.value for x in reading_order([small, big])] == ["d20", "d4"]
    above = die("d4", 2, x=200, y=100, size=20)  # centre 110, the d20 below it at 130: two rows again
    assert [x.type.value for x in reading_order([die("d20", 7, x=0, y=80, size=100), above])] == ["d4", "d20"]
    level = die("d4", 2, x=200, y=45, size=20)  # centre 55: within half the d4's height
    assert [x.type.value for x in reading_order([level, big])] == ["d20", "d4"]
    left = die("d4", 2, x=-100, y=45, size=20)
    assert [x.type.value for x in reading_order([big, left])] == ["d4", "d20"]


def test_within_a_row_boxes_that_are_not_square_read_by_their_centres():
    """A die on its edge, or a box that takes in a shadow, is narrow and tall: left to right goes
    by each box's centre, not by one of its edges."""
    square = DieReading(type="d6", value=1, box=(0, 18, 40, 58))
    tall = DieReading(type="d10", value=2, box=(45, 0, 55, 60))  # its top edge is higher, its centre to the right
    assert [x.value for x in reading_order([tall, square])] == [1, 2]
    narrow = DieReading(type="d10", value=3, box=(0, 0, 10, 60))  # reaches lower than the small d4 beside it
    small = DieReading(type="d4", value=4, box=(12, 20, 32, 40))
    assert [x.value for x in reading_order([small, narrow])] == [3, 4]


def test_a_row_is_matched_against_its_average_centre():
    """Three dice stepping down 8 px each share one row with the first (each within half a die of
    the row's average centre), so they read left to right."""
    dice = [die("d6", 1, x=300, y=0), die("d6", 2, x=200, y=8), die("d6", 3, x=100, y=16), die("d6", 4, x=0, y=24)]
    assert [x.value for x in reading_order(dice)] == [4, 3, 2, 1]
    far = [die("d6", 1, x=300, y=0), die("d6", 2, x=200, y=8), die("d6", 3, x=0, y=30)]
    # the third centre (50) is 26 below the row's average (24): a new row, though 22 below its neighbour
    assert [x.value for x in reading_order(far)] == [2, 1, 3]


def test_dice_without_a_box_follow_the_boxed_ones_in_their_given_order():
    loose = [DieReading(type="d6", value=6), DieReading(type="d6", value=5)]
    boxed = [die("d6", 2, x=100, y=0), die("d6", 1, x=0, y=0)]
    assert [x.value for x in reading_order([loose[0], boxed[0], loose[1], boxed[1]])] == [1, 2, 6, 5]
    assert reading_order([]) == []


class _Form(BaseModel):
    name: str
    size: int

    @field_validator("size")
    @classmethod
    def _small(cls, v: int) -> int:
        if v > 3:
            raise ValueError("too big")
        return v


def test_first_problem_names_the_field_and_keeps_only_the_reason():
    with pytest.raises(ValidationError) as e:
        _Form(name="x", size=9)
    assert first_problem(e.value) == ("size", "too big")
    with pytest.raises(ValidationError) as e:
        _Form.model_validate({"outer": 1, "size": 1}, strict=True)
    where, why = first_problem(e.value)
    assert where == "name" and why == "missing"


def test_first_problem_drops_the_skipped_parts_of_the_path():
    class Outer(BaseModel):
        inner: _Form

    with pytest.raises(ValidationError) as e:
        Outer(inner={"name": "x", "size": 7})
    assert first_problem(e.value) == ("inner size", "too big")  # the path in words, as the user reads it
    assert first_problem(e.value, skip=("inner",)) == ("size", "too big")


def test_first_problem_of_an_error_without_details():
    class Empty(Exception):
        def errors(self):
            return []

    assert first_problem(Empty()) == ("", "invalid value")
