"""Futile Kingdoms contests (seed 004): score + d6, a 6 may add another d6 - 3, the highest Result
wins by the margin to the next; thrown one participant after another."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
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
