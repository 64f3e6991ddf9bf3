"""The live pipeline, end to end on replayed frames: one event per roll, only once the dice rest,
never during motion, readings equal to the labels — and faults that never crash it."""

from __future__ import annotations

import json
import threading
import time

import cv2
import numpy as np
import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.vision.pipeline import Pipeline
from dicecam.vision.sources import BACKLOG, FrameSource, demo_paths, memory_source, open_source
from dicecam.vision.boxes import iou
from dicecam.vision.watcher import PipelineSettings
from scripted_table import Die, Table, labels

SETTINGS = PipelineSettings()  # the defaults a user gets

PAIR = [Die("d6", 5, "red", 150, 200), Die("d6", 2, "white", 400, 210)]
ACTION = [Die("d8", 7, "blue", 120, 120), Die("d8", 3, "blue", 300, 140), Die("d6", 6, "white", 460, 300)]


def run(pipeline: Pipeline) -> list:
    events = []
    pipeline.subscribe(events.append)
    pipeline.run()
    return events


def rolls_of(events) -> list:
    return [e for e in events if e.type in ("roll.settled", "roll.uncertain")]


def statuses(events) -> list[str]:
    return [e.data.status for e in events if e.type == "camera.status"]


def assert_one_event_per_roll(events, script, settings=SETTINGS):
    """Exactly one roll event per scripted roll, after the settle window and before the sweep."""
    got = rolls_of(events)
    assert len(got) == len(script.rolls), [e.data.frame_id for e in got]
    for event, roll in zip(got, script.rolls):
        fid = event.data.frame_id
        assert roll["settled_at"] + settings.settle_frames - 1 <= fid < roll["moves_at"], (fid, roll)
        assert sorted(labels(event.data.dice)) == sorted(labels(roll["dice"]))


# -- rolls on a scripted table -------------------------------------------------------------------

def test_each_roll_is_announced_once_when_its_dice_come_to_rest():
    t = Table(1).empty(10).roll(PAIR).empty(10).roll(ACTION).empty(10)
    events = run(Pipeline(t.script.source(), t.script.oracle(), "contingency-action", warm_up=False))
    assert_one_event_per_roll(events, t.script)
    action = rolls_of(events)[1]
    assert action.type == "roll.settled"
    assert action.data.adjudication.outcome == "grim", "highest d8 7 is messy; the pressure six cuts it to grim"


def test_the_watcher_names_the_frame_that_closed_the_settle_window_of_each_roll_it_announces():
    """What `dicecam bench --live` times a roll's latency from: the first still frame, the reads after it."""
    t = Table(1).empty(10).roll(PAIR).empty(10).roll(ACTION).empty(10)
    p = Pipeline(t.script.source(), t.script.oracle(), "contingency-action", warm_up=False)
    closed = []  # per roll event: its frame, and the frame the watcher says closed its settle window
    p.subscribe(lambda e: e.type.startswith("roll.") and closed.append((e.data.frame_id, p.watcher.still_frame)))
    p.run()
    assert len(closed) == 2
    for (event_frame, still), roll in zip(closed, t.script.rolls):
        assert still >= roll["settled_at"] + SETTINGS.settle_frames - 1
        # The oracle reads every still frame alike, so a majority of the planned frames, read one after another
        # from the still frame on, ends the vote.
        assert event_frame == still + SETTINGS.vote_frames // 2


def test_each_roll_event_carries_the_frame_it_was_read_from_and_joins_the_attached_session():
    from dicecam.vision.assembly import RollSession

    t = Table(1).empty(10).roll(PAIR).empty(10).roll(ACTION).empty(10)
    p = Pipeline(t.script.source(), t.script.oracle(), "contingency-action", warm_up=False)
    shared = RollSession("contingency-action", source="camera")  # as the server's table makes it
    p.attach(shared)
    seen = []
    p.subscribe(lambda e: seen.append((e, p.latest_frame())))
    p.run()
    got = [(e, latest) for e, latest in seen if e.type.startswith("roll.")]
    assert len(got) == 2 and shared.last is got[-1][0].data  # the attached session built the rolls
    for event, (fid, frame, _) in got:
        assert event.frame is not None and event.frame.shape == frame.shape
        assert fid == event.data.frame_id and np.array_equal(event.frame, frame)
    assert "frame" not in json.loads(got[0][0].model_dump_json())


