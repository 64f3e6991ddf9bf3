"""Invariants of the rules, checked with Hypothesis."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from dicecam.mechanics import registry
from dicecam.mechanics.contingency_action import LEVELS
from dicecam.mechanics.dice import FACES, DieReading, DieType
from dicecam.mechanics.futile_kingdoms import deviation

SKILL = [DieType.d4, DieType.d6, DieType.d8, DieType.d10, DieType.d12]
fast = settings(max_examples=60, deadline=None)


def die(kind: DieType):
    return st.sampled_from(FACES[kind]).map(lambda v: DieReading(type=kind, value=v))


skill_die = st.sampled_from(SKILL).flatmap(die)
d8 = die(DieType.d8)
d6 = die(DieType.d6)
d10 = die(DieType.d10)


def rank(adj) -> int:
    """Action outcome as a number: disaster 0 ... critical 4 + levels, minus tension."""
    return LEVELS.index(adj.outcome) + adj.critical_levels - adj.tension


@fast
@given(st.lists(d8, min_size=1, max_size=8), st.lists(d6, max_size=5), d6)
def test_adding_a_pressure_die_never_improves_the_outcome(action, pressure, extra):
    before = registry.resolve("contingency-action", action + pressure)
    after = registry.resolve("contingency-action", action + pressure + [extra])
    assert rank(after) <= rank(before)


@fast
@given(st.lists(d8, min_size=1, max_size=8), st.lists(d6, max_size=5), d8)
def test_adding_an_action_die_never_worsens_the_outcome(action, pressure, extra):
    before = registry.resolve("contingency-action", action + pressure)
    after = registry.resolve("contingency-action", action + [extra] + pressure)
    assert rank(after) >= rank(before)


@fast
@given(st.lists(skill_die, min_size=3, max_size=3), st.integers(0, 3), st.integers(0, 3), st.integers(1, 12))
def test_advantage_never_lowers_the_result(dice, adv, dis, target):
    base = registry.resolve("contingency", dice, {"advantage": adv, "disadvantage": dis, "target": target})
    more = registry.resolve("contingency", dice, {"advantage": adv + 1, "disadvantage": dis, "target": target})
    assert more.result >= base.result
    assert more.success >= base.success
    # omens count every die, whichever is kept
    assert (more.player_omens, more.gm_omens) == (base.player_omens, base.gm_omens)


@fast
@given(st.lists(skill_die, min_size=3, max_size=3), st.integers(0, 2), st.integers(1, 3))
def test_a_better_face_modifier_never_lowers_the_total(dice, index, plus):
    mods = [0, 0, 0]
    base = registry.resolve("contingency", dice, {"modifiers": mods})
    mods[index] = plus
    better = registry.resolve("contingency", dice, {"modifiers": mods})
    assert better.total >= base.total


@fast
@given(st.lists(skill_die, min_size=3, max_size=3))
def test_exactly_one_result_die_and_every_die_reported(dice):
    a = registry.resolve("contingency", dice)
    assert len(a.dice) == 3 and sum(not d.is_dropped for d in a.dice) == 1
    assert all(d.why for d in a.dice if d.is_dropped)


@fast
@given(st.integers(1, 10), st.integers(2, 9))
def test_more_house_dice_never_lower_expected_net(n, difficulty):
    # (P(success) itself is NOT monotone: 1 die at difficulty 2 succeeds 9/10, 2 dice 81/100.)
    # Expected net = n * (P(hit) - P(one)) grows with n because P(hit) ≥ 2/10 > 1/10 = P(one)
    from dicecam.mechanics.house_games import net_die
    assert net_die(n + 1, difficulty).mean() >= net_die(n, difficulty).mean()


@fast
@given(st.integers(1, 10), st.integers(2, 8))
def test_higher_difficulty_never_raises_success(n, difficulty):
    easy = registry.odds("house-games", ["d10"] * n, {"difficulty": difficulty})
    hard = registry.odds("house-games", ["d10"] * n, {"difficulty": difficulty + 1})
    assert hard.probability("success") <= easy.probability("success")


@fast
@given(st.lists(d10, min_size=1, max_size=12), st.integers(2, 9))
def test_house_net_is_hits_minus_ones(dice, difficulty):
    a = registry.resolve("house-games", dice, {"difficulty": difficulty})
    faces = [10 if d.value == 0 else d.value for d in dice]
    assert a.successes == sum(f >= difficulty for f in faces) - faces.count(1)


@fast
@given(st.integers(1, 6), st.integers(1, 6))
def test_dr_is_antisymmetric(red, white):
    assert deviation(red, white) == -deviation(white, red)
    assert abs(deviation(red, white)) <= 5


@fast
@given(st.lists(d10, min_size=1, max_size=8), st.sampled_from("+-"), st.lists(st.integers(0, 9), max_size=3))
def test_emergence_result_is_one_of_the_counted_dice(dice, direction, rerolls):
    opts = {"direction": direction, "rerolls": rerolls if dice[0].value == 0 else []}
    if dice[0].value == 0 and rerolls and 0 not in rerolls[:-1] and len(rerolls) > 1:
        opts["rerolls"] = rerolls[:1]  # a re-roll after a 1-9 is refused
    if dice[0].value == 0:
        opts["rerolls"] = [r for r in opts["rerolls"] if r == 0] + [5]
    a = registry.resolve("emergence", dice, opts)
    assert 1 <= a.result <= 9
    counted = [d.value for d in a.dice[1:] if not d.is_ignored] + [dice[0].value or opts["rerolls"][-1]]
    assert a.result in counted
    assert len(a.dice) == len(dice)


@fast
@given(st.sampled_from(sorted(registry.SYSTEMS)), st.data())
def test_odds_sum_to_one_for_random_pools(name, data):
    pool = {
        "contingency": lambda: data.draw(st.lists(st.sampled_from(["d4", "d6", "d8", "d10", "d12"]), min_size=3, max_size=3)),
        "contingency-action": lambda: ["d8"] * data.draw(st.integers(1, 10)) + ["d6"] * data.draw(st.integers(0, 6)),
        "house-games": lambda: ["d10"] * data.draw(st.integers(1, 10)),
        "emergence": lambda: ["d10"] * data.draw(st.integers(1, 10)),
    }.get(name, lambda: [])()
    opts = {"rows": [{"low": 1, "high": 2, "text": "x"}]} if name == "table" else {}
    got = registry.odds(name, pool, opts)
    assert sum(Fraction(o.fraction) for o in got.outcomes) == 1
