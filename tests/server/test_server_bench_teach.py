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


def _table_photo(n: int, faces: list[tuple[str, int]]):
    from pathlib import Path

    from dicecam.mechanics.dice import DieType
    from dicecam.vision.evaluate import TruthDie, TruthImage

    return TruthImage(Path(f"table_{n}.jpg"), [TruthDie(DieType(k), v) for k, v in faces], True, {})


def test_a_table_of_mixed_dice_is_taught_from_photos_until_each_face_is_seen_three_times_and_read_in_the_rest():
    import random

    from dicecam.server.benchmarks.teach import _to_teach

    rng = random.Random(0)
    kinds = ("d4", "d6", "d8", "d12")
    items = [_table_photo(n, [(k, rng.randint(1, int(k[1:]))) for k in kinds]) for n in range(120)]
    taught, read, protocol = _to_teach(items, 3, random.Random(2))
    assert protocol == "other photos of the table"
    assert taught and read and not taught & read and taught | read == set(range(120))
    assert len(taught) <= 60, "at most half the photos are taught"
    seen = {}
    for n in taught:
        for d in items[n].dice:
            seen[(d.kind.value, d.value)] = seen.get((d.kind.value, d.value), 0) + 1
    shown = {(d.kind.value, d.value) for item in items for d in item.dice}
    assert all(seen.get(f, 0) >= 3 for f in shown), "every face of every die is taught 3 times"
    assert len(taught) < 60, "and no more photos than that took (the d12 alone needs 36)"


def test_a_table_photographed_too_few_times_is_taught_no_more_than_half_its_photos():
    import random

    from dicecam.server.benchmarks.teach import _to_teach

    items = [_table_photo(n, [("d20", 1 + n), ("d12", 1 + n % 12)]) for n in range(9)]
    taught, read, _ = _to_teach(items, 3, random.Random(0))
    assert len(taught) == 4 and len(read) == 5
