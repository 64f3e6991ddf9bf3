"""House Games (seed 002) from the character sheet: the pool is attribute + ability, a pool the
table does not match is named as more or fewer dice; contested rolls by the defender's colour;
extended and teamwork totals; split pools, one throw read left to right."""

from __future__ import annotations

import re
from fractions import Fraction
from math import comb

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.errors import RulesError


def d10s(*faces: int, colour: str | None = None) -> list[str]:
    return [f"d10:{f}" + (f":{colour}" if colour else "") for f in faces]


def roll(specs, **options):
    return registry.resolve("house-games", parse_dice(specs), options)


def test_smitty_rolls_intelligence_3_plus_computer_5_eight_dice_at_difficulty_6():
    a = roll(d10s(2, 4, 5, 6, 8, 6, 7, 1), attribute=3, ability=5)
    assert (a.pool, a.dice_rolled, a.difficulty, a.hits, a.ones, a.successes) == (8, 8, 6, 4, 1, 3)
    assert a.explanation[0] == "Pool: attribute 3 + ability 5 = 8 dice."
    assert registry.odds("house-games", [], {"attribute": 3, "ability": 5}).pool == ["d10"] * 8


def test_the_alley_example_dexterity_3_stealth_2_five_dice_two_successes():
    a = roll(d10s(2, 4, 5, 6, 8), attribute=3, ability=2)
    assert (a.pool, a.successes, a.outcome) == (5, 2, "success")


@pytest.mark.parametrize("faces, words", [
    ((2, 4, 5, 6, 8, 6, 7), "the table shows 7 dice, 1 fewer than the 8 to roll (attribute 3 + ability 5)"),
    ((2, 4, 5, 6, 8, 6, 7, 1, 9, 9), "the table shows 10 dice, 2 more than the 8 to roll (attribute 3 + ability 5)"),
])
def test_more_or_fewer_dice_than_the_pool_is_named(faces, words):
    with pytest.raises(RulesError, match="^" + re.escape(words)):
        roll(d10s(*faces), attribute=3, ability=5)


def test_no_ranks_in_the_ability_rolls_the_attribute_alone_at_plus_one():
    # "if you are attempting to sneak down an alley but do not have any Stealth, you may roll only
    # Dexterity, but the Difficulty will be 7 rather than 6."
    a = roll(d10s(6, 7, 9), attribute=3, ability=0)
    assert (a.pool, a.difficulty, a.successes) == (3, 7, 2)
    assert "no ranks in the ability" in a.explanation[0]


def test_a_pool_above_nine_loses_the_overage_from_the_sheet_pool():
    a = roll(d10s(9, 9, 9), attribute=3, ability=3, difficulty=8, modifier=4)  # Bill: 6 dice, 3 lost
    assert (a.pool, a.dice_lost, a.dice_rolled, a.successes) == (6, 3, 3, 3)
    with pytest.raises(RulesError, match="the table shows 4 dice, 1 more than the 3 to roll .*minus 3 lost"):
        roll(d10s(9, 9, 9, 9), attribute=3, ability=3, difficulty=8, modifier=4)


@pytest.mark.parametrize("options, words", [
    ({"ability": 2}, "an ability needs its attribute"),
    ({"attribute": 3, "ability": 2, "pool": 6}, "pool 6 is not attribute 3 + ability 2"),
    ({"attribute": 0, "ability": 0}, "0 dice"),
    ({"split": [6]}, "two or more actions"),
    ({"opponent_dice": 2, "opponent_colour": "black"}, "not both"),
    ({"attribute": 2, "opponent_dice": 1}, "named by colour"),
])
def test_options_that_cannot_hold_together_are_refused(options, words):
    with pytest.raises(RulesError, match=re.escape(words)):
        roll(d10s(6, 7), **options)


