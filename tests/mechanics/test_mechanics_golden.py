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
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    system, specs, options = CASES[name]
    got = registry.resolve(system, parse_dice(specs), options).model_dump(mode="json")
    path = GOLDEN / f"{name}.json"
    if os.environ.get("DICECAM_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text())
