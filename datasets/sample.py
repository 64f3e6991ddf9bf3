"""The bundled sample photo: a d6, a d8 and a d10 on a table, rendered to vision/assets/sample.jpg.

It is what a Contingency skill check takes (three skill dice), so the README's first examples
(`dicecam sample photo.jpg`, then `dicecam read photo.jpg | dicecam resolve contingency --target 5`)
run on a fresh install without a camera or a photo of one's own. `dicecam sample PATH` copies it out.

Rendered by our OpenGL renderer from a fixed seed, like the demo clip: a clean wooden table seen nearly
from above, large solid dice in the bundled fonts, a touch of webcam noise. The seed was picked so the
shipped reader reads all three dice, none of them uncertain (tests/server/test_server_cli_sample.py checks).

    python -m dicecam.datasets.sample            # rewrite vision/assets/sample.jpg (needs the synth extra)
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from dicecam.mechanics.dice import ImageRead

from . import effects as fx
from .render import BODY_COLOURS, INK_COLOURS, N_BUNDLED_FONTS, Renderer
from .scene import DIE_RADIUS, place_die, render_scene, sample_look, sample_scene
from .surfaces import PER_KIND, SURFACES

SEED = 6
WIDTH, HEIGHT = 640, 480
JPEG_QUALITY = 90
DIE_PX = 140  # a die's size on screen, about (the renderer's px_range)
ELEVATION = 86  # camera degrees above the table: nearly top-down
SURFACE = ("wood", 1)  # the table: a surface kind and which of its variants
# (kind, body colour) of each die, left to right.
DICE: tuple[tuple[str, str], ...] = (("d6", "white"), ("d8", "red"), ("d10", "purple"))
PATH = Path(__file__).resolve().parent.parent / "vision" / "assets" / "sample.jpg"


def render_sample(seed: int = SEED, renderer: Renderer | None = None) -> tuple[np.ndarray, ImageRead]:
    """The sample scene for `seed`: a BGR image and its truth (the values the dice show)."""
    rng = np.random.default_rng(seed)
    lay = sample_scene(rng, ["d6"], WIDTH, HEIGHT, 0, px_range=(DIE_PX - 2, DIE_PX + 2), elevation=ELEVATION)
    scene = lay.scene
    scene.surface = SURFACES.index(SURFACE[0]) * PER_KIND + SURFACE[1]
    scene.props = []
    scene.domes = []
    cam = lay.camera
    dice = []
    for i, (kind, colour) in enumerate(DICE):
        look = sample_look(rng, kind, fonts=N_BUNDLED_FONTS)
        dark_ink = colour in ("white", "yellow", "orange", "pink")
        look.update(colour=colour, material="solid", body=BODY_COLOURS[colour], body2=BODY_COLOURS[colour],
                    engraved=False, pips=True, ink=INK_COLOURS["black" if dark_ink else "white"])
        # One die per third of the frame, jittered: apart, never touching, never at the edge.
        u = (0.22 + 0.28 * i + rng.uniform(-0.03, 0.03)) * WIDTH
        v = rng.uniform(0.38, 0.62) * HEIGHT
        xy = cam.unproject_to_table(u, v)[:2]
        dice.append(place_die(kind, look, rng, np.array([xy[0], xy[1], 0.0]), DIE_RADIUS[kind]))
    scene.dice = dice
    eff = fx.Effects(noise=2.0, blur=0.4, noise_seed=seed)
    if renderer is None:
        with Renderer() as r:
            return render_scene(r, scene, eff, "sample.jpg", jpeg=False)
    return render_scene(renderer, scene, eff, "sample.jpg", jpeg=False)


def encode(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise RuntimeError("cannot encode the sample as JPEG")
    return buf.tobytes()


def write_sample(path: Path = PATH, seed: int = SEED) -> ImageRead:
    img, truth = render_sample(seed)
    Path(path).write_bytes(encode(img))
    return truth


if __name__ == "__main__":  # python -m dicecam.datasets.sample
    t = write_sample()
    print(f"{PATH}: " + ", ".join(f"{d.type.value}:{d.value}" for d in t.dice))