def test_contested_in_one_throw_the_defender_by_colour_at_its_own_difficulty():
    # The attacker's sword (difficulty 6) against the defender's parry in black dice (difficulty 7).
    a = roll(d10s(9, 8, 6, 2) + d10s(7, 3, 1, colour="black"), opponent_colour="black", opponent_difficulty=7)
    assert (a.successes, a.opponent_successes, a.winner, a.margin, a.outcome) == (3, 0, "actor", 3, "success")
    assert [d.role for d in a.dice] == ["pool"] * 4 + ["defender"] * 3
    tie = roll(d10s(9, 2) + d10s(9, colour="black"), opponent_colour="black")
    assert (tie.winner, tie.margin, tie.outcome) == ("defender", 0, "failure")  # a tie goes to the defender
    with pytest.raises(RulesError, match="no black dice read"):
        roll(d10s(9, 2), opponent_colour="black")
    # The actor's pool from the sheet is still counted: the defender's dice are told apart by colour.
    sheet = roll(d10s(9, 8, 6) + d10s(7, colour="black"), attribute=2, ability=1, opponent_colour="black")
    assert (sheet.pool, sheet.successes, sheet.opponent_successes) == (3, 3, 1)
    with pytest.raises(RulesError, match="the table shows 2 dice, 1 fewer than the 3 to roll"):
        roll(d10s(9, 8) + d10s(7, colour="black"), attribute=2, ability=1, opponent_colour="black")


def test_a_defender_who_wins_leaves_the_actor_no_degree():
    """The degree is the actor's margin over the defender; a defender who wins by 2 leaves none."""
    a = roll(d10s(9, 2) + d10s(9, 8, 7), opponent_dice=3)
    assert (a.successes, a.opponent_successes, a.winner, a.margin) == (1, 3, "defender", 2)
    assert (a.outcome, a.degree) == ("failure", None)
    assert not any(step.startswith("Degree") for step in a.explanation)
    assert a.summary == "Failure: 1 net success at difficulty 6; defender wins by 2."


def test_extended_and_teamwork_totals_add_each_throw():
    a = roll(d10s(9, 9, 1), prior_successes=3, extended=True)
    assert (a.successes, a.total_successes) == (1, 4)
    assert a.summary.endswith("; 4 in all so far.")


def test_a_split_divides_the_lower_pool_and_judges_each_action():
    # Attack with 8 dice and dodge with 6 at once: the lower pool, 6, splits 3 + 3.
    a = roll(d10s(9, 8, 1, 2, 3, 4), split=[8, 6])
    assert [(x.action, x.dice, x.successes, x.outcome) for x in a.actions] == [(1, 3, 1, "success"), (2, 3, 0, "failure")]
    assert a.outcome == "partial"
    assert [d.role for d in a.dice] == ["action 1"] * 3 + ["action 2"] * 3
    assert "the lower pool of 8, 6 is 6, divided as 3 + 3 dice" in " ".join(a.explanation)
    with pytest.raises(RulesError, match="the table shows 5 dice, 1 fewer than the 6 of the split"):
        roll(d10s(9, 8, 1, 2, 3), split=[8, 6])
    with pytest.raises(RulesError, match="cannot be split 3 ways"):
        roll(d10s(9, 8, 1, 2, 3), split=[5, 8, 7])


def test_odds_of_the_sheet_pool_are_exact():
    # P(no die at or above 6 and no 1 among 8 d10) = (4/10)^8: the failure-by-zero-hits part, checked exactly.
    o = registry.odds("house-games", [], {"attribute": 3, "ability": 5})
    assert o.pool == ["d10"] * 8
    success = Fraction(o.outcomes[0].fraction)
    # Direct sum over hits h, ones k, blanks (faces 2-5) with h - k > 0.
    direct = sum(Fraction(comb(8, h) * comb(8 - h, k) * 5 ** h * 1 ** k * 4 ** (8 - h - k), 10 ** 8)
                 for h in range(9) for k in range(9 - h) if h - k > 0)
    assert success == direct


def test_contested_odds_agree_with_resolving_every_throw():
    from collections import Counter
    from itertools import product

    options = {"opponent_dice": 2, "opponent_difficulty": 7, "difficulty": 5}
    tally: Counter = Counter()
    for faces in product(range(10), repeat=4):
        tally[roll(d10s(*faces), **options).outcome] += Fraction(1, 10 ** 4)
    o = registry.odds("house-games", ["d10"] * 4, options)
    assert {x.outcome: Fraction(x.fraction) for x in o.outcomes if x.probability} == dict(tally)
    with pytest.raises(RulesError, match="as a count"):
        registry.odds("house-games", ["d10"] * 4, {"opponent_colour": "black"})


