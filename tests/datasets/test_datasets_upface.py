"""Up-face finder labels: the value glyph is the right one, and it lands where the camera sees it."""

import numpy as np
import pytest

from dicecam.datasets import geometry as g
from dicecam.datasets import upface as uf
from dicecam.datasets.render import DieSpec, look_at, perspective
from dicecam.datasets.scene import Camera

W, H = 640, 480


def overhead_camera(height: float = 300.0) -> Camera:
    """Straight down onto the origin; world +x is image right, world +y is image up."""
    eye = np.array([0.0, 0.0, height])
    view = look_at(eye, np.zeros(3), np.array([0.0, 1.0, 0.0]))
    return Camera(view, perspective(np.radians(50), W / H, 1.0, 2000.0), eye, W, H)


def resting_die(kind: str, style: str | None, face_down: int, yaw: float, xy=(0.0, 0.0)) -> DieSpec:
    mesh = g.build(kind, style)
    R = g.resting_rotation(mesh, face_down, yaw)
    pos = np.array([xy[0], xy[1], g.rest_height(mesh, R, 12.0)])
    return DieSpec(kind=kind, style=mesh.style, font=0, engraved=False, R=R, pos=pos, scale=12.0, colour="white",
                   body=(1, 1, 1), body2=(1, 1, 1), ink=(0, 0, 0), material="solid", value=g.value_up(mesh, R))


def die_box(cam: Camera, d: DieSpec) -> np.ndarray:
    pts = cam.project((g.build(d.kind, d.style).vertices * d.scale) @ d.R.T + d.pos)
    return np.r_[pts.min(0), pts.max(0)]


@pytest.mark.parametrize("kind", ["d8", "d12", "d20"])
@pytest.mark.parametrize("yaw", [0.0, 0.7, 2.0, -2.6])
def test_top_down_label_is_the_crop_centre_and_the_glyph_up(kind, yaw):
    cam = overhead_camera()
    d = resting_die(kind, None, face_down=3, yaw=yaw)
    point, top, facing, known = uf.image_target(cam, d)
    t = uf.crop_target(point, top, facing, die_box(cam, d))
    # These dice are centrally symmetric: seen from straight above, the up face is the middle of the outline.
    assert abs(t[0]) < 0.02 and abs(t[1]) < 0.02
    assert facing > 0.99 and known
    mesh = g.build(kind)
    up_face = mesh.faces[int(np.argmax((mesh.normals @ d.R.T)[:, 2]))]
    assert up_face.value == d.value
    up = d.R @ up_face.glyphs[0].up  # horizontal; world +y is image up, so the clockwise turn is atan2(x, y)
    want = np.arctan2(up[0], up[1])
    got = np.arctan2(t[3], t[2])
    assert abs((got - want + np.pi) % (2 * np.pi) - np.pi) < np.radians(1)


def test_turning_the_die_turns_the_label_clockwise_on_screen():
    cam = overhead_camera()
    a = uf.crop_target(*uf.image_target(cam, resting_die("d20", None, 5, 0.0))[:3], (300, 220, 340, 260))
    b = uf.crop_target(*uf.image_target(cam, resting_die("d20", None, 5, -0.5))[:3], (300, 220, 340, 260))
    # A negative yaw turns the die clockwise seen from above, which is clockwise on this screen.
    turn = np.arctan2(b[3], b[2]) - np.arctan2(a[3], a[2])
    assert abs((turn - 0.5 + np.pi) % (2 * np.pi) - np.pi) < 1e-6


@pytest.mark.parametrize("style", ["vertex", "base"])
def test_d4_label_is_the_value_on_the_face_most_towards_the_camera(style):
    mesh = g.build("d4", style)
    for face_down in range(4):
        d = resting_die("d4", style, face_down, 0.4, xy=(40.0, 0.0))  # off to the side: one face looks at the camera
        cam = overhead_camera(120.0)
        glyph = uf.value_glyph(d, cam.eye)
        standing = [f for i, f in enumerate(mesh.faces) if i != face_down]
        best = max(standing, key=lambda f: (d.R @ f.normal) @ (cam.eye - d.pos))
        texts = {tuple(np.round(d.R @ gl.center * d.scale + d.pos, 6)): gl.text for gl in best.glyphs}
        assert texts[tuple(np.round(glyph.center, 6))] == str(d.value)
        if style == "vertex":  # its top points at the up vertex
            apex = (mesh.vertices * d.scale) @ d.R.T + d.pos
            apex = apex[int(np.argmax(apex[:, 2]))]
            to_apex = (apex - glyph.center) / np.linalg.norm(apex - glyph.center)
            assert glyph.up @ to_apex > 0.99


def test_pip_faces_have_no_angle():
    cam = overhead_camera()
    *_, known = uf.image_target(cam, resting_die("d6", "pips", 0, 0.3))
    assert not known
    *_, known = uf.image_target(cam, resting_die("d6", "num", 0, 0.3))
    assert known


def test_jitter_stays_within_its_bound():
    rng = np.random.default_rng(0)
    box = np.array([100, 100, 200, 150], float)
    for _ in range(200):
        b = uf.jitter_box(box, rng)
        assert abs((b[0] + b[2]) / 2 - 150) <= 8.0001 and abs((b[1] + b[3]) / 2 - 125) <= 4.0001
        assert 92 - 1e-3 <= b[2] - b[0] <= 108 + 1e-3


def test_crop_target_is_in_crop_sides():
    # A 100-px box with margin 0.15 is cut as a 130-px square around (150, 150).
    t = uf.crop_target(np.array([176.0, 137.0]), np.array([1.0, 0.0]), 0.5, (100, 100, 200, 200))
    assert np.allclose(t, [0.2, -0.1, 0.0, 1.0, 0.5])  # top pointing right: a quarter turn clockwise
