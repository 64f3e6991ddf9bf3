"""Futile Kingdoms contests (seed 004): score + d6, a 6 may add another d6 - 3, the highest Result
wins by the margin to the next; thrown one participant after another."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieType, parse_dice
from dicecam.mechanics.errors import RulesError

SYSTEM = "futile-kingdoms-contest"


def throw(faces, **options):
    return registry.resolve(SYSTEM, parse_dice([f"d6:{f}" for f in faces]), options)


def test_the_first_participant_waits_for_the_next():
    a = throw([4], scores=[3, 2], names=["Ann", "Bob"])
    assert (a.participant, a.result, a.outcome, a.decided, a.next) == ("Ann", 7, "waiting", False, "Bob")
    assert a.summary == "Ann's Result is 7; Bob throws next."


@pytest.mark.parametrize("faces, result", [
    ([5], 7),  # score 2 + 5
    ([6, 5], 10),  # 2 + 6 + (5 - 3)
    ([5, 6], 10),  # the same dice read in the other order: the six was thrown first
    ([6, 6, 1], 9),  # 2 + 6 + 3 + (1 - 3)
    ([6], 8),  # a six not exploded
])
def test_a_six_explodes_adding_another_d6_minus_3(faces, result):
    a = throw(faces, scores=[3, 2], thrown=["4"])
    assert a.result == result and a.decided
    assert a.may_explode is (sorted(faces)[0] == 6 and all(f == 6 for f in faces))


@pytest.mark.parametrize("faces, thrown, scores, winner, margin, outcome", [
    ([6, 5], ["4"], [3, 2], "B", 3, "win"),  # 10 against 7
    ([5], ["4"], [3, 2], None, 0, "draw"),  # 7 against 7: a literal draw
    ([1], ["6+6+2", "3"], [0, 4, 1], "A", 1, "win"),  # 0+6+3-1 = 8, 4+3 = 7, 1+1 = 2: A wins by 1, to the next
])
def test_the_highest_result_wins_by_the_margin_to_the_next(faces, thrown, scores, winner, margin, outcome):
    a = throw(faces, scores=scores, thrown=thrown)
    assert (a.winner, a.margin, a.outcome) == (winner, margin, outcome)
    assert len(a.results) == len(scores)


@pytest.mark.parametrize("faces, options, words", [
    ([4, 5], {"scores": [1, 2]}, "only explodes on a 6"),
    ([4], {"scores": [1, 2], "thrown": ["4", "5"]}, "all 2 participants have thrown"),
    ([4], {"scores": [1, 2], "thrown": ["7"]}, "write the d6 faces"),
    ([4], {"scores": [1]}, "at least 2"),
    ([4], {"scores": [1, 2], "names": ["Ann"]}, "1 names for 2 scores"),
])
def test_bad_contests_are_refused_with_the_rule(faces, options, words):
    with pytest.raises(RulesError, match=words):
        throw(faces, **options)
    with pytest.raises(RulesError, match="d6s, not d8"):
        registry.resolve(SYSTEM, parse_dice(["d8:3"]), {})


def test_odds_are_exact_against_enumeration_without_explosions():
    o = registry.odds(SYSTEM, [], {"scores": [1, 0, 2], "names": ["Ann", "Bob", "Cy"]})
    tally = {"Ann wins": Fraction(0), "Bob wins": Fraction(0), "Cy wins": Fraction(0), "draw": Fraction(0)}
    for a, b, c in product(range(1, 7), repeat=3):
        r = {"Ann": 1 + a, "Bob": 0 + b, "Cy": 2 + c}
        top = max(r.values())
        leaders = [n for n, v in r.items() if v == top]
        tally[f"{leaders[0]} wins" if len(leaders) == 1 else "draw"] += Fraction(1, 216)
    assert {x.outcome: Fraction(x.fraction) for x in o.outcomes} == tally


def test_odds_after_the_first_throw_and_with_explosions():
    o = registry.odds(SYSTEM, [], {"scores": [3, 2], "names": ["Ann", "Bob"], "thrown": ["4"]})
    assert {x.outcome: x.fraction for x in o.outcomes} == {"Ann wins": "2/3", "Bob wins": "1/6", "draw": "1/6"}
    boom = registry.odds(SYSTEM, [], {"scores": [3, 2], "names": ["Ann", "Bob"], "thrown": ["4"], "explode": True})
    # Bob (2) needs 6 or more from the d6 part to beat Ann's 7: a 6 exploded is 6 + (x - 3), which wins for
    # x = 3..6 (4 in 6) and draws for x = 2; a plain 5 draws too.
    assert {x.outcome: x.fraction for x in boom.outcomes} == {"Ann wins": "25/36", "Bob wins": "1/9", "draw": "7/36"}
    wide = registry.odds(SYSTEM, [], {"scores": [4, 2], "thrown": ["4"], "explode": True})  # A has 8
    # B wins on 6 then a further d6 - 3 giving more than 6: 6 + (x - 3) > 6 for x in 4, 5, 6 (a 6 explodes on, still > 6).
    assert dict((x.outcome, Fraction(x.fraction)) for x in wide.outcomes)["B wins"] == Fraction(1, 6) * Fraction(3, 6)


def test_each_exploded_die_is_explained_as_the_face_minus_3():
    a = throw([1, 6, 6], scores=[3, 2], names=["Ann", "Bob"], thrown=["6+4"])
    assert a.explanation == [
        "Ann threw earlier: score +3, d6 6, exploded d6 4 - 3 = +1 = 10.",
        "Bob: score +2, d6 6, exploded d6 6 - 3 = +3, exploded d6 1 - 3 = -2 = Result 9.",
        "Ann has the highest Result and wins by 1, the difference to the next.",
    ]
    assert [d.role for d in a.dice] == ["Bob"] * 3 and a.options["thrown"] == ["6+4"]


@pytest.mark.parametrize("text, result", [("6,5", 8), ("6 5", 8), ("6+5", 8), ("1", 1)])
def test_earlier_throws_may_be_written_with_plus_comma_or_space_and_a_1_is_a_face(text, result):
    # A's score 0: 6 + (5 - 3) = 8, or a plain 1.
    assert throw([2], scores=[0, 0], thrown=[text]).results["A"] == result


def test_a_throw_with_two_dice_below_6_is_refused_before_it_is_counted():
    with pytest.raises(RulesError, match=r"faces 4\+5: a contest die only explodes on a 6, so a throw holds at most "
                                         r"one die below 6"):
        throw([2], scores=[0, 0], thrown=["4+5"])


def test_twelve_dice_is_the_most_one_participant_throws():
    assert throw([6] * 11 + [1], scores=[0, 0], thrown=["3"]).result == 6 + 10 * 3 - 2
    with pytest.raises(RulesError, match="^13 dice is over the 12 one participant may throw$"):
        throw([6] * 13, scores=[0, 0], thrown=["3"])
    with pytest.raises(RulesError, match=r"^no dice read: a contest throw is one d6 \(and any exploded d6s\)$"):
        registry.resolve(SYSTEM, [], {})


def test_the_next_participant_is_the_one_after_and_a_6_may_still_explode():
    a = throw([6], scores=[1, 2, 3])
    assert a.next == "B" and a.summary == "A's Result is 7; B throws next; a 6 may explode."
    assert a.explanation[-2:] == ["A ends on a 6 and may explode: leave the dice and add another d6.", "B throws next."]
    assert len(a.dice) == 1 and a.dice[0].role == "A"


def test_the_decided_summary_ranks_the_results_highest_first():
    # A 0+2, B 0+4, C 5+6 = 11: C wins by 7 over B, and C's 6 may still explode.
    c = throw([6], scores=[0, 0, 5], thrown=["2", "4"])
    assert c.summary == "C wins by 7 (C 11, B 4, A 2); C may still explode the 6."
    assert c.explanation[-1] == "C has the highest Result and wins by 7, the difference to the next."


def test_a_draw_names_every_participant_sharing_the_top_result():
    d = throw([2], scores=[1, 1, 0], thrown=["4", "4"])  # A 5, B 5, C 2
    assert d.outcome == "draw" and d.summary == "Draw: A and B tie at 5 (A 5, B 5, C 2)."
    assert d.explanation[-1] == "Highest Result 5 is shared by A and B: a draw."


def test_the_odds_summary_names_the_favourite_and_the_draw():
    o = registry.odds(SYSTEM, [], {"scores": [3, 2], "names": ["Ann", "Bob"], "thrown": ["4"]})
    # Ann wins 2/3, draw 1/6 (see above).
    assert o.summary == "2 participants, 1 thrown, no 6 exploded: Ann wins 66.7%, draw 16.7%."
    boom = registry.odds(SYSTEM, [], {"scores": [3, 2], "names": ["Ann", "Bob"], "thrown": ["4"], "explode": True})
    assert boom.summary == "2 participants, 1 thrown, every 6 exploded (up to 4 times): Ann wins 69.4%, draw 19.4%."
    three = registry.odds(SYSTEM, [], {"scores": [0, 0, 0], "thrown": ["1"]})
    assert three.pool == ["d6", "d6"] and three.options["thrown"] == ["1"]  # the two still to throw
    with pytest.raises(RulesError, match="^a contest is thrown with d6s$"):
        registry.odds(SYSTEM, [DieType.d8], {})
