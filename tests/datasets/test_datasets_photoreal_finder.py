"""Finder labels for photoreal renders: each image's scene is drawn again from its seed, and a die is labelled
where its value numeral is, the same point the moderngl labels give, or left out with the reason."""

import json
from collections import Counter

import cv2
import numpy as np
import pytest

from dicecam.datasets import geometry as g
from dicecam.datasets.photoreal import finder
from dicecam.datasets.photoreal import sample as ps
from dicecam.datasets.photoreal.fonts import system_fonts
from dicecam.datasets.synth import image_seed
from dicecam.datasets.upface import glyph_target

SEED = 321


def photoreal_folder(tmp_path, images=4, tamper=None):
    """A folder as `dicecam synth --renderer photoreal --format jsonl` writes one, the pictures left blank:
    the labels come from the seeds and the reads, never from the pixels."""
    (tmp_path / "images").mkdir()
    lines, scenes = [], []
    for i in range(images):
        scene = ps.sample_scene(np.random.default_rng(image_seed(SEED, i)), g.KINDS, 640, 480, system_fonts())
        read = ps.truth(scene, f"images/p{SEED}_{i:06d}.jpg").model_dump(mode="json")
        if tamper is not None:
            tamper(read)
        cv2.imwrite(str(tmp_path / read["image"]), np.full((480, 640, 3), 90, np.uint8))
        lines.append(json.dumps(read))
        scenes.append(scene)
    (tmp_path / "reads.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "summary.json").write_text(json.dumps({"seed": SEED, "kinds": list(g.KINDS)}))
    return tmp_path, scenes


def test_a_labelled_die_points_at_its_value_numeral_as_the_moderngl_labels_do(tmp_path):
    folder, scenes = photoreal_folder(tmp_path)
    labelled = 0
    for index, img, dice in finder.folder_labels(folder):
        scene = scenes[index]
        for die in dice:
            twin = [d for d in scene.dice if d.kind == die.kind
                    and np.allclose(glyph_target(lambda p: scene.camera.project(p)[0], scene.camera.eye, d)[0], die.point)]
            assert len(twin) == 1
            x1, y1, x2, y2 = die.box
            side = max(x2 - x1, y2 - y1)
            assert x1 - side <= die.point[0] <= x2 + side and y1 - side <= die.point[1] <= y2 + side
            labelled += 1
    assert labelled >= 4


def test_a_read_that_no_redrawn_die_matches_is_left_out_as_unmatched(tmp_path):
    def wrong_values(read):
        for d in read["dice"]:
            d["value"] = 99
    folder, _ = photoreal_folder(tmp_path, images=2, tamper=wrong_values)
    skipped = Counter()
    assert all(not dice for _, _, dice in finder.folder_labels(folder, skipped=skipped))
    assert skipped["unmatched"] > 0
    with pytest.raises(ValueError, match="no die"):
        finder.generate(tmp_path / "out.npz", [folder])


def test_the_set_numbers_each_crop_by_its_folder_seed_and_image(tmp_path):
    folder, _ = photoreal_folder(tmp_path)
    summary = finder.generate(tmp_path / "out.npz", [folder], crops_per_die=2)
    z = np.load(tmp_path / "out.npz")
    assert summary["crops"] == len(z["crops"]) == 2 * summary["dice"]
    assert z["crops"].shape[1:] == (64, 64, 3)
    assert set(z["scene"] // finder.SEED_STRIDE) == {SEED}
    assert (z["scene"] % finder.SEED_STRIDE < 4).all()
    assert np.allclose(np.hypot(z["targets"][:, 2], z["targets"][:, 3]), 1, atol=1e-4)