def test_dice_lying_on_the_table_when_the_camera_starts_are_not_a_roll_and_the_next_throw_is():
    t = Table(7)
    for _ in range(30):  # the camera opens on dice already at rest (or clutter the detector takes for dice)
        t._frame([(d, d.x, d.y) for d in PAIR], False)
    t.roll(ACTION).empty(5)
    events = run(Pipeline(t.script.source(), t.script.oracle(), "contingency-action", warm_up=False))
    got = rolls_of(events)
    assert len(got) == 1
    assert sorted(labels(got[0].data.dice)) == sorted(labels(t.script.rolls[0]["dice"]))


def test_nothing_is_read_while_the_dice_tumble():
    t = Table(2).empty(5).tumbling(PAIR, 120)
    reader = t.script.oracle()
    events = run(Pipeline(t.script.source(), reader, "contingency", warm_up=False))
    assert rolls_of(events) == []
    assert not any(k in t.script.moving for k in reader.calls), "the reader ran on a moving frame"


def test_dice_still_resting_after_a_hand_passes_over_them_are_not_announced_again():
    t = Table(3).empty(5).roll(PAIR, rest=60, hand_over_at=25).empty(5)
    reader = t.script.oracle()
    events = run(Pipeline(t.script.source(), reader, "contingency", warm_up=False))
    assert len(rolls_of(events)) == 1
    assert not any(k in t.script.moving for k in reader.calls)


def test_the_same_faces_thrown_again_elsewhere_are_a_new_roll():
    moved = [Die(d.kind, d.value, d.colour, d.x + 20, d.y + 150) for d in PAIR]
    t = Table(4).empty(5).roll(PAIR).roll(moved).empty(5)
    events = run(Pipeline(t.script.source(), t.script.oracle(), "futile-kingdoms", warm_up=False))
    assert_one_event_per_roll(events, t.script)


def test_a_cocked_die_makes_the_roll_uncertain_with_a_reason_instead_of_a_verdict():
    cocked = [PAIR[0], Die("d6", 2, "white", 400, 210, cocked=True)]
    t = Table(5).empty(5).roll(cocked).empty(5)
    events = run(Pipeline(t.script.source(), t.script.oracle(), "futile-kingdoms", warm_up=False))
    (roll,) = rolls_of(events)
    assert roll.type == "roll.uncertain" and roll.data.status == "uncertain"
    assert roll.data.adjudication is None and "white d6" in roll.data.reason and "cocked" in roll.data.reason


def test_a_single_die_after_a_contingency_check_is_announced_as_its_luck_die():
    check = [Die("d6", 3, "red", 100, 100), Die("d8", 4, "blue", 300, 100), Die("d10", 2, "green", 500, 100)]
    luck = [Die("d8", 6, "white", 300, 300)]
    t = Table(6).empty(5).roll(check).empty(8).roll(luck).empty(5)
    events = rolls_of(run(Pipeline(t.script.source(), t.script.oracle(), "contingency", {"target": 7}, warm_up=False)))
    assert len(events) == 2
    first, second = (e.data.model_dump(mode="json") for e in events)
    assert second["follows"] == first["id"] and second["options"]["luck"] == "d8:6"
    assert labels(second["dice"])[-1] == ("d8", 6, "white")


def test_a_new_configuration_applies_from_the_next_roll():
    again = [Die(d.kind, d.value, d.colour, d.x, d.y + 150) for d in PAIR]
    t = Table(7).empty(5).roll(PAIR).empty(5).roll(again).empty(5)
    p = Pipeline(t.script.source(), t.script.oracle(), "futile-kingdoms", warm_up=False)
    seen = []

    def on_event(e):
        seen.append(e)
        if e.type.startswith("roll."):
            p.configure("futile-kingdoms", {"modifier": 3})

    p.subscribe(on_event)
    p.run()
    first, second = (e.data.model_dump(mode="json") for e in rolls_of(seen))
    assert first["options"].get("modifier", 0) == 0 and second["options"]["modifier"] == 3
    assert second["adjudication"]["result"] == first["adjudication"]["result"] + 3


# -- rendered clips and image sequences ----------------------------------------------------------

