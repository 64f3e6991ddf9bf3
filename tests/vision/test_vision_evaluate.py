"""Scoring rules of `dicecam eval`: one-to-one box matching, what counts as read right, exact images."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.vision.evaluate import (Report, TruthImage, held_out, held_out_in, load_truth, read_folders, score_image,
                                    shared_set)


def die(kind, value, box, colour=None):
    return DieReading(type=kind, value=value, box=box, colour=colour)


def test_a_die_is_read_right_only_with_its_box_kind_and_value():
    report = Report()
    truth = [die("d6", 3, (0, 0, 10, 10), "red"), die("d20", 17, (50, 50, 70, 70)), die("d8", 2, (100, 0, 110, 10))]
    pred = [die("d6", 3, (1, 0, 11, 10), "blue"), die("d20", 11, (50, 50, 70, 70))]
    score_image(report, truth, pred)
    out = report.to_json()
    assert out["dice"] == 3 and out["dice_read_right"] == round(1 / 3, 4)
    assert out["images_exact"] == 0
    assert out["per_kind"]["d20"]["recall"] == 1 and out["per_kind"]["d20"]["value_accuracy"] == 0
    assert out["per_kind"]["d8"]["recall"] == 0
    assert out["colour_accuracy"] == 0
    pairs = {(c["truth"], c["read"]) for c in out["confusion"]}
    assert pairs == {("d20 17", "d20 11"), ("d8 2", "missed")}


def test_an_extra_die_spoils_an_otherwise_exact_image():
    report = Report()
    truth = [die("d4", 1, (0, 0, 10, 10))]
    score_image(report, truth, truth)
    score_image(report, truth, truth + [die("d4", 2, (40, 40, 50, 50))])
    assert report.to_json()["images_exact"] == 0.5


def test_boxes_are_scored_by_the_dice_they_find_how_well_they_fit_and_the_readings_of_no_die():
    report = Report()
    truth = [die("d6", 3, (0, 0, 10, 10)), die("d8", 2, (100, 0, 110, 10)), die("d4", 1, (200, 0, 210, 10))]
    pred = [die("d6", 3, (0, 0, 10, 10)), die("d12", 2, (100, 0, 110, 12)), die("d6", 1, (300, 300, 310, 310))]
    score_image(report, truth, pred)
    out = report.to_json()
    assert out["dice_boxed"] == round(2 / 3, 4), "a box of the wrong kind still found its die"
    assert out["box_iou_median"] == round((1 + 100 / 120) / 2, 4)
    assert out["extra_readings"] == 1


def test_the_share_of_sure_dice_wrong_comes_with_how_large_it_may_well_be_on_more_photos():
    from dicecam.vision.evaluate import wrong_up_to

    few, many = Report(), Report()
    truth = [die("d20", 17, (0, 0, 10, 10))]
    for _ in range(18):
        score_image(few, truth, truth)
    for _ in range(400):
        score_image(many, truth, truth)
    score_image(many, truth, [die("d20", 11, (0, 0, 10, 10))])  # one sure and wrong in 401
    f, m = few.to_json(), many.to_json()
    assert f["sure_dice"] == 18 and f["sure_wrong"] == 0 and 0.05 < f["sure_wrong_up_to"] < 0.1
    assert m["sure_dice"] == 401 and m["sure_wrong"] == round(1 / 401, 4) < m["sure_wrong_up_to"] < 0.01
    assert m["per_kind"]["d20"]["sure_wrong_up_to"] == m["sure_wrong_up_to"]
    assert Report().to_json()["sure_wrong_up_to"] is None and wrong_up_to(0, 0) is None


def test_a_folder_of_read_folders_is_read_folder_by_folder_in_name_order(tmp_path):
    """Renders made in chunks, a seed a folder: `dicecam eval` scores them all at once."""
    for seed, value in (("s2", 5), ("s1", 3)):
        (tmp_path / "chunks" / seed).mkdir(parents=True)
        line = {"image": "a.png", "width": 64, "height": 64, "dice": [{"type": "d6", "value": value, "box": [1, 1, 9, 9]}]}
        (tmp_path / "chunks" / seed / "reads.jsonl").write_text(json.dumps(line) + "\n")
    (tmp_path / "chunks" / "notes").mkdir()  # a folder that holds no reads is no chunk
    assert read_folders(tmp_path / "chunks") == [tmp_path / "chunks" / "s1", tmp_path / "chunks" / "s2"]
    assert read_folders(tmp_path / "chunks" / "s1") == [tmp_path / "chunks" / "s1"]
    got = [(item.path, item.dice[0].value) for item in load_truth(tmp_path / "chunks")]
    assert got == [(tmp_path / "chunks" / "s1" / "a.png", 3), (tmp_path / "chunks" / "s2" / "a.png", 5)]


@pytest.mark.parametrize("labels, name, held", [
    ("lurig-d4-values", "d4_angle_color006.jpg", True), ("lurig-d4-values", "d4_wood0087.jpg", False),
    ("lurig-d4-values", "d4000.jpg", False), ("lurig-top-values", "d10_top012.jpg", True),
    ("lurig-top-values", "d12_top003.jpg", True), ("lurig-top-values", "d8_top001.jpg", False),
    ("lurig-d12-values", "d12_wood0005.jpg", False), ("lurig-d12-values", "d12_color000.jpg", False),
    ("lurig-d12-values", "d12_top003.jpg", True), ("lurig-d6-values", "d6_wood0947.jpg", False),
    ("lurig-d6-values", "d6_off-angle_0012.jpg", True), ("lurig-d8-values", "d8_color000.jpg", True),
    ("lurig-d8-values", "d8_wood008.jpg", False), ("lurig-d10-values", "d10_color000.jpg", False),
    ("lurig-d20-logo-values", "d20_off-angle_0194.jpg", False)])
def test_lurig_types_photos_labelled_by_value_are_held_out_as_lurig_types_holds_them_out(labels, name, held):
    # The value labels name lurig-types' photos from a folder beside it; a photo is held out in both or in neither.
    mine = TruthImage(Path(name), [], True, {"image": f"../lurig-types/images/{name}", "width": 480})
    theirs = TruthImage(Path(name), [], True, {"image": name, "width": 480})
    assert held_out(labels, mine) == held_out("lurig-types", theirs) == held


@pytest.mark.parametrize("labels, name, meta", [
    ("lurig-d6-values", "d6_IMG_4860.JPG", {"width": 768, "split": "val"}),  # one of the author's larger photos
    ("lurig-d20-logo-values", "d20_off-angle_0201.jpg", {"width": 480, "split": "val"})])  # the d20 run's val slice
def test_lurig_types_larger_photos_and_validation_slice_stay_held_out_when_labelled_by_value(labels, name, meta):
    mine = TruthImage(Path(name), [], True, {"image": f"../lurig-types/images/{name}", **meta})
    theirs = TruthImage(Path(name), [], True, {"image": name, **meta})
    assert held_out(labels, mine) and held_out("lurig-types", theirs)
    assert not held_out(labels, TruthImage(Path(name), [], True, {"image": name, **meta, "split": "train",
                                                                    "width": 480}))


@pytest.mark.parametrize("set_name, folder, held", [
    ("nell-byler-d6-pips", "test", True), ("nell-byler-d6-pips", "train", False), ("nell-byler-d6-pips", "val", False),
    ("rune55-d6-pips", "test", False), ("rune55-d6-pips", "train", False), ("burksbuilds-faces", "images", True)])
def test_the_pip_sets_are_held_out_by_the_split_the_recipe_never_learns(set_name, folder, held):
    # The recipe learns nell-byler's train and val photos and all of Rune55; burksbuilds it never learns.
    photo = TruthImage(Path(set_name) / "images" / folder / "IMG_1.jpg", [], False, {})
    assert held_out(set_name, photo) == held


def test_a_folder_inside_a_shared_set_is_that_set(tmp_path):
    inside = tmp_path / "nell-byler-d6-pips" / "images" / "train"
    inside.mkdir(parents=True)
    assert shared_set(inside) == shared_set(inside.parent.parent) == "nell-byler-d6-pips"
    assert shared_set(tmp_path / "my-table") == "my-table"  # a set of the player's own: its own name


def test_a_folder_of_several_shared_sets_holds_each_photo_out_by_its_own_sets_rules(tmp_path):
    real = tmp_path / "real"
    keep = held_out_in(real)
    d20 = lambda seq: TruthImage(real / "lurig-d20-values" / "images" / "x.jpg", [], True, {"sequence": seq})  # noqa: E731
    assert keep(d20("d20_top-20")) and not keep(d20("d20_top-1"))  # a held-out run, a training run
    assert keep(TruthImage(real / "nell-byler-d6-pips" / "images" / "test" / "a.jpg", [], False, {}))
    assert not keep(TruthImage(real / "nell-byler-d6-pips" / "images" / "train" / "a.jpg", [], False, {}))
    assert keep(TruthImage(real / "burksbuilds-faces" / "images" / "a.jpg", [], True, {}))  # never trained on
    # A photo outside any shared set is judged by the set its truth file names.
    elsewhere = TruthImage(tmp_path / "copies" / "a.jpg", [], True, {"sequence": "d20_top-1"})
    assert not held_out_in(real / "lurig-d20-values" / "truth.jsonl")(elsewhere)
