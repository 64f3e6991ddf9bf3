"""Every worked example in the seed rule texts, as test vectors."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading, parse_dice
from dicecam.mechanics.errors import DiceError, RulesError, UnknownSystemError
from dicecam.mechanics.house_games import HouseOptions, difficulty_of, split_pool
from dicecam.mechanics.futile_kingdoms import contest, contest_result, deviation


def roll(system, specs, **options):
    return registry.resolve(system, parse_dice(specs), options)


# --- 000 Contingency -------------------------------------------------------------------------

@pytest.mark.parametrize(
    "specs, options, result, result_die, total, outcome",
    [
        (["d6:5", "d8:4", "d10:9"], {"target": 5}, 5, "d6", 5, "success"),  # "5, 4 and 9 → 5"
        (["d6:3", "d8:1", "d10:9"], {"target": 5}, 3, "d6", 3, "failure"),  # Monique: luck die is a d6
        (["d6:5", "d8:4", "d10:9"], {"advantage": 1}, 9, "d10", 9, "success"),
        (["d6:5", "d8:4", "d10:9"], {"disadvantage": 1}, 4, "d8", 4, "failure"),
        (["d6:5", "d8:4", "d10:9"], {"advantage": 2, "disadvantage": 1}, 9, "d10", 9, "success"),  # 2 - 1 = 1 advantage
        (["d6:5", "d8:4", "d10:9"], {"advantage": 1, "disadvantage": 1}, 5, "d6", 5, "success"),  # cancel out
        (["d6:2", "d8:2", "d10:0"], {"target": 3}, 2, "d8", 2, "failure"),  # tie: ascending size → d6, d8; middle d8
        (["d6:2", "d8:2", "d10:0"], {"target": 3, "tie_order": "desc"}, 2, "d6", 2, "failure"),
        (["d4:1", "d12:7", "d10:0"], {"advantage": 1, "target": 10}, 10, "d10", 10, "success"),  # d10 0 counts 10
        (["d6:3", "d8:1", "d10:9"], {"modifiers": [2, 0, 0], "target": 5}, 5, "d6", 5, "success"),
    ],
)
def test_contingency_pick(specs, options, result, result_die, total, outcome):
    a = roll("contingency", specs, **options)
    assert (a.result, a.result_die, a.total, a.outcome) == (result, result_die, total, outcome)
    kept = [d for d in a.dice if not d.is_dropped]
    assert len(kept) == 1 and kept[0].type.value == result_die


def test_monique_luck_die_is_d6_and_adds_its_face():
    a = roll("contingency", ["d6:3", "d8:1", "d10:9"], target=5, luck="d6:4")
    assert a.luck_die == "d6" and a.luck_value == 4 and a.total == 7 and a.success
    # omens include the luck die: the 9 gives 1, the 1 gives the GM 1; 4 gives nothing
    assert (a.player_omens, a.gm_omens) == (1, 1)
    assert a.dice[-1].role == "luck"


def test_a_d10_luck_die_showing_0_adds_10():
    """The luck die is the result die's size; on a d10 its 0 counts as 10 like any skill d10's."""
    a = roll("contingency", ["d6:2", "d8:3", "d10:5"], advantage=1, target=12, luck="d10:0")
    assert (a.result_die, a.result) == ("d10", 5)
    assert (a.luck_value, a.total, a.outcome) == (10, 15, "success")
    assert a.dice[-1].role == "luck" and a.dice[-1].value == 0 and a.dice[-1].effective == 10


def test_a_d10_showing_0_with_a_face_modifier_is_explained_as_10_plus_the_modifier():
    a = roll("contingency", ["d6:2", "d8:3", "d10:0"], modifiers=[0, 0, 1], advantage=1, target=11)
    assert (a.result_die, a.result, a.outcome) == ("d10", 11, "success")
    assert "Dice after modifiers: d6 2, d8 3, d10 10+1=11." in a.explanation


def test_luck_die_of_the_wrong_size_is_refused():
    with pytest.raises(RulesError, match="must be a d6"):
        roll("contingency", ["d6:3", "d8:1", "d10:9"], luck="d8:4")


@pytest.mark.parametrize(
    "specs, mods, player, gm",
    [
        (["d8:8", "d10:0", "d12:12"], [], 1 + 2 + 3, 0),
        (["d10:9", "d10:1", "d12:11"], [], 1 + 2, 1),
        (["d4:1", "d6:1", "d8:1"], [], 0, 3),
        (["d4:2", "d6:6", "d8:7"], [-1, 2, 3], 1 + 2, 1),  # after modifiers: 1, 8, 10
        (["d12:12", "d12:12", "d12:12"], [3, 0, 0], 9, 0),  # 15 still gives 3 omens
    ],
)
def test_contingency_omens_after_modifiers(specs, mods, player, gm):
    a = roll("contingency", specs, modifiers=mods, target=30)
    assert (a.player_omens, a.gm_omens) == (player, gm)


def test_twelve_omens_possible_with_luck():
    a = roll("contingency", ["d12:12", "d12:12", "d12:12"], luck="d12:12", target=5)
    assert a.player_omens == 12


@pytest.mark.parametrize("target, total, fail_by_one", [(6, 5, True), (7, 5, False), (5, 5, False)])
def test_fail_by_one(target, total, fail_by_one):
    a = roll("contingency", ["d6:5", "d8:4", "d10:9"], target=target)
    assert a.total == total and a.fail_by_one is fail_by_one


@pytest.mark.parametrize("adv, dis, gm", [(0, 1, 1), (0, 0, 2), (1, 0, 3), (2, 2, 2)])
def test_choose_to_fail_gives_the_gm_omens(adv, dis, gm):
    a = registry.resolve("contingency", [], {"choose_to_fail": True, "advantage": adv, "disadvantage": dis})
    assert a.outcome == "failure" and a.gm_omens == gm and a.player_omens == 0


def test_contingency_takes_three_dice_d4_to_d12():
    with pytest.raises(RulesError):
        roll("contingency", ["d6:3", "d8:1"])
    with pytest.raises(RulesError):
        roll("contingency", ["d6:3", "d8:1", "d20:4"])


# --- 000 percentile, chance, table ------------------------------------------------------------

@pytest.mark.parametrize(
    "specs, tens, result",
    [
        (["d00:30", "d10:7"], None, 37),
        (["d10:7", "d00:30"], None, 37),
        (["d00:0", "d10:0"], None, 0),
        (["d00:100", "d10:0"], None, 0),  # a face printed 100 is 0
        (["d10:3:red", "d10:7:blue"], "red", 37),
        (["d10:3:red", "d10:7:blue"], "blue", 73),
    ],
)
def test_percentile(specs, tens, result):
    a = roll("percentile", specs, tens_colour=tens)
    assert a.result == result and a.outcome == str(result)


def test_two_plain_d10_need_the_tens_colour():
    with pytest.raises(RulesError, match="tens"):
        roll("percentile", ["d10:3", "d10:7"])


@pytest.mark.parametrize("specs, pct, happens", [
    (["d00:90", "d10:0"], 10, True), (["d00:80", "d10:9"], 10, False), (["d00:0", "d10:0"], 100, True),
    (["d00:90", "d10:9"], 0, False), (["d00:50", "d10:0"], 50, True), (["d00:40", "d10:9"], 50, False),
])
def test_chance_x_percent_happens_on_100_minus_x_or_more(specs, pct, happens):
    a = roll("chance", specs, percent=pct)
    assert a.happens is happens and a.threshold == 100 - pct
    assert a.outcome == ("success" if happens else "failure")


TABLE = {"die": "d6", "rows": [{"low": 1, "high": 2, "text": "Rain"}, {"low": 3, "high": 3, "text": "Fog"},
                               {"low": 4, "high": 6, "text": "Sun"}]}


@pytest.mark.parametrize("face, text", [(1, "Rain"), (2, "Rain"), (3, "Fog"), (6, "Sun")])
def test_table_lookup_by_value_or_range(face, text):
    a = registry.resolve("table", [DieReading(type="d6", value=face)], TABLE)
    assert a.text == text


def test_d100_table_reads_00_0_as_100():
    t = {"die": "d100", "rows": [{"low": 1, "high": 50, "text": "low"}, {"low": 51, "high": 100, "text": "high"}]}
    a = registry.resolve("table", parse_dice(["d00:0", "d10:0"]), t)
    assert a.result == 100 and a.text == "high"


def test_overlapping_table_rows_are_refused():
    with pytest.raises(RulesError, match="both cover"):
        registry.resolve("table", parse_dice(["d6:1"]), {"die": "d6", "rows": [
            {"low": 1, "high": 3, "text": "a"}, {"low": 3, "high": 6, "text": "b"}]})


# --- 001 Contingency action ---------------------------------------------------------------------

@pytest.mark.parametrize(
    "specs, outcome, levels, tension",
    [
        (["d8:8", "d8:8", "d8:8", "d6:6", "d6:6"], "clean", 0, 0),  # the seed: 8,8,8 vs 6,6 → clean
        (["d8:8", "d8:8", "d8:8", "d6:6", "d6:6", "d6:6"], "messy", 0, 0),  # vs 6,6,6 → messy
        (["d8:1", "d6:6", "d6:6"], "disaster", 0, 2),  # 1 with 6,6 → disaster + 2 tension
        (["d8:8", "d8:8", "d8:8"], "critical", 2, 0),
        (["d8:8", "d8:8", "d8:3", "d6:6"], "clean", 0, 0),
        (["d8:8", "d8:2"], "clean", 0, 0),
        (["d8:8", "d6:6"], "messy", 0, 0),  # the seed: clean cut by one six → messy
        (["d8:7", "d8:6"], "messy", 0, 0),
        (["d8:6"], "messy", 0, 0),
        (["d8:5", "d8:2"], "grim", 0, 0),
        (["d8:2"], "grim", 0, 0),
        (["d8:1", "d8:1"], "disaster", 0, 0),
        (["d8:7", "d6:6", "d6:5"], "grim", 0, 0),
        (["d8:6", "d6:6", "d6:6", "d6:6", "d6:6"], "disaster", 0, 2),
        (["d8:8", "d8:8", "d8:8", "d8:8", "d6:6"], "critical", 2, 0),
    ],
)
def test_action_outcomes(specs, outcome, levels, tension):
    a = roll("contingency-action", specs)
    assert (a.outcome, a.critical_levels, a.tension) == (outcome, levels, tension)


@pytest.mark.parametrize("specs, outcome", [
    (["d8:8", "d8:8"], "clean"),  # no critical on a zero-dice roll
    (["d8:8", "d8:5"], "grim"),
    (["d8:7", "d8:6"], "messy"),
    (["d8:1", "d8:8"], "disaster"),
])
def test_zero_dice_takes_the_lower_no_critical(specs, outcome):
    assert roll("contingency-action", specs, zero_dice=True).outcome == outcome


def test_zero_dice_needs_two_d8():
    with pytest.raises(RulesError):
        roll("contingency-action", ["d8:3"], zero_dice=True)


@pytest.mark.parametrize("specs, removed, remaining, outcome", [
    (["d8:6", "d8:8", "d8:2", "d8:5"], 2, 2, "diminished"),
    (["d8:6", "d8:7"], 2, 0, "depleted"),
    (["d8:1", "d8:5", "d8:3"], 0, 3, "none-removed"),
])
def test_resource_pool(specs, removed, remaining, outcome):
    a = roll("contingency-action", specs, mode="resource")
    assert (a.removed, a.remaining, a.outcome) == (removed, remaining, outcome)
    assert a.depleted is (remaining == 0) and a.none_removed is (removed == 0)
    assert sum(d.is_dropped for d in a.dice) == removed


def test_resource_pool_successive_rolls_check_the_size():
    first = roll("contingency-action", ["d8:6", "d8:8", "d8:2", "d8:5"], mode="resource", pool_size=4)
    second = roll("contingency-action", ["d8:7", "d8:1"], mode="resource", pool_size=first.remaining)
    assert second.remaining == 1
    with pytest.raises(RulesError, match="holds 2"):
        roll("contingency-action", ["d8:7"], mode="resource", pool_size=2)


def test_summary_reads_like_the_issue():
    a = roll("contingency-action", ["d8:7", "d8:3", "d6:6", "d6:2"])
    assert a.summary == "Grim outcome: highest die 7; one pressure six cut Messy to Grim."


# --- 002 House Games -------------------------------------------------------------------------

def d10s(*faces):
    return [f"d10:{f}" for f in faces]


@pytest.mark.parametrize(
    "faces, options, difficulty, successes, outcome",
    [
        ((2, 4, 5, 6, 8), {}, 6, 2, "success"),  # the seed's alley example
        ((2, 4, 5, 6, 8), {"no_ability": True}, 7, 1, "success"),
        ((2, 4, 5, 6, 8), {"secondary": True}, 4, 4, "success"),  # Sneak: difficulty 4
        ((2, 4, 5, 6, 8), {"secondary": True, "combat": True}, 5, 3, "success"),
        ((1, 6, 7), {}, 6, 1, "success"),
        ((1, 1, 7), {}, 6, -1, "botch"),
        ((1, 7), {}, 6, 0, "failure"),
        ((2, 3, 4), {}, 6, 0, "failure"),
        ((0, 0, 9), {"difficulty": 10}, 9, 3, "success"),  # face 0 counts as 10; the dice read are the pool rolled
        ((9, 9), {"modifier": 3}, 9, 2, "success"),
        ((2, 3), {"modifier": -6}, 2, 2, "success"),  # floor 2
        ((2, 3), {"modifier": -6, "combat": True}, 3, 1, "success"),  # floor 3 in combat
        ((6, 6), {"failed_attempts": 1}, 7, 0, "failure"),
    ],
)
def test_house_games(faces, options, difficulty, successes, outcome):
    a = roll("house-games", d10s(*faces), **options)
    assert (a.difficulty, a.successes, a.outcome) == (difficulty, successes, outcome)
    assert a.botch is (successes < 0)


@pytest.mark.parametrize("options, difficulty", [
    ({"modifier": 3}, 9),  # greased wall: +3 → 9
    ({"modifier": -2}, 4),  # grappling hook: -2 → 4
    ({"no_ability": True}, 7),
])
def test_house_difficulty_examples(options, difficulty):
    assert difficulty_of(HouseOptions(**options)).value == difficulty


def test_bill_blind_fires_difficulty_9_and_loses_3_dice():
    d = difficulty_of(HouseOptions(difficulty=8, modifier=4))
    assert (d.value, d.overage) == (9, 3)
    whole = roll("house-games", d10s(9, 9, 9, 9, 9, 9), difficulty=8, modifier=4, pool=6)
    assert whole.dice_lost == 3 and whole.dice_rolled == 3 and whole.successes == 3
    assert [d.is_ignored for d in whole.dice] == [False] * 3 + [True] * 3
    reduced = roll("house-games", d10s(9, 9, 9), difficulty=8, modifier=4, pool=6)
    assert reduced.successes == 3


@pytest.mark.parametrize("net, degree", [(1, "marginal"), (2, "between marginal and average"), (3, "average"),
                                         (4, "between average and complete"), (5, "complete"), (7, "complete")])
def test_house_degrees(net, degree):
    assert roll("house-games", d10s(*([9] * net))).degree == degree


@pytest.mark.parametrize("faces, opp, winner, margin, outcome", [
    ((9, 9, 9, 2, 9), 2, "actor", 2, "success"),  # 3 vs 1
    ((9, 2, 9, 2), 2, "defender", 0, "failure"),  # tie goes to the defender
    ((2, 3, 9, 9), 2, "defender", 2, "failure"),
])
def test_contested(faces, opp, winner, margin, outcome):
    a = roll("house-games", d10s(*faces), opponent_dice=opp)
    assert (a.winner, a.margin, a.outcome) == (winner, margin, outcome)


def test_a_side_that_botches_counts_as_zero_in_the_contest():
    """Contested: each side's net is at least 0 when compared; the defender's botch (-1) does not
    widen the actor's margin of 2."""
    a = roll("house-games", d10s(9, 9, 1, 2), opponent_dice=2)
    assert (a.successes, a.opponent_successes) == (2, -1)
    assert (a.winner, a.margin, a.outcome, a.degree) == ("actor", 2, "success", "between marginal and average")