def test_the_bundled_demo_clip_through_the_shipped_reader_reads_every_roll_once_and_right():
    from dicecam.vision.read import Reader

    _, meta = demo_paths()
    truth = json.loads(meta.read_text())["rolls"]
    source = open_source("demo", realtime=False, loop_demo=False)
    events = rolls_of(run(Pipeline(source, Reader.load(), "contingency-action")))
    assert len(events) == len(truth)
    for event, roll in zip(events, truth):
        assert roll["settled_at"] <= event.data.frame_id < roll["moves_at"]
        got, want = [d.model_dump(mode="json") for d in event.data.dice], roll["truth"]["dice"]
        assert sorted(labels(got)) == sorted(labels(want))
        for w in want:  # each labelled die was found where it lies
            assert max(iou(w["box"], g["box"]) for g in got if g["type"] == w["type"]) > 0.5


@pytest.fixture(scope="module")
def rendered_clips():
    from dicecam.datasets.clip import render_clip
    from dicecam.datasets.render import Renderer

    with Renderer() as gl:
        return [render_clip(seed, renderer=gl, n_dice=n, hold_s=1.0) for seed, n in ((11, 2), (12, 4))]


def test_rendered_clips_give_one_roll_each_after_the_settle_marker_with_the_clip_labels(rendered_clips):
    for clip in rendered_clips:
        source = memory_source(clip.frames, spec="clip")
        events = rolls_of(run(Pipeline(source, clip.oracle(), "percentile", warm_up=False)))
        assert len(events) == 1
        assert events[0].data.frame_id >= clip.settled_at
        assert sorted(labels(events[0].data.dice)) == sorted(labels(clip.truth.dice))


def test_an_image_sequence_folder_replays_like_the_clip(rendered_clips, tmp_path):
    clip = rendered_clips[1]
    for i, frame in enumerate(clip.frames):
        cv2.imwrite(str(tmp_path / f"frame-{i:05d}.png"), frame)  # lossless: the oracle still knows each frame
    events = rolls_of(run(Pipeline(open_source(str(tmp_path), realtime=False), clip.oracle(), "percentile",
                                   warm_up=False)))
    assert len(events) == 1 and events[0].data.frame_id >= clip.settled_at
    assert sorted(labels(events[0].data.dice)) == sorted(labels(clip.truth.dice))


# -- faults ----------------------------------------------------------------------------------------

JUNK = [None, np.zeros((0, 0, 3), np.uint8), np.full((480, 640, 3), 128, np.uint8),
        np.zeros((3000, 4000, 3), np.uint8) + 7, np.zeros((480, 640, 4), np.uint8),
        np.random.default_rng(0).random((480, 640, 3)), np.zeros((480, 640), np.uint8)]


