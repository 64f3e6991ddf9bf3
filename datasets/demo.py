"""The bundled demo source: several rolls on one table, rendered to vision/assets/demo.mp4.

Each roll: the table, dice tumble in, rest ~2.5 s, then are swept off; demo.json records
for every roll its frames (`starts_at` to `ends_at`, the empty table before it included), the
frame it settled at, the frame the dice start moving away, and its truth.
Dice are large (~70-110 px) so the shipped reader can read them.

Every roll suits at least one rule system, and every system with a default dice pool has a roll:
`dicecam serve` plays only the rolls the system being served adjudicates (vision.demo).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import cv2
import numpy as np

from . import effects as fx
from .clip import plan_roll, sweep
from .render import BODY_COLOURS, N_BUNDLED_FONTS, Renderer
from .surfaces import PER_KIND, SURFACES
from .scene import DIE_RADIUS, place_die, render_scene, sample_look, sample_scene

# (kind, colour) of each roll: contingency-action (3d8 + 2d6), a contingency pool
# (d6, d8, d10), a red + white d6 pair (futile-kingdoms), a percentile pair (d00 + d10: percentile,
# chance), three d10 (house-games, emergence, contingency), another contingency pool, and one d6 (a
# futile-kingdoms-contest throw).
# The rolls are rendered in order from one seed: a roll added at the end leaves those before it as they were.
ROLLS: list[list[tuple[str, str]]] = [
    [("d8", "blue"), ("d8", "blue"), ("d8", "blue"), ("d6", "white"), ("d6", "white")],
    [("d6", "green"), ("d8", "purple"), ("d10", "orange")],
    [("d6", "red"), ("d6", "white")],
    [("d00", "black"), ("d10", "white")],
    [("d10", "white"), ("d10", "white"), ("d10", "white")],
    [("d6", "white"), ("d8", "blue"), ("d10", "white")],
    [("d6", "orange")],
]


# Seed 2026's clip left one d10 tilted so that its underlined 9 read "9 or 5", and the reader (since its
# doubt is judged on unseen runs) flagged it: the demo shows what reading looks like, so it was re-rendered
# from the next seed, which the shipped reader reads without a doubt (tests/vision/test_vision_demo.py).
def render_demo(mp4: Path, meta: Path, seed: int = 2027, width: int = 640, height: int = 480, fps: int = 30,
                rest_s: float = 2.5, sweep_s: float = 0.8, gap_s: float = 0.6) -> dict:
    rng = np.random.default_rng(seed)
    lay = sample_scene(rng, ["d6"], width, height, 0, px_range=(88, 92), elevation=78)
    base = lay.scene
    base.surface = SURFACES.index("felt") * PER_KIND
    base.props = []  # a clean table: clutter belongs to the training set, not the demo
    base.domes = []
    eff = fx.Effects(noise=2.0, blur=0.5, noise_seed=1)
    cam = lay.camera
    with Renderer() as renderer:  # one GL context for the whole clip
        frames_written = 0
        rolls_meta = []
        writer = None
        for fourcc in ("avc1", "mp4v"):
            writer = cv2.VideoWriter(str(mp4), cv2.VideoWriter_fourcc(*fourcc), fps, (width, height))
            if writer.isOpened():
                break

        def emit(scene, name):
            nonlocal frames_written
            img, read = render_scene(renderer, scene, eff, name)
            writer.write(img)
            frames_written += 1
            return read

        for r, spec in enumerate(ROLLS):
            starts_at = frames_written
            for _ in range(int(gap_s * fps)):
                s = copy.copy(base)
                s.dice = []
                emit(s, f"frame-{frames_written:05d}")
            dice = []
            for kind, colour in spec:
                # The bundled fonts only: the demo must look the same whichever fonts the machine has.
                look = sample_look(rng, kind, fonts=N_BUNDLED_FONTS)
                look.update(colour=colour, material="solid", body=BODY_COLOURS[colour], body2=BODY_COLOURS[colour],
                            engraved=False, pips=True, d4_vertex=True)
                look["ink"] = (0.03, 0.03, 0.03) if colour in ("white", "yellow", "orange", "pink") else (0.95, 0.95, 0.93)
                scale = DIE_RADIUS[kind]
                for _ in range(200):
                    u, v = rng.uniform(0.25, 0.75) * width, rng.uniform(0.28, 0.72) * height
                    xy = cam.unproject_to_table(u, v)[:2]
                    if all(np.linalg.norm(d.pos[:2] - xy) > (d.scale + scale) * 1.05 for d in dice):
                        break
                dice.append(place_die(kind, look, rng, np.array([xy[0], xy[1], 0.0]), scale))
            motions = plan_roll(rng, dice, 0.0, rng.uniform(0, 2 * np.pi))
            t_end = max(m.t1 for m in motions)
            n_in = int(np.ceil(t_end * fps))
            settled_at = frames_written + n_in
            for i in range(n_in):
                s = copy.copy(base)
                s.dice = [m.at(i / fps) for m in motions]
                emit(s, "f")
            truth = None
            for i in range(int(rest_s * fps)):
                s = copy.copy(base)
                s.dice = [m.at(t_end + 1) for m in motions]
                read = emit(s, "f")
                truth = truth or read
            moves_at = frames_written
            direction = np.array([np.cos(a := rng.uniform(0, 2 * np.pi)), np.sin(a)])
            final = [m.at(t_end + 1) for m in motions]
            for i in range(int(sweep_s * fps)):
                s = copy.copy(base)
                s.dice = [d for d in (sweep(d, i / fps, 0.0, direction) for d in final) if d is not None]
                emit(s, "f")
            rolls_meta.append({"starts_at": starts_at, "settled_at": settled_at, "moves_at": moves_at,
                               "ends_at": frames_written,
                               "truth": truth.model_copy(update={"image": f"frame-{settled_at:05d}"}).model_dump(mode="json")})
        for _ in range(int(gap_s * fps)):
            s = copy.copy(base)
            s.dice = []
            emit(s, "f")
        writer.release()
        doc = {"fps": fps, "frames": frames_written, "width": width, "height": height, "rolls": rolls_meta}
        Path(meta).write_text(json.dumps(doc, indent=1) + "\n")
        return doc


if __name__ == "__main__":  # python -m dicecam.datasets.demo
    root = Path(__file__).resolve().parent.parent / "vision" / "assets"
    d = render_demo(root / "demo.mp4", root / "demo.json")
    print(f"{d['frames']} frames, {len(d['rolls'])} rolls")
