"""Exact odds: the issue's examples, the seed's Futile Kingdoms table, and agreement with
exhaustive enumeration of the resolvers on small pools."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product
from math import comb

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import FACES, DieReading, DieType
from dicecam.mechanics.emergence import LABELS
from dicecam.mechanics.errors import LimitError, RulesError
from dicecam.mechanics.futile_kingdoms import odds_table
from dicecam.mechanics.odds import MAX_ODDS_POOL, percent


def enumerate_outcomes(system, pool, options, colours=None):
    """P(outcome) by resolving every combination of faces with the real-dice resolver."""
    kinds = [DieType(k) for k in pool]
    tally: Counter = Counter()
    total = 0
    for faces in product(*(FACES[k] for k in kinds)):
        dice = [DieReading(type=k, value=v, colour=(colours[i] if colours else None)) for i, (k, v) in enumerate(zip(kinds, faces))]
        tally[registry.resolve(system, dice, options).outcome] += 1
        total += 1
    return {k: Fraction(v, total) for k, v in tally.items()}


def as_fractions(odds):
    return {o.outcome: Fraction(o.fraction) for o in odds.outcomes if Fraction(o.fraction)}


@pytest.mark.parametrize(
    "system, pool, options",
    [
        ("contingency", ["d6", "d8", "d10"], {"target": 5}),
        ("contingency", ["d4", "d4", "d12"], {"target": 3, "advantage": 1}),
        ("contingency", ["d6", "d6", "d6"], {"target": 4, "disadvantage": 2, "modifiers": [1, 0, -1]}),
        ("contingency", ["d4", "d6", "d8"], {"target": 6, "tie_order": "desc"}),
        ("contingency-action", ["d8", "d8", "d6"], {}),
        ("contingency-action", ["d8", "d8", "d8", "d6", "d6"], {}),
        ("contingency-action", ["d8", "d8", "d6", "d6"], {"zero_dice": True}),
        ("contingency-action", ["d8", "d8", "d8"], {"mode": "resource"}),
        ("house-games", ["d10"] * 3, {}),
        ("house-games", ["d10"] * 4, {"difficulty": 8, "no_ability": True}),
        ("house-games", ["d10"] * 3, {"modifier": -5, "combat": True}),
        ("percentile", ["d00", "d10"], {}),
        ("chance", ["d00", "d10"], {"percent": 37}),
        ("table", ["d6"], {"die": "d6", "rows": [{"low": 1, "high": 2, "text": "a"}, {"low": 3, "high": 6, "text": "b"}]}),
    ],
)
def test_odds_match_exhaustive_enumeration(system, pool, options):
    got = registry.odds(system, pool, options)
    assert sum(Fraction(o.fraction) for o in got.outcomes) == 1
    expected = enumerate_outcomes(system, pool, options)
    if system == "percentile":  # odds are by decile; the resolver gives each number
        deciles = Counter()
        for k, v in expected.items():
            deciles[f"{int(k) // 10 * 10:02d}-{int(k) // 10 * 10 + 9:02d}"] += v
        expected = dict(deciles)
    if system == "table":  # odds name the row, the resolver says "found"
        expected = {"1: a": Fraction(1, 3), "2: b": Fraction(2, 3)}
    assert as_fractions(got) == expected


def test_futile_odds_match_enumeration():
    got = registry.odds("futile-kingdoms", ["d6", "d6"], {"modifier": 2})
    expected = enumerate_outcomes("futile-kingdoms", ["d6", "d6"], {"modifier": 2}, colours=["red", "white"])
    assert as_fractions(got) == expected


def test_contingency_d6_d8_d10_vs_5():
    got = registry.odds("contingency", ["d6", "d8", "d10"], {"target": 5})
    assert got.probability("success") == Fraction(7, 15)
    assert got.outcomes[0].fraction == "7/15"


def test_contingency_luck_odds_match_enumeration():
    pool, opts = ["d4", "d6", "d4"], {"target": 6, "with_luck": True}
    got = registry.odds("contingency", pool, opts)
    tally = Counter()
    for faces in product(*(FACES[DieType(k)] for k in pool)):
        dice = [DieReading(type=k, value=v) for k, v in zip(pool, faces)]
        first = registry.resolve("contingency", dice, {"target": 6})
        kind = DieType(first.result_die)
        for luck in FACES[kind]:
            a = registry.resolve("contingency", dice, {"target": 6, "luck": f"{kind.value}:{luck}"})
            tally[a.outcome] += Fraction(1, kind.sides)
    n = 4 * 6 * 4
    assert got.probability("success") == tally["success"] / n


def test_action_ladder_three_action_two_pressure():
    got = registry.odds("contingency-action", ["d8"] * 3 + ["d6"] * 2, {})
    assert [o.outcome for o in got.outcomes] == ["critical", "clean", "messy", "grim", "disaster"]
    # Independent check of one rung: critical needs ≥2 eights and fewer sixes than critical levels.
    p8 = Fraction(1, 8)
    crit = Fraction(0)
    for eights in (2, 3):
        p_e = comb(3, eights) * p8 ** eights * (1 - p8) ** (3 - eights)
        p_cut_ok = sum(comb(2, s) * Fraction(1, 6) ** s * Fraction(5, 6) ** (2 - s) for s in range(0, eights - 1))
        crit += p_e * p_cut_ok
    assert got.probability("critical") == crit


def test_house_games_ten_dice_difficulty_7():
    got = registry.odds("house-games", ["d10"] * 10, {"difficulty": 7})
    # Independent multinomial: each die hits with 4/10 (7, 8, 9, 0), is a one with 1/10.
    p = {"success": Fraction(0), "failure": Fraction(0), "botch": Fraction(0)}
    for hits in range(11):
        for ones in range(11 - hits):
            rest = 10 - hits - ones
            w = Fraction(comb(10, hits) * comb(10 - hits, ones)) * Fraction(4, 10) ** hits * Fraction(1, 10) ** ones * Fraction(5, 10) ** rest
            net = hits - ones
            p["botch" if net < 0 else "failure" if net == 0 else "success"] += w
    assert as_fractions(got) == p


def test_house_games_loses_overage_in_odds():
    a = registry.odds("house-games", ["d10"] * 6, {"difficulty": 8, "modifier": 4})
    b = registry.odds("house-games", ["d10"] * 3, {"difficulty": 9})
    assert as_fractions(a) == as_fractions(b)


# The seed's table, as printed (# | DR = # (%) | DR > # (%) | Difficulty).
SEED_TABLE = """\
-6 | 0 | 100. | automatic
-5 | 2.78 | 97.2 | trivial
-4 | 5.56 | 91.7 | routine
-3 | 8.33 | 83.3 | easy
-2 | 11.1 | 72.2 | straightforward
-1 | 13.9 | 58.3 | moderate
0 | 16.7 | 41.7 | challenging
+1 | 13.9 | 27.8 | difficult
+2 | 11.1 | 16.7 | ambitious
+3 | 8.33 | 8.33 | precarious
+4 | 5.56 | 2.78 | heroic
+5 | 2.78 | 0 | desperate"""


def _three_significant(p: Fraction) -> str:
    return "0" if p == 0 else f"{float(p * 100):#.3g}"


def test_futile_kingdoms_odds_table_exactly():
    rows = [f"{n:+d}".replace("+0", "0") + f" | {_three_significant(eq)} | {_three_significant(gt)} | {word}"
            for n, eq, gt, word in odds_table()]
    assert "\n".join(rows) == SEED_TABLE


def test_dr_has_the_2d6_shape():
    dr = {n: eq for n, eq, _, _ in odds_table()}
    two_d6 = Counter(a + b for a in range(1, 7) for b in range(1, 7))
    assert [dr[n] for n in range(-5, 6)] == [Fraction(two_d6[s], 36) for s in range(2, 13)]


def _emergence_by_enumeration(k: int, direction: str, depth: int = 4):
    """Resolve every base/modifier face sequence; Wyrd bases through re-roll chains up to `depth`
    zeros, with the tail (more zeros than modifiers left) summed as a uniform 1-9 base."""
    tally: Counter = Counter()
    for faces in product(range(10), repeat=k + 1):
        dice = [DieReading(type="d10", value=v) for v in faces]
        w = Fraction(1, 10 ** (k + 1))
        if faces[0] != 0:
            tally[registry.resolve("emergence", dice, {"direction": direction}).outcome] += w
            continue
        for j in range(depth):
            for r in range(1, 10):
                a = registry.resolve("emergence", dice, {"direction": direction, "rerolls": [0] * j + [r]})
                tally[a.outcome] += w * Fraction(1, 10) ** j * Fraction(1, 10)
        for r in range(1, 10):  # j >= depth zeros: every modifier is gone (depth > k), the base decides
            tally[LABELS[r].lower()] += w * Fraction(1, 10) ** depth * Fraction(1, 9)
    return dict(tally)


@pytest.mark.parametrize("k, direction", [(0, "+"), (1, "+"), (2, "+"), (2, "-"), (3, "-")])
def test_emergence_odds_match_enumeration(k, direction):
    got = registry.odds("emergence", ["d10"] * (k + 1), {"direction": direction})
    assert as_fractions(got) == {o: p for o, p in _emergence_by_enumeration(k, direction).items() if p}


@pytest.mark.parametrize("name", sorted(registry.SYSTEMS))
def test_every_system_odds_sum_to_one(name):
    opts = {"rows": [{"low": 1, "high": 3, "text": "x"}]} if name == "table" else {}
    got = registry.odds(name, [], opts)
    assert sum(Fraction(o.fraction) for o in got.outcomes) == 1
    assert got.summary.endswith(".")
    assert all(0 <= o.probability <= 1 for o in [*got.outcomes, *got.events])


def test_thirty_dice_is_the_largest_odds_query():
    assert registry.odds("emergence", ["d10"] * MAX_ODDS_POOL).pool == ["d10"] * MAX_ODDS_POOL
    with pytest.raises(LimitError, match=f"cap of {MAX_ODDS_POOL}"):
        registry.odds("emergence", ["d10"] * (MAX_ODDS_POOL + 1))


@pytest.mark.parametrize(("p", "text"), [
    (Fraction(0), "0%"), (Fraction(1), "100%"), (Fraction(1, 2), "50.0%"), (Fraction(1, 100), "1.0%"),
    (Fraction(3, 200), "1.5%"), (Fraction(1, 1000), "0.1%"), (Fraction(1, 30000), "0.0033%"),
])
def test_a_chance_of_one_percent_or_more_shows_one_decimal_and_a_smaller_one_two_figures(p, text):
    assert percent(p) == text


def test_contingency_odds_spend_a_d10_luck_die_whose_0_counts_10():
    """Three d10 against 20: the middle die must count 10 (two or three 0s: 28/1000) and the
    d10 luck die must add 10 (its 0: 1/10)."""
    got = registry.odds("contingency", ["d10", "d10", "d10"], {"target": 20, "with_luck": True})
    assert got.probability("success") == Fraction(28, 1000) * Fraction(1, 10)


def test_odds_with_no_pool_roll_the_pool_the_options_give():
    assert registry.odds("house-games", [], {"attribute": 3, "ability": 4, "difficulty": 6}).pool == ["d10"] * 7
    assert registry.odds("house-games", [], {"pool": 2, "difficulty": 6}).pool == ["d10"] * 2


def test_odds_caps_and_bad_pools():
    with pytest.raises(LimitError):
        registry.odds("house-games", ["d10"] * 31)
    with pytest.raises(RulesError):
        registry.odds("contingency", ["d6", "d8"])
    with pytest.raises(RulesError):
        registry.odds("house-games", ["d6"])


@pytest.mark.parametrize("table", [
    {"die": "d100", "rows": [{"low": 0, "high": 0, "text": "zero"}, {"low": 1, "high": 99, "text": "most"},
                             {"low": 100, "high": 100, "text": "hundred"}]},
    {"die": "d100", "rows": [{"low": 1, "high": 10, "text": "low"}, {"low": 91, "high": 100, "text": "high"}]},
    {"die": "d10", "rows": [{"low": 1, "high": 5, "text": "low"}, {"low": 6, "high": 10, "text": "high"}]},
    {"die": "d10", "rows": [{"low": 0, "high": 4, "text": "low"}, {"low": 5, "high": 9, "text": "high"}]},
])
def test_table_odds_are_what_resolve_gives_over_every_face(table):
    """Odds count each face as resolve reads it (a zero is 0 when a row covers 0, else the die's top)."""
    if table["die"] == "d100":
        throws = [[DieReading(type="d00", value=10 * t), DieReading(type="d10", value=o)] for t in range(10) for o in range(10)]
    else:
        throws = [[DieReading(type="d10", value=v)] for v in range(10)]
    counts = Counter()
    for dice in throws:
        a = registry.resolve("table", dice, table)
        counts[f"{a.row}: {a.text}" if a.row else "no row"] += 1
    got = {o.outcome: Fraction(o.fraction) for o in registry.odds("table", [], table).outcomes}
    assert got == {k: Fraction(v, len(throws)) for k, v in counts.items()}