@pytest.mark.parametrize("attribute, line", [
    (1, "Pool: attribute 1 = 1 die."),
    (3, "Pool: attribute 3 = 3 dice."),
])
def test_an_attribute_without_a_named_ability_is_the_whole_pool(attribute, line):
    a = roll(d10s(*[9] * attribute), attribute=attribute)
    assert (a.pool, a.successes, a.explanation[0]) == (attribute, attribute, line)


@pytest.mark.parametrize("faces, options, message", [
    # One die on the table for a pool of 2: "1 die", and the missing one is added.
    ((9,), {"attribute": 2},
     "the table shows 1 die, 1 fewer than the 2 to roll (attribute 2 + ability 0): "
     "add the missing dice and roll again, or correct the roll"),
    # One die too many: the extra is taken off.
    ((9, 8), {"attribute": 1},
     "the table shows 2 dice, 1 more than the 1 to roll (attribute 1 + ability 0): "
     "take the extra off and roll again, or correct the roll"),
    ((9, 8, 7, 6), {"pool": 3},
     "the table shows 4 dice, 1 more than the 3 to roll (pool 3): take the extra off and roll again, or correct the roll"),
])
def test_the_count_message_says_which_way_the_table_is_off_and_what_to_do(faces, options, message):
    with pytest.raises(RulesError) as e:
        roll(d10s(*faces), **options)
    assert str(e.value) == message


def test_a_three_way_split_reads_each_share_left_to_right():
    # Attack 9, dodge 7, block 8 at once: the lower pool, 7, splits 3 + 2 + 2 (the first share takes
    # the odd die). Action 1 rolls 0 (a 10), 7, 1; action 2 rolls 9, 4; action 3 rolls 1, 4.
    a = roll(d10s(0, 7, 1, 9, 4, 1, 4), split=[9, 7, 8])
    assert [(x.action, x.dice, x.hits, x.ones, x.successes, x.outcome, x.degree) for x in a.actions] == [
        (1, 3, 2, 1, 1, "success", "marginal"),  # 10 and 7 at or above 6, less the 1
        (2, 2, 1, 0, 1, "success", "marginal"),
        (3, 2, 0, 1, -1, "botch", None),  # more ones than successes
    ]
    assert a.explanation == [
        "Base difficulty 6: difficulty 6.",
        "Split 3 ways: the lower pool of 9, 7, 8 is 7, divided as 3 + 2 + 2 dice (at least 2 each), read left to right.",
        "Action 1 (3 dice: 10, 7, 1): 2 at or above 6, 1 one: net 1, success, marginal.",
        "Action 2 (2 dice: 9, 4): 1 at or above 6, 0 ones: net 1, success, marginal.",
        "Action 3 (2 dice: 1, 4): 0 at or above 6, 1 one: net -1, botch.",
    ]
    assert a.summary == ("Split 3 ways at difficulty 6: action 1 success, 1 net; action 2 success, 1 net; "
                         "action 3 botch, -1 net.")
    # One botched action makes the throw a botch; the totals are every action's together.
    assert (a.outcome, a.botch, a.hits, a.ones, a.successes, a.total_successes) == ("botch", True, 3, 2, 1, 1)
    assert (a.dice_rolled, a.dice_lost, a.degree, a.options["split"]) == (7, 0, None, [9, 7, 8])
    assert [(d.role, d.is_ignored, d.why, d.effective) for d in a.dice] == [
        ("action 1", False, None, 10), ("action 1", False, None, None), ("action 1", False, None, None),
        ("action 2", False, None, None), ("action 2", True, "below difficulty 6", None),
        ("action 3", False, None, None), ("action 3", True, "below difficulty 6", None),
    ]


def test_a_split_whose_actions_agree_takes_their_verdict():
    a = roll(d10s(9, 9, 2, 8, 1, 7), split=[6, 6])  # 2 - 0 and 2 - 1: both succeed
    assert [(x.successes, x.outcome) for x in a.actions] == [(2, "success"), (1, "success")]
    assert (a.outcome, a.botch, a.successes) == ("success", False, 3)
    assert "Some actions succeed and some fail." not in a.explanation
    failed = roll(d10s(2, 3, 4, 5), split=[4, 5])  # nothing at or above 6 on either side
    assert (failed.outcome, failed.botch) == ("failure", False)


