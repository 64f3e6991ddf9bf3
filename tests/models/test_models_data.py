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
    prepare_real_reads(real, out, sets=("lurig-types",), progress=False, detector_every=2)
    labels = sorted((out / "reads_yolo" / "train" / "labels").glob("*.txt"))
    assert [p.stem for p in labels] == ["lurig-types__d12_wood000", "lurig-types__d12_wood002"]
    for path in labels:
        assert (out / "reads_yolo" / "train" / "images" / f"{path.stem}.jpg").is_file()
        die, img = truth[int(path.stem[-3:])]
        (kind, cx, cy, bw, bh), = [[float(v) for v in line.split()] for line in path.read_text().splitlines()]
        assert KINDS[int(kind)] == die.type.value
        box = np.array([(cx - bw / 2) * 640, (cy - bh / 2) * 480, (cx + bw / 2) * 640, (cy + bh / 2) * 480])
        dets = reader.detect(img)
        surest = dets.xyxy[int(np.argmax(dets.confidence))]
        assert iou(tuple(box), tuple(float(v) for v in surest)) > 0.99
