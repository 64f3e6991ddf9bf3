"""The rules engine's entry points: a roll over a system's own cap names that cap, options given as
another system's model keep their values, a roll carries any system's verdict, each system says what
throw may continue a settled roll."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from dicecam.mechanics import registry
from dicecam.mechanics.adjudication import Adjudication, OtherAdjudication
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.errors import LimitError
from dicecam.mechanics.follow_up import FollowUp
from dicecam.mechanics.options import validate_options
from dicecam.mechanics.percentile import ChanceOptions, PercentileOptions
from dicecam.mechanics.registry import MAX_RESOLVE_DICE
from dicecam.mechanics.roll import Roll


def test_a_hundred_dice_reach_the_system_which_names_its_own_cap():
    """Up to 100 dice the system judges the roll (Emergence reads 20 at most); beyond, the engine refuses."""
    with pytest.raises(LimitError, match="cap of 20$"):
        registry.resolve("emergence", parse_dice(["d10:5"] * MAX_RESOLVE_DICE))
    with pytest.raises(LimitError, match=f"cap of {MAX_RESOLVE_DICE} for one roll"):
        registry.resolve("emergence", parse_dice(["d10:5"] * (MAX_RESOLVE_DICE + 1)))


def test_options_given_as_another_systems_model_keep_their_values():
    """A chance roll's options built from percentile options keep the tens colour."""
    opts = validate_options(ChanceOptions, PercentileOptions(tens_colour="red"))
    assert (opts.tens_colour, opts.percent) == ("red", 50)
    a = registry.get("chance").resolve(parse_dice(["d10:3:red", "d10:4:blue"]), PercentileOptions(tens_colour="red"))
    assert (a.result, a.tens) == (34, 30)


# -- the verdict union ------------------------------------------------------------------------------

TS = datetime(2026, 11, 23, tzinfo=timezone.utc)


def roll_of(system: str, adjudication, *, dice=None, options=None, follows=None) -> Roll:
    return Roll(id="r1", ts=TS, source="manual", status="settled", system=system, options=options or {},
                dice=adjudication.dice if dice is None else dice, adjudication=adjudication, follows=follows)


def test_a_registered_systems_verdict_is_carried_as_the_resolver_made_it():
    """A roll holds the resolver's own verdict object, not a copy rebuilt from its fields: only the
    verdicts of systems this build lacks are taken apart into their fields."""
    adj = registry.resolve("contingency", parse_dice(["d6:3", "d8:5", "d10:7"]))
    assert roll_of("contingency", adj).adjudication is adj


def test_a_verdict_object_of_an_unregistered_system_keeps_its_fields():
    """Rules supplied from outside the registry: their verdict object is kept as its fields."""
    class PokerAdjudication(Adjudication):
        hand: list[str]

    poker = PokerAdjudication(system="poker", outcome="flush", summary="A flush.", hand=["d6:6"] * 5)
    roll = roll_of("poker", poker, dice=[])
    assert isinstance(roll.adjudication, OtherAdjudication)
    assert roll.adjudication.model_dump() == poker.model_dump()


@pytest.mark.parametrize("verdict", ["flush", 3, ["success"]])
def test_an_adjudication_that_is_no_verdict_is_refused_as_invalid(verdict):
    with pytest.raises(ValidationError):
        Roll(id="r1", ts=TS, source="manual", status="settled", system="contingency", adjudication=verdict)


# -- follow-up throws, as each system's record gives them ---------------------------------------------

def test_a_wyrd_base_re_rolled_to_another_0_waits_for_the_next_re_roll_of_the_first_roll():
    """Seed 003: a base 0 is re-rolled until a 1-9 comes. The roll's own dice (base and modifiers) stay
    its own; the re-roll so far travels as the extra dice; the next d10 joins the first roll."""
    s = registry.get("emergence")
    own, reroll = parse_dice(["d10:0", "d10:4", "d10:7"]), parse_dice(["d10:0"])
    adj = s.resolve(own, {"rerolls": [0]})
    assert adj.outcome == "reroll" and adj.wyrd == "Double Wyrd"
    roll = roll_of("emergence", adj, dice=own + reroll, options={"rerolls": [0]}, follows="r0")
    follow = s.follow_up(roll, {})
    assert (follow.kind, follow.joins, follow.options) == ("reroll", "r0", {"rerolls": [0]})
    assert (follow.dice, follow.extra) == (own, reroll)
    join = s.join(follow, parse_dice(["d10:6"]), {})
    assert (join.options, join.again) == ({"rerolls": [0, 6]}, True)


def test_an_exploding_dr_continues_the_roll_it_came_from_with_all_its_dice_its_own():
    s = registry.get("futile-kingdoms")
    pair = parse_dice(["d6:6:red", "d6:5:white"])  # DR +5: the lower die, red being higher
    follow = s.follow_up(roll_of("futile-kingdoms", s.resolve(pair), dice=pair), {})
    assert (follow.kind, follow.joins, follow.carry) == ("explode", "r1", 5)
    assert (follow.dice, follow.extra) == (pair, [])


def test_an_extended_roll_carries_its_running_total_into_the_next_throw():
    """Seed 002, extended rolls: 2 successes so far, then 7, 1, 9 at difficulty 6 (two successes, one
    cancelled by the 1) makes 3; the next throw starts from 3. Without --extended, a throw is a roll."""
    s = registry.get("house-games")
    options = {"extended": True, "prior_successes": 2}
    roll = roll_of("house-games", s.resolve(parse_dice(["d10:7", "d10:1", "d10:9"]), options), options=options)
    follow = s.follow_up(roll, {"extended": True})
    assert (follow.kind, follow.carry) == ("extend", 3)
    assert s.join(follow, parse_dice(["d10:2"]), {"extended": True}).options == {"extended": True, "prior_successes": 3}
    assert s.follow_up(roll, {}) is None


def test_a_system_without_a_follow_up_rule_joins_nothing():
    s = registry.get("chance")
    roll = roll_of("chance", s.resolve(parse_dice(["d00:70", "d10:1"])))
    assert s.follow_up(roll, {}) is None
    assert s.join(FollowUp.of(roll, "any"), parse_dice(["d10:3"]), {}) is None


def test_a_follow_up_names_the_roll_it_joins_and_which_dice_are_its_own():
    roll = roll_of("emergence", registry.resolve("emergence", parse_dice(["d10:5", "d10:1", "d10:4"])))
    first = FollowUp.of(roll, "pool", own=2, joins="r0", remaining=3)
    assert (first.joins, first.dice, first.extra, first.remaining) == ("r0", roll.dice[:2], roll.dice[2:], 3)
    whole = FollowUp.of(roll, "pool")
    assert (whole.joins, whole.dice, whole.extra, whole.carry) == ("r1", roll.dice, [], 0)
