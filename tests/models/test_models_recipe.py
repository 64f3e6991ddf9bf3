"""The training recipe cannot rot: one tiny run, render to exported ONNX, read by the runtime reader."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="the train extra is not installed")
pytest.importorskip("ultralytics", reason="the train extra is not installed")
render = pytest.importorskip("dicecam.datasets.render")
ok, why = render.egl_available()


@pytest.mark.skipif(not ok, reason=f"no headless OpenGL (EGL) context: {why}")
def test_one_tiny_epoch_trains_and_exports_weights_the_reader_loads(tmp_path):
    work = tmp_path / "train"
    cmd = [sys.executable, "-m", "dicecam.server.cli", "train", "--work", str(work), "--images", "10",
           "--epochs", "1", "--reader-epochs", "1", "--imgsz", "96", "--batch", "4", "--reader-batch", "16",
           "--workers", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    export = work / "export"
    for name in ("detector.onnx", "detector.json", "reader.onnx", "reader.json"):
        assert (export / name).is_file(), name
    from dicecam.datasets.scene import render_image
    from dicecam.vision.read import Reader

    reader = Reader.load(export, backend="onnxruntime")
    img, _ = render_image(3, n_dice=3)
    assert isinstance(reader(img), list)
    # Run again: every stage sees its output and resumes instead of starting over.
    again = subprocess.run(cmd + ["--stages", "synth,export"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]


def test_bad_training_arguments_are_one_line_errors(tmp_path):
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "train", "--work", str(tmp_path),
                        "--stages", "synth,bake"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown stage 'bake'" in r.stderr and r.stderr.count("\n") == 1
