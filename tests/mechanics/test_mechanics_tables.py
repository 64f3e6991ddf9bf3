"""Random tables (seed 000): how a rolled zero is read against the rows, which dice a table is rolled
with by default, what a wrongly rolled table says, and how a table file's row names its values
(`parse_range`: '1-3', '01–05', '96-00' with 00 as 100), and how a table file is read (`parse_table_text`:
an optional '# Title', a header row whose first cell names the die, rows `value-or-range | result`, cells split
on '|', tabs or commas as the header decides)."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieType, parse_dice
from dicecam.mechanics.errors import RulesError
from dicecam.mechanics.percentile import parse_range, parse_table_text


def rows(*spans):
    return [{"low": lo, "high": hi, "text": f"row {lo}-{hi}"} for lo, hi in spans]


def test_00_and_0_on_a_table_of_1_to_99_reads_0_and_finds_no_row():
    """A zero reads as the top of the die only when a row covers that top: with no row at 100,
    00 + 0 stays 0."""
    a = registry.resolve("table", parse_dice(["d00:0", "d10:0"]), {"die": "d100", "rows": rows((1, 50), (51, 99))})
    assert (a.result, a.outcome, a.row) == (0, "no row", None)
    b = registry.resolve("table", parse_dice(["d00:0", "d10:0"]), {"die": "d100", "rows": rows((1, 50), (51, 100))})
    assert (b.result, b.row) == (100, 2)


def test_a_table_rolled_with_the_wrong_dice_names_every_die_read():
    with pytest.raises(RulesError, match=r"rolled with one d6, read d6, d8$"):
        registry.resolve("table", parse_dice(["d6:3", "d8:2"]), {"die": "d6", "rows": rows((1, 6))})
    with pytest.raises(RulesError, match=r"read nothing$"):
        registry.resolve("table", [], {"die": "d6", "rows": rows((1, 6))})


@pytest.mark.parametrize(("die", "pool"), [
    ("d20", [DieType.d20]), ("d12", [DieType.d12]), ("d6", [DieType.d6]), ("d100", [DieType.d00, DieType.d10]),
])
def test_a_table_is_rolled_by_default_with_the_die_its_header_names(die, pool):
    assert registry.get("table").default_pool({"die": die, "rows": rows((1, 4))}) == pool


@pytest.mark.parametrize(("cell", "span"), [
    ("3", (3, 3)),  # a single value is a range of one
    ("0", (0, 0)),  # a d10 table may give its 0 a row of its own
    ("1-3", (1, 3)),
    ("01–05", (1, 5)),  # an en dash, and leading zeros as a d100 table writes them
    ("1—2", (1, 2)),  # an em dash
    ("4 to 6", (4, 6)),
    (" 7 - 9 ", (7, 9)),
    ("10-10", (10, 10)),
    ("00-05", (0, 5)),  # 00 at the start reads 0: the table runs from 00 + 0
    ("96-00", (96, 100)),  # 00 at the end of a range is the top of a d100: 100
    ("96-000", (96, 100)),
    ("00", (100, 100)),  # a row of its own for 00 is the top of a d100
])
def test_a_table_row_names_a_value_or_a_range(cell, span):
    assert parse_range(cell) == span


@pytest.mark.parametrize(("cell", "reason"), [
    ("", "bad table range '': write a number or a range like 1-3"),
    ("a-b", "bad table range 'a-b': write a number or a range like 1-3"),
    ("-3", "bad table range '-3': write a number or a range like 1-3"),
    ("1-2-3", "bad table range '1-2-3': write a number or a range like 1-3"),
    ("+5", "bad table range '+5': write a number or a range like 1-3"),
    # "5 and up" is not read as 5 alone: the row would miss the faces above it.
    ("5+", "bad table range '5+': write the range up to the die's top, like 5-6 or 96-00"),
    ("96 +", "bad table range '96 +': write the range up to the die's top, like 5-6 or 96-00"),
    ("1000", "bad table range '1000': no table die has a face of more than 3 digits"),
    # A cell is shown whole up to 40 characters, cut after 30 beyond.
    ("x" * 40, f"bad table range '{'x' * 40}': write a number or a range like 1-3"),
    ("x" * 41, f"bad table range '{'x' * 30}'…: write a number or a range like 1-3"),
    ("1-" + "9" * 5000, "bad table range '1-" + "9" * 28 + "'…: no table die has a face of more than 3 digits"),
])
def test_a_row_that_names_no_value_is_refused_with_its_reason(cell, reason):
    with pytest.raises(RulesError) as e:
        parse_range(cell)
    assert str(e.value) == reason


def row(lo, hi, text):
    return {"low": lo, "high": hi, "text": text}


WEATHER = "# Weather\n| d6 | Weather |\n|---|---|\n| 1-2 | Rain |\n| 3 | Fog |\n| 4-6 | Sun |\n"


def test_a_markdown_table_gives_its_title_its_die_and_a_row_for_each_line_under_the_separator():
    assert parse_table_text(WEATHER) == {
        "die": "d6", "title": "Weather", "rows": [row(1, 2, "Rain"), row(3, 3, "Fog"), row(4, 6, "Sun")]}


def test_a_table_file_read_is_a_table_the_rules_roll_on():
    """The seed's rule: roll the die the header names, read across the row whose range holds it."""
    a = registry.resolve("table", parse_dice(["d6:5"]), parse_table_text(WEATHER))
    assert (a.result, a.row, a.text) == (5, 3, "Sun")
    d100 = parse_table_text("d%\tWind\n01-50\tcalm\n51-00\tgale\n")
    a = registry.resolve("table", parse_dice(["d00:0", "d10:0"]), d100)
    assert (a.result, a.row, a.text) == (100, 2, "gale")