def test_the_actors_botch_stays_a_botch_in_a_contested_roll():
    """Losing the contest is a failure, but more ones than successes is a botch whoever wins."""
    a = roll("house-games", d10s(1, 1, 9, 2, 3), opponent_dice=2)
    assert (a.successes, a.botch, a.winner) == (-1, True, "defender")
    assert a.outcome == "botch"
    assert "botch" in a.explanation[-1]


def test_extended_sums_nets():
    assert roll("house-games", d10s(9, 9, 1), prior_successes=3).total_successes == 4


@pytest.mark.parametrize("pools, actions, parts", [((8, 6), 2, [3, 3]), ((7,), 2, [4, 3]), ((9, 12), 3, [3, 3, 3])])
def test_split_pool(pools, actions, parts):
    assert split_pool(pools, actions) == parts


def test_split_pool_needs_two_dice_each():
    with pytest.raises(RulesError):
        split_pool((5, 8), 3)


# --- 003 Emergence ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "faces, direction, rerolls, result, wyrdness, disrupted, outcome",
    [
        ((7,), "+", [], 7, 0, False, "good"),
        ((4, 0, 6, 8), "+", [], 4, 0, True, "close to even"),  # 3+: 4,0,6,8 → 4
        ((4, 0, 6, 8), "-", [], 4, 0, True, "close to even"),
        ((5, 2, 8), "+", [], 8, 0, False, "almost the best"),
        ((5, 2, 8), "-", [], 2, 0, False, "almost the worst"),
        ((0, 4, 0, 7), "+", [5], 5, 2, False, "even"),  # double Wyrd 5 or more
        ((0, 4, 0, 7), "+", [9], 9, 2, False, "best"),
        ((0, 4, 0, 7), "+", [3], 4, 2, False, "close to even"),  # double Wyrd 4
        ((0, 4, 0, 7), "+", [0, 3], 3, 3, False, "bad"),  # a re-rolled 0 drops the 4 too
        ((0, 9), "+", [2], 2, 1, False, "almost the worst"),  # the last modifier is dropped even if highest
        ((0,), "+", [0, 0, 1], 1, 3, False, "worst"),
    ],
)
def test_emergence(faces, direction, rerolls, result, wyrdness, disrupted, outcome):
    a = roll("emergence", d10s(*faces), direction=direction, rerolls=rerolls)
    assert (a.result, a.wyrdness, a.disrupted, a.outcome) == (result, wyrdness, disrupted, outcome)


