"""Contingency's difficulty descriptors (seed 000, "Typical Difficulty Targets"): every target
carries its word, and a target can be given as the word."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.contingency import descriptor, index_modifiers
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.errors import RulesError

# The seed's table, word for word.
SEED_TABLE = [(1, "Automatic"), (2, "Very Easy"), (3, "Easy"), (4, "Moderate"), (5, "Tricky"), (6, "Hard"),
              (7, "Difficult"), (8, "Very Difficult"), (9, "Improbable"), (10, "Inconceivable"), (11, "Near Impossible")]
MONIQUE = parse_dice(["d6:3", "d8:1", "d10:9"])  # the seed's luck example: the d6 3 is the result


@pytest.mark.parametrize("target, word", SEED_TABLE + [(12, "Near Impossible"), (40, "Near Impossible")])
def test_each_target_has_the_seeds_word(target, word):
    assert descriptor(target) == word
    adj = registry.resolve("contingency", MONIQUE, {"target": target})
    assert adj.difficulty == word
    assert f"against {target} ({word})" in adj.summary
    assert f"against target {target} ({word})" in " ".join(adj.explanation)
    assert f"against {target} ({word})" in registry.odds("contingency", ["d6", "d8", "d10"], {"target": target}).summary


@pytest.mark.parametrize("given", ["Tricky", "tricky", " TRICKY ", "5"])
def test_a_target_given_as_a_word_is_its_number(given):
    adj = registry.resolve("contingency", MONIQUE, {"target": given, "luck": "d6:2"})
    assert (adj.target, adj.total, adj.outcome) == (5, 5, "success")


@pytest.mark.parametrize("given, number", [("very difficult", 8), ("Near-Impossible", 11), ("near_impossible", 11),
                                           ("Very  Easy", 2)])
def test_two_word_descriptors(given, number):
    assert registry.get("contingency").options({"target": given}).target == number


def test_an_unknown_word_is_refused_with_the_words():
    with pytest.raises(RulesError, match=r"unknown difficulty 'brutal'.*Tricky \(5\).*Near Impossible \(11\+\)"):
        registry.resolve("contingency", MONIQUE, {"target": "brutal"})


def test_choosing_to_fail_still_names_the_difficulty():
    adj = registry.resolve("contingency", [], {"target": "Hard", "choose_to_fail": True})
    assert (adj.target, adj.difficulty) == (6, "Hard")


def test_the_options_schema_offers_the_words():
    target = registry.options_schema("contingency")["properties"]["target"]
    assert [w for n, w in SEED_TABLE] == next(x["enum"] for x in target["anyOf"] if x.get("type") == "string")


@pytest.mark.parametrize("given, target", [("+7", 7), (" 7 ", 7)])
def test_a_number_written_as_text_is_a_number_not_a_word(given, target):
    assert registry.resolve("contingency", MONIQUE, {"target": given}).target == target


def test_a_negative_target_written_as_text_is_refused_as_a_number():
    with pytest.raises(RulesError) as e:
        registry.resolve("contingency", MONIQUE, {"target": "-3"})
    assert str(e.value) == "bad option target: Input should be greater than or equal to 1"


@pytest.mark.parametrize("given", ["brutal", "X7"])
def test_a_target_that_is_no_number_and_no_word_lists_every_word(given):
    words = ", ".join(f"{w} ({n}{'+' if n == 11 else ''})" for n, w in SEED_TABLE)
    with pytest.raises(RulesError) as e:
        registry.resolve("contingency", MONIQUE, {"target": given})
    assert str(e.value) == f"bad option target: unknown difficulty {given!r}: give a number or one of {words}"


def test_the_options_schema_offers_a_target_as_a_number_from_1_to_40_or_a_word():
    """The page and the API docs read the schema: the number's bounds move into the number choice,
    beside the words, so the target itself is neither only a number nor only a word."""
    target = registry.options_schema("contingency")["properties"]["target"]
    number, word = target["anyOf"]
    assert number == {"type": "integer", "minimum": 1, "maximum": 40}
    assert word == {"type": "string", "enum": [w for n, w in SEED_TABLE]}
    assert not {"type", "minimum", "maximum"} & set(target)
    assert target["default"] == 5


@pytest.mark.parametrize("given", ["x:+2", "0:two", "0:+2:1"])
def test_a_face_modifier_that_is_not_two_whole_numbers_is_refused_with_the_form(given):
    """`--modifier INDEX:+N`: the index and the modifier must both be whole numbers."""
    with pytest.raises(RulesError) as e:
        index_modifiers([given])
    assert str(e.value) == f"--modifier {given!r}: the index and the modifier are whole numbers, e.g. 0:+2"


def test_face_modifiers_add_up_per_die():
    assert index_modifiers(["0:+2", "2:-1", "0:+1", " 1 : 3 "]) == {0: 3, 2: -1, 1: 3}
    with pytest.raises(RulesError) as e:
        index_modifiers(["+2"])
    assert str(e.value) == "--modifier '+2': write INDEX:+N, e.g. 0:+2"
