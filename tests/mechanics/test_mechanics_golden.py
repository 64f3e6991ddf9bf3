"""Golden adjudications: the full flat JSON (numbers, die flags, words) must not drift silently.

Regenerate after a deliberate change with DICECAM_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "contingency_monique_luck": ("contingency", ["d6:3", "d8:1", "d10:9"], {"target": 5, "luck": "d6:4"}),
    "contingency_action_messy_cut": ("contingency-action", ["d8:7", "d8:3", "d6:6", "d6:2"], {}),
    "contingency_action_disaster_tension": ("contingency-action", ["d8:1", "d6:6", "d6:6"], {}),
    "house_games_bill_blind_fire": ("house-games", ["d10:9", "d10:1", "d10:0", "d10:4", "d10:9", "d10:2"],
                                    {"difficulty": 8, "modifier": 4, "pool": 6}),
    "emergence_double_wyrd": ("emergence", ["d10:0", "d10:4", "d10:0", "d10:7"], {"rerolls": [3]}),
    "futile_kingdoms_explode": ("futile-kingdoms", ["d6:6:red", "d6:5:white"], {"modifier": -1}),
    "percentile_37": ("percentile", ["d00:30", "d10:7"], {}),
    # One per branch the seven above do not take: the words of each verdict are pinned too.
    "contingency_choose_to_fail_with_advantage": ("contingency", ["d6:3", "d8:1", "d10:9"],
                                                  {"choose_to_fail": True, "advantage": 1}),
    "contingency_disadvantage_modifiers_d10_zero": ("contingency", ["d4:1", "d12:12", "d10:0"],
                                                    {"disadvantage": 2, "modifiers": [1, -1, 0], "target": 2}),
    "contingency_fail_by_one_desc_ties": ("contingency", ["d6:4", "d8:4", "d12:9"], {"target": 5, "tie_order": "desc"}),
    "contingency_action_zero_dice": ("contingency-action", ["d8:8", "d8:5", "d6:6"], {"zero_dice": True}),
    "contingency_action_critical_cut_once": ("contingency-action", ["d8:8", "d8:8", "d8:2", "d6:6", "d6:3"], {}),
    "contingency_action_clean_no_pressure": ("contingency-action", ["d8:8", "d8:4"], {}),
    "contingency_action_grim": ("contingency-action", ["d8:3", "d8:5", "d6:2"], {}),
    "contingency_action_resource_diminished": ("contingency-action", ["d8:6", "d8:2", "d8:7"],
                                               {"mode": "resource", "pool_size": 3}),
    "contingency_action_resource_none_removed": ("contingency-action", ["d8:2", "d8:5"], {"mode": "resource"}),
    "contingency_action_resource_depleted": ("contingency-action", ["d8:6", "d8:8"], {"mode": "resource"}),
    "house_games_contested_actor_wins": ("house-games", ["d10:9", "d10:0", "d10:7", "d10:1", "d10:8", "d10:3"],
                                         {"opponent_dice": 2, "opponent_difficulty": 7}),
    "house_games_contested_tie_to_defender": ("house-games", ["d10:9", "d10:2", "d10:9", "d10:4"], {"opponent_dice": 2}),
    "house_games_botch_extended": ("house-games", ["d10:1", "d10:1", "d10:6"], {"prior_successes": 4, "no_ability": True}),
    "house_games_secondary_combat_floor": ("house-games", ["d10:3", "d10:2", "d10:9", "d10:9", "d10:9", "d10:9"],
                                           {"difficulty": 4, "secondary": True, "combat": True, "failed_attempts": 0,
                                            "modifier": -2}),
    "house_games_failure_failed_attempts": ("house-games", ["d10:5", "d10:6"], {"failed_attempts": 2, "modifier": 1}),
    "emergence_minus_disrupted": ("emergence", ["d10:4", "d10:0", "d10:6", "d10:8"], {"direction": "-"}),
    "emergence_plain_best": ("emergence", ["d10:9"], {}),
    "emergence_wyrd_awaits_reroll": ("emergence", ["d10:0", "d10:3"], {}),
    "emergence_triple_wyrd_minus": ("emergence", ["d10:0", "d10:6", "d10:2"], {"direction": "-", "rerolls": [0, 0, 8]}),
    "futile_kingdoms_carry_draw": ("futile-kingdoms", ["d6:2:red", "d6:4:white"], {"carry": 5, "modifier": -1}),
    "futile_kingdoms_doubles_failure": ("futile-kingdoms", ["d6:3:white", "d6:3:red"], {"modifier": -2}),
    "futile_kingdoms_custom_colours": ("futile-kingdoms", ["d6:1:black", "d6:6:green"],
                                       {"red_colour": "Black", "white_colour": "green", "modifier": 3}),
    "percentile_two_d10_by_colour": ("percentile", ["d10:0:blue", "d10:0:red"], {"tens_colour": "red"}),
    "chance_happens": ("chance", ["d00:70", "d10:5"], {"percent": 30}),
    "chance_does_not_happen": ("chance", ["d00:60", "d10:9"], {"percent": 30}),
    "chance_zero_zero": ("chance", ["d00:0", "d10:0"], {"percent": 100}),
    "table_d6_range": ("table", ["d6:2"], {"title": "Weather", "rows": [{"low": 1, "high": 2, "text": "Rain"},
                                                                      {"low": 3, "high": 5, "text": "Fog"}]}),
    "table_no_row": ("table", ["d6:6"], {"rows": [{"low": 1, "high": 2, "text": "Rain"}]}),
    "table_d100": ("table", ["d00:0", "d10:0"], {"die": "d100", "rows": [{"low": 91, "high": 100, "text": "Dragon"}]}),
    # Added for the mutation run's survivors: singular and plural words, and the branches they sit in.
    "contingency_choose_to_fail_with_disadvantage": ("contingency", ["d6:3", "d8:1", "d10:9"],
                                                     {"choose_to_fail": True, "disadvantage": 1}),
    "contingency_choose_to_fail_even": ("contingency", ["d6:3", "d8:1", "d10:9"], {"choose_to_fail": True}),
    "contingency_one_advantage_plain_failure": ("contingency", ["d6:2", "d8:3", "d10:4"], {"advantage": 1, "target": 9}),
    "contingency_action_critical_keeps_a_level": ("contingency-action", ["d8:8", "d8:8", "d8:8", "d6:6"], {}),
    "contingency_action_critical_cut_to_zero_levels": ("contingency-action", ["d8:8", "d8:8", "d6:6", "d6:6"], {}),
    "contingency_action_three_sixes": ("contingency-action", ["d8:7", "d6:6", "d6:6", "d6:6"], {}),
    "contingency_action_four_sixes_one_tension": ("contingency-action", ["d8:8", "d6:6", "d6:6", "d6:6", "d6:6"], {}),
    "house_games_secondary_out_of_combat_one_die_lost": ("house-games", ["d10:9", "d10:0", "d10:9", "d10:0"],
                                                         {"difficulty": 10, "modifier": 2, "secondary": True,
                                                          "pool": 4}),
    "house_games_at_the_floor": ("house-games", ["d10:2", "d10:1"], {"difficulty": 4, "modifier": -2}),
    "house_games_contested_one_actor_die_defender_zero": ("house-games", ["d10:9", "d10:0", "d10:1"],
                                                          {"opponent_dice": 2}),
    "futile_kingdoms_no_modifier": ("futile-kingdoms", ["d6:4:red", "d6:2:white"], {}),
    "percentile_two_d10_tens_three": ("percentile", ["d10:3:red", "d10:5:blue"], {"tens_colour": "red"}),
    "chance_two_d10_by_colour": ("chance", ["d10:7:blue", "d10:8:red"], {"percent": 25, "tens_colour": "red"}),
    "table_d100_by_colour": ("table", ["d10:9:red", "d10:4:blue"],
                             {"die": "d100", "tens_colour": "red", "rows": [{"low": 91, "high": 100, "text": "Dragon"}]}),
    "table_d10_zero_is_ten": ("table", ["d10:0"], {"die": "d10", "rows": [{"low": 9, "high": 10, "text": "Gold"}]}),
    "table_d10_zero_row": ("table", ["d10:0"], {"die": "d10", "rows": [{"low": 0, "high": 0, "text": "Nothing"},
                                                                      {"low": 10, "high": 10, "text": "Ten"}]}),
    "table_d100_zero_without_row_100": ("table", ["d00:0", "d10:0"], {"die": "d100", "rows": [{"low": 1, "high": 5, "text": "Low"}]}),
    "table_single_value_row": ("table", ["d8:8"], {"die": "d8", "rows": [{"low": 8, "high": 8, "text": "Sun"}]}),
}
# Exact odds, words and all, for each system's default pool and a few option sets.
ODDS = {
    "contingency_default": ("contingency", [], {}),
    "contingency_luck_advantage": ("contingency", ["d4", "d8", "d12"], {"with_luck": True, "advantage": 1, "target": 9}),
    "contingency_disadvantage_modifiers": ("contingency", ["d6", "d6", "d10"],
                                           {"disadvantage": 1, "modifiers": [2, 0, -1], "tie_order": "desc"}),
    "contingency_action_default": ("contingency-action", [], {}),
    "contingency_action_pressure": ("contingency-action", ["d8", "d8", "d6", "d6"], {}),
    "contingency_action_zero_dice": ("contingency-action", ["d8", "d8", "d6"], {"zero_dice": True}),
    "contingency_action_resource": ("contingency-action", ["d8", "d8", "d8"], {"mode": "resource"}),
    "house_games_default": ("house-games", [], {}),
    "house_games_overage": ("house-games", ["d10"] * 6, {"difficulty": 8, "modifier": 3}),
    "emergence_plus": ("emergence", ["d10", "d10", "d10"], {}),
    "emergence_minus": ("emergence", ["d10", "d10"], {"direction": "-"}),
    "futile_kingdoms_modifier": ("futile-kingdoms", [], {"modifier": 2, "carry": -1}),
    "percentile_default": ("percentile", [], {}),
    "chance_35": ("chance", [], {"percent": 35}),
    "table_d8": ("table", [], {"die": "d8", "rows": [{"low": 1, "high": 3, "text": "Rain"}, {"low": 8, "high": 8, "text": "Sun"}]}),
    "house_games_one_die": ("house-games", ["d10"], {"difficulty": 5}),
    "futile_kingdoms_cannot_fail": ("futile-kingdoms", [], {"modifier": 50}),
    "percentile_two_d10": ("percentile", ["d10", "d10"], {"tens_colour": "red"}),
    "table_long_row_text": ("table", ["d4"], {"die": "d4", "rows": [{"low": 1, "high": 4, "text": "x" * 300}]}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    system, specs, options = CASES[name]
    got = registry.resolve(system, parse_dice(specs), options).model_dump(mode="json")
    path = GOLDEN / f"{name}.json"
    if os.environ.get("DICECAM_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text())


@pytest.mark.parametrize("name", sorted(ODDS))
def test_golden_odds(name):
    system, pool, options = ODDS[name]
    got = registry.odds(system, pool, options).model_dump(mode="json")
    path = GOLDEN / f"odds_{name}.json"
    if os.environ.get("DICECAM_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text())
