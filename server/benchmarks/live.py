"""`dicecam bench --live`: the live pipeline's speed, latency, idle CPU and roll accuracy.

Everything runs the real Pipeline with the shipped reader on frames held in memory (so the
figures are the pipeline's, not the disk's), except the one row that decodes a video file
the way a camera's frames are decoded. One JSON row per measurement.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from statistics import median
from typing import Callable, Sequence

import cv2
import numpy as np

from dicecam.datasets.clip import render_clip
from dicecam.datasets.render import Renderer
from dicecam.mechanics.dice import DieReading
from dicecam.vision.extras import as_missing_extra
from dicecam.vision.motion import MotionGate
from dicecam.vision.pipeline import Pipeline
from dicecam.vision.read import Reader
from dicecam.vision.sources import CAMERA_SIZE, FrameSource, _capture_reader, demo_frames, demo_paths, memory_source

SYSTEM = "contingency-action"  # any system: the figures do not depend on the rules


def _demo() -> tuple[list[np.ndarray], dict]:
    return demo_frames(), json.loads(demo_paths()[1].read_text())


def _memory_source(frames: Sequence[np.ndarray], *, fps: float | None, loop: bool, stamps: list[float] | None = None):
    """`memory_source`, and with `stamps` the time each frame was handed over, by index."""
    source = memory_source(frames, fps=fps, loop=loop)
    if stamps is not None:
        raw = source.raw

        def stamped():
            for f in raw():
                stamps.append(time.monotonic())
                yield f

        source.raw = stamped  # type: ignore[method-assign]
    return source


def _pct(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 2) if len(values) else None


def max_rate(frames, reader) -> dict:
    """Every demo frame through the pipeline as fast as it goes (motion gate + reads at each rest)."""
    p = Pipeline(_memory_source(frames, fps=None, loop=False), reader, SYSTEM)
    t = time.perf_counter()
    p.run()
    dt = time.perf_counter() - t
    return {"bench": "live", "what": "max sustainable frame rate (demo clip, every frame, shipped reader)",
            "fps": round(p.stats.frames / dt, 1), "frames": p.stats.frames, "reads": p.stats.reads,
            "rolls": p.stats.rolls, "goal_fps": 60}


def gate_rate(frames, repeats: int = 3) -> dict:
    best = 0.0
    for _ in range(repeats):
        gate = MotionGate()
        t = time.perf_counter()
        for f in frames:
            gate.update(f)
        best = max(best, len(frames) / (time.perf_counter() - t))
    return {"bench": "live", "what": "motion gate alone, 640x480", "fps": round(best, 1),
            "ms_per_frame": round(1000 / best, 3)}


def sustained(frames, reader, seconds: float, fps: float = 30.0) -> dict:
    """A 30 fps camera (the demo clip looping from memory): lag of each processed frame behind
    its capture, in the first and second half of the run, frames dropped, and event latency."""
    stamps: list[float] = []
    source = _memory_source(frames, fps=fps, loop=True, stamps=stamps)
    p = Pipeline(source, reader, SYSTEM)
    done: list[tuple[int, float]] = []
    latencies: list[float] = []
    feed = p.watcher.feed

    def timed(frame_id, frame):
        roll = feed(frame_id, frame)
        now = time.monotonic()
        done.append((frame_id, now))
        still = p.watcher.still_frame
        if roll is not None and still is not None and still < len(stamps):
            latencies.append((now - stamps[still]) * 1000)  # from the still frame's capture: a backlog counts too
        return roll

    p.watcher.feed = timed  # type: ignore[method-assign]
    p.start()
    time.sleep(seconds)
    p.stop()
    lags = [(t - stamps[i]) * 1000 for i, t in done if i < len(stamps)]
    half = len(lags) // 2
    produced = len(stamps)
    h, w = frames[0].shape[:2]
    return {"bench": "live", "what": f"{fps:.0f} fps {w}x{h} source for {seconds:.0f} s (shipped reader)",
            "frames_captured": produced, "frames_processed": len(done),
            "dropped_share": round(1 - len(done) / max(1, produced), 4),
            "lag_ms_median_first_half": _pct(lags[:half], 50), "lag_ms_median_second_half": _pct(lags[half:], 50),
            "lag_ms_p95": _pct(lags, 95), "lag_ms_max": _pct(lags, 100),
            "rolls": p.stats.rolls,
            "latency_ms_median": _pct(latencies, 50), "latency_ms_max": _pct(latencies, 100),
            "latency_goal_ms": 100,
            "note": "latency: the capture of the first still frame (the settle window's end) to the roll event"}


def _cpu_share(pipeline: Pipeline, seconds: float, warm: float = 1.0) -> float:
    pipeline.start()
    time.sleep(warm)  # past start-up and the first (empty) look at the table
    c0, t0 = time.process_time(), time.monotonic()
    time.sleep(seconds)
    c1, t1 = time.process_time(), time.monotonic()
    pipeline.stop()
    return 100 * (c1 - c0) / (t1 - t0)


def idle_cpu(frames, reader, seconds: float, from_memory: bool = True) -> list[dict]:
    """CPU while nothing moves: a still table at 30 fps, from memory and decoded from a video."""
    still = frames[0]
    size = f"{still.shape[1]}x{still.shape[0]}"
    rows = []
    if from_memory:
        p = Pipeline(_memory_source([still], fps=30.0, loop=True), reader, SYSTEM)
        rows.append({"bench": "live", "what": f"CPU while the table is still, 30 fps {size} from memory",
                     "cpu_percent_of_one_core": round(_cpu_share(p, seconds), 2), "goal_percent": 10})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "still.mp4")
        writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), 30, (still.shape[1], still.shape[0]))
        rng = np.random.default_rng(0)
        for _ in range(60):  # sensor noise, so the decoder has real work, looped
            noisy = np.clip(still.astype(np.int16) + rng.integers(-2, 3, still.shape), 0, 255).astype(np.uint8)
            writer.write(noisy)
        writer.release()
        source = FrameSource("still.mp4", _capture_reader(path, False, loop=True), fps=30.0)
        p = Pipeline(source, reader, SYSTEM)
        rows.append({"bench": "live", "what": f"CPU while the table is still, 30 fps {size} decoded from a video (like a camera)",
                     "cpu_percent_of_one_core": round(_cpu_share(p, seconds), 2), "goal_percent": 10})
    return rows


def _labels(dice) -> list[tuple]:
    out = []
    for d in dice:
        d = d if isinstance(d, dict) else d.model_dump(mode="json")
        out.append((d["type"], d["value"], d.get("colour")))
    return sorted(out)


def _score(events: list[dict], rolls: list[dict], n_frames: int) -> dict:
    """Events against rolls with known settle frames: one per roll, none in motion, labels right. A roll's events
    are those from the previous roll's moving off to the next one's settling; where rolls come from clips run one
    by one (a roll's `from` and `to` frames), those of its own clip, so an event counts against one roll only."""
    one, during, right, after = 0, 0, 0, []
    for k, roll in enumerate(rolls):
        start = roll.get("from", rolls[k - 1]["moves_at"] if k else 0)
        end = roll.get("to", rolls[k + 1]["settled_at"] if k + 1 < len(rolls) else n_frames)
        mine = [e for e in events if start <= e["frame_id"] < end]
        during += sum(1 for e in mine if e["frame_id"] < roll["settled_at"])
        at_rest = [e for e in mine if roll["settled_at"] <= e["frame_id"] < roll.get("moves_at", n_frames)]
        if len(mine) == 1 and at_rest:
            one += 1
            after.append(at_rest[0]["frame_id"] - roll["settled_at"])
            right += _labels(at_rest[0]["dice"]) == _labels(roll["dice"])
    return {"rolls": len(rolls), "events": len(events), "exactly_one_event": one, "events_in_motion": during,
            "readings_equal_labels": right,
            "frames_after_settle_marker_median": median(after) if after else None}


def _events_of(source, reader: Callable[[np.ndarray], list[DieReading]], system: str = SYSTEM) -> list[dict]:
    p = Pipeline(source, reader, system)
    events: list[dict] = []
    # Scored as the JSON the pages receive: frame ids and readings, field by field.
    p.subscribe(lambda e: events.append(e.data.model_dump(mode="json")) if e.type.startswith("roll.") else None)
    p.run()
    return events


def demo_accuracy(frames, meta, reader) -> dict:
    rolls = [{"settled_at": r["settled_at"], "moves_at": r["moves_at"], "dice": r["truth"]["dice"]} for r in meta["rolls"]]
    events = _events_of(_memory_source(frames, fps=None, loop=False), reader)
    return {"bench": "live", "what": "bundled demo clip, shipped reader", **_score(events, rolls, len(frames))}


def _busy() -> None:
    while True:
        pass


class BusyCores:
    """`n` processes that spin: a laptop that streams while it reads is a busy machine."""

    def __init__(self, n: int = 2) -> None:
        self.n, self.procs = n, []

    def __enter__(self) -> "BusyCores":
        ctx = mp.get_context("spawn")
        self.procs = [ctx.Process(target=_busy, daemon=True) for _ in range(self.n)]
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.terminate()
            p.join(5)


def clip_accuracy(reader, count: int, seed: int = 9000) -> list[dict]:
    """Rendered single-roll clips (random dice, tables, lights): the shipped reader on a quiet machine
    and beside two busy-loop processes, and an oracle reader that knows each frame's labels (the
    pipeline's own share of the errors)."""
    with Renderer() as gl:
        clips = [render_clip(seed + i, renderer=gl, hold_s=1.0) for i in range(count)]
    rows = []
    # Each clip is its own camera: the reader watches each afresh, as a pipeline started on it would.
    for name, make, busy in (("shipped reader", lambda c: reader.watching(), 0),
                             ("shipped reader, 2 busy-loop processes beside it", lambda c: reader.watching(), 2),
                             ("oracle reader", lambda c: c.oracle(), 0)):
        events, rolls, offset = [], [], 0
        with BusyCores(busy):
            for c in clips:
                got = _events_of(_memory_source(c.frames, fps=None, loop=False), make(c), "percentile")
                events += [{**e, "frame_id": e["frame_id"] + offset} for e in got]
                rolls.append({"settled_at": c.settled_at + offset, "moves_at": len(c.frames) + offset,
                              "dice": c.truth.dice, "from": offset, "to": offset + len(c.frames)})
                offset += len(c.frames)
        rows.append({"bench": "live", "what": f"{count} rendered clips, {name}", **_score(events, rolls, offset)})
    return rows


def bench_live(quick: bool = False) -> list[dict]:
    frames, meta = _demo()
    shipped = Reader.load()
    shipped(frames[0])  # load and warm the runtime once, outside every timing
    reader = shipped.watching()  # the live pipeline's reader learns the demo clip's camera as it reads
    rows = [gate_rate(frames), max_rate(frames, reader), sustained(frames, reader, 10 if quick else 30)]
    rows += idle_cpu(frames, reader, 3 if quick else 10)
    # A camera as it is asked (vision/sources.CAMERA_SIZE): the same clip at that size, watched afresh.
    hd = [cv2.resize(f, CAMERA_SIZE, interpolation=cv2.INTER_LINEAR) for f in frames]
    rows.append(sustained(hd, shipped.watching(), 10 if quick else 30))
    rows += idle_cpu(hd, shipped.watching(), 3 if quick else 10, from_memory=False)
    del hd
    rows.append(demo_accuracy(frames, meta, reader))
    try:
        rows += clip_accuracy(shipped, 4 if quick else 16)
    except ModuleNotFoundError as e:  # the synth extra is not installed
        rows.append({"bench": "live", "what": "rendered clips", "skipped": str(as_missing_extra(e) or e)})
    except Exception as e:  # no GL on this machine: the rendered clips cannot be made
        rows.append({"bench": "live", "what": "rendered clips", "skipped": str(e)})
    return rows


if __name__ == "__main__":  # python -m dicecam.server.benchmarks.live [--quick]
    for row in bench_live("--quick" in sys.argv):
        print(json.dumps(row), flush=True)
