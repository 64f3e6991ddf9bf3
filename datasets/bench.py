"""Synthetic generator benchmarks (`dicecam bench --synth`): figures, never assertions."""

from __future__ import annotations

import time


def bench_synth(quick: bool = False) -> list[dict]:
    """Images per second of the renderer at 640x480 (warm context and atlases)."""
    from .render import get_renderer
    from .scene import render_image

    get_renderer()
    n = 20 if quick else 200
    rows = []
    for name, kw in (("render 640x480", dict(width=640, height=480)),
                     ("render 416x416", dict(width=416, height=416))):
        for i in range(min(n, 30)):  # warm: build the atlases this sample needs
            render_image(10_000 + i, **kw)
        t = time.perf_counter()
        dice = 0
        for i in range(n):
            _, read = render_image(10_000 + i, **kw)
            dice += len(read.dice)
        dt = time.perf_counter() - t
        rows.append({"name": name, "images": n, "seconds": round(dt, 3), "images_per_s": round(n / dt, 1),
                     "dice_per_image": round(dice / n, 2)})
    return rows
