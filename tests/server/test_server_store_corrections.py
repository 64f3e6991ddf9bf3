"""A player's correction is a training example: the picture, the labels the detector trains on and the
full readings beside them. None of it may be lost or mislabelled silently (issue 22: `save_correction`)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll
from dicecam.server.store import save_correction
from dicecam.vision.crops import KINDS

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _roll(dice: list[DieReading], amends: str | None = None, frame_id: int | None = None) -> Roll:
    return Roll(id=str(uuid.uuid4()), ts=T0, source="camera", status="settled", system="sum", dice=dice,
                amends=amends, frame_id=frame_id)


SEEN = [DieReading(type="d6", value=2, box=(100, 50, 140, 90), colour="red"),
        DieReading(type="d20", value=11, box=(300, 200, 360, 260), confidence=0.4)]
FIXED = [DieReading(type="d6", value=5, box=(100, 50, 140, 90), colour="red"),
         DieReading(type="d20", value=17, box=(300, 200, 360, 260)),
         DieReading(type="d8", value=3)]  # typed in: no box, so no label line


def test_a_correction_with_its_picture_writes_picture_labels_and_readings(tmp_path):
    folder = tmp_path / "corrections" / "new"  # made, parents and all
    original = _roll(SEEN, frame_id=7)
    fixed = _roll(FIXED, amends=original.id, frame_id=7)
    written = save_correction(folder, fixed, b"\xff\xd8jpeg\xff\xd9", 400, 300, original)
    stem = folder / fixed.id
    assert written == [stem.with_suffix(".jpg"), stem.with_suffix(".json"), stem.with_suffix(".txt")]
    assert stem.with_suffix(".jpg").read_bytes() == b"\xff\xd8jpeg\xff\xd9"
    meta = json.loads(stem.with_suffix(".json").read_text())
    assert meta == {
        "roll": fixed.id, "amends": original.id, "frame_id": 7, "width": 400, "height": 300,
        "image": f"{fixed.id}.jpg",
        "dice": [d.model_dump(mode="json") for d in FIXED],
        "was": [d.model_dump(mode="json") for d in SEEN],
    }
    assert meta["dice"][0] == {"type": "d6", "value": 5, "box": [100.0, 50.0, 140.0, 90.0], "confidence": None,
                               "colour": "red", "cocked": False, "uncertain": False}
    # one YOLO line per boxed die: kind class, centre and size as fractions of the picture
    assert stem.with_suffix(".txt").read_text() == (
        f"{KINDS.index('d6')} 0.300000 0.233333 0.100000 0.133333\n"
        f"{KINDS.index('d20')} 0.825000 0.766667 0.150000 0.200000\n")
    assert (folder / "classes.txt").read_text() == "\n".join(KINDS) + "\n"


def test_a_second_correction_in_the_same_folder_keeps_the_first_and_the_class_list(tmp_path):
    folder = tmp_path / "corrections"
    first = _roll(FIXED[:1])
    save_correction(folder, first, b"one", 400, 300)
    (folder / "classes.txt").write_text("the player's own list\n")
    second = _roll(FIXED[1:2])
    written = save_correction(folder, second, b"two", 400, 300)
    assert [p.name for p in written] == [f"{second.id}.jpg", f"{second.id}.json", f"{second.id}.txt"]
    assert (folder / f"{first.id}.jpg").read_bytes() == b"one" and (folder / f"{second.id}.jpg").read_bytes() == b"two"
    assert (folder / "classes.txt").read_text() == "the player's own list\n"  # never overwritten
    assert json.loads((folder / f"{second.id}.json").read_text())["was"] is None


def test_a_correction_without_its_picture_keeps_the_readings_only(tmp_path):
    original = _roll(SEEN)
    fixed = _roll(FIXED, amends=original.id)
    written = save_correction(tmp_path, fixed, None, None, None, original)
    assert written == [tmp_path / f"{fixed.id}.json"]
    meta = json.loads(written[0].read_text())
    assert meta["image"] is None and meta["width"] is None and meta["height"] is None and meta["frame_id"] is None
    assert meta["dice"] == [d.model_dump(mode="json") for d in FIXED]
    assert meta["was"] == [d.model_dump(mode="json") for d in SEEN]
    assert not (tmp_path / f"{fixed.id}.txt").exists() and not (tmp_path / "classes.txt").exists()


def test_labels_without_the_picture_file_still_name_no_image(tmp_path):
    """A picture's size without its bytes (the frame was not kept): labels are written, "image" stays null."""
    fixed = _roll(FIXED)
    written = save_correction(tmp_path, fixed, None, 400, 300)
    assert [p.suffix for p in written] == [".json", ".txt"]
    meta = json.loads(written[0].read_text())
    assert meta["image"] is None and (meta["width"], meta["height"]) == (400, 300)
    assert written[1].read_text().count("\n") == 2


def test_a_picture_of_no_size_gets_no_label_file(tmp_path):
    fixed = _roll(FIXED)
    for w, h in ((400, None), (None, 300), (0, 300)):
        written = save_correction(tmp_path / f"{w}x{h}", fixed, None, w, h)
        assert [p.suffix for p in written] == [".json"]
