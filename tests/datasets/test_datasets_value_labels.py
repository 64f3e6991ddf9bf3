"""The value labels kept in the repository for lurig-types' photos (datasets/value_labels): each set the evaluation
reads beside lurig-types is here, whole and consistent, so a machine whose shared folder lost them can put them back."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from dicecam.models.train_doubt import PICTURE_FACED
from dicecam.vision.evaluate import LABELLED_BESIDE, load_truth, run_of

LABELS = Path(__file__).resolve().parents[2] / "datasets" / "value_labels"
SETS = LABELLED_BESIDE["lurig-types"]


def lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (LABELS / name / "truth.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", SETS)
def test_every_set_read_beside_lurig_types_is_kept_with_a_readme_that_names_its_licence(name):
    assert (LABELS / name / "truth.jsonl").is_file()
    assert "CC0" in (LABELS / name / "README.md").read_text()


@pytest.mark.parametrize("name", SETS)
def test_each_line_names_one_lurig_types_photo_of_its_kind_by_a_value_that_kind_has(name, tmp_path):
    # Read where it is meant to lie, beside lurig-types, by the evaluation's own loader (which checks the values).
    (tmp_path / "lurig-types" / "images").mkdir(parents=True)
    (tmp_path / name).mkdir()
    (tmp_path / name / "truth.jsonl").write_text((LABELS / name / "truth.jsonl").read_text())
    truth = list(load_truth(tmp_path / name))
    assert truth and len(truth) == len(lines(name))
    for image in truth:
        assert image.path.parent.resolve() == (tmp_path / "lurig-types" / "images").resolve()
        (die,) = image.dice
        assert die.value is not None
        assert re.match(rf"{die.kind.value}_|{die.kind.value}\d", image.path.name), image.path.name


@pytest.mark.parametrize("name", SETS)
def test_a_photos_sequence_is_its_run_and_its_value_and_no_photo_is_labelled_twice(name):
    names = Counter()
    for line in lines(name):
        assert line["sequence"] == f"{run_of(line)}-{line['dice'][0]['value']}"
        names[line["image"]] += 1
    assert max(names.values()) == 1


def test_no_photo_has_two_values_across_the_sets():
    seen = Counter(line["image"] for name in SETS for line in lines(name))
    assert max(seen.values()) == 1


def test_the_picture_faced_d20_shows_its_20_in_every_photo():
    for name in PICTURE_FACED:
        assert {(d["type"], d["value"]) for line in lines(name) for d in line["dice"]} == {("d20", 20)}
