"""Throws that continue a settled roll, each system's rule from its seed: a luck die joins a Contingency
check once; a Wyrd base waits for single-d10 re-rolls; a Futile Kingdoms DR of ±5 explodes into the next
red and white pair with the DRs summed; a Contingency resource pool shrinks throw by throw until it is
depleted; House Games extended and teamwork throws add their successes; a Futile Kingdoms contest
collects each participant's throw. Asked of the systems directly, as the camera session asks them."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.roll import Roll

TS = datetime(2026, 11, 23, tzinfo=timezone.utc)


def settled(system: str, specs: list[str], options: dict | None = None, *, id: str = "r1",
            follows: str | None = None, joined: list[str] = ()) -> Roll:
    """A settled roll as the session stores it: the resolver's verdict on `specs` under `options`, its
    dice listed with the follow-up dice that joined it (`joined`) after its own."""
    dice = parse_dice(specs)
    adj = registry.resolve(system, dice, options)
    return Roll(id=id, ts=TS, source="camera", status="settled", system=system, options=dict(options or {}),
                dice=dice + parse_dice(list(joined)), adjudication=adj, follows=follows)


def unread(system: str, specs: list[str], options: dict | None = None) -> Roll:
    """A roll without a verdict (a cocked die, dice the rules refused)."""
    return Roll(id="r1", ts=TS, source="camera", status="uncertain", reason="the d6 is cocked — re-roll it",
                system=system, options=dict(options or {}), dice=parse_dice(specs))


def labels(dice) -> list[str]:
    return [f"{d.type.value}:{d.value}" for d in dice]


# -- Contingency: "roll a Luck Die of the same type" (seed 000), once per check --------------------------

def test_a_check_corrected_after_its_luck_still_waits_for_luck_and_joins_the_first_check():
    """A correction keeps the id of the roll it continues (`follows`): when it takes the luck back, the
    next luck die still belongs to the first check of the chain, not to the correction."""
    s = registry.get("contingency")
    corrected = settled("contingency", ["d6:3", "d8:5", "d10:7"], {"target": 9}, id="r2", follows="r0")
    follow = s.follow_up(corrected, {"target": 9})
    assert (follow.kind, follow.joins) == ("luck", "r0")
    assert labels(follow.dice) == ["d6:3", "d8:5", "d10:7"] and follow.extra == []


# -- Emergence: a Wyrd base is re-rolled, one d10 at a time, until it shows 1-9 (seed 003) -------------

def test_a_wyrd_base_waits_for_its_reroll_a_single_d10():
    s = registry.get("emergence")
    wyrd = settled("emergence", ["d10:0", "d10:4", "d10:6"])  # base 0: a Wyrd, re-roll
    follow = s.follow_up(wyrd, {})
    assert (follow.kind, follow.joins) == ("reroll", "r1")
    assert labels(follow.dice) == ["d10:0", "d10:4", "d10:6"] and follow.extra == []
    join = s.join(follow, parse_dice(["d10:7"]), {})
    assert join.again is True  # the base's own dice are read again, the re-roll noted in the options
    assert join.options == {"rerolls": [7]}
    assert s.resolve(parse_dice(["d10:0", "d10:4", "d10:6"]), join.options).result == 7


def test_each_reroll_is_noted_after_the_earlier_ones_and_joins_the_original_base():
    """The seed counts every 0 "after and including the original Basic roll": the second re-roll is
    listed after the first, and the chain still continues the roll of the original base."""
    s = registry.get("emergence")
    double = settled("emergence", ["d10:0", "d10:4", "d10:6"], {"rerolls": [0]}, id="r2", follows="r1",
                     joined=["d10:0"])
    assert double.adjudication.wyrd == "Double Wyrd"
    follow = s.follow_up(double, {})
    assert follow.joins == "r1"
    assert labels(follow.dice) == ["d10:0", "d10:4", "d10:6"]  # the base's own throw
    assert labels(follow.extra) == ["d10:0"]  # the re-roll that joined it
    join = s.join(follow, parse_dice(["d10:7"]), {})
    assert (join.again, join.options) == (True, {"rerolls": [0, 7]})


def test_no_reroll_is_awaited_once_the_base_shows_a_face_or_without_a_verdict():
    s = registry.get("emergence")
    assert s.follow_up(settled("emergence", ["d10:5", "d10:2"]), {}) is None
    resolved = settled("emergence", ["d10:0", "d10:4"], {"rerolls": [7]}, id="r2", follows="r1", joined=["d10:7"])
    assert s.follow_up(resolved, {}) is None
    assert s.follow_up(unread("emergence", ["d10:0", "d10:4"]), {}) is None


@pytest.mark.parametrize("throw", [["d10:3", "d10:8"], ["d6:3"]])
def test_only_a_single_d10_is_a_reroll(throw):
    s = registry.get("emergence")
    follow = s.follow_up(settled("emergence", ["d10:0", "d10:4"]), {})
    assert s.join(follow, parse_dice(throw), {}) is None


def test_a_table_that_names_the_base_by_colour_reads_that_die_first():
    arrange = registry.get("emergence").arrange
    dice = parse_dice(["d10:5:white", "d10:3:blue", "d10:4:green"])
    assert arrange(dice, None) == (dice, None)  # no base colour: the first die read is the base
    first, reason = arrange(dice, "blue")
    assert reason is None
    assert [(d.colour, d.value) for d in first] == [("blue", 3), ("white", 5), ("green", 4)]
    assert arrange(parse_dice(["d10:5:white", "d10:4:green"]), "blue") == (
        parse_dice(["d10:5:white", "d10:4:green"]), "no blue base die read — roll it with the others or correct the roll")


# -- Futile Kingdoms: "On a Result of -5 or +5 ... roll another DR and add the Results together" (seed 004)

def test_an_exploding_chain_carries_every_earlier_dr():
    s = registry.get("futile-kingdoms")
    first = settled("futile-kingdoms", ["d6:6:red", "d6:5:white"])  # DR +5
    follow = s.follow_up(first, {})
    assert (follow.kind, follow.carry) == ("explode", 5)
    second = settled("futile-kingdoms", ["d6:5:red", "d6:6:white"], {"carry": 5}, id="r2", follows="r1")  # DR -5
    assert s.follow_up(second, {}).carry == 5 - 5
    third = settled("futile-kingdoms", ["d6:6:red", "d6:5:white"], {"carry": 5}, id="r2", follows="r1")
    assert s.follow_up(third, {}).carry == 5 + 5


# -- Contingency action: "roll all the remaining dice in the pool and remove any that result in 6 or higher"
#    ... "Once there are no dice left within the pool then ... a resource becomes depleted" (seed 001)

POOL = {"mode": "resource", "pool_size": 4}


def test_a_resource_pool_throw_leaves_the_dice_below_six_for_the_next_throw():
    s = registry.get("contingency-action")
    first = settled("contingency-action", ["d8:8", "d8:7", "d8:2", "d8:3"], POOL)  # 8 and 7 are removed
    follow = s.follow_up(first, POOL)
    assert (follow.kind, follow.joins, follow.remaining) == ("pool", "r1", 2)
    join = s.join(follow, parse_dice(["d8:6", "d8:2"]), POOL)
    assert join.again is False  # the next throw is read on its own, as the smaller pool
    assert join.options == {"mode": "resource", "pool_size": 2}
    assert s.resolve(parse_dice(["d8:6", "d8:2"]), join.options).remaining == 1


def test_a_depleted_pool_an_action_roll_and_an_unread_roll_continue_nothing():
    s = registry.get("contingency-action")
    last = settled("contingency-action", ["d8:6"], {"mode": "resource", "pool_size": 1})
    assert last.adjudication.depleted is True
    assert s.follow_up(last, POOL) is None
    action = settled("contingency-action", ["d8:8", "d8:7"])
    assert s.follow_up(action, {}) is None
    assert s.follow_up(unread("contingency-action", ["d8:8", "d8:7", "d8:2", "d8:3"], POOL), POOL) is None


# -- House Games: "extended rolls, with successes accumulating over time"; working together, "their
#    successes are totaled" (seed 002) -------------------------------------------------------------

def test_an_extended_throw_carries_its_total_into_the_next():
    s = registry.get("house-games")
    options = {"extended": True, "difficulty": 7}
    first = settled("house-games", ["d10:9", "d10:8", "d10:2"], options)  # 9 and 8 at or above 7: 2
    follow = s.follow_up(first, options)
    assert (follow.kind, follow.joins, follow.carry) == ("extend", "r1", 2)
    join = s.join(follow, parse_dice(["d10:7", "d10:1", "d10:0"]), options)
    assert join.again is False
    assert join.options == {"extended": True, "difficulty": 7, "prior_successes": 2}
    # 7 and 0 (a 10) at or above 7, less the 1: one more, three in all.
    assert s.resolve(parse_dice(["d10:7", "d10:1", "d10:0"]), join.options).total_successes == 3


def test_rolls_that_are_not_extended_or_not_read_add_to_nothing():
    s = registry.get("house-games")
    assert s.follow_up(settled("house-games", ["d10:9", "d10:8"]), {}) is None
    assert s.follow_up(unread("house-games", ["d10:9", "d10:8"], {"extended": True}), {"extended": True}) is None


# -- Futile Kingdoms contests: each participant throws score + d6, a 6 "may voluntarily explode by adding
#    another d6" (seed 004) ---------------------------------------------------------------------------

CONTEST = {"scores": [3, 2, 1], "names": ["Ann", "Bob", "Cy"]}


def test_each_participants_whole_throw_is_recorded_for_the_next():
    s = registry.get("futile-kingdoms-contest")
    ann = settled("futile-kingdoms-contest", ["d6:4"], CONTEST)
    follow = s.follow_up(ann, CONTEST)
    assert (follow.kind, follow.joins) == ("contest", "r1")
    assert follow.dice == [] and labels(follow.extra) == ["d6:4"]  # the throw is Ann's, none of it the contest's
    # Bob exploded once: his throw is a 6 and a 4, not Ann's again.
    join = s.join(follow, parse_dice(["d6:6", "d6:4"]), CONTEST)
    assert (join.again, join.options) == (False, {**CONTEST, "thrown": ["4"]})
    bob = settled("futile-kingdoms-contest", ["d6:6", "d6:4"], join.options, id="r2", follows="r1")
    follow = s.follow_up(bob, CONTEST)
    assert follow.joins == "r1"  # every throw of the contest continues its first
    assert s.join(follow, parse_dice(["d6:3"]), CONTEST).options == {**CONTEST, "thrown": ["4", "6+4"]}


def test_sixes_left_on_the_table_with_a_die_added_are_the_same_participants_explosion():
    s = registry.get("futile-kingdoms-contest")
    follow = s.follow_up(settled("futile-kingdoms-contest", ["d6:6"], CONTEST), CONTEST)
    assert s.join(follow, parse_dice(["d6:6", "d6:5"]), CONTEST).options == {**CONTEST, "thrown": []}


@pytest.mark.parametrize("throw", [
    ["d6:3"],  # Ann kept her 6: a single die is Bob's
    ["d6:6"],  # Bob threw a 6 too: no die was added
    ["d6:5", "d6:3"],  # the 6 was picked up: a new throw
])
def test_a_throw_after_a_six_that_does_not_keep_it_and_add_a_die_is_the_next_participants(throw):
    s = registry.get("futile-kingdoms-contest")
    follow = s.follow_up(settled("futile-kingdoms-contest", ["d6:6"], CONTEST), CONTEST)
    assert s.join(follow, parse_dice(throw), CONTEST).options == {**CONTEST, "thrown": ["6"]}


def test_a_decided_contest_or_an_unread_throw_continues_nothing():
    s = registry.get("futile-kingdoms-contest")
    last = settled("futile-kingdoms-contest", ["d6:2"], {"scores": [3, 2], "thrown": ["4"]}, id="r2", follows="r1")
    assert last.adjudication.decided
    assert s.follow_up(last, {"scores": [3, 2]}) is None
    assert s.follow_up(unread("futile-kingdoms-contest", ["d6:4"], CONTEST), CONTEST) is None
