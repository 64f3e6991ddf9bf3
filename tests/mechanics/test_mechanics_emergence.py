"""Emergence (seed 003) beyond the worked examples: Wyrd names past the tenth, the dice cap, and which
modifier each rule sets aside, and why, as a reader of the roll sees it."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.emergence import MAX_DICE, wyrd_name
from dicecam.mechanics.errors import LimitError


def roll(faces, **options):
    return registry.resolve("emergence", parse_dice([f"d10:{v}" for v in faces]), options)


def fates(a):
    return [(d.role, d.why) for d in a.dice]


# "Wyrd, Double Wyrd, Triple Wyrd or Third Wyrd, Fourth Wyrd etc.": past the tenth, English ordinals.
@pytest.mark.parametrize(("n", "name"), [
    (11, "11th Wyrd"), (12, "12th Wyrd"), (13, "13th Wyrd"), (20, "20th Wyrd"), (21, "21st Wyrd"),
    (22, "22nd Wyrd"), (23, "23rd Wyrd"), (24, "24th Wyrd"), (101, "101st Wyrd"), (111, "111th Wyrd"),
    (112, "112th Wyrd"), (121, "121st Wyrd"),
])
def test_a_wyrd_past_the_tenth_takes_its_english_ordinal(n, name):
    assert wyrd_name(n) == name


def test_twenty_rerolled_zeros_make_the_21st_wyrd():
    a = roll([0, 5, 3], rerolls=[0] * 20)  # base 0 (1) + twenty zeros on the re-roll
    assert (a.outcome, a.wyrdness, a.wyrd) == ("reroll", 21, "21st Wyrd")
    assert a.summary.startswith("21st Wyrd: re-roll")


def test_a_modifier_zero_and_twenty_rerolled_zeros_make_the_22nd_wyrd():
    a = roll([0, 0, 3], rerolls=[0] * 20)  # the 3 is dropped as the last modifier; the 0 adds one
    assert (a.wyrdness, a.wyrd) == (22, "22nd Wyrd")


def test_twenty_dice_is_the_most_one_roll_reads():
    assert roll([5] + [3] * (MAX_DICE - 1)).result == 5
    with pytest.raises(LimitError, match=f"cap of {MAX_DICE}"):
        roll([5] + [3] * MAX_DICE)


def test_a_modifier_zero_disrupts_itself_and_the_modifiers_after_it():
    a = roll([5, 3, 0, 7])
    assert fates(a) == [("base", None), ("modifier", None), ("modifier", "a modifier 0: disrupted"),
                        ("modifier", "after a modifier 0: disrupted")]
    assert [d.is_ignored for d in a.dice] == [False, False, True, True]
    assert (a.result, a.disrupted) == (5, True)  # 5 and 3 count; the 7 is ignored


def test_on_a_wyrd_base_the_modifiers_after_a_zero_are_ignored():
    # mods 3, 0, 4, 6, 2: the last (2) is dropped; the 0 adds a Wyrdness and cuts the 4 and the 6.
    a = roll([0, 3, 0, 4, 6, 2], rerolls=[7])
    assert fates(a) == [
        ("base", None),
        ("modifier", None),
        ("modifier", "a modifier 0 on a Wyrd base: one more Wyrdness"),
        ("modifier", "after a modifier 0: ignored"),
        ("modifier", "after a modifier 0: ignored"),
        ("modifier", "the last modifier is dropped on a Wyrd base"),
    ]
    assert [d.is_ignored for d in a.dice] == [False, False, True, True, True, True]
    assert (a.result, a.wyrd) == (7, "Double Wyrd")  # re-roll 7 and the 3 count: 7


def test_a_rerolled_zero_drops_the_last_modifier_still_counted():
    # mods 4, 6, 2: the 2 is dropped on the Wyrd base, the re-rolled 0 drops the 6, the 7 then counts with the 4.
    a = roll([0, 4, 6, 2], rerolls=[0, 7])
    assert fates(a) == [("base", None), ("modifier", None), ("modifier", "dropped by a re-rolled 0"),
                        ("modifier", "the last modifier is dropped on a Wyrd base")]
    assert (a.result, a.label, a.wyrd) == (7, "Good", "Double Wyrd")


def test_a_wyrd_awaiting_its_reroll_reports_the_rerolls_already_made():
    a = roll([0], rerolls=[0, 0])
    assert (a.outcome, a.rerolls, a.wyrd) == ("reroll", [0, 0], "Triple Wyrd")


def test_with_minus_modifiers_the_explanation_names_the_lowest():
    a = roll([5, 3, 8], direction="-")
    assert (a.result, a.label) == (3, "Bad")
    assert "Counted: 5, 3, 8; the lowest is 3." in a.explanation
    assert "Counted: 5, 3, 8; the highest is 8." in roll([5, 3, 8]).explanation
