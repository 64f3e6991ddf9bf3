"""Assembling a settled throw into a Roll: reading order, percentile pairs, uncertainty, roles,
and follow-up throws joined to the roll they continue. Every verdict comes from the real rules
engine (the default resolver), so these tests also pin what the camera path hands to it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.errors import RulesError
from dicecam.vision.assembly import RollSession, describe, pair_percentile, uncertain_reason


def die(kind: str, value: int, x: float = 0.0, y: float = 0.0, size: float = 40.0, **fields) -> DieReading:
    """A die whose box has its top-left corner at (x, y)."""
    return DieReading(type=kind, value=value, box=(x, y, x + size, y + size), **fields)


def row(kind: str, *values: int, y: float = 0.0, step: float = 60.0) -> list[DieReading]:
    """Dice of one kind laid left to right on one row."""
    return [die(kind, v, x=i * step, y=y) for i, v in enumerate(values)]


def labels(dice) -> list[str]:
    return [d.label() for d in dice]


# -- reading order and percentile pairs ------------------------------------------------------------


def test_dice_reach_the_resolver_in_row_major_reading_order():
    """Contingency face modifiers apply by die index, so the order is part of the verdict."""
    d6 = die("d6", 2, x=0, y=10)  # a little lower than the d8 but still on the top row
    d8 = die("d8", 5, x=200, y=0)
    d10 = die("d10", 7, x=100, y=100)
    session = RollSession("contingency", {"modifiers": [4, 0, 0]})
    roll = session.add([d10, d8, d6])
    assert labels(roll.dice) == ["d6 2", "d8 5", "d10 7"]
    # +4 on the d6 (first in reading order) makes it 6, the middle die; +4 on the d10 would leave the d8's 5.
    assert roll.status == "settled"
    assert roll.adjudication.result_die == "d6"
    assert roll.adjudication.result == 6


def test_a_d00_goes_with_the_nearest_d10_even_when_the_pairs_lie_crosswise():
    """Two pairs stacked vertically side by side: reading order runs across the pairs
    (tens A, ones b, ones a, tens B), but each d00 takes the d10 under it."""
    tens_a, ones_b = die("d00", 30, x=0, y=0), die("d10", 2, x=300, y=0)
    ones_a, tens_b = die("d10", 7, x=0, y=100), die("d00", 60, x=300, y=100)
    paired = pair_percentile([ones_b, tens_b, ones_a, tens_a])
    assert labels(paired) == ["d00 30", "d10 7", "d00 60", "d10 2"]


def test_a_d10_lying_left_of_its_d00_is_still_read_as_the_ones():
    roll = RollSession("percentile").add([die("d10", 7, x=0), die("d00", 30, x=60)])
    assert labels(roll.dice) == ["d00 30", "d10 7"]
    assert roll.status == "settled"
    assert roll.adjudication.result == 37


def test_a_d00_without_any_d10_is_kept():
    assert labels(pair_percentile([die("d6", 3, x=100), die("d00", 40, x=0)])) == ["d00 40", "d6 3"]


# -- uncertainty ------------------------------------------------------------------------------------


def test_a_cocked_die_makes_the_roll_uncertain_naming_where_it_lies():
    dice = [die("d6", 2, x=0), die("d8", 5, x=100, cocked=True), die("d10", 7, x=200)]
    roll = RollSession("contingency").add(dice)
    assert roll.status == "uncertain"
    assert roll.reason == "the d8 in the middle is cocked — re-roll it"
    assert roll.adjudication is None
    assert labels(roll.dice) == ["d6 2", "d8 5", "d10 7"], "the dice are kept for the correction form"


def test_a_die_read_without_confidence_makes_the_roll_uncertain():
    dice = [die("d6", 2, x=0), die("d8", 5, x=100), die("d10", 7, x=200, colour="Red", uncertain=True)]
    roll = RollSession("contingency").add(dice)
    assert roll.status == "uncertain"
    assert roll.reason == "the red d10 at right could not be read with confidence — check it or re-roll"
    assert roll.adjudication is None


def test_an_unsure_die_says_why_when_the_reader_says():
    dice = [die("d6", 2, x=0), die("d10", 6, x=200, uncertain=True, doubt="a d10 that reads as 6 or 9 (no mark seen)")]
    assert uncertain_reason(dice) == ("the d10 at right could not be read with confidence "
                                      "(a d10 that reads as 6 or 9 (no mark seen)) — check it or re-roll")


def test_a_cocked_die_is_reported_before_an_unsure_one_wherever_it_lies():
    dice = [die("d6", 2, x=0, uncertain=True), die("d8", 5, x=200, cocked=True)]
    assert uncertain_reason(dice) == "the d8 at right is cocked — re-roll it"
    assert uncertain_reason([die("d6", 2)]) is None


def test_describe_places_a_die_by_its_centre_among_the_others():
    dice = [die("d20", 3, x=0), die("d6", 1, x=100), die("d6", 4, x=200)]
    assert [describe(d, dice) for d in dice] == ["the d20 at left", "the d6 in the middle", "the d6 at right"]
    # Alone, or stacked in one column, a die has no side to be on.
    assert describe(dice[0], dice[:1]) == "the d20"
    assert describe(dice[0], [dice[0], die("d6", 1, x=0, y=100)]) == "the d20"


@pytest.mark.parametrize(("share", "where"), [(0.3, "at left"), (0.36, "in the middle"), (0.5, "in the middle"),
                                             (0.64, "in the middle"), (0.7, "at right")])
def test_the_spoken_side_is_the_third_of_the_spread_a_die_lies_in(share, where):
    """Left, middle and right are thirds of the span between the outermost dice, so a die 30 % of the
    way across is spoken as at left, not in the middle."""
    dice = [die("d6", 1, x=0), die("d8", 5, x=share * 1000), die("d6", 2, x=1000)]
    assert describe(dice[1], dice) == f"the d8 {where}"


def test_dice_the_system_cannot_take_give_an_uncertain_roll_with_the_resolvers_reason():
    roll = RollSession("contingency-action").add([die("d20", 6)])
    assert roll.status == "uncertain"
    assert roll.reason == "an action roll uses d8 action dice and d6 pressure dice, not d20"
    assert roll.adjudication is None


def test_a_bad_option_gives_an_uncertain_roll_instead_of_an_exception():
    roll = RollSession("contingency", {"target": 99}).add(row("d6", 1, 2, 3))
    assert roll.status == "uncertain"
    assert roll.reason.startswith("bad option target:")


def test_an_empty_table_gives_no_roll():
    session = RollSession("contingency")
    assert session.add([]) is None
    assert session.last is None


def test_a_roll_carries_its_source_frame_and_time():
    ts = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    roll = RollSession("percentile", source="upload").add([die("d00", 0), die("d10", 0, x=60)], frame_id=12, ts=ts)
    assert (roll.source, roll.frame_id, roll.ts, roll.system) == ("upload", 12, ts, "percentile")
    assert roll.adjudication.result == 0


# -- roles by kind and by colour ------------------------------------------------------------------


def test_contingency_action_reads_d8_as_action_and_d6_as_pressure_wherever_they_lie():
    roll = RollSession("contingency-action").add([die("d6", 6, x=0), die("d8", 7, x=60), die("d8", 3, x=120)])
    adj = roll.adjudication
    assert [(d.type, d.role) for d in adj.dice] == [("d6", "pressure"), ("d8", "action"), ("d8", "action")]
    # Highest action die 7 is messy; the pressure six cuts it one level.
    assert (adj.level_before_cuts, adj.cuts, adj.outcome) == ("messy", 1, "grim")


def test_futile_kingdoms_tells_the_red_die_from_the_white_by_colour_not_position():
    roll = RollSession("futile-kingdoms").add([die("d6", 5, x=0, colour="white"), die("d6", 2, x=60, colour="red")])
    adj = roll.adjudication
    assert (adj.red, adj.white) == (2, 5)
    assert adj.dr == -2, "the lower die gives the size, white being higher makes it negative"
    assert {d.colour: d.role for d in adj.dice} == {"white": "white", "red": "red"}


def test_emergence_reads_the_first_die_as_the_base_without_a_base_colour():
    roll = RollSession("emergence").add([die("d10", 5, x=0, colour="white"), die("d10", 3, x=60, colour="blue")])
    assert roll.adjudication.base == 5


def test_emergence_puts_the_die_of_the_base_colour_first():
    session = RollSession("emergence", base_colour=" Blue ")
    roll = session.add([die("d10", 5, x=0, colour="white"), die("d10", 3, x=60, colour="blue")])
    assert labels(roll.dice) == ["blue d10 3", "white d10 5"]
    adj = roll.adjudication
    assert adj.base == 3
    assert adj.dice[0].role == "base"
    assert adj.result == 5, "the modifier 5 is higher than the base 3"


def test_emergence_without_a_die_of_the_base_colour_is_uncertain():
    session = RollSession("emergence", base_colour="blue")
    roll = session.add([die("d10", 5, x=0, colour="white"), die("d10", 3, x=60, colour="green")])
    assert roll.status == "uncertain"
    assert roll.reason == "no blue base die read — roll it with the others or correct the roll"
    assert roll.adjudication is None


# -- follow-ups: contingency luck -----------------------------------------------------------------


def contingency_check(session: RollSession):
    """d6 2, d8 5, d10 7: the middle die is the d8 showing 5."""
    return session.add([die("d6", 2, x=0), die("d8", 5, x=100), die("d10", 7, x=200)])


def test_a_single_die_right_after_a_contingency_check_is_its_luck_die():
    session = RollSession("contingency", {"target": 8})
    first = contingency_check(session)
    assert first.adjudication.success is False

    luck = session.add([die("d8", 3, x=150, y=200)])
    assert luck.follows == first.id
    assert luck.options == {"target": 8, "luck": "d8:3"}
    assert labels(luck.dice) == ["d6 2", "d8 5", "d10 7", "d8 3"]
    adj = luck.adjudication
    assert (adj.result, adj.luck_value, adj.total, adj.success) == (5, 3, 8, True)


def test_a_luck_die_of_the_wrong_size_is_uncertain_with_the_rule():
    session = RollSession("contingency")
    contingency_check(session)
    roll = session.add([die("d6", 3)])
    assert roll.status == "uncertain"
    assert roll.reason == "the luck die must be a d8 (the size of the result die), not a d6"


def test_a_cocked_luck_die_makes_the_luck_roll_uncertain():
    session = RollSession("contingency")
    first = contingency_check(session)
    roll = session.add([die("d8", 3, cocked=True)])
    assert roll.follows == first.id
    assert roll.status == "uncertain"
    assert roll.reason == "the d8 is cocked — re-roll it"
    assert roll.adjudication is None


def test_a_check_takes_only_one_luck_die():
    session = RollSession("contingency")
    contingency_check(session)
    session.add([die("d8", 3)])
    second = session.add([die("d8", 4)])
    assert second.follows is None
    assert "luck" not in second.options
    assert second.status == "uncertain"
    assert second.reason == "a contingency check takes exactly 3 dice, got 1"


def test_three_dice_after_a_check_are_a_new_check():
    session = RollSession("contingency")
    contingency_check(session)
    again = session.add(row("d6", 1, 4, 6))
    assert again.follows is None
    assert again.options == {}
    assert again.adjudication.result == 4


def test_configure_forgets_a_pending_follow_up():
    session = RollSession("contingency")
    contingency_check(session)
    session.configure("contingency", {"target": 3})
    roll = session.add([die("d8", 3)])
    assert roll.follows is None
    assert roll.reason == "a contingency check takes exactly 3 dice, got 1"


# -- follow-ups: emergence re-rolls ---------------------------------------------------------------


def test_after_a_wyrd_each_single_d10_rerolls_the_base_until_it_shows_a_face():
    """Base 0 is a Wyrd (the last modifier 6 is dropped); a re-rolled 0 is one more Wyrdness and
    drops the modifier 4; the re-roll 7 is the new base."""
    session = RollSession("emergence")
    first = session.add(row("d10", 0, 4, 6))
    assert (first.adjudication.outcome, first.adjudication.wyrd) == ("reroll", "Wyrd")

    second = session.add([die("d10", 0, x=100, y=200)])
    assert second.follows == first.id
    assert second.options == {"rerolls": [0]}
    assert (second.adjudication.outcome, second.adjudication.wyrd) == ("reroll", "Double Wyrd")
    assert labels(second.dice) == ["d10 0", "d10 4", "d10 6", "d10 0"]

    third = session.add([die("d10", 7, x=100, y=200)])
    assert third.follows == first.id
    assert third.options == {"rerolls": [0, 7]}
    assert third.status == "settled"
    assert (third.adjudication.result, third.adjudication.label) == (7, "Good")
    assert labels(third.dice[:3]) == ["d10 0", "d10 4", "d10 6"]


def test_a_full_throw_after_a_wyrd_is_a_fresh_roll():
    session = RollSession("emergence")
    session.add([die("d10", 0)])
    roll = session.add(row("d10", 3, 8))
    assert roll.follows is None
    assert roll.options == {}
    assert roll.adjudication.result == 8


def test_no_reroll_follows_a_roll_without_a_wyrd():
    session = RollSession("emergence")
    session.add(row("d10", 5, 2))
    roll = session.add([die("d10", 3)])
    assert roll.follows is None
    assert (roll.adjudication.base, roll.adjudication.result) == (3, 3)


def test_a_single_d10_after_a_resolved_wyrd_is_a_fresh_roll():
    session = RollSession("emergence")
    session.add([die("d10", 0)])
    resolved = session.add([die("d10", 7)])
    assert resolved.adjudication.result == 7
    fresh = session.add([die("d10", 4)])
    assert fresh.status == "settled", fresh.reason
    assert fresh.follows is None
    assert fresh.options == {}
    assert fresh.adjudication.result == 4


def test_a_third_reroll_still_counts_the_original_base():
    session = RollSession("emergence")
    first = session.add([die("d10", 0)])
    session.add([die("d10", 0)])
    session.add([die("d10", 0)])
    last = session.add([die("d10", 7)])
    assert last.follows == first.id
    assert last.options == {"rerolls": [0, 0, 7]}
    assert last.status == "settled", last.reason
    assert (last.adjudication.wyrd, last.adjudication.result) == ("Triple Wyrd", 7)


# -- follow-ups: futile-kingdoms explosions -------------------------------------------------------


def red_white(red: int, white: int, y: float = 0.0) -> list[DieReading]:
    return [die("d6", red, x=0, y=y, colour="red"), die("d6", white, x=60, y=y, colour="white")]


@pytest.mark.parametrize(("red", "white", "dr"), [(6, 5, 5), (5, 6, -5)])
def test_after_a_dr_of_five_the_next_pair_carries_it(red, white, dr):
    session = RollSession("futile-kingdoms", {"modifier": -1})
    first = session.add(red_white(red, white))
    assert (first.adjudication.dr, first.adjudication.may_explode) == (dr, True)

    more = session.add(red_white(4, 2, y=200))
    assert more.follows == first.id
    assert more.options == {"modifier": -1, "carry": dr}
    assert more.adjudication.result == dr + 2 - 1


def test_an_explosion_chain_adds_every_earlier_dr_and_ends_without_a_five():
    session = RollSession("futile-kingdoms")
    first = session.add(red_white(6, 5))
    second = session.add(red_white(6, 5))
    third = session.add(red_white(4, 2))
    after = session.add(red_white(4, 2))
    assert second.follows == first.id and second.options["carry"] == 5
    assert third.follows == second.id and third.options["carry"] == 10
    assert third.adjudication.result == 12
    assert after.follows is None and "carry" not in after.options


def test_a_pair_after_an_ordinary_dr_does_not_carry():
    session = RollSession("futile-kingdoms")
    session.add(red_white(4, 2))
    roll = session.add(red_white(3, 1))
    assert roll.follows is None
    assert roll.adjudication.result == 1


def test_a_cocked_explosion_pair_rethrown_still_carries():
    session = RollSession("futile-kingdoms")
    first = session.add(red_white(6, 5))
    cocked = session.add([die("d6", 4, x=0, colour="red", cocked=True), die("d6", 2, x=60, colour="white")])
    assert cocked.status == "uncertain"
    rethrown = session.add(red_white(4, 2))
    assert rethrown.options.get("carry") == 5
    assert rethrown.adjudication.result == 7
    assert rethrown.follows == first.id


# -- follow-ups: contingency-action resource pools ------------------------------------------------


def test_a_resource_pool_shrinks_roll_after_roll_until_it_is_depleted():
    session = RollSession("contingency-action", {"mode": "resource", "pool_size": 4})
    first = session.add(row("d8", 8, 7, 2, 3))
    assert first.adjudication.remaining == 2

    second = session.add(row("d8", 6, 2))
    assert second.follows == first.id
    assert second.options == {"mode": "resource", "pool_size": 2}
    assert second.adjudication.remaining == 1

    third = session.add(row("d8", 6))
    assert third.follows == second.id
    assert third.options["pool_size"] == 1
    assert third.adjudication.depleted is True

    # A depleted pool is over: the next throw is a new pool of the configured size.
    fresh = session.add(row("d8", 1, 2, 3, 4))
    assert fresh.follows is None
    assert fresh.options == {"mode": "resource", "pool_size": 4}
    assert fresh.adjudication.outcome == "none-removed"


def test_a_pool_throw_with_the_wrong_number_of_dice_is_caught():
    session = RollSession("contingency-action", {"mode": "resource", "pool_size": 4})
    session.add(row("d8", 8, 7, 2, 3))
    roll = session.add(row("d8", 1, 2, 3))
    assert roll.status == "uncertain"
    assert roll.reason == "the resource pool holds 2 dice but 3 were read"


def test_action_rolls_have_no_pool_to_follow():
    session = RollSession("contingency-action")
    session.add(row("d8", 8, 7))
    roll = session.add(row("d8", 2))
    assert roll.follows is None
    assert "pool_size" not in roll.options


def test_a_pool_roll_rethrown_after_a_cocked_die_keeps_the_shrunken_pool():
    session = RollSession("contingency-action", {"mode": "resource", "pool_size": 4})
    session.add(row("d8", 8, 7, 2, 3))
    cocked = session.add([die("d8", 2, x=0, cocked=True), die("d8", 3, x=60)])
    assert cocked.status == "uncertain"
    rethrown = session.add(row("d8", 2, 3))
    assert rethrown.status == "settled", rethrown.reason
    assert rethrown.options["pool_size"] == 2


# -- the session asks the system; it names none ----------------------------------------------------


def test_a_system_the_session_has_never_heard_of_chains_by_its_own_rule(monkeypatch):
    """A made-up 'tally' system whose rule is 'every throw adds to the last': registered in mechanics
    alone, the camera session chains its throws with no change to vision."""
    from dataclasses import replace

    from dicecam.mechanics import registry
    from dicecam.mechanics.follow_up import FollowUp, Join

    base = registry.get("house-games")
    tally = replace(base, name="tally",
                    _follow_up=lambda roll, options: FollowUp.of(roll, "extend", carry=roll.adjudication.total_successes),
                    _join=lambda follow, dice, options: Join({**options, "prior_successes": follow.carry}))
    monkeypatch.setitem(registry.SYSTEMS, "tally", tally)
    session = RollSession("tally", {"difficulty": 6}, resolver=lambda s, dice, o: tally.resolve(dice, o))
    first = session.add(row("d10", 7, 8))
    second = session.add(row("d10", 9, 2, y=200))
    assert first.adjudication.total_successes == 2
    assert second.follows == first.id and second.options["prior_successes"] == 2
    assert second.adjudication.total_successes == 3


def test_dice_entered_by_hand_join_the_check_they_follow_and_errors_are_raised_not_stored():
    session = RollSession("contingency", {"target": 9}, source="manual")
    check = session.add([DieReading.parse(s) for s in ("d6:3", "d8:5", "d10:7")], strict=True)
    luck = session.add([DieReading.parse("d8:6")], strict=True)
    assert luck.follows == check.id and luck.options["luck"] == "d8:6" and luck.source == "manual"
    assert luck.adjudication.total == 11 and luck.adjudication.success
    with pytest.raises(RulesError, match="takes exactly 3 dice, got 2"):
        session.add([DieReading.parse(s) for s in ("d6:3", "d8:5")], strict=True)


def test_a_correction_of_the_last_roll_is_what_the_next_throw_follows():
    session = RollSession("futile-kingdoms")
    calm = session.add([die("d6", 3, x=0, colour="red"), die("d6", 2, x=60, colour="white")])
    # The camera misread: it was a 6 and a 5, a DR of +5 that may explode.
    fixed = session.amend(calm, [DieReading.parse("d6:6:red"), DieReading.parse("d6:5:white")], "futile-kingdoms", {})
    assert fixed.amends == calm.id and fixed.adjudication.may_explode
    more = session.add([die("d6", 4, x=0, y=200, colour="red"), die("d6", 1, x=60, y=200, colour="white")])
    assert more.follows == fixed.id and more.options["carry"] == 5


def test_a_correction_is_read_in_reading_order_like_a_throw():
    """Contingency's face modifiers go by die index, so a correction listed right to left must still reach
    the resolver left to right: +4 on the left die (the d6) makes it the middle die."""
    session = RollSession("contingency", {"modifiers": [4, 0, 0]})
    first = session.add([die("d6", 1, x=0), die("d8", 5, x=200), die("d10", 7, x=100, y=100)])
    fixed = session.amend(first, [die("d10", 7, x=100, y=100), die("d8", 5, x=200), die("d6", 2, x=0)],
                          "contingency", {"modifiers": [4, 0, 0]})
    assert labels(fixed.dice) == ["d6 2", "d8 5", "d10 7"]
    assert fixed.adjudication.result_die == "d6" and fixed.adjudication.result == 6


def test_a_correction_keeps_the_frame_and_the_follow_up_link_of_the_roll_it_corrects():
    session = RollSession("contingency", {"target": 9})
    check = session.add([die("d6", 3, x=0), die("d8", 5, x=100), die("d10", 7, x=200)], frame_id=4)
    luck = session.add([die("d8", 2, x=100, y=200)], frame_id=9)
    fixed = session.amend(luck, check.dice, "contingency", {"target": 9, "luck": "d8:6"})
    assert (fixed.frame_id, fixed.follows, fixed.amends) == (9, check.id, luck.id)


def test_a_correction_the_rules_refuse_is_raised_not_stored():
    """A correction is typed by hand: like any hand entry, a wrong one is refused, not kept as a doubtful roll."""
    session = RollSession("contingency")
    first = contingency_check(session)
    with pytest.raises(RulesError, match="takes exactly 3 dice, got 2"):
        session.amend(first, [DieReading.parse("d6:3"), DieReading.parse("d8:5")], "contingency", {})
    assert session.last is first


def test_a_correction_into_another_system_is_judged_by_that_system_through_the_sessions_resolver():
    """The check was really a percentile roll: the correction is resolved as percentile (by the resolver the
    session was given), and the session's own chain is left as it was: a single d8 is still the check's luck."""
    seen: list[str] = []

    def resolver(system, dice, options):
        seen.append(system)
        return registry.resolve(system, dice, options)

    session = RollSession("contingency", resolver=resolver)
    check = contingency_check(session)
    fixed = session.amend(check, [DieReading.parse("d10:7"), DieReading.parse("d00:30")], "percentile", {})
    assert (fixed.system, fixed.adjudication.result, seen) == ("percentile", 37, ["contingency", "percentile"])
    luck = session.add([die("d8", 3, x=150, y=200)])
    assert luck.follows == check.id


def test_correcting_an_older_roll_leaves_the_chain_with_the_last_roll():
    """Only a correction of the last roll changes what the next throw follows."""
    session = RollSession("futile-kingdoms")
    older = session.add(red_white(3, 2))
    session.add(red_white(4, 2, y=200))
    session.amend(older, [DieReading.parse("d6:6:red"), DieReading.parse("d6:5:white")], "futile-kingdoms", {})
    more = session.add(red_white(4, 1))
    assert more.follows is None and "carry" not in more.options


def test_a_system_outside_the_registry_with_its_own_resolver_gets_rolls_and_no_follow_ups():
    session = RollSession("table-house-rule", resolver=lambda s, dice, o: registry.resolve("contingency", dice, o))
    first = contingency_check(session)
    second = session.add([die("d8", 3, x=150, y=200), die("d6", 1, x=0, y=200), die("d10", 7, x=300, y=200)])
    assert (first.status, second.status) == ("settled", "settled")
    assert second.follows is None and second.adjudication.result_die == "d8"


def test_every_roll_has_an_id_of_its_own_and_a_time_in_utc():
    before = datetime.now(timezone.utc)
    session = RollSession("contingency")
    first, second = contingency_check(session), contingency_check(RollSession("contingency"))
    assert first.id != second.id
    assert first.ts.utcoffset() == timedelta(0)
    assert before <= first.ts <= datetime.now(timezone.utc)


def test_percentile_dice_entered_by_hand_pair_without_boxes():
    roll = RollSession("percentile", source="manual").add([DieReading.parse("d10:7"), DieReading.parse("d00:30")],
                                                          strict=True)
    assert labels(roll.dice) == ["d00 30", "d10 7"] and roll.adjudication.result == 37


@pytest.mark.parametrize(("ones_right", "ones_below", "pair"), [
    ((100, 0), (0, 120), "d10 1"),  # the d10 to the right is nearer: 100 across against 120 down
    ((100, 0), (0, 80), "d10 2"),   # the d10 below is nearer: 80 down against 100 across
])
def test_a_d00_takes_the_d10_nearest_in_both_directions(ones_right, ones_below, pair):
    tens = die("d00", 50, x=0, y=0)
    right, below = die("d10", 1, *ones_right), die("d10", 2, *ones_below)
    assert labels(pair_percentile([below, right, tens]))[:2] == ["d00 50", pair]


def test_every_d00_is_kept_when_the_d10s_run_out():
    dice = [die("d00", 30, x=0), die("d10", 7, x=60), die("d00", 60, x=120), die("d00", 90, x=180)]
    assert labels(pair_percentile(dice)) == ["d00 30", "d10 7", "d00 60", "d00 90"]


@pytest.mark.parametrize(("offset", "share", "where"), [(2000, 0.3, "at left"), (2000, 0.7, "at right"),
                                                        (0, 0.34, "in the middle"), (0, 0.66, "in the middle")])
def test_the_thirds_are_of_the_span_wherever_it_lies_and_their_edges_are_the_middle(offset, share, where):
    """Below 34 % of the span is left, above 66 % right; the edges themselves and a spread far from the
    picture's left edge are measured the same way."""
    x = offset + round(share * 1000)
    dice = [die("d6", 1, x=offset), die("d8", 5, x=x), die("d6", 2, x=offset + 1000)]
    assert describe(dice[1], dice) == f"the d8 {where}"


def test_a_percentile_die_without_a_box_pairs_in_the_order_typed():
    """A correction that turns a d6 into a d10 gives that d10 no box: no distance can be measured, so the
    dice pair as typed, each d00 with the d10 after it (not by a distance to the picture's corner)."""
    def at(kind, value, x=None):
        return DieReading(type=kind, value=value, box=None if x is None else (x, 600, x + 40, 640))

    typed = [at("d00", 30, 400), at("d10", 7), at("d00", 60, 900), at("d10", 2, 960)]
    assert labels(pair_percentile(typed)) == ["d00 30", "d10 7", "d00 60", "d10 2"]
    # A d10 typed before its d00, with none after it, still pairs with it.
    assert labels(pair_percentile([at("d10", 5), at("d00", 30), at("d6", 3)])) == ["d00 30", "d10 5", "d6 3"]
