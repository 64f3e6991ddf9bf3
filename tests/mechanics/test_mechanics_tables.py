"""Random tables (seed 000): how a rolled zero is read against the rows, which dice a table is rolled
with by default, what a wrongly rolled table says, and how a table file's row names its values
(`parse_range`: '1-3', '01–05', '96-00' with 00 as 100)."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieType, parse_dice
from dicecam.mechanics.errors import RulesError
from dicecam.mechanics.percentile import parse_range


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
