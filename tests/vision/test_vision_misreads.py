"""The dice `dicecam eval` read wrong: each one kept with why it counts as wrong, listed, and drawn to look at."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from dicecam.mechanics.dice import DieReading, DieType
from dicecam.mechanics.errors import DicecamError
from dicecam.vision.evaluate import Misread, Report, TruthDie, score_image
from dicecam.vision.misreads import CAPTION, COLUMNS, TILE, ordered, sheet, write_misreads


def die(kind, value, box, **flags):
    return DieReading(type=kind, value=value, box=box, **flags)


def test_every_die_read_wrong_is_kept_with_its_reading_box_and_whether_it_was_read_sure():
    report = Report()
    truth = [die("d20", 7, (0, 0, 40, 40)), die("d8", 2, (100, 0, 140, 40)), die("d6", 3, (200, 0, 240, 40))]
    pred = [die("d20", 1, (2, 1, 41, 40)), die("d8", 2, (100, 0, 140, 40), uncertain=True, doubt="reads as 2 or 5")]
    score_image(report, truth, pred, image="table.png")
    assert [(m.truth, m.read, m.sure, m.box) for m in report.misreads] == [
        ("d20 7", "d20 1", True, (2, 1, 41, 40)),  # sure and wrong, at the reading's box
        ("d6 3", "missed", False, (200, 0, 240, 40))]  # no reading: the label's box
    assert all(m.image == "table.png" for m in report.misreads)
    assert "misreads" not in report.to_json(), "eval's figures keep their shape"


def test_a_die_labelled_by_kind_alone_is_misread_only_by_its_kind_and_doubt_is_kept():
    report = Report()
    score_image(report, [TruthDie(DieType.d10)], [die("d6", 3, (0, 0, 9, 9), uncertain=True, doubt="reads as d6 3")],
                single=True, image="x.jpg")
    score_image(report, [TruthDie(DieType.d10)], [die("d10", 4, (0, 0, 9, 9))], single=True, image="y.jpg")
    (m,) = report.misreads
    assert (m.truth, m.read, m.sure, m.doubt, m.box) == ("d10", "d6", False, "reads as d6 3", (0, 0, 9, 9))


def misread(i: int, sure: bool, image: str = "", box=(10, 10, 50, 50)) -> Misread:
    return Misread(image, f"d20 {i + 1}", "d20 1", sure, box)


def test_the_dice_read_wrong_without_a_doubt_flag_come_first():
    got = ordered([misread(0, False), misread(1, True), misread(2, False), misread(3, True)])
    assert [m.truth for m in got] == ["d20 2", "d20 4", "d20 1", "d20 3"]


def test_the_sheet_draws_each_die_round_its_box_at_most_as_many_as_asked(tmp_path):
    img = np.zeros((200, 300, 3), np.uint8)
    cv2.rectangle(img, (100, 100), (140, 140), (0, 200, 255), -1)  # an orange die; the rest of the table black
    path = tmp_path / "t.png"
    cv2.imwrite(str(path), img)
    drawn = sheet([misread(i, i % 2 == 0, str(path), (100, 100, 140, 140)) for i in range(COLUMNS + 3)], most=COLUMNS + 1)
    assert drawn.shape == (2 * (TILE + CAPTION), COLUMNS * TILE, 3)
    first = drawn[:TILE, :TILE]
    assert (first[TILE // 2, TILE // 2] == (0, 200, 255)).all(), "the die sits in the middle of its tile"
    assert drawn[TILE + CAPTION:, TILE:].max() == 0, "tiles past the ninth are left blank"
    assert sheet([]) is None


def test_misreads_are_written_as_a_list_and_a_sheet_and_a_file_is_no_folder(tmp_path):
    found = [misread(0, False), misread(1, True)]
    out = tmp_path / "look"
    written = write_misreads(found, out)
    assert [p.name for p in written] == ["misreads.jsonl", "misreads.jpg"]
    lines = [json.loads(line) for line in (out / "misreads.jsonl").read_text().splitlines()]
    assert [(x["truth"], x["sure"]) for x in lines] == [("d20 2", True), ("d20 1", False)]
    assert cv2.imread(str(out / "misreads.jpg")) is not None, "an unreadable photo leaves its tile grey, not the sheet"
    (out / "notes.txt").write_text("mine")
    assert [p.name for p in write_misreads([], out)] == ["misreads.jsonl"]
    assert not (out / "misreads.jpg").exists(), "no sheet of an earlier run's dice is left behind"
    assert (out / "notes.txt").read_text() == "mine" and (out / "misreads.jsonl").read_text() == ""
    with pytest.raises(DicecamError, match="is a file"):
        write_misreads(found, out / "notes.txt")
