"""The up-face finder's training: one network for the reader's 64-px crops or larger ones, a learning
rate that ends small whether the epochs or the minutes run out first, and an export the reader loads."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dicecam.models.train_upface import one_cycle  # noqa: E402
from dicecam.models.upface_net import UpFaceNet  # noqa: E402
from dicecam.vision.upface import UpFaceFinder  # noqa: E402


@pytest.mark.parametrize("size", [64, 128])
def test_the_network_takes_its_crop_size_and_answers_five_columns(size):
    net = UpFaceNet(size=size).eval()
    out = net(torch.rand(3, 3, size, size))
    assert out.shape == (3, 5)
    assert (out[:, :2].abs() <= 0.5).all()  # the point is a soft-argmax over the crop: inside it


def test_a_larger_finder_halves_its_crop_first_and_takes_its_glimpse_at_full_resolution():
    small, large = UpFaceNet(size=64).state_dict(), UpFaceNet(size=128).state_dict()
    # The 64-px network keeps the layout of the shipped models/upface.onnx: its stem takes the image.
    assert small["trunk.0.0.weight"].shape[1] == 3
    assert large["trunk.0.0.weight"].shape[1] == 3 and large["trunk.1.0.weight"].shape[1] == 8
    assert UpFaceNet(size=128).glimpse_px == 2 * UpFaceNet(size=64).glimpse_px
    with pytest.raises(ValueError):
        UpFaceNet(size=96)


def test_the_learning_rate_warms_up_then_falls_to_nearly_nothing():
    assert one_cycle(1.0, 0.0) < 0.1
    assert one_cycle(1.0, 0.1) == pytest.approx(1.0)
    assert one_cycle(1.0, 0.55) == pytest.approx(0.5)
    assert one_cycle(1.0, 1.0) < 1e-9


def test_a_run_stopped_by_its_minutes_still_exports_a_finder_the_reader_loads(tmp_path):
    # Trained in a process of its own, as a user runs it: torch's optimiser loads triton, whose LLVM
    # crashes a process in which Mesa's software GL (the renderer's tests) already runs.
    rng = np.random.default_rng(0)
    n = 64
    targets = np.concatenate([rng.uniform(-0.3, 0.3, (n, 2)), np.tile([[1.0, 0.0]], (n, 1)),
                              rng.uniform(0, 1, (n, 1))], 1)
    np.savez(tmp_path / "upface.npz", crops=rng.integers(0, 255, (n, 128, 128, 3), dtype=np.uint8),
             targets=targets.astype(np.float32), angle_known=np.ones(n, bool),
             kind=rng.integers(0, 7, n).astype(np.int8), scene=(np.arange(n) // 4).astype(np.int32))
    out = tmp_path / "upface.onnx"
    done = subprocess.run([sys.executable, "-m", "dicecam.models.train_upface", str(tmp_path / "upface.npz"), str(out),
                           "--epochs", "1000", "--batch", "16", "--minutes", "0.02"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["training"]["stopped_early"] and meta["training"]["epochs_run"] < 1000
    assert meta["input"]["size"] == 128
    finder = UpFaceFinder.load(out)
    assert finder.size == 128 and finder(np.zeros((3, 128, 128, 3), np.uint8)).shape == (3, 5)
