"""`dicecam bench --teach-real` over several folders (a seed's one-die rolls, a folder a die) ends with one row
of them all: the table of all those dice."""

from __future__ import annotations

import pytest

from dicecam.server.benchmarks.teach import _pooled


def _set(name: str, right: tuple[int, int], valued: int, sure: tuple[int, int], wrong: tuple[int, int]) -> dict:
    row = {"bench": "teach-real", "set": name, "protocol": "other photos", "taught_photos": 9}
    for n, when in enumerate(("before", "after")):
        row.update({f"n_right_{when}": right[n], f"n_valued_{when}": valued, f"n_sure_{when}": sure[n],
                    f"n_sure_wrong_{when}": wrong[n], f"sure_wrong_{when}": wrong[n] / sure[n] if sure[n] else None})
    return row


def test_the_pooled_row_counts_every_die_once_rather_than_averaging_the_sets_shares():
    small = _set("d4-1", right=(1, 2), valued=2, sure=(0, 1), wrong=(0, 0))
    big = _set("d20-1", right=(10, 40), valued=98, sure=(10, 20), wrong=(1, 2))
    row = _pooled([small, big, {"bench": "teach-real", "set": "d6-1", "skipped": "every run was taught from"}])
    assert (row["set"], row["sets"], row["read_dice"], row["taught_photos"]) == ("all", 2, 100, 18)
    assert row["before"] == pytest.approx(0.11) and row["after"] == pytest.approx(0.42)
    assert (row["sure_before"], row["sure_wrong_before_dice"], row["sure_after"], row["sure_wrong_after_dice"]) == \
        (10, 1, 21, 2)
    assert row["sure_wrong_after"] == pytest.approx(2 / 21, abs=1e-4)
    assert row["sure_wrong_after_up_to"] > row["sure_wrong_after"], "how large it may be on more dice like these"


def test_a_pooled_row_of_dice_none_of_which_was_read_surely_has_no_share_of_sure_ones_wrong():
    row = _pooled([_set("d4-1", right=(0, 0), valued=3, sure=(0, 0), wrong=(0, 0))] * 2)
    assert row["read_dice"] == 6 and row["before"] == 0.0
    assert row["sure_wrong_before"] is None and row["sure_wrong_after"] is None
