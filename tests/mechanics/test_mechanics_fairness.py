"""Is this die fair? The test flags a loaded die at the power it states and a fair one no more
often than the false-alarm rate it states (checked over many seeded simulated histories), and
the history is counted as the table decided it: corrections with their corrected value,
uncertain readings left out and counted, dice grouped by kind and colour or by their name."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import numpy as np
import pytest
from scipy.stats import binomtest

from dicecam.mechanics.dice import DieReading, DieType
from dicecam.mechanics.errors import RulesError
from dicecam.mechanics.fairness import (FairnessSettings, _p_text, judge, loaded_probabilities, parse_key, power_at, report,
                                        rolls_needed)
from dicecam.mechanics.roll import Roll

RUNS = 1000
# A simulated rate is wrong only if a one-sided binomial test rejects it at this level:
# loose enough that a correct model passes for any seed, tight enough that the usual
# noncentral chi-square power (0.73 where it promises 0.80 on a d20) fails.
TOLERANCE_P = 1e-4


def histories(kind: DieType, rolls: int, ratio: float | None, seed: int) -> np.ndarray:
    """RUNS simulated histories of one die (rows), fair when ratio is None, else one face loaded."""
    rng = np.random.default_rng(seed)
    faces = np.array(kind.faces)
    p = None if ratio is None else loaded_probabilities(kind.sides, ratio)
    return faces[rng.choice(kind.sides, size=(RUNS, rolls), p=p)]


@pytest.mark.parametrize("kind, ratio", [(DieType.d20, 2.0), (DieType.d6, 2.0), (DieType.d20, 0.25)])
def test_a_loaded_die_is_flagged_at_the_stated_power(kind, ratio):
    s = FairnessSettings(alpha=0.01, power=0.8, ratio=ratio)
    n = rolls_needed(kind.sides, ratio, s.alpha, s.power)
    runs = histories(kind, n, ratio, seed=14)
    verdicts = [judge(kind, row.tolist(), s) for row in runs]
    flagged = sum(v.flagged for v in verdicts)
    assert binomtest(flagged, RUNS, s.power, alternative="less").pvalue > TOLERANCE_P, (flagged, n)
    # ...and not far above it either: the figure is what a player can expect, not a safe margin.
    assert binomtest(flagged, RUNS, s.power, alternative="greater").pvalue > TOLERANCE_P, (flagged, n)
    # The loaded face (the first) is the one the verdict names.
    hot = kind.faces[0]
    named = sum(v.verdict.startswith(f"face {hot} comes up") for v in verdicts if v.flagged)
    assert named >= 0.9 * flagged


@pytest.mark.parametrize("kind, alpha", [(DieType.d20, 0.01), (DieType.d20, 0.05), (DieType.d6, 0.05)])
def test_a_fair_die_is_flagged_no_more_than_the_false_alarm_rate(kind, alpha):
    s = FairnessSettings(alpha=alpha)
    n = rolls_needed(kind.sides, s.ratio, alpha, s.power)
    runs = histories(kind, n, None, seed=41)
    flagged = sum(judge(kind, row.tolist(), s).flagged for row in runs)
    assert binomtest(flagged, RUNS, alpha, alternative="greater").pvalue > TOLERANCE_P, (flagged, n)


def test_power_grows_with_rolls_and_rolls_needed_is_the_first_to_reach_it():
    n = rolls_needed(20, 2.0, 0.01, 0.8)
    assert power_at(n, 20, 2.0, 0.01) >= 0.8 > power_at(n - 1, 20, 2.0, 0.01)
    assert power_at(n // 2, 20, 2.0, 0.01) < power_at(n, 20, 2.0, 0.01) < power_at(2 * n, 20, 2.0, 0.01)
    # A bigger loading is caught sooner; a stricter false-alarm rate needs more rolls.
    assert rolls_needed(20, 3.0, 0.01, 0.8) < n < rolls_needed(20, 2.0, 0.001, 0.8)


def test_verdicts_in_plain_words():
    fair = judge(DieType.d20, [f for f in range(1, 21)] * 11)
    assert fair.verdict == "no evidence of bias after 220 rolls (p = 1.000)"
    assert not fair.flagged and fair.enough and fair.p_value == pytest.approx(1.0)
    loaded = judge(DieType.d20, [f for f in range(1, 21)] * 10 + [1] * 40)
    assert loaded.flagged and loaded.verdict.startswith("face 1 comes up 4.2× as often as it should: p ")
    assert loaded.faces[0].count == 50 and loaded.faces[0].expected == pytest.approx(12.0)
    few = judge(DieType.d20, [1] * 30)
    assert not few.flagged and few.verdict.startswith("too few rolls to tell: 30 rolls; a d20 needs at least 100")
    assert judge(DieType.d6, []).verdict == "no rolls counted yet"
    d10 = judge(DieType.d10, list(range(10)) * 5 + [0] * 30)
    assert d10.verdict.startswith("face 0 comes up 4.4× as often")  # a d10's zero face is a face like any other
    assert "a d20 needs about" in loaded.plan.sentence and "this one has 240" in loaded.plan.sentence


def test_settings_refuse_a_fair_loading():
    with pytest.raises(ValueError, match="ratio must differ from 1"):
        FairnessSettings(ratio=1.0)
    with pytest.raises(RulesError, match="cannot show one face"):
        rolls_needed(4, 5.0, 0.01, 0.8)


# -- the history ---------------------------------------------------------------------------------
def roll(dice: list[str], status: str = "settled", amends: str | None = None, **flags) -> Roll:
    readings = []
    for spec in dice:
        d = DieReading.parse(spec)
        readings.append(d.model_copy(update=flags) if flags else d)
    return Roll(id=str(uuid.uuid4()), ts=datetime.now(timezone.utc), source="manual", status=status,
                system="percentile", dice=readings, amends=amends)


def test_corrections_count_with_their_corrected_value_and_uncertain_readings_are_left_out_and_counted():
    first = roll(["d20:20:red", "d6:1:white"])
    fixed = roll(["d20:2:red", "d6:1:white"], amends=first.id)
    fixed_again = roll(["d20:3:red", "d6:1:white"], amends=fixed.id)  # a correction of a correction
    unsure = roll(["d20:7:red"], status="uncertain")
    cocked = roll(["d20:9:red"], cocked=True)
    fine = roll(["d20:9:red", "d20:9:blue"])
    r = report([first, fixed, fixed_again, unsure, cocked, fine])
    red = next(d for d in r.dice if d.keys == ["d20:red"])
    assert {f.face: f.count for f in red.faces if f.count} == {3: 1, 9: 1}
    assert red.rolls == 2 and red.corrected == 1 and red.uncertain == 2
    assert r.rolls_seen == 4 and r.readings == 4 and r.uncertain == 2
    assert "2 uncertain readings were left out" in r.summary


def test_dice_group_by_kind_and_colour_or_by_the_name_a_player_gives():
    rolls = [roll(["d20:4:red", "d20:5:orange", "d6:2:red", "d20:6"])]
    plain = report(rolls)
    assert sorted(d.name for d in plain.dice) == ["d20 (no colour read)", "orange d20", "red d20", "red d6"]
    named = report(rolls, names={"d20:red": "Lucky", "d20:orange": "Lucky", "d6:red": "Lucky"})
    lucky = [d for d in named.dice if d.name == "Lucky"]
    # Same name, same kind: one die (the camera reads its colour two ways); a d6 is never the same die.
    assert sorted((d.type.value, d.rolls, tuple(d.keys)) for d in lucky) == [
        ("d20", 2, ("d20:orange", "d20:red")), ("d6", 1, ("d6:red",))]
    assert [d.name for d in report(rolls, die="red d6").dice] == ["red d6"]
    assert [d.rolls for d in report(rolls, names={"d20:red": "Lucky"}, die="lucky").dice] == [1]
    assert [d.name for d in report(rolls, die="d20:").dice] == ["d20 (no colour read)"]
    with pytest.raises(RulesError, match="no die called 'Grumpy' in the history"):
        report(rolls, die="Grumpy")


# -- the verdict's details -----------------------------------------------------------------------
def test_a_judged_die_reports_its_test_figures():
    # 240 rolls of a d20: face 1 50 times, the others 10 each; a fair die expects 12 of each.
    loaded = judge(DieType.d20, list(range(1, 21)) * 10 + [1] * 40, colour="red")
    assert loaded.df == 19  # faces - 1
    assert loaded.chi_square == pytest.approx(((50 - 12) ** 2 + 19 * (10 - 12) ** 2) / 12)  # 126.67
    assert loaded.keys == ["d20:red"] and loaded.colour == "red" and loaded.name == "red d20"
    assert (loaded.corrected, loaded.uncertain) == (0, 0)  # none unless the history says so
    none = judge(DieType.d6, [])
    assert none.chi_square is None and none.p_value is None
    assert [f.ratio for f in none.faces] == [0.0] * 6  # no rolls: no face has come up at all
    with pytest.raises(RulesError, match="a d6 has no face 7"):
        judge(DieType.d6, [1, 7])


def test_five_expected_rolls_per_face_are_enough_and_one_roll_is_singular():
    exactly = judge(DieType.d6, [1, 2, 3, 4, 5, 6] * 5)  # 30 rolls: exactly 5 expected per face
    assert exactly.enough and exactly.verdict == "no evidence of bias after 30 rolls (p = 1.000)"
    one = judge(DieType.d6, [3])
    assert one.verdict == "too few rolls to tell: 1 roll; a d6 needs at least 30 (5 per face) for this test"


def test_a_die_is_flagged_only_when_p_is_below_the_false_alarm_rate():
    values = [1, 2, 3, 4, 5, 6] * 5 + [1] * 12
    p = judge(DieType.d6, values).p_value
    at = judge(DieType.d6, values, FairnessSettings(alpha=p))  # p equal to alpha is not below it
    assert not at.flagged
    assert judge(DieType.d6, values, FairnessSettings(alpha=p * 1.0001)).flagged


def test_a_p_value_is_written_below_0_001_only_when_it_is():
    # No count history lands on 0.001 exactly, so the edge is checked on the wording itself.
    assert (_p_text(0.001), _p_text(0.0009), _p_text(0.0123)) == ("p = 0.001", "p < 0.001", "p = 0.012")


def test_a_d00_face_is_named_with_two_digits():
    d00 = judge(DieType.d00, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90] * 5 + [0] * 30)
    assert d00.verdict.startswith("face 00 comes up 4.4× as often as it should")


# -- the power plan ------------------------------------------------------------------------------
def test_the_plan_states_the_rolls_needed_and_the_power_so_far():
    needed = rolls_needed(20, 2.0, 0.01, 0.8)
    what = "To catch one face coming up 2× as often as it should 80% of the time (flagging a fair die 1% of the time), "
    mid = judge(DieType.d20, list(range(1, 21)) * 11).plan  # 220 rolls: past the test's floor, short of `needed`
    now = power_at(220, 20, 2.0, 0.01)
    assert 0 < now < 0.8 and mid.power_now == now and mid.rolls_needed == needed
    assert mid.sentence == f"{what}a d20 needs about {needed} rolls; this one has 220, enough to catch it {now:.0%} of the time."
    # At the floor (5 per face) the power is computed; below it the test cannot be trusted, so none is claimed.
    floor = judge(DieType.d20, list(range(1, 21)) * 5).plan
    assert floor.power_now == power_at(100, 20, 2.0, 0.01) > 0
    few = judge(DieType.d20, [1] * 30).plan
    assert few.power_now == 0.0 and few.sentence == f"{what}a d20 needs about {needed} rolls; this one has 30."
    # Once it has the rolls needed, nothing is added.
    done = judge(DieType.d20, (list(range(1, 21)) * 30)[:needed]).plan
    assert done.sentence == f"{what}a d20 needs about {needed} rolls; this one has {needed}."


def test_the_plan_names_a_loading_below_one_and_a_false_alarm_rate_in_percent():
    s = FairnessSettings(alpha=0.05, power=0.9, ratio=0.25)
    plan = judge(DieType.d6, [], s).plan
    assert plan.sentence.startswith("To catch one face coming up only 0.25× as often as it should 90% of the time "
                                    "(flagging a fair die 5% of the time), a d6 needs about ")
    assert "catch one face coming up 1.5× as often" in judge(DieType.d6, [], FairnessSettings(ratio=1.5)).plan.sentence


def test_a_loading_too_small_to_catch_in_a_million_rolls_is_said_so():
    # One d20 face 5 % too often: Cohen's w² ≈ 0.00013, and a 1e-12 false-alarm rate at 99.9 % power
    # needs a noncentrality near 200: well over a million rolls.
    s = FairnessSettings(alpha=1e-12, power=0.999, ratio=1.05)
    plan = judge(DieType.d20, [], s).plan
    assert plan.rolls_needed is None
    assert plan.sentence == "No practical number of rolls catches one face coming up 1.05× as often as it should on a d20."


def test_a_loading_ten_times_or_more_is_written_in_whole_times():
    others = [f for f in range(2, 21)] * 3  # 57 rolls spread over faces 2-20
    # 100 rolls expect 5 of each face: 50 ones are 10×, 52 ones 10.4×, written "10×".
    assert judge(DieType.d20, [1] * 50 + others[:50]).verdict == "face 1 comes up 10× as often as it should: p < 0.001"
    assert judge(DieType.d20, [1] * 52 + others[:48]).verdict.startswith("face 1 comes up 10× as often")
    assert judge(DieType.d20, [1] * 45 + others[:55]).verdict.startswith("face 1 comes up 9.0× as often")


def test_the_loaded_alternative_may_be_a_face_that_never_or_always_comes_up():
    assert loaded_probabilities(6, 0.0) == [0.0] + [pytest.approx(1 / 5)] * 5
    assert loaded_probabilities(4, 4.0) == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(RulesError, match="a 4-sided die cannot show one face 4.5 times"):
        loaded_probabilities(4, 4.5)


def test_a_die_key_is_its_type_then_everything_after_the_first_colon():
    assert parse_key("D20: Dark:Red ") == (DieType.d20, "dark:red")
    assert parse_key("d6:") == (DieType.d6, None)
    with pytest.raises(RulesError, match="bad die key 'd20red': write TYPE:COLOUR"):
        parse_key("d20red")
    with pytest.raises(RulesError, match="bad die key 'd7:red': unknown die type 'd7'"):
        parse_key("d7:red")


def test_corrections_of_rolls_missing_from_the_history_each_count_as_their_own_roll():
    # A history cut short (the originals fell out of it) keeps every correction, each its own roll.
    a = roll(["d20:5:red"], amends=str(uuid.uuid4()))
    b = roll(["d20:6:red"], amends=str(uuid.uuid4()))
    r = report([a, b])
    assert r.rolls_seen == 2 and r.readings == 2 and r.dice[0].corrected == 2


def test_a_cocked_die_leaves_out_only_itself_and_a_roll_as_read_is_not_a_correction():
    mixed = roll(["d20:7:red", "d6:3:white"])
    mixed = mixed.model_copy(update={"dice": [mixed.dice[0].model_copy(update={"cocked": True}), mixed.dice[1]]})
    plain = roll(["d6:4:white"])
    r = report([mixed, plain])
    white = next(d for d in r.dice if d.name == "white d6")
    assert white.rolls == 2 and white.corrected == 0 and r.uncertain == 1
    assert r.summary == "No die shows evidence of bias (2 dice, 2 readings). 1 uncertain reading was left out."


def loaded_history() -> list[Roll]:
    """240 rolls of a red d20 with face 1 four times too often (flagged), and 12 of a fair blue d20."""
    red = [roll([f"d20:{v}:red"]) for v in list(range(1, 21)) * 10 + [1] * 40]
    blue = [roll([f"d20:{v}:blue"]) for v in range(1, 13)]
    return red + blue


def test_the_summary_names_each_flagged_die_and_its_verdict():
    r = report(loaded_history())
    assert r.summary == "Red d20: face 1 comes up 4.2× as often as it should: p < 0.001."
    # Flagged dice come first, then the most rolled.
    assert [d.name for d in r.dice] == ["red d20", "blue d20"]
    fair = report(loaded_history()[:20] + [roll(["d6:1:white"])] * 3)
    assert [d.name for d in fair.dice] == ["red d20", "white d6"]  # 20 rolls before 3
    one = report(loaded_history()[-12:])
    assert one.summary == "No die shows evidence of bias (1 die, 12 readings)."
    assert report([]).summary == "No dice in the history yet."
    # Two loaded dice: each named with its verdict, one sentence; equal rolls order them by name.
    blue = [roll([f"d20:{v}:blue"]) for v in list(range(1, 21)) * 10 + [1] * 40]
    both = report(loaded_history()[:240] + blue)
    verdict = "face 1 comes up 4.2× as often as it should: p < 0.001"
    assert both.summary == f"Blue d20: {verdict}; red d20: {verdict}."


def test_the_report_judges_every_die_by_the_settings_given():
    s = FairnessSettings(alpha=0.05, ratio=3.0)
    r = report(loaded_history()[-12:], settings=s)
    assert r.settings == s and r.dice[0].plan.alpha == 0.05 and r.dice[0].plan.ratio == 3.0


def test_a_named_die_is_still_found_by_its_colour_and_kind_and_an_unknown_one_lists_the_dice():
    rolls = [roll(["d20:4:red", "d20:6"])]
    assert [d.name for d in report(rolls, names={"d20:red": "Lucky"}, die="Red D20").dice] == ["Lucky"]
    assert [d.name for d in report(rolls, die="d20").dice] == ["d20 (no colour read)"]  # the key "d20:" without its colon
    with pytest.raises(RulesError, match=r"\(dice: Lucky, d20 \(no colour read\)\)$"):
        report(rolls, names={"d20:red": "Lucky"}, die="Grumpy")
    with pytest.raises(RulesError, match=r"\(dice: none yet\)$"):
        report([], die="Grumpy")
