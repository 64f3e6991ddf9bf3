"""The training recipe cannot rot: one tiny run, render to exported ONNX, read by the runtime reader."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.vision.crops import CROP_SIZE, FACE_CLASSES, KINDS, face_name


def train(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", "train", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def can_train():
    """Skip before anything of the test runs when the train extra or a headless GL context is missing."""
    missing = [m for m in ("torch", "ultralytics") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the train extra is not installed ({missing[0]} is missing)")
    render = pytest.importorskip("dicecam.datasets.render")
    ok, why = render.egl_available()
    if not ok:
        pytest.skip(f"no headless OpenGL (EGL) context: {why}")
    return render


def test_one_tiny_epoch_trains_and_exports_weights_the_reader_loads(tmp_path, can_train):
    work = tmp_path / "train"
    args = ["--work", work, "--images", "10", "--epochs", "1", "--reader-epochs", "1", "--imgsz", "96",
            "--batch", "4", "--reader-batch", "16", "--workers", "1"]
    # The kind head and the doubt model read the detector's boxes, which one epoch cannot promise:
    # tests/models/test_models_kind_doubt.py fits them on the shipped detector.
    r = train(*args, "--stages", "synth,real,detector,reader,export", timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "render 10 synthetic images" in r.stdout
    export = work / "export"
    for name in ("detector.onnx", "detector.json", "reader.onnx", "reader.json"):
        assert (export / name).is_file(), name
    # The sidecars name the classes the runtime decodes: every die kind, every face, every body colour.
    detector = json.loads((export / "detector.json").read_text())
    assert detector["kinds"] == list(KINDS)
    reader_card = json.loads((export / "reader.json").read_text())
    assert reader_card["faces"] == [face_name(k, v) for k, v in FACE_CLASSES]
    assert reader_card["colours"] == list(can_train.BODY_COLOURS)
    assert reader_card["input"]["size"] == CROP_SIZE
    report = json.loads((work / "report.json").read_text())
    assert set(report["timings"]) >= {"synth_s", "detector_s", "reader_s", "total_s"}
    assert report["recipe"]["images"] == 10 and report["recipe"]["detector"]["epochs"] == 1

    from dicecam.datasets.render import Renderer
    from dicecam.datasets.scene import render_image
    from dicecam.vision.read import Reader

    reader = Reader.load(export, backend="onnxruntime")
    with Renderer() as gl:
        img, _ = render_image(3, renderer=gl, n_dice=3)
    h, w = img.shape[:2]
    # One epoch reads badly; what it reads must still be well-formed dice inside the image.
    for die in reader(img):
        assert isinstance(die, DieReading) and die.type.value in KINDS and die.value in die.type.faces
        x1, y1, x2, y2 = die.box
        assert -1 <= x1 < x2 <= w + 1 and -1 <= y1 < y2 <= h + 1
        assert 0.0 <= die.confidence <= 1.0
    # Run again: the synthetic stage sees its output and is skipped instead of rendering again.
    again = train(*args, "--stages", "synth,export", timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "render" not in again.stdout
    timings = json.loads((work / "report.json").read_text())["timings"]
    assert "synth_s" not in timings and "total_s" in timings


def test_the_detector_fine_tuned_from_the_shipped_file_starts_where_it_is(tmp_path, can_train):
    """One short epoch from models/detector.onnx: the export still scores the dice about as the shipped detector
    does (a detector trained from nothing for as long scores nothing)."""
    import onnxruntime as ort

    from dicecam.datasets.render import Renderer
    from dicecam.datasets.scene import render_image
    from dicecam.vision.read import Letterbox, models_dir

    work = tmp_path / "train"
    r = train("--work", work, "--images", "12", "--seed", "5", "--detector-init", models_dir() / "detector.onnx",
              "--epochs", "1", "--batch", "4", "--imgsz", "96", "--workers", "1", "--stages", "synth,detector,export",
              timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (work / "runs" / "init.pt").is_file()
    with Renderer() as gl:
        img, _ = render_image(3, renderer=gl, n_dice=3)
    _, x = Letterbox.input(img, 416, 320)
    shipped, tuned = (ort.InferenceSession(str(p)).run(None, {"images": x})[0][0, 4:].max()
                      for p in (models_dir() / "detector.onnx", work / "export" / "detector.onnx"))
    assert shipped > 0.5 and abs(tuned - shipped) < 0.2


def test_bad_training_arguments_are_one_line_errors(tmp_path):
    """Checked before anything is imported or written: these need no train extra."""
    r = train("--work", tmp_path / "w", "--stages", "synth,bake")
    assert r.returncode == 2 and "unknown stage 'bake'" in r.stderr and r.stderr.count("\n") == 1
    r = train("--work", tmp_path / "w", "--images", "0")
    assert r.returncode == 2 and "--images must be 1-1000000, got 0" in r.stderr and r.stderr.count("\n") == 1
    r = train("--work", tmp_path / "w", "--photoreal", tmp_path / "nowhere")
    assert r.returncode == 2 and "--photoreal takes a folder" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "w").exists()