def test_wyrd_example_ignores_the_7_and_awaits_a_reroll():
    a = roll("emergence", d10s(0, 4, 0, 7))
    assert a.outcome == "reroll" and a.result is None and a.wyrdness == 2 and a.wyrd == "Double Wyrd"
    assert a.dice[3].is_ignored and a.dice[3].value == 7
    assert a.dice[2].is_ignored and not a.dice[1].is_ignored


@pytest.mark.parametrize("zeros, name", [(1, "Wyrd"), (2, "Double Wyrd"), (3, "Triple Wyrd"), (4, "Fourth Wyrd"),
                                         (11, "11th Wyrd"), (12, "12th Wyrd")])
def test_wyrdness_is_named_as_the_seed_names_it(zeros, name):
    """The seed: 'One 0 means Wyrd, two 0s are called Double Wyrd, three are Triple Wyrd ..., four Fourth Wyrd etc.'"""
    a = roll("emergence", d10s(0), rerolls=[0] * (zeros - 1) + [6])
    assert a.wyrdness == zeros and a.wyrd == name


@pytest.mark.parametrize("value, label", [(1, "Worst"), (2, "Almost the Worst"), (3, "Bad"), (4, "Close to Even"),
                                          (5, "Even"), (6, "Close to Even"), (7, "Good"), (8, "Almost the Best"),
                                          (9, "Best")])
