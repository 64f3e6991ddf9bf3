"""Fine-tuning the shipped detector: it is rebuilt from its ONNX file into a trainable network first."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import cv2
import numpy as np
import pytest

from dicecam.vision.read import Letterbox, models_dir


@pytest.fixture
def trainable(monkeypatch, tmp_path):
    """ultralytics offline, its settings in a folder of this test's (the environment restored after it)."""
    for m in ("torch", "ultralytics", "onnx"):
        if importlib.util.find_spec(m) is None:
            pytest.skip(f"the train extra is not installed ({m} is missing)")
    for name in ("YOLO_OFFLINE", "YOLO_AUTOINSTALL", "YOLO_CONFIG_DIR"):
        monkeypatch.setenv(name, "")
    return tmp_path / "ultralytics"


def test_the_shipped_detector_rebuilt_for_fine_tuning_computes_what_its_export_does(renders, trainable, tmp_path):
    import onnxruntime as ort
    import torch

    from dicecam.models.train_detector import checkpoint_from_onnx

    images = sorted((renders / "images").glob("*.jpg"))
    ckpt = checkpoint_from_onnx(models_dir() / "detector.onnx", images[:6], tmp_path / "init.pt", trainable)
    model = torch.load(ckpt, map_location="cpu", weights_only=False)["model"].eval()
    # Batch norms are back, each with statistics of its own (not the identity a plain copy would leave).
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert len(norms) > 50
    assert not all(torch.allclose(m.running_var, torch.ones_like(m.running_var)) for m in norms)
    session = ort.InferenceSession(str(models_dir() / "detector.onnx"), providers=["CPUExecutionProvider"])
    _, x = Letterbox.input(cv2.imread(str(images[-1])), 416, 320)  # a render the statistics were not taken from
    shipped = session.run(None, {session.get_inputs()[0].name: x})[0]
    with torch.no_grad():
        rebuilt = model(torch.from_numpy(x))[0].numpy()
    assert rebuilt.shape == shipped.shape
    # Boxes in pixels (hundreds) and kind scores (0-1) alike, within float rounding.
    assert np.abs(rebuilt - shipped).max() < 0.01
    assert np.abs(rebuilt[:, 4:] - shipped[:, 4:]).max() < 1e-3


def test_an_onnx_file_that_is_no_detector_or_no_images_to_rebuild_it_on_are_refused(renders, trainable, tmp_path):
    from dicecam.models.train_detector import checkpoint_from_onnx

    images = sorted((renders / "images").glob("*.jpg"))[:2]
    with pytest.raises(ValueError, match="not a YOLO11n detector"):
        checkpoint_from_onnx(models_dir() / "reader.onnx", images, tmp_path / "init.pt", trainable)
    with pytest.raises(ValueError, match="no images"):
        checkpoint_from_onnx(models_dir() / "detector.onnx", [], tmp_path / "init.pt", trainable)
    assert not (tmp_path / "init.pt").exists()


@pytest.mark.parametrize("init", ["missing.onnx", "detector.txt"])
def test_train_refuses_a_detector_to_start_from_that_is_not_one(tmp_path, init):
    (tmp_path / "detector.txt").write_text("not weights")
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "train", "--work", str(tmp_path / "w"),
                        "--detector-init", str(tmp_path / init)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "--detector-init" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
