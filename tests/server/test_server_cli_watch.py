"""`dicecam watch`: one line per settled roll on stdout, camera changes on stderr, bad input in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.registry import resolve
from dicecam.server.events import parse_event
from dicecam.server.cli import main
from dicecam.vision.sources import demo_paths


def watch(*args):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", "watch", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def demo_truth() -> list[dict]:
    return json.loads(demo_paths()[1].read_text())["rolls"]


def test_watching_the_demo_as_jsonl_prints_one_event_per_roll_with_the_clip_labels():
    r = watch("--source", "demo", "--system", "contingency-action", "--jsonl", "--fast")
    assert r.returncode == 0, r.stderr
    events = [parse_event(json.loads(line)) for line in r.stdout.splitlines()]
    truth = demo_truth()
    assert len(events) == len(truth)
    for event, roll in zip(events, truth):
        got = event.data
        assert roll["settled_at"] <= got.frame_id < roll["moves_at"]
        assert sorted((d.type.value, d.value, d.colour) for d in got.dice) == \
            sorted((d["type"], d["value"], d["colour"]) for d in roll["truth"]["dice"])
    first = events[0]  # the action roll: 3d8 and two pressure d6, its verdict the rules' own on the true dice
    dice = [DieReading(**d) for d in truth[0]["truth"]["dice"]]
    assert first.type == "roll.settled" and first.data.adjudication.outcome == resolve("contingency-action", dice, {}).outcome
    assert events[1].type == "roll.uncertain" and "d10" in events[1].data.reason, "a d10 is no action die"
    assert "demo clip" in r.stderr and "ended" in r.stderr


def test_the_human_form_gives_each_roll_its_dice_and_verdict_on_one_line(capsys):
    assert main(["watch", "--source", "demo", "--system", "contingency-action", "--fast", "--max-rolls", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[frame ") and "d8:6:blue" in lines[0] and "Messy" in lines[0]
    assert "uncertain:" in lines[1]


def test_system_options_reach_the_verdict(capsys):
    assert main(["watch", "--source", "demo", "--system", "futile-kingdoms", "--modifier", "+2", "--fast", "--jsonl",
                 "--max-rolls", "3"]) == 0
    third = parse_event(json.loads(capsys.readouterr().out.splitlines()[2]))
    adj = third.data.adjudication  # the clip's third roll is a red and a white d6, both 2
    assert adj.modifier == 2 and adj.result == adj.dr + 2


@pytest.mark.parametrize("args, says", [
    (["--source", "demo", "--system", "poker"], "unknown system"),
    (["--source", "/no/such/clip.mp4"], "bad source"),
    (["--source", "ftp://example.org/cam"], "unsupported stream"),
    (["--source", "demo", "--system", "contingency-action", "--target", "5"], "does not apply"),
    (["--source", "demo", "--settle-frames", "0"], "--settle-frames"),
    (["--source", "demo", "--max-rolls", "0"], "--max-rolls"),
    (["--source", "demo", "--system", "contingency", "--target", "99"], "target"),
    (["--source", "0", "--camera-size", "1920x99999"], "camera size"),
])
def test_bad_input_is_one_line_and_exit_status_2(args, says):
    r = watch(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and says in r.stderr and "Traceback" not in r.stderr


def test_an_empty_folder_is_refused(tmp_path):
    r = watch("--source", tmp_path)
    assert r.returncode == 2 and "no images" in r.stderr


def test_a_camera_that_is_not_there_is_refused_at_start_not_retried_forever():
    r = watch("--source", "/dev/video97")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "dicecam watch: no camera at /dev/video97: /dev/video97 does not exist "
        "(try --source demo, a video file or a folder of frames)"]