def test_a_tab_separated_table_splits_on_tabs_only_and_may_have_no_title():
    """Blank lines and the indentation of a pasted spreadsheet are not part of the table; a result keeps its
    inner spaces (a tab table does not split on them)."""
    text = "\n  d100\tResult\n\n01-50\tlow tide\n\t\n51-00\thigh tide, rocks\n"
    assert parse_table_text(text) == {"die": "d100", "title": "", "rows": [row(1, 50, "low tide"),
                                                                            row(51, 100, "high tide, rocks")]}


def test_a_comma_separated_table_splits_on_commas():
    text = "d20,Encounter\n1-10,Wolves\n11-20,Bandits at the ford\n"
    assert parse_table_text(text) == {"die": "d20", "title": "", "rows": [row(1, 10, "Wolves"),
                                                                           row(11, 20, "Bandits at the ford")]}


def test_the_title_is_the_hash_line_before_the_header_whatever_its_hashes_and_spacing():
    """Any number of '#', with or without a space after them, and blank lines before the header."""
    assert parse_table_text("## Treasure\n\nd4 | Find\n1 | Gold\n2-4 | Nothing\n") == {
        "die": "d4", "title": "Treasure", "rows": [row(1, 1, "Gold"), row(2, 4, "Nothing")]}
    assert parse_table_text("#XP awarded\nd8 | XP\n1-8 | 100\n")["title"] == "XP awarded"


def test_a_hash_line_after_the_header_is_a_row_not_a_title():
    with pytest.raises(RulesError) as e:
        parse_table_text("# Loot\nd6 | Loot\n# Coins\n1-6 | Coins\n")
    assert str(e.value) == "table row '# Coins' needs a value and a result"


@pytest.mark.parametrize(("header", "die"), [
    ("d4", "d4"), ("d6", "d6"), ("d8", "d8"), ("d10", "d10"), ("d12", "d12"), ("d20", "d20"), ("d100", "d100"),
    ("d%", "d100"), ("D%", "d100"),  # d% is the percentile roll, d00 + d10
    ("1d6", "d6"), ("1D20", "d20"), ("D12", "d12"), ("1d%", "d100"),  # one die, in any case
])
def test_the_first_header_cell_names_the_die_in_any_usual_spelling(header, die):
    assert parse_table_text(f"| {header} | Result |\n| 1 | x |\n")["die"] == die


def test_markdown_rows_may_leave_out_their_outer_pipes_and_only_pipes_are_trimmed_from_a_row():
    """'Room IX' keeps its last letter: the ends of a row lose their pipes, nothing else."""
    assert parse_table_text("d10 | Room\n1-5 | Room IX\n| 6-10 | Room X |\n")["rows"] == [
        row(1, 5, "Room IX"), row(6, 10, "Room X")]


def test_a_result_over_several_columns_is_joined_and_empty_cells_are_left_out():
    text = "| d6 | Result | Note |\n|:--|:--:|--:|\n| 1 | Rain | heavy |\n| 2-6 | Sun | |\n"
    assert parse_table_text(text)["rows"] == [row(1, 1, "Rain | heavy"), row(2, 6, "Sun")]


def test_a_separator_row_is_any_row_of_dashes_colons_equals_signs_and_spaces_wherever_it_stands():
    text = "| d6 | Result |\n| :-- == --: | --- |\n| 1-3 | Rain |\n|===|===|\n| 4-6 | Sun |\n"
    assert parse_table_text(text)["rows"] == [row(1, 3, "Rain"), row(4, 6, "Sun")]


DICE = "d4, d6, d8, d10, d12, d20, d100"


@pytest.mark.parametrize(("text", "reason"), [
    ("", "the table file has no header row"),
    ("\n  \n# Only a title\n\n", "the table file has no header row"),
    ("| Weather | d6 |\n| 1 | Rain |\n", f"the first column header must be a die ({DICE}), not 'Weather'"),
    ("d7 | Result\n1 | x\n", f"the first column header must be a die ({DICE}), not 'd7'"),
    # A table is read off one die: a sum of dice is no table die.
    ("2d6,Result\n2,x\n", f"the first column header must be a die ({DICE}), not '2d6'"),
    ("| d6 | Result |\n| 3 |\n", "table row '| 3 |' needs a value and a result"),
    ("d6\tResult\n1-6 Rain\n", "table row '1-6 Rain' needs a value and a result"),
    # Only rows made of separator marks alone are skipped: a dash for a value is a bad range.
    ("d6 | Result\n- | X\n", "bad table range '-': write a number or a range like 1-3"),
    ("d6 | Result\nRain | 1-2\n", "bad table range 'Rain': write a number or a range like 1-3"),
])
def test_a_table_file_that_cannot_be_read_is_refused_in_one_line(text, reason):
    with pytest.raises(RulesError) as e:
        parse_table_text(text)
    assert str(e.value) == reason
