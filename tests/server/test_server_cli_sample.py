"""`dicecam sample [PATH]`: the bundled photo of a d6, a d8 and a d10 (issue 22), and the photo itself."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources

import cv2
import numpy as np
import pytest

from dicecam.server.commands import sample as cli_sample
from dicecam.server.cli import main

ASSET = resources.files("dicecam.vision") / "assets" / "sample.jpg"


def dicecam(*args, cwd):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_writes_the_bundled_photo_to_the_default_name_and_to_a_path(tmp_path):
    r = dicecam("sample", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "sample.jpg").read_bytes() == ASSET.read_bytes()
    assert "sample.jpg" in r.stdout and "dicecam read sample.jpg" in r.stdout
    r = dicecam("sample", "photo.jpg", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "photo.jpg").read_bytes() == ASSET.read_bytes()
    (tmp_path / "pics").mkdir()
    assert dicecam("sample", "pics", cwd=tmp_path).returncode == 0  # a folder gets folder/sample.jpg
    assert (tmp_path / "pics" / "sample.jpg").read_bytes() == ASSET.read_bytes()


def test_never_overwrites_a_file(tmp_path):
    mine = tmp_path / "photo.jpg"
    mine.write_bytes(b"my own photo")
    r = dicecam("sample", mine, cwd=tmp_path)
    assert r.returncode == 1 and "already exists" in one_line(r.stderr)
    assert mine.read_bytes() == b"my own photo" and not r.stdout


@pytest.mark.parametrize("where", ["no-such-folder/photo.jpg", "afile/photo.jpg"])
def test_a_path_that_cannot_be_written_is_one_line(tmp_path, where):
    (tmp_path / "afile").write_text("a file, not a folder")
    r = dicecam("sample", where, cwd=tmp_path)
    assert r.returncode == 1 and one_line(r.stderr).startswith("dicecam sample: cannot write")


def test_a_folder_it_may_not_write_to_is_one_line(tmp_path, monkeypatch, capsys):
    # Run as root a read-only folder is writable, so the refusal is the operating system's, faked.
    def refuse(path, mode):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cli_sample, "open", refuse, raising=False)
    assert main(["sample", str(tmp_path / "photo.jpg")]) == 1
    assert one_line(capsys.readouterr().err).endswith("Permission denied")
    assert not (tmp_path / "photo.jpg").exists()


def test_a_missing_asset_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(cli_sample, "ASSET", "no-such-sample.jpg")
    assert main(["sample", str(tmp_path / "x.jpg")]) == 2
    assert "missing from this install" in one_line(capsys.readouterr().err)


def test_the_asset_is_a_small_640x480_jpeg():
    data = ASSET.read_bytes()
    assert data[:3] == b"\xff\xd8\xff" and len(data) < 150_000
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (480, 640, 3)


@pytest.fixture(scope="module")
def rendered():
    """The generator's scene, rendered again: the image and its truth (values from the dice's poses)."""
    pytest.importorskip("moderngl", reason="the synth extra renders the sample")
    from dicecam.datasets.render import egl_available
    from dicecam.datasets.sample import render_sample

    ok, why = egl_available()
    if not ok:
        pytest.skip(f"no EGL: {why}")
    return render_sample()


def test_the_generator_reproduces_the_asset(rendered):
    from dicecam.datasets.sample import DICE

    img, truth = rendered
    shipped = cv2.imdecode(np.frombuffer(ASSET.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    # Byte equality would tie the test to one Mesa and one libjpeg; the picture is what must match.
    assert np.abs(shipped.astype(np.int16) - img.astype(np.int16)).mean() < 3.0
    assert sorted(d.type.value for d in truth.dice) == sorted(k for k, _ in DICE) == ["d10", "d6", "d8"]
    assert not any(d.cocked for d in truth.dice)


def test_the_shipped_reader_reads_the_sample_right_and_without_doubt(rendered):
    from dicecam.vision.read import Reader

    _, truth = rendered
    img = cv2.imdecode(np.frombuffer(ASSET.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    got = Reader.load()(img)
    assert sorted((d.type.value, d.value) for d in got) == sorted((d.type.value, d.value) for d in truth.dice), got
    assert not any(d.uncertain or d.cocked for d in got), got


def test_the_sample_makes_a_contingency_verdict(tmp_path):
    """Issue 22: the README's pipe, on the sample, adjudicates three dice instead of refusing one."""
    assert dicecam("sample", "photo.jpg", cwd=tmp_path).returncode == 0
    r = subprocess.run(f"{sys.executable} -m dicecam.server.cli read photo.jpg --memory none | "
                       f"{sys.executable} -m dicecam.server.cli resolve contingency --target 5",
                       shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(("Success", "Failure")) and "exactly 3 dice" not in r.stdout + r.stderr
