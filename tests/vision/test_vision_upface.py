"""The shipped up-face finder: loads, answers in the documented form, and finds the value
numeral on freshly rendered dice (a net that is untrained, or fed the wrong channels or scale,
does not)."""

import numpy as np
import pytest

from dicecam.mechanics.errors import DicecamError
from dicecam.vision.crops import CROP_MARGIN, CROP_SIZE, square_crop
from dicecam.vision.upface import UpFaceFinder, default_path, in_frame, turn_degrees


@pytest.fixture(scope="module")
def finder():
    return UpFaceFinder.load()


def test_the_weights_ship_and_are_small():
    assert default_path().is_file() and default_path().stat().st_size < 1_000_000


def test_answers_n_by_5_with_unit_direction(finder):
    crops = np.random.default_rng(0).integers(0, 256, (3, CROP_SIZE, CROP_SIZE, 3), dtype=np.uint8)
    out = finder(crops)
    assert out.shape == (3, 5) and out.dtype == np.float32
    assert np.allclose(np.hypot(out[:, 2], out[:, 3]), 1, atol=1e-5)
    assert np.all(np.abs(out[:, :2]) <= 0.5)
    assert finder(crops[:0]).shape == (0, 5)


def test_wrong_crops_and_missing_weights_are_one_line_errors(finder, tmp_path):
    with pytest.raises(DicecamError, match="takes"):
        finder(np.zeros((2, 32, 32, 3), np.uint8))
    with pytest.raises(DicecamError, match="missing") as e:
        UpFaceFinder.load(tmp_path / "nope.onnx")
    assert "\n" not in str(e.value)


def test_frame_helpers():
    found = np.array([[0.1, -0.2, 0.0, 1.0, 0.9]])
    # 100-px box at (150, 150): a 130-px crop; 0.1 of it is 13 px right, 0.2 is 26 px up.
    assert np.allclose(in_frame(found, np.array([[100, 100, 200, 200]])), [[163, 124]])
    assert np.allclose(turn_degrees(found), [90])


@pytest.fixture(scope="module")
def rendered():
    """Crops of a few fixed random tables, framed as the reader frames them, and their labels."""
    from dicecam.datasets import render

    ok, why = render.egl_available()
    if not ok:
        pytest.skip(f"no headless OpenGL (EGL) context: {why}")
    from dicecam.datasets.upface import scene_samples

    crops, targets, known, kinds = [], [], [], []
    with render.Renderer() as r:
        for seed in range(6):
            img, samples = scene_samples(r, 7100 + seed, n_dice=6, px_range=(50, 110))
            for s in samples:
                crops.append(square_crop(img, s.box, CROP_MARGIN, CROP_SIZE))
                targets.append(s.target)
                known.append(s.angle_known)
                kinds.append(s.kind)
    return np.stack(crops), np.stack(targets), np.array(known), np.array(kinds)


def test_finds_the_value_numeral_on_rendered_dice(finder, rendered):
    crops, targets, known, _ = rendered
    assert len(crops) >= 20
    out = finder(crops)
    centre = np.hypot(*(out[:, :2] - targets[:, :2]).T)
    # An untrained net answers about the crop centre: the labels sit ~0.07-0.15 from it.
    assert np.median(centre) < 0.06, np.median(centre)
    turn = np.degrees(np.arctan2(out[:, 3], out[:, 2]) - np.arctan2(targets[:, 3], targets[:, 2]))
    turn = np.abs((turn + 180) % 360 - 180)[known]
    assert known.sum() >= 10 and np.median(turn) < 30, np.median(turn)
