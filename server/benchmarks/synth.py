"""Synthetic generator benchmarks: figures, never assertions.

`python -m dicecam.server.benchmarks.synth [--quick] [--repeats N]` prints one JSON object per line:

- "render 640x480 warm": one process, context and atlases warm, images rendered and JPEG
  encoded as `dicecam synth` writes them (the per-image cost, no start-up).
- "synth 640x480 workers=W": `generate()` into a temporary folder, end to end (process
  start-up, asset building, writing files) for `count` images, and "steady" images/s from
  the difference of two run lengths, which cancels the start-up cost.

On a shared machine figures move between runs, so each is the median of `repeats` runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from dicecam.datasets.render import Renderer
from dicecam.datasets.scene import parse_kinds
from dicecam.datasets.synth import _render_for_writer, generate


def _warm_rate(n: int, width: int, height: int) -> float:
    kinds = parse_kinds(None)
    with Renderer() as gl:
        for i in range(min(n, 60)):  # warm: build the atlases and surfaces this sample needs
            _render_for_writer((1, 10_000 + i, kinds, width, height, "yolo", 0.0), gl)
        t = time.perf_counter()
        for i in range(n):
            _render_for_writer((2, i, kinds, width, height, "yolo", 0.0), gl)
        return n / (time.perf_counter() - t)


def _generate_seconds(count: int, workers: int, width: int, height: int, seed: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        generate(Path(tmp) / "set", count, seed, None, "yolo", progress=False, width=width, height=height, workers=workers)
        return time.perf_counter() - t


def bench_synth(quick: bool = False, repeats: int = 3, worker_counts: tuple[int, ...] = (1, 2),
                width: int = 640, height: int = 480) -> list[dict]:
    """Images per second of the renderer and of `generate()` (see the module docstring)."""
    n_warm = 40 if quick else 200
    long, short = (60, 20) if quick else (400, 100)
    rows = []
    rates = [_warm_rate(n_warm, width, height) for _ in range(repeats)]
    rows.append({"name": f"render {width}x{height} warm", "images": n_warm, "repeats": repeats,
                 "images_per_s": round(statistics.median(rates), 1), "runs": [round(r, 1) for r in rates]})
    for w in worker_counts:
        ends, steady = [], []
        for r in range(repeats):
            t_long = _generate_seconds(long, w, width, height, seed=100 + r)
            t_short = _generate_seconds(short, w, width, height, seed=200 + r)
            ends.append(long / t_long)
            steady.append((long - short) / max(t_long - t_short, 1e-6))
        rows.append({"name": f"synth {width}x{height} workers={w}", "images": long, "repeats": repeats,
                     "images_per_s": round(statistics.median(ends), 1),
                     "steady_images_per_s": round(statistics.median(steady), 1),
                     "runs": [round(r, 1) for r in ends]})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dicecam.server.benchmarks.synth", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small runs (a smoke test, not a measurement)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    a = p.parse_args(argv)
    workers = tuple(int(x) for x in a.workers.split(",") if x.strip())
    for row in bench_synth(a.quick, max(1, a.repeats), workers):
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
