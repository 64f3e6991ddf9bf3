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
from dicecam.mechanics.fairness import (FairnessSettings, judge, loaded_probabilities, power_at, report,
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
