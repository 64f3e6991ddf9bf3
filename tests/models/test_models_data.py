"""The real photos the recipe trains on: the read sets' training photos reach the detector as well."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dicecam.vision.boxes import iou
from dicecam.vision.crops import KINDS


@pytest.fixture
def read_set(tmp_path):
    """A read-format set named as lurig-types, of rendered one-die photos labelled by kind only (no box), in a
    run the recipe trains on."""
    render = pytest.importorskip("dicecam.datasets.render")
    ok, why = render.egl_available()
    if not ok:
        pytest.skip(f"no headless OpenGL (EGL) context: {why}")
    import cv2

    from dicecam.datasets.scene import render_image

    folder = tmp_path / "real" / "lurig-types"
    folder.mkdir(parents=True)
    lines, truth = [], []  # truth: per photo (its die, the photo)
    with render.Renderer() as gl:
        for i in range(4):
            img, read = render_image(7100 + i, renderer=gl, n_dice=1)
            name = f"d12_wood{i:03d}.jpg"
            cv2.imwrite(str(folder / name), img)
            die = read.dice[0]
            lines.append(json.dumps({"image": name, "width": 480, "height": 480, "split": "train", "single": True,
                                     "dice": [{"type": die.type.value}]}))
            truth.append((die, img))
    (folder / "truth.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path / "real", truth


def test_every_other_training_photo_goes_to_the_detector_with_its_truths_kind_and_the_surest_box(read_set, tmp_path):
    from dicecam.models.data import prepare_real_reads
    from dicecam.vision.read import Reader

    real, truth = read_set
    reader = Reader.load()
    out = tmp_path / "prepared"
    summary = prepare_real_reads(real, out, sets=("lurig-types",), progress=False, detector_every=2)
    # A photo the detector finds no die in is skipped (renders with a holder can hide a small die from it): the
    # photos that go are the even ones it finds a die in, and at least one must, or nothing here is tested.
    found = [len(reader.detect(img)) > 0 for _, img in truth]
    labels = sorted((out / "reads_yolo" / "train" / "labels").glob("*.txt"))
    assert [p.stem for p in labels] == [f"lurig-types__d12_wood{i:03d}" for i in (0, 2) if found[i]] != []
    assert summary["skipped"] == found.count(False)
    for path in labels:
        assert (out / "reads_yolo" / "train" / "images" / f"{path.stem}.jpg").is_file()
        die, img = truth[int(path.stem[-3:])]
        (kind, cx, cy, bw, bh), = [[float(v) for v in line.split()] for line in path.read_text().splitlines()]
        assert KINDS[int(kind)] == die.type.value
        box = np.array([(cx - bw / 2) * 640, (cy - bh / 2) * 480, (cx + bw / 2) * 640, (cy + bh / 2) * 480])
        dets = reader.detect(img)
        surest = dets.xyxy[int(np.argmax(dets.confidence))]
        assert iou(tuple(box), tuple(float(v) for v in surest)) > 0.99


def _real_stage_folder(root, side=(600, 900)):
    """What the recipe's real stage leaves for the detector: YOLO folders, the face reader's crops, sets.json."""
    import cv2

    for folder, n in (("yolo/train", 2), ("yolo/val", 1), ("reads_yolo/train", 1)):
        (root / folder / "images").mkdir(parents=True)
        (root / folder / "labels").mkdir(parents=True)
        for i in range(n):
            cv2.imwrite(str(root / folder / "images" / f"p{i}.jpg"), np.full((*side, 3), 90 + i, np.uint8))
            (root / folder / "labels" / f"p{i}.txt").write_text(f"1 0.5 0.5 0.{i + 1} 0.{i + 2}\n")
    (root / "crops.npz").write_bytes(b"x" * 1000)
    (root / "sets.json").write_text('["pips", "lurig-d20-values"]\n')


def test_the_detector_photos_pack_shrunk_to_the_training_size_with_their_labels_and_without_the_crops(tmp_path):
    import cv2

    from dicecam.models.data import pack_for_detector

    _real_stage_folder(tmp_path / "real")
    packed = pack_for_detector(tmp_path / "real", tmp_path / "out", max_side=416)
    assert packed["photos"] == {"yolo/train": 2, "yolo/val": 1, "reads_yolo/train": 1}
    out = tmp_path / "out"
    assert cv2.imread(str(out / "yolo/train/images/p1.jpg")).shape[:2] == (277, 416)
    assert (out / "yolo/train/labels/p1.txt").read_text() == "1 0.5 0.5 0.2 0.3\n"
    assert (out / "sets.json").read_text() == '["pips", "lurig-d20-values"]\n'
    assert not (out / "crops.npz").exists()


def test_packing_refuses_a_work_folder_without_real_photos_and_an_occupied_destination(tmp_path):
    from dicecam.mechanics.errors import DicecamError
    from dicecam.models.data import pack_for_detector

    with pytest.raises(DicecamError, match="run the real stage first"):
        pack_for_detector(tmp_path / "real", tmp_path / "out")
    _real_stage_folder(tmp_path / "real")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "kept.txt").write_text("mine")
    with pytest.raises(DicecamError, match="not empty"):
        pack_for_detector(tmp_path / "real", tmp_path / "out")
    assert (tmp_path / "out" / "kept.txt").read_text() == "mine"


def test_train_pack_real_says_in_one_line_what_is_missing(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "train", "--work", str(tmp_path / "w"),
                        "--pack-real", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "run the real stage first" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_recipe_leaves_out_the_pip_photos_eval_holds_out_and_learns_the_others(tmp_path):
    from dicecam.models.data import select_real

    for split in ("train", "val", "test"):
        (tmp_path / "nell-byler-d6-pips" / "images" / split).mkdir(parents=True)
        (tmp_path / "nell-byler-d6-pips" / "labels" / split).mkdir(parents=True)
        (tmp_path / "nell-byler-d6-pips" / "images" / split / "a.jpg").write_bytes(b"")
        (tmp_path / "nell-byler-d6-pips" / "labels" / split / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    kept = {image.parent.name for image, _ in select_real(tmp_path, copies_per_photo=1)}
    assert kept == {"train", "val"}
