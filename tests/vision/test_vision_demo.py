"""The demo `dicecam serve` shows without a camera: every roll it plays is one the served system
adjudicates, and the shipped reader reads each of them right (re-checked whenever the weights change)."""

from __future__ import annotations

import json
import threading

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading
from dicecam.server.settings import ServerSettings
from dicecam.vision.demo import DemoPlaylist, suits
from dicecam.vision.pipeline import Pipeline
from dicecam.vision.sources import demo_frames, demo_paths, open_source

META = json.loads(demo_paths()[1].read_text())
ROLLS = META["rolls"]
# Every system but the random table, which reads nothing without the rows the user gives it.
SYSTEMS = [name for name in registry.SYSTEMS if name != "table"]


def truth(roll) -> list[DieReading]:
    return [DieReading(**d) for d in roll["truth"]["dice"]]


def label(d) -> tuple:
    d = d if isinstance(d, DieReading) else DieReading(**d)
    return d.type.value, d.value, d.colour


def iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def test_every_roll_suits_a_system_and_every_system_has_a_roll():
    suited = {name: [i for i, r in enumerate(ROLLS) if suits(name, {}, truth(r))] for name in SYSTEMS}
    assert all(suited.values()), {k: v for k, v in suited.items() if not v}
    assert all(any(i in rolls for rolls in suited.values()) for i in range(len(ROLLS))), "a roll no system takes"
    assert len(suited["contingency"]) >= 2, "the default system deserves more than one roll"


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_playlist_plays_exactly_the_rolls_the_system_adjudicates(system):
    playlist = DemoPlaylist(ROLLS)
    playlist.follow(system, {})
    for r in ROLLS:
        frames = range(r["starts_at"], r["ends_at"])
        if suits(system, {}, truth(r)):
            assert all(playlist.plays(f) for f in frames)
        else:
            assert not any(playlist.plays(f) for f in frames)


def test_a_system_no_roll_suits_plays_the_whole_clip():
    playlist = DemoPlaylist(ROLLS)
    playlist.follow("table", {})
    assert all(playlist.plays(f) for f in range(META["frames"]))


@pytest.fixture(scope="module")
def clip():
    frames = demo_frames()
    assert len(frames) == META["frames"]
    return frames


@pytest.fixture(scope="module")
def reader():
    from dicecam.vision.read import Reader

    return Reader.load()


@pytest.mark.parametrize("n", range(len(ROLLS)))
def test_the_shipped_reader_reads_every_demo_roll_right(clip, reader, n):
    """At rest, each frame of the roll reads as its truth: kinds, faces, colours, and boxes on the dice."""
    roll = ROLLS[n]
    want = truth(roll)
    for f in range(roll["settled_at"] + 5, roll["moves_at"], 20):
        got = reader(clip[f])
        assert sorted(map(label, got)) == sorted(map(label, want)), f"frame {f}"
        for w in want:
            assert max(iou(w.box, g.box) for g in got if g.type is w.type) > 0.5


def test_the_served_demo_adjudicates_every_roll_it_plays_and_follows_a_change_of_system(reader):
    """The looping demo as `serve` runs it: under the default system every roll is settled with the dice of
    a roll that suits it, in clip order; switched to percentile, the next rolls are the percentile ones."""
    default = ServerSettings.model_fields["system"].default
    assert default == "contingency"
    wanted = {default: [r for r in ROLLS if suits(default, {}, truth(r))],
              "percentile": [r for r in ROLLS if suits("percentile", {}, truth(r))]}
    source = open_source("demo", realtime=False)
    pipeline = Pipeline(source, reader, default, {})
    events, done = [], threading.Event()
    n_first = len(wanted[default])

    def on_event(ev):
        if ev.type not in ("roll.settled", "roll.uncertain"):
            return
        events.append(ev)
        if len(events) == n_first:
            pipeline.configure("percentile", {})
        if len(events) >= n_first + 2:
            done.set()

    pipeline.subscribe(on_event)
    pipeline.start()
    try:
        assert done.wait(240), f"only {len(events)} rolls"
    finally:
        pipeline.stop()
    plays = wanted[default] + wanted["percentile"] * 2
    for ev, roll in zip(events, plays):
        assert ev.type == "roll.settled", ev.data.reason
        assert ev.data.adjudication.outcome
        assert sorted(map(label, ev.data.dice)) == sorted(map(label, truth(roll)))
    assert [ev.data.system for ev in events[:n_first + 2]] == [default] * n_first + ["percentile"] * 2


def test_the_clip_stays_small():
    assert demo_paths()[0].stat().st_size < 2_500_000  # committed to the repository
