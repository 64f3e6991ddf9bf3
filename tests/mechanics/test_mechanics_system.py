"""A rule system as one record: its verdict type in the roll union, its command-line flags generated
from its options model, its follow-up rule. These are what let a new system touch mechanics/ only."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Literal

import pytest
from pydantic import Field

from dicecam.mechanics import registry
from dicecam.mechanics.adjudication import OtherAdjudication
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.errors import RulesError
from dicecam.mechanics.options import Flag, SystemOptions, cli_flags, summed
from dicecam.mechanics.roll import Roll

# One real throw per system (with the options it needs), each one its system resolves.
THROWS = {
    "contingency": ["d6:3", "d8:5", "d10:7"],
    "contingency-action": ["d8:7", "d8:2", "d6:6"],
    "house-games": ["d10:7", "d10:1", "d10:9"],
    "emergence": ["d10:4", "d10:7"],
    "futile-kingdoms": ["d6:5:red", "d6:2:white"],
    "futile-kingdoms-contest": ["d6:4"],
    "percentile": ["d00:30", "d10:5"],
    "chance": ["d00:70", "d10:1"],
    "table": ["d6:4"],
}
OPTIONS = {"table": {"rows": [{"low": 1, "high": 3, "text": "a goblin"}, {"low": 4, "high": 6, "text": "a troll"}]}}


def roll_of(system: str, adjudication) -> Roll:
    return Roll(id="r1", ts=datetime(2026, 11, 23, tzinfo=timezone.utc), source="manual", status="settled",
                system=system, dice=adjudication.dice, adjudication=adjudication)


def test_every_registered_system_has_a_throw_here():
    assert set(THROWS) == set(registry.SYSTEMS)


@pytest.mark.parametrize("system", sorted(THROWS))
def test_a_verdict_comes_back_from_json_as_its_own_systems_type(system):
    adj = registry.resolve(system, parse_dice(THROWS[system]), OPTIONS.get(system))
    again = Roll.model_validate_json(roll_of(system, adj).model_dump_json())
    assert type(again.adjudication) is registry.get(system).Adjudication
    assert again.adjudication == adj


def test_a_verdict_of_a_system_this_build_lacks_keeps_every_field():
    stored = {"id": "r1", "ts": "2026-11-23T00:00:00Z", "source": "camera", "status": "settled", "system": "poker",
              "adjudication": {"system": "poker", "outcome": "flush", "summary": "A flush.", "hand": ["d6:6"] * 5}}
    roll = Roll.model_validate(stored)
    assert isinstance(roll.adjudication, OtherAdjudication) and roll.adjudication.outcome == "flush"
    assert roll.model_dump(mode="json")["adjudication"]["hand"] == ["d6:6"] * 5


def test_a_verdict_under_another_systems_name_is_refused():
    """The union is told apart by `system`: contingency's numbers under emergence's name do not validate."""
    stored = roll_of("contingency", registry.resolve("contingency", parse_dice(THROWS["contingency"]))).model_dump(mode="json")
    with pytest.raises(ValueError):
        Roll.model_validate({**stored, "adjudication": {**stored["adjudication"], "system": "emergence"}})


# -- command-line flags, generated ---------------------------------------------------------------

class ExampleOptions(SystemOptions):
    target: int = Field(default=5, ge=1, le=40, title="Target", description="beat it")
    style: Literal["fast", "slow"] = Field(default="fast", title="Style")
    bold: bool = Field(default=False, title="Bold")
    colours: list[str] = Field(default_factory=list, title="Colours")
    bonus: Annotated[int, Flag(name="plus", metavar="+N", repeat=True, convert=summed("bonus", "--plus"))] = Field(
        default=0, title="Bonus")
    secret: Annotated[int, Flag(hidden=True)] = Field(default=0, title="Set by a follow-up")


def test_each_option_is_a_flag_of_its_fields_type_and_words():
    flags = {f.name: f for f in cli_flags(ExampleOptions)}
    assert list(flags) == ["target", "style", "bold", "colours", "plus"]  # field order; hidden ones left out
    assert (flags["target"].kind, flags["style"].kind, flags["bold"].kind) == ("int", "choice", "switch")
    assert flags["style"].choices == ("fast", "slow")
    assert flags["target"].help == "Target — beat it (default 5)"
    assert flags["colours"].values("red, blue,") == {"colours": ["red", "blue"]}
    assert flags["plus"].option == "--plus" and flags["plus"].values(["+2", "-1", "3"]) == {"bonus": 4}
    with pytest.raises(RulesError, match="--plus takes whole numbers, not 'x'"):
        flags["plus"].values(["x"])


def test_a_field_no_flag_can_carry_must_say_so():
    class Nested(SystemOptions):
        table: dict[str, int] = Field(default_factory=dict, title="A map")

    with pytest.raises(TypeError, match="Flag\\(hidden=True\\)"):
        cli_flags(Nested)


@pytest.mark.parametrize("system", sorted(THROWS))
def test_every_systems_flags_cover_its_options(system):
    """Every option a user can set is reachable from the command line, by its own flag or one that sets it."""
    s = registry.get(system)
    flags = s.flags()
    hidden = {name for name, info in s.Options.model_fields.items()
              if any(isinstance(m, Flag) and m.hidden for m in info.metadata)}
    assert {f.field for f in flags} == set(s.Options.model_fields) - hidden


def test_contingency_face_modifiers_are_index_colon_modifier_summed_per_die():
    flag = next(f for f in registry.get("contingency").flags() if f.name == "modifier")
    values = flag.values(["0:+2", "2:-1", "0:+1"])
    assert registry.get("contingency").options(values).modifiers == [3, 0, -1]
    with pytest.raises(RulesError, match="write INDEX:\\+N"):
        flag.values(["+2"])
    with pytest.raises(RulesError, match="index 3 is not 0, 1 or 2"):
        registry.get("contingency").options(flag.values(["3:+1"]))


def test_a_resource_pool_flag_turns_on_the_resource_mode():
    flag = next(f for f in registry.get("contingency-action").flags() if f.name == "pool")
    assert registry.get("contingency-action").options(flag.values(4)).model_dump() == {
        "zero_dice": False, "mode": "resource", "pool_size": 4}


# -- follow-up rules ------------------------------------------------------------------------------

def test_a_check_waits_for_its_luck_die_and_a_single_die_joins_it():
    s = registry.get("contingency")
    check = roll_of("contingency", s.resolve(parse_dice(THROWS["contingency"]), {"target": 9}))
    check = check.model_copy(update={"options": {"target": 9}})
    follow = s.follow_up(check, {"target": 9})
    assert follow is not None and follow.kind == "luck" and follow.joins == "r1"
    join = s.join(follow, parse_dice(["d8:6"]), {})
    assert join.again and join.options == {"target": 9, "luck": "d8:6"}
    assert s.join(follow, parse_dice(["d8:6", "d6:1"]), {}) is None  # two dice are a new check
    helped = check.model_copy(update={"options": join.options})
    assert s.follow_up(helped, {}) is None  # one luck die per check


def test_a_dr_of_five_carries_into_the_next_pair():
    s = registry.get("futile-kingdoms")
    five = roll_of("futile-kingdoms", s.resolve(parse_dice(["d6:6:red", "d6:5:white"])))  # DR +5
    follow = s.follow_up(five, {"modifier": 1})
    assert follow.carry == 5
    assert s.join(follow, parse_dice(["d6:2:red", "d6:2:white"]), {"modifier": 1}).options == {"modifier": 1, "carry": 5}
    calm = roll_of("futile-kingdoms", s.resolve(parse_dice(["d6:3:red", "d6:2:white"])))
    assert s.follow_up(calm, {}) is None


def test_systems_without_a_follow_up_rule_start_a_new_roll_every_throw():
    s = registry.get("percentile")
    roll = roll_of("percentile", s.resolve(parse_dice(THROWS["percentile"])))
    assert s.follow_up(roll, {}) is None