def test_a_split_where_some_actions_succeed_and_some_fail_is_partial():
    a = roll(d10s(9, 8, 1, 2, 3, 4), split=[8, 6])
    assert (a.outcome, a.botch, a.successes, a.total_successes) == ("partial", False, 1, 1)
    assert a.explanation[-1] == "Some actions succeed and some fail."


@pytest.mark.parametrize("faces, options, message", [
    ((9, 8, 1, 2, 3, 4, 5), {"split": [8, 6]}, "the table shows 7 dice, 1 more than the 6 of the split (3 + 3)"),
    ((9, 8, 1, 2), {"split": [8, 6]}, "the table shows 4 dice, 2 fewer than the 6 of the split (3 + 3)"),
    ((9,), {"split": [8, 6]}, "the table shows 1 die, 5 fewer than the 6 of the split (3 + 3)"),
    # Difficulty 8 + 2 is 10: the seed shrinks a pool by the overage, but not a split one.
    ((9, 8, 1, 2, 3, 4), {"split": [8, 6], "difficulty": 8, "modifier": 2},
     "the seed does not say how a difficulty above 9 shrinks a split pool: "
     "roll the actions apart or lower the difficulty"),
])
def test_a_split_that_cannot_be_read_is_refused(faces, options, message):
    with pytest.raises(RulesError) as e:
        roll(d10s(*faces), **options)
    assert str(e.value) == message


def test_contested_odds_count_the_dice_left_after_the_difficulty():
    # Difficulty 8 + 3 is 11: 9, and the actor's pool loses 2. Five dice with the defender's one
    # leave the actor 2 dice at 9 against 1 die at 6.
    # An actor's die: +1 on 9 or 0 (2/10), -1 on a 1 (1/10). Two dice: net -2 1/100, -1 14/100,
    # 0 53/100, +1 28/100, +2 4/100. The defender's die succeeds 5/10.
    # Botch: net below 0, 15/100. Win: +2 always (4/100), +1 when the defender has no success (28/100 × 1/2).
    options = {"opponent_dice": 1, "difficulty": 8, "modifier": 3}
    o = registry.odds("house-games", ["d10"] * 5, options)
    assert {x.outcome: Fraction(x.fraction) for x in o.outcomes} == {
        "success": Fraction(18, 100), "botch": Fraction(15, 100), "failure": Fraction(67, 100)}
    assert o.summary == "2 dice at difficulty 9 against 1 at 6: the actor wins 18.0%, botches 15.0%."
    assert (o.pool, o.options["opponent_dice"], o.options["modifier"]) == (["d10"] * 5, 1, 3)


def test_contested_odds_with_one_actor_die_left():
    # Four dice, one the defender's, two lost: one actor die at 9 wins only on 9 or 0 while the
    # defender's die fails (2/10 × 5/10) and botches on a 1.
    o = registry.odds("house-games", ["d10"] * 4, {"opponent_dice": 1, "difficulty": 8, "modifier": 3})
    assert {x.outcome: Fraction(x.fraction) for x in o.outcomes} == {
        "success": Fraction(1, 10), "botch": Fraction(1, 10), "failure": Fraction(8, 10)}
    assert o.summary == "1 die at difficulty 9 against 1 at 6: the actor wins 10.0%, botches 10.0%."
    with pytest.raises(RulesError, match=r"^2 defender dice \(and 2 lost\) leave none for the actor$"):
        registry.odds("house-games", ["d10"] * 4, {"opponent_dice": 2, "difficulty": 8, "modifier": 3})


@pytest.mark.parametrize("pool, options, message", [
    # The defender's colour sorts dice on the table; a count of dice is what odds can be asked for.
    (["d10"] * 4, {"opponent_colour": "black"},
     "for contested odds give the defender's dice as a count (opponent_dice), not a colour"),
    # A split is one throw judged as several actions: its odds are asked one share at a time.
    (["d10"] * 6, {"split": [8, 6]},
     "odds for a split roll are not offered; ask for one action's share of the pool"),
])
def test_odds_that_are_not_offered_say_what_to_ask_instead(pool, options, message):
    with pytest.raises(RulesError) as e:
        registry.odds("house-games", pool, options)
    assert str(e.value) == message


def test_a_contested_throw_of_only_the_defenders_colour_has_no_actor():
    with pytest.raises(RulesError) as e:
        roll(d10s(9, 7, colour="black"), opponent_colour="black")
    assert str(e.value) == "only black dice read: the actor's dice are another colour"
