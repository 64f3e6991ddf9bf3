"""Contingency action rolls (seed 001) in words: pressure sixes cutting critical levels, a six with
nothing left to cut, and one action die named as one."""

from __future__ import annotations

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice


def roll(*specs, **options):
    return registry.resolve("contingency-action", parse_dice(list(specs)), options)


def test_one_six_cuts_one_of_three_critical_levels():
    a = roll("d8:8", "d8:8", "d8:8", "d8:8", "d6:6")  # four eights: a critical with 3 levels
    assert (a.outcome, a.critical_levels) == ("critical", 2)
    assert "Each six cuts one level (critical levels first): critical becomes critical with 2 critical levels." in a.explanation
    assert a.summary == "Critical outcome: 4 eights; one pressure six cut 1 critical level."


def test_two_sixes_cut_two_critical_levels_and_leave_one():
    a = roll("d8:8", "d8:8", "d8:8", "d8:8", "d6:6", "d6:6")
    assert (a.outcome, a.critical_levels) == ("critical", 1)
    assert "Each six cuts one level (critical levels first): critical becomes critical with 1 critical level." in a.explanation
    assert a.summary == "Critical outcome: 4 eights; two pressure sixes cut 2 critical levels."


def test_a_six_on_a_disaster_cannot_cut_lower_and_gives_the_gm_tension():
    a = roll("d8:1", "d6:6")
    assert (a.outcome, a.tension) == ("disaster", 1)
    assert a.summary == "Disaster outcome: highest die 1; one pressure six could not cut below Disaster; the GM gains 1 tension."
    two = roll("d8:1", "d6:6", "d6:6")
    assert two.summary == "Disaster outcome: highest die 1; two pressure sixes could not cut below Disaster; the GM gains 2 tension."


def test_the_odds_name_one_action_die_as_a_die():
    assert registry.odds("contingency-action", ["d8"]).summary.startswith("1 action die: most likely ")
    assert registry.odds("contingency-action", ["d8", "d8", "d6"]).summary.startswith("2 action dice and 1 pressure: ")
