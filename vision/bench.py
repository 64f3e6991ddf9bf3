"""Reader benchmark: milliseconds per 640x480 frame with 1, 5 and 10 dice, detector + face reader,
on each installed backend. Figures are reported, never asserted."""

from __future__ import annotations

import statistics
import time

import numpy as np

from .backends import installed


def _frames(n_dice: int, count: int) -> tuple[list[np.ndarray], str]:
    """Rendered tables with exactly n_dice dice; the synth extra renders them."""
    from dicecam.datasets.scene import render_image

    return [render_image(90_000 + 100 * n_dice + i, n_dice=n_dice)[0] for i in range(count)], "rendered"


def bench_reader(quick: bool = False, threads: int | None = None) -> list[dict]:
    from .read import Reader

    repeats = 10 if quick else 60
    rows = []
    frames = {n: _frames(n, 3 if quick else 6) for n in (1, 5, 10)}
    for backend in installed():
        reader = Reader.load(backend=backend, threads=threads)
        for n, (imgs, origin) in frames.items():
            for img in imgs[:2]:
                reader(img)  # warm-up: first calls allocate
            times, found = [], []
            for i in range(repeats):
                img = imgs[i % len(imgs)]
                t0 = time.perf_counter()
                found.append(len(reader(img)))
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            rows.append({"bench": "reader", "backend": backend, "dice": n, "frames": origin, "size": "640x480",
                         "median_ms": round(statistics.median(times), 2),
                         "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 2),
                         "dice_found_mean": round(statistics.mean(found), 2), "runs": repeats})
    return rows
