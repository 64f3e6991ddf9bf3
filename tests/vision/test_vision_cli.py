"""`dicecam read` and `dicecam eval` from the command line, on the shipped weights."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from dicecam.mechanics.dice import ImageRead


def dicecam(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture
def table(tmp_path):
    img = np.full((480, 640, 3), (40, 90, 40), np.uint8)
    cv2.rectangle(img, (300, 200), (360, 260), (240, 240, 240), -1)
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), img)
    return path


def test_read_prints_one_read_per_image_and_names_the_file_it_could_not_read(tmp_path, table):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"not a jpeg")
    r = dicecam("read", table, bad, tmp_path / "missing.png")
    assert r.returncode == 1, "a failed file makes the exit status say so"
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    read = ImageRead.model_validate_json(lines[0])
    assert (read.width, read.height) == (640, 480)
    errs = r.stderr.strip().splitlines()
    assert len(errs) == 2 and "broken.jpg" in errs[0] and "missing.png" in errs[1]
    assert "Traceback" not in r.stderr


def test_read_takes_folders_and_an_unknown_backend_is_one_clear_line(tmp_path, table):
    assert dicecam("read", tmp_path).returncode == 0
    r = dicecam("read", table, "--backend", "tensorflow")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown backend" in r.stderr


def test_eval_scores_a_jsonl_truth_file(tmp_path, table):
    truth = tmp_path / "reads.jsonl"
    truth.write_text(json.dumps({"image": table.name, "width": 640, "height": 480,
                                 "dice": [{"type": "d6", "value": 3, "box": [300, 200, 360, 260]}]}) + "\n")
    r = dicecam("eval", truth)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["images"] == 1 and out["dice"] == 1
    assert set(out) >= {"images_exact", "dice_read_right", "colour_accuracy", "per_kind", "confusion"}


def test_eval_of_a_missing_truth_is_one_line_and_a_bad_line_names_its_number(tmp_path):
    r = dicecam("eval", tmp_path / "nope.jsonl")
    assert r.returncode == 1 and "nope.jsonl" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "reads.jsonl"
    bad.write_text('{"image": "x.png"}\n')
    r = dicecam("eval", bad)
    assert r.returncode == 2 and "reads.jsonl:1" in r.stderr
