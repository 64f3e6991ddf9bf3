"""`dicecam read` and `dicecam eval` from the command line, on the shipped weights."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from dicecam.mechanics.dice import ImageRead
from dicecam.vision.read import Reader
from dicecam.vision.sources import demo_paths


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


@pytest.fixture(scope="module")
def settled(tmp_path_factory):
    """The first settled frame of the bundled demo clip: real dice for the shipped reader to read."""
    clip, meta = demo_paths()
    at = json.loads(meta.read_text())["rolls"][0]["settled_at"]
    cap = cv2.VideoCapture(str(clip))
    cap.set(cv2.CAP_PROP_POS_FRAMES, at)
    ok, frame = cap.read()
    cap.release()
    assert ok, f"cannot decode frame {at} of {clip}"
    path = tmp_path_factory.mktemp("settled") / "settled.png"
    cv2.imwrite(str(path), frame)
    return path


@pytest.fixture(scope="module")
def in_process(settled):
    """What the reader itself says about the settled frame, on the backend the CLI is told to use."""
    dice = Reader.load(backend="onnxruntime")(cv2.imread(str(settled)))
    assert dice, "the shipped reader finds the demo's dice"
    return dice


def test_read_prints_what_the_reader_reads(settled, in_process):
    r = dicecam("read", settled, "--backend", "onnxruntime")
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.splitlines()
    read = ImageRead.model_validate_json(line)
    assert (read.image, read.width, read.height) == (str(settled), 640, 480)
    assert [d.model_dump() for d in read.dice] == [d.model_dump() for d in in_process]


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


def test_read_takes_folders_image_by_image_and_an_unknown_backend_is_one_clear_line(tmp_path, table, settled):
    (tmp_path / "sub").mkdir()
    copy = tmp_path / "sub" / "settled.png"
    copy.write_bytes(settled.read_bytes())
    (tmp_path / "notes.txt").write_text("not an image")
    r = dicecam("read", tmp_path, "--backend", "onnxruntime")
    assert r.returncode == 0, r.stderr
    reads = [ImageRead.model_validate_json(line) for line in r.stdout.splitlines()]
    assert [x.image for x in reads] == [str(copy), str(table)], "every image in the folder, in name order"
    alone = ImageRead.model_validate_json(dicecam("read", settled, "--backend", "onnxruntime").stdout)
    assert reads[0].dice == alone.dice and reads[0].dice
    r = dicecam("read", table, "--backend", "tensorflow")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown backend" in r.stderr


def test_eval_scores_the_reader_against_the_truth_die_by_die(tmp_path, settled, in_process):
    """Truth = the reader's own read, once as read and once with one die's face changed: one image of
    two exact, one die of 2n misread, and that one misread named in the confusion list."""
    n = len(in_process)
    first = in_process[0]
    other = next(v for v in first.type.faces if v != first.value)
    wrong = [first.model_copy(update={"value": other})] + list(in_process[1:])
    (tmp_path / "settled.png").write_bytes(settled.read_bytes())
    truth = tmp_path / "reads.jsonl"
    truth.write_text("".join(
        ImageRead(image="settled.png", width=640, height=480, dice=dice).model_dump_json() + "\n"
        for dice in (in_process, wrong)))
    r = dicecam("eval", truth, "--backend", "onnxruntime")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["images"], out["unreadable"], out["images_exact"], out["dice"]) == (2, 0, 0.5, 2 * n)
    assert out["dice_read_right"] == round((2 * n - 1) / (2 * n), 4)
    assert out["confusion"] == [{"truth": f"{first.type.value} {other}", "read": f"{first.type.value} {first.value}",
                                 "count": 1}]
    kind = out["per_kind"][first.type.value]
    same_kind = sum(d.type is first.type for d in in_process)
    assert (kind["truth"], kind["predicted"], kind["recall"], kind["precision"]) == (2 * same_kind, 2 * same_kind, 1.0, 1.0)
    coloured = sum(d.colour is not None for d in in_process)
    assert out["colour_accuracy"] == (1.0 if coloured else None)
    assert out["truth"] == str(truth)


def test_eval_writes_the_dice_it_read_wrong_to_look_at_and_a_file_for_their_folder_is_one_line(tmp_path, settled,
                                                                                                 in_process):
    first = in_process[0]
    other = next(v for v in first.type.faces if v != first.value)
    (tmp_path / "settled.png").write_bytes(settled.read_bytes())
    truth = tmp_path / "reads.jsonl"
    wrong = [first.model_copy(update={"value": other})] + list(in_process[1:])
    truth.write_text(ImageRead(image="settled.png", width=640, height=480, dice=wrong).model_dump_json() + "\n")
    r = dicecam("eval", truth, "--backend", "onnxruntime", "--misreads", tmp_path / "look")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["misreads"] == [str(tmp_path / "look" / "misreads.jsonl"),
                                                str(tmp_path / "look" / "misreads.jpg")]
    (line,) = (tmp_path / "look" / "misreads.jsonl").read_text().splitlines()
    listed = json.loads(line)
    assert (listed["truth"], listed["read"]) == (f"{first.type.value} {other}", f"{first.type.value} {first.value}")
    assert listed["image"] == str(tmp_path / "settled.png") and listed["box"] == [round(v, 1) for v in first.box]
    r = dicecam("eval", truth, "--misreads", truth)
    assert r.returncode == 2 and "is a file" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout


def test_eval_of_a_missing_truth_is_one_line_and_a_bad_line_names_its_number(tmp_path):
    r = dicecam("eval", tmp_path / "nope.jsonl")
    assert r.returncode == 1 and "nope.jsonl" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "reads.jsonl"
    bad.write_text('{"image": "x.png"}\n')
    r = dicecam("eval", bad)
    assert r.returncode == 2 and "reads.jsonl:1" in r.stderr
    (tmp_path / "empty").mkdir()  # no read file, no chunks, no YOLO photos: nothing to score is said, not scored 0 %
    r = dicecam("eval", tmp_path / "empty")
    assert r.returncode == 2 and "no labelled images to score" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_eval_held_out_of_a_pip_set_scores_its_test_split_alone_and_says_when_a_set_has_none(tmp_path):
    img = np.full((96, 96, 3), (40, 90, 40), np.uint8)
    for set_name in ("nell-byler-d6-pips", "rune55-d6-pips"):
        for split, n in (("train", 2), ("test", 1)):
            (tmp_path / set_name / "images" / split).mkdir(parents=True)
            (tmp_path / set_name / "labels" / split).mkdir(parents=True)
            for i in range(n):
                cv2.imwrite(str(tmp_path / set_name / "images" / split / f"p{i}.jpg"), img)
                (tmp_path / set_name / "labels" / split / f"p{i}.txt").write_text("2 0.5 0.5 0.3 0.3\n")
    every = dicecam("eval", tmp_path / "nell-byler-d6-pips", "--memory", "none")
    held = dicecam("eval", tmp_path / "nell-byler-d6-pips", "--held-out", "--memory", "none")
    assert every.returncode == held.returncode == 0, every.stderr + held.stderr
    assert (json.loads(every.stdout)["images"], json.loads(held.stdout)["images"]) == (3, 1)
    r = dicecam("eval", tmp_path / "rune55-d6-pips", "--held-out", "--memory", "none")  # a set only trained on
    assert r.returncode == 2 and "no labelled images to score" in r.stderr and "held-out part" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