def test_emergence_labels(value, label):
    assert roll("emergence", [f"d10:{value}"]).label == label


def test_rerolls_without_a_wyrd_base_are_refused():
    with pytest.raises(RulesError):
        roll("emergence", d10s(5), rerolls=[3])


# --- 004 Futile Kingdoms ---------------------------------------------------------------------

@pytest.mark.parametrize("red, white, dr", [(3, 4, -3), (6, 5, 5), (2, 2, 0), (1, 6, -1), (6, 1, 1)])
def test_dr_examples(red, white, dr):
    assert deviation(red, white) == dr
    a = roll("futile-kingdoms", [f"d6:{white}:white", f"d6:{red}:red"])
    assert a.dr == dr and a.may_explode is (abs(dr) == 5)


@pytest.mark.parametrize("red, white, mod, outcome", [(3, 4, 3, "draw"), (3, 4, 4, "success"), (3, 4, 0, "failure"),
                                                      (2, 2, 0, "draw"), (5, 6, 6, "success")])
def test_futile_result(red, white, mod, outcome):
    a = roll("futile-kingdoms", [f"d6:{red}:red", f"d6:{white}:white"], modifier=mod)
    assert a.outcome == outcome and a.result == a.dr + mod


def test_an_explosion_carries_the_earlier_dr():
    first = roll("futile-kingdoms", ["d6:6:red", "d6:5:white"])
    assert first.may_explode
    second = roll("futile-kingdoms", ["d6:2:red", "d6:4:white"], carry=first.dr, modifier=-1)
    assert (second.dr, second.result, second.outcome) == (-2, 2, "success")


