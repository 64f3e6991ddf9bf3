"""Each system's command-line flags, generated from its options model: the kind of value a flag takes
comes from the field's type unless the field says otherwise, a list is given comma-separated or once per
value, and the help is the field's words with its default."""

from __future__ import annotations

import argparse
from typing import Annotated

import pytest
from pydantic import Field

from dicecam.mechanics import registry
from dicecam.mechanics.errors import RulesError
from dicecam.mechanics.options import Flag, SystemOptions, cli_flags, summed


def flag_of(system: str, name: str):
    return next(f for f in registry.get(system).flags() if f.name == name)


# -- the kind of value a flag takes -------------------------------------------------------------------

def test_a_target_given_as_a_number_or_a_word_is_a_text_flag():
    """Contingency's target is a number in the model, but the flag also takes the seed's words: the
    field's Flag(kind="text") wins over its type, and the flag shows N|WORD."""
    target = flag_of("contingency", "target")
    assert (target.kind, target.metavar) == ("text", "N|WORD")
    assert target.values("Tricky") == {"target": "Tricky"}
    assert registry.get("contingency").options(target.values("Tricky")).target == 5


def test_a_text_option_is_a_text_flag_even_when_it_may_be_unset():
    """The luck die (`str | None`): None is the unset default, the flag takes text like d6:4."""
    luck = flag_of("contingency", "luck")
    assert (luck.kind, luck.metavar, luck.repeat, luck.reads_file) == ("text", "TYPE:VALUE", False, False)


def test_a_list_of_numbers_is_given_comma_separated_and_each_must_be_whole():
    """House Games' split: `--split "3, 2"` is the pools 3 and 2; a word in the list is refused by the
    flag's name."""
    split = flag_of("house-games", "split")
    assert split.kind == "list-int"
    assert split.values("3, 2") == {"split": [3, 2]}
    assert split.values("7,") == {"split": [7]}
    with pytest.raises(RulesError) as e:
        split.values("3, x")
    assert str(e.value) == "--split takes whole numbers, not 'x'"


def test_a_list_of_names_is_given_comma_separated_as_text():
    names = flag_of("futile-kingdoms-contest", "names")
    assert names.kind == "list-text"
    assert names.values(" Ann, Bo ,") == {"names": ["Ann", "Bo"]}


def test_a_repeatable_flag_gives_each_value_its_own_flag_and_keeps_them_in_order():
    """A contest's earlier throws, one flag per participant: `--thrown 4 --thrown 6+5` is the list
    [4, 6+5], in throwing order."""
    thrown = flag_of("futile-kingdoms-contest", "thrown")
    assert (thrown.kind, thrown.repeat, thrown.metavar) == ("text", True, "FACES")
    assert thrown.values(("4", "6+5")) == {"thrown": ["4", "6+5"]}
    s = registry.get("futile-kingdoms-contest")
    assert s.options({**thrown.values(("4", "6+5")), "scores": [1, 2, 3]}).thrown == ["4", "6+5"]


def test_a_flag_naming_a_file_says_so_and_takes_the_path_as_text():
    """A table's rows come from a file: the caller reads the path the flag gives."""
    table = flag_of("table", "table")
    assert (table.kind, table.reads_file, table.repeat, table.field) == ("text", True, False, "rows")


def test_a_flags_own_kind_wins_over_its_fields_type():
    class Counted(SystemOptions):
        level: Annotated[str, Flag(kind="int")] = Field(default="1", title="Level")

    assert [f.kind for f in cli_flags(Counted)] == ["int"]


def test_a_field_no_flag_can_carry_names_both_ways_out():
    class Nested(SystemOptions):
        table: dict[str, int] = Field(default_factory=dict, title="A map")

    with pytest.raises(TypeError) as e:
        cli_flags(Nested)
    assert str(e.value).endswith("mark it Flag(hidden=True) or give it a Flag(convert=...)")


# -- repeatable numbers that add up -----------------------------------------------------------------

def test_repeated_modifiers_add_up():
    """`--modifier +2 --modifier -1 --modifier " 3 "` is a modifier of +4 (Futile Kingdoms, House Games)."""
    add = summed("modifier", "--modifier")
    assert add(["+2", "-1", " 3 "]) == {"modifier": 4}
    assert add([]) == {"modifier": 0}
    with pytest.raises(RulesError) as e:
        add(["+2", "two"])
    assert str(e.value) == "--modifier takes whole numbers, not 'two'"


def test_futile_kingdoms_modifiers_given_twice_are_their_sum():
    modifier = flag_of("futile-kingdoms", "modifier")
    assert modifier.repeat and modifier.kind == "text"
    assert registry.get("futile-kingdoms").options(modifier.values(["+2", "-3"])).modifier == -1


# -- help -------------------------------------------------------------------------------------------

class HelpOptions(SystemOptions):
    colours: list[str] = Field(default_factory=lambda: ["red", "white"], title="Colours")
    loud: bool = Field(default=True, title="Loud")
    quiet: bool = Field(default=False, title="Quiet")
    label: str = Field(default="", title="Label")
    untitled: int | None = None
    chance: int = Field(default=50, title="Chance in %", description="50% is even")


def test_help_names_a_default_that_is_set_and_leaves_out_an_empty_one():
    """A default made by a factory is shown like any other; an off switch, an empty text or no value
    says nothing."""
    helps = {f.name: f.help for f in cli_flags(HelpOptions)}
    assert helps["colours"] == "Colours (default ['red', 'white'])"
    assert helps["loud"] == "Loud (default True)"
    assert helps["quiet"] == "Quiet"
    assert helps["label"] == "Label"
    assert helps["untitled"] == ""


def test_a_percent_sign_in_help_reaches_the_reader_as_written():
    """argparse formats help with %: the generated help is escaped, and the printed help reads as the
    field says."""
    chance = next(f for f in cli_flags(HelpOptions) if f.name == "chance")
    parser = argparse.ArgumentParser(prog="x", formatter_class=lambda prog: argparse.HelpFormatter(prog, width=200))
    parser.add_argument(chance.option, help=chance.help)
    assert "Chance in % — 50% is even (default 50)" in parser.format_help()