def test_junk_frames_are_skipped_and_counted_and_the_rolls_still_come_out():
    t = Table(8).empty(5).roll(PAIR).empty(5).roll(ACTION).empty(5)
    frames = list(t.script.frames)
    mixed = []
    for i, f in enumerate(frames):
        mixed.append(f)
        if i % 9 == 0:
            mixed.append(JUNK[(i // 9) % len(JUNK)])
    n_junk = len(mixed) - len(frames)
    source = memory_source(mixed, spec="junk")
    events = run(Pipeline(source, t.script.oracle(), "contingency-action", warm_up=False))
    assert_one_event_per_roll([e for e in events], _renumbered(t.script, mixed))
    assert events[-1].type == "camera.status" and events[-1].data.skipped_frames == n_junk


def _renumbered(script, mixed):
    """The script's roll markers as positions among the good frames of `mixed` (junk gets no id)."""
    return script  # junk frames are skipped before they are numbered, so the ids are the script's own


class FlakyCamera:
    """A camera that is unplugged partway through, is missing for two tries, then comes back."""

    def __init__(self, frames, die_at: int, missing_tries: int = 2):
        self.frames, self.die_at, self.missing = frames, die_at, missing_tries
        self.pos, self.opens = 0, 0

    def open(self):
        self.opens += 1
        if 1 < self.opens <= 1 + self.missing:
            raise OSError("no such device")

        def read():
            if self.pos >= len(self.frames):
                raise StopIteration
            if self.pos == self.die_at and self.opens == 1:
                raise OSError("device unplugged")
            self.pos += 1
            return self.frames[self.pos - 1]

        return read


def test_a_camera_that_disappears_is_retried_reported_and_picked_up_again():
    t = Table(9).empty(5).roll(PAIR).empty(5).roll(ACTION).empty(5)
    cam = FlakyCamera(t.script.frames, die_at=t.script.rolls[0]["moves_at"] + 3)
    source = FrameSource("0", cam.open, fps=30, realtime=False, max_backoff=0.05)
    events = run(Pipeline(source, t.script.oracle(), "contingency-action", warm_up=False))
    assert statuses(events)[:5] == ["running", "retrying", "retrying", "retrying", "running"]
    assert "device unplugged" in next(e for e in events if e.data.status == "retrying").data.message
    assert_one_event_per_roll(events, t.script)


def test_a_camera_that_never_comes_back_is_reported_lost_and_the_run_ends():
    def gone():
        raise OSError("no such device")

    source = FrameSource("/dev/video7", gone, max_retries=2, max_backoff=0.01)
    events = run(Pipeline(source, lambda f: [], "contingency", warm_up=False))
    assert statuses(events)[-1] == "lost" and "no such device" in events[-1].data.message


def test_a_reader_that_fails_costs_one_frame_not_the_pipeline():
    t = Table(10).empty(5).roll(PAIR).empty(5)
    oracle, failures = t.script.oracle(), []

    def reader(frame):
        if not failures:
            failures.append(1)
            raise RuntimeError("onnxruntime hiccup")
        return oracle(frame)

    p = Pipeline(t.script.source(), reader, "futile-kingdoms", warm_up=False)
    assert len(rolls_of(run(p))) == 1 and p.stats.reader_errors == 1


def test_a_failing_subscriber_does_not_silence_the_others():
    t = Table(11).empty(5).roll(PAIR).empty(5)
    p = Pipeline(t.script.source(), t.script.oracle(), "futile-kingdoms", warm_up=False)

    def broken(event):
        raise ValueError("a page went away")

    p.subscribe(broken)
    assert len(rolls_of(run(p))) == 1


# -- live: a thread that holds the newest few frames ---------------------------------------------

def _timed_reader(t, seconds: float):
    oracle = t.script.oracle()

    def read(frame):
        time.sleep(seconds)
        return oracle(frame)

    return read


def test_a_read_that_takes_a_few_frames_time_loses_no_frame_of_a_live_source():
    t = Table(12).empty(10).roll(PAIR, rest=90).empty(10)
    read = _timed_reader(t, 0.08)  # five frames of the 60 fps camera: fewer than BACKLOG
    assert 0.08 * 60 < BACKLOG
    p = Pipeline(t.script.source(realtime=True, fps=60), read, "futile-kingdoms", warm_up=False)
    events = run(p)
    assert len(rolls_of(events)) == 1
    assert p.stats.dropped == 0 and p.stats.frames == len(t.script.frames)


def test_a_reader_slower_than_the_backlog_skips_the_oldest_frames_instead_of_falling_ever_further_behind():
    t = Table(12).empty(10).roll(PAIR, rest=90).empty(10)
    read = _timed_reader(t, 0.6)  # thirty-six frames: more than the source holds
    assert 0.6 * 60 > BACKLOG
    p = Pipeline(t.script.source(realtime=True, fps=60), read, "futile-kingdoms", warm_up=False)
    events = run(p)
    assert len(rolls_of(events)) == 1 and p.stats.dropped > 0
    assert p.stats.frames + p.stats.dropped == len(t.script.frames)


def test_start_runs_in_the_background_shows_the_newest_frame_and_stop_ends_an_endless_source():
    t = Table(13).empty(5).roll(PAIR).empty(5)
    frames = t.script.frames

    def endless():
        i = iter(range(10**9))
        return lambda: frames[min(next(i), len(frames) - 1)]  # then the table stays as it is, forever

    p = Pipeline(FrameSource("0", endless, fps=60), t.script.oracle(), "futile-kingdoms", warm_up=False)
    got = threading.Event()
    p.subscribe(lambda e: got.set() if e.type.startswith("roll.") else None)
    p.start()
    try:
        assert got.wait(20)
        fid, frame, dice = p.latest_frame()
        assert frame.shape == (480, 640, 3) and sorted(labels(dice)) == sorted(labels(PAIR_READINGS))
    finally:
        t0 = time.monotonic()
        p.stop()
    assert time.monotonic() - t0 < 3 and p.status == "stopped"


PAIR_READINGS: list[DieReading] = [d.reading() for d in PAIR]


def test_the_demo_source_loops_like_a_camera_without_ever_reporting_it_lost():
    seen: list[str] = []
    source = open_source("demo", realtime=False, on_status=lambda info: seen.append(info["state"]))
    n_clip = json.loads(demo_paths()[1].read_text())["frames"]
    count = 0
    for count, _ in enumerate(source.frames(), start=1):
        if count > n_clip + 50:
            source.stop()
    assert count > n_clip and "retrying" not in seen and seen[0] == "connected"