@pytest.mark.parametrize("third", ["d6:5", "d6:5:green"])
def test_a_third_d6_is_refused(third):
    """A DR is exactly one red and one white d6: a third die on the table is not silently left out."""
    with pytest.raises(RulesError, match="exactly two d6"):
        roll("futile-kingdoms", ["d6:3:red", "d6:4:white", third])


def test_missing_red_die():
    with pytest.raises(RulesError, match="red"):
        roll("futile-kingdoms", ["d6:3", "d6:4:white"])


def test_contests():
    assert contest_result(4, [6, 6, 2]) == 4 + 6 + 3 - 1
    assert contest({"a": 7, "b": 5, "c": 3}) == ("a", 2)
    assert contest({"a": 5, "b": 5}) == (None, 0)
    with pytest.raises(RulesError):
        contest_result(1, [5, 3])


# --- registry ----------------------------------------------------------------------------------

def test_unknown_system_and_bad_options():
    with pytest.raises(UnknownSystemError):
        registry.resolve("dnd", [], {})
    with pytest.raises(RulesError, match="target"):
        registry.resolve("contingency", parse_dice(["d6:1", "d6:2", "d6:3"]), {"target": 0})
    with pytest.raises(RulesError, match="bogus"):
        registry.resolve("contingency", parse_dice(["d6:1", "d6:2", "d6:3"]), {"bogus": 1})
    with pytest.raises(DiceError):
        DieReading.parse("d6:9")


@pytest.mark.parametrize("name", sorted(registry.SYSTEMS))
def test_every_system_has_a_schema_and_titles(name):
    schema = registry.options_schema(name)
    assert schema["additionalProperties"] is False
    assert all("title" in p for p in schema["properties"].values())
