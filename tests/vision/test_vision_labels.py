"""The YOLO label format, written and read back in one place (vision.labels)."""

from __future__ import annotations

import pytest

from dicecam.mechanics.dice import DieReading, ImageRead
from dicecam.vision.crops import KINDS
from dicecam.vision.labels import IMAGE_EXTS, data_yaml, yolo_boxes, yolo_lines, yolo_pairs


def test_a_read_written_as_yolo_lines_reads_back_as_the_same_kinds_and_pixel_boxes(tmp_path):
    read = ImageRead(image="a.jpg", width=640, height=480, dice=[
        DieReading(type="d20", value=7, box=(100, 50, 160, 130)),
        DieReading(type="d00", value=30, box=(400.5, 300.25, 470, 390))])
    label = tmp_path / "a.txt"
    label.write_text("".join(line + "\n" for line in yolo_lines(read)))
    back = yolo_boxes(label, 640, 480)
    assert [KINDS[k] for k, _ in back] == ["d20", "d00"]
    for (_, box), die in zip(back, read.dice):
        assert box == pytest.approx(die.box, abs=1e-3)


def test_a_label_file_skips_short_lines_and_scales_to_the_image_it_labels(tmp_path):
    label = tmp_path / "b.txt"
    label.write_text("2 0.5 0.5 0.25 0.5\n\n3 0.1\n")
    assert yolo_boxes(label, 200, 100) == [(2, (75.0, 25.0, 125.0, 75.0))]


def test_pairs_are_images_with_a_label_of_the_same_stem_under_labels(tmp_path):
    for split in ("train", "val"):
        (tmp_path / "images" / split).mkdir(parents=True)
        (tmp_path / "labels" / split).mkdir(parents=True)
    for name in ("images/train/x.jpg", "images/val/y.PNG", "images/train/z.jpg", "images/train/notes.txt",
                 "labels/train/x.txt", "labels/val/y.txt", "labels/train/notes.txt"):
        (tmp_path / name).write_text("")
    pairs = [(i.relative_to(tmp_path).as_posix(), l.relative_to(tmp_path).as_posix()) for i, l in yolo_pairs(tmp_path)]
    # z.jpg has no label; notes.txt is not an image
    assert pairs == [("images/train/x.jpg", "labels/train/x.txt"), ("images/val/y.PNG", "labels/val/y.txt")]
    assert {".jpg", ".jpeg", ".png"} <= IMAGE_EXTS


def test_data_yaml_names_every_kind_in_class_order(tmp_path):
    export = data_yaml(["images/train"], ["images/val"], root=tmp_path)
    assert export.splitlines()[:3] == [f"path: {tmp_path.resolve()}", "train: images/train", "val: images/val"]
    mix = data_yaml(["/a", "/b"], ["/c"])
    assert mix.splitlines()[:5] == ["train:", "  - /a", "  - /b", "val:", "  - /c"]
    for text in (export, mix):
        lines = text.splitlines()
        assert f"nc: {len(KINDS)}" in lines
        assert lines[lines.index("names:") + 1:] == [f"  {i}: {k}" for i, k in enumerate(KINDS)]
