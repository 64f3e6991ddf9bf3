"""Random tables (seed 000): how a rolled zero is read against the rows, which dice a table is rolled
with by default, and what a wrongly rolled table says."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieType, parse_dice
from dicecam.mechanics.errors import RulesError


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
