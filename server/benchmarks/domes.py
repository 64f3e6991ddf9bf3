"""A die under a glass dome: the same rendered tables read with their dome and without it.

The detector must box the die, not what holds it; on a real photo of a die under a dice tower's dome its one box
was the dome. Renders can say how far that goes, because the same table can be drawn twice, once without the
glass: the dice under the dome are boxed (as `dicecam eval` matches them) and read right how often in each, and how many readings
box the dome itself. Figures are reported, never asserted.
"""

from __future__ import annotations

import copy

import numpy as np

from dicecam.datasets import effects as fx
from dicecam.datasets.render import Renderer
from dicecam.datasets.scene import Layout, parse_kinds, render_scene, sample_scene
from dicecam.mechanics.dice import DieReading
from dicecam.vision.boxes import iou
from dicecam.vision.evaluate import matching_detection
from dicecam.vision.read import Reader

FIRST_SEED = 50_000


def domed_tables(count: int, width: int = 640, height: int = 480):
    """(layout, effects) of the first `count` random tables from FIRST_SEED that have a dome."""
    seed = FIRST_SEED
    while count:
        rng = np.random.default_rng(seed)
        lay = sample_scene(rng, parse_kinds(None), width, height)
        seed += 1
        if lay.scene.domes:
            count -= 1
            yield lay, fx.sample_effects(rng, 1.0)


def dome_box(lay: Layout) -> tuple[float, float, float, float]:
    """The dome's box in the picture, from points on its glass."""
    M = lay.scene.domes[0][0]
    th, ph = np.meshgrid(np.linspace(0, np.pi / 2, 10), np.linspace(0, 2 * np.pi, 36))
    unit = np.c_[(np.cos(ph) * np.sin(th)).ravel(), (np.sin(ph) * np.sin(th)).ravel(), np.cos(th).ravel()]
    uv = lay.camera.project(unit @ M[:3, :3].T + M[:3, 3])
    return float(uv[:, 0].min()), float(uv[:, 1].min()), float(uv[:, 0].max()), float(uv[:, 1].max())


def under_dome(lay: Layout, truth: list[DieReading]) -> list[DieReading]:
    """The labelled dice that lie wholly under the dome: the ones whose box holds an under-dome die's centre."""
    M = lay.scene.domes[0][0]
    out = []
    for d in lay.scene.dice:
        if np.linalg.norm(d.pos[:2] - M[:2, 3]) + d.scale >= M[0, 0]:
            continue
        u, v = lay.camera.project(d.pos[None])[0]
        out += [t for t in truth if t.box[0] <= u <= t.box[2] and t.box[1] <= v <= t.box[3]][:1]
    return out


def _score(readings: list[DieReading], dice: list[DieReading], box) -> dict:
    boxed = right = sure = sure_wrong = 0
    xyxy = np.array([r.box for r in readings], np.float32).reshape(-1, 4)
    confidence = np.array([r.confidence or 0.0 for r in readings], np.float32)
    for d in dice:
        k = matching_detection(d.box, xyxy, confidence)
        if k is None:
            continue
        r = readings[k]
        ok = r.type == d.type and r.value == d.value
        boxed, right = boxed + 1, right + ok
        if not (r.uncertain or r.cocked):
            sure, sure_wrong = sure + 1, sure_wrong + (not ok)
    return {"boxed": boxed, "right": right, "sure": sure, "sure_wrong": sure_wrong,
            "dome_read_as_die": sum(iou(r.box, box) > 0.5 for r in readings)}


def bench_domes(quick: bool = False, reader: Reader | None = None, tables: int | None = None) -> list[dict]:
    reader = reader or Reader.load()
    tables = tables or (40 if quick else 150)
    totals = {v: {} for v in ("without", "with")}
    n_dice = 0
    with Renderer() as gl:
        for lay, eff in domed_tables(tables):
            bare = copy.copy(lay.scene)
            bare.domes = []
            img, truth = render_scene(gl, lay.scene, eff, "dome")
            plain, _ = render_scene(gl, bare, eff, "plain")
            dice, box = under_dome(lay, truth.dice), dome_box(lay)
            n_dice += len(dice)
            for v, picture in (("without", plain), ("with", img)):
                for k, x in _score(reader(picture), dice, box).items():
                    totals[v][k] = totals[v].get(k, 0) + x
    rows = []
    for v, t in totals.items():
        rows.append({"bench": "domes", "dome": v == "with", "tables": tables, "dice_under_dome": n_dice,
                     "boxed": round(t["boxed"] / max(n_dice, 1), 4), "read_right": round(t["right"] / max(n_dice, 1), 4),
                     "sure": t["sure"], "sure_wrong": t["sure_wrong"], "dome_read_as_die": t["dome_read_as_die"]})
    return rows
