"""What a photoreal image shows: camera, dice poses and looks, table, clutter, light; and its truth.

All of it is drawn from one numpy Generator, without bpy, so a seed names an image and tests
check the sampling on its own. Values come from `geometry.value_up` on the pose, exactly as the
moderngl renderer labels them; boxes from projecting the die's mesh with the same camera.

Units are millimetres, the table is the plane z = 0, z points up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from dicecam.mechanics.dice import DieReading, ImageRead, reading_order

from .. import geometry
from ..render import look_at, perspective
from ..scene import DIE_RADIUS, _lean_on_wall, _tray, table_point
from ..surfaces import N_SURFACES, PER_KIND, SURFACES
from .looks import Look, sample_look, style_for

MAX_OFF_VERTICAL = 65.0  # degrees: steeper views than this are not how people film a table
MAX_ROLL = 8.0  # degrees of in-plane roll: phones and webcams are held about level
PX_RANGE = (25.0, 250.0)  # die width on screen
HDRIS = ("interior", "studio", "city", "courtyard", "forest", "sunrise", "sunset", "night")
HDRI_P = (0.3, 0.22, 0.1, 0.1, 0.08, 0.08, 0.07, 0.05)


@dataclass
class Camera:
    eye: np.ndarray
    target: np.ndarray
    up: np.ndarray  # the image's up direction in the world
    fovy: float  # vertical field of view, radians
    width: int
    height: int
    off_vertical: float  # degrees between the view axis and straight down
    roll: float  # degrees of in-plane roll

    @property
    def view(self) -> np.ndarray:
        return look_at(self.eye, self.target, self.up)

    @property
    def proj(self) -> np.ndarray:
        dist = float(np.linalg.norm(self.target - self.eye))
        return perspective(self.fovy, self.width / self.height, max(1.0, dist * 0.05), dist * 20)

    def project(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel positions (x right, y down) of world points, and their depth in front of the lens."""
        h = np.c_[pts, np.ones(len(pts))] @ (self.proj @ self.view).T
        w = h[:, 3]
        ndc = h[:, :2] / np.where(np.abs(w) < 1e-9, 1e-9, w)[:, None]
        return np.c_[(ndc[:, 0] + 1) * self.width / 2, (1 - ndc[:, 1]) * self.height / 2], w

    def unproject_to_table(self, u: float, v: float) -> np.ndarray:
        return table_point(np.linalg.inv(self.proj @ self.view), self.width, self.height, u, v)


@dataclass
class Die:
    kind: str
    style: str
    look: Look
    R: np.ndarray  # object -> world rotation
    pos: np.ndarray  # centre, mm
    scale: float  # circumradius, mm
    value: int
    cocked: bool = False


@dataclass
class Prop:
    """Table clutter that is not a die (never labelled): a hard negative for the detector."""

    name: str  # cable | laptop | pen | coin | mini | card | token
    pos: np.ndarray  # on the table, mm
    yaw: float
    size: np.ndarray  # half sizes, mm
    colour: tuple[float, float, float]  # linear RGB
    path: np.ndarray | None = None  # cable: (N, 3) control points


@dataclass
class Scene:
    width: int
    height: int
    camera: Camera
    dice: list[Die]
    props: list[Prop] = field(default_factory=list)
    surface: int = 0  # index into the surfaces pool (datasets.surfaces)
    surface_mm: float = 200.0  # size of one texture tile on the table
    surface_yaw: float = 0.0
    surface_tint: tuple[float, float, float] = (1.0, 1.0, 1.0)
    walls: list[tuple[tuple[float, float, float], tuple[float, float, float]]] = field(default_factory=list)
    wall_colour: tuple[float, float, float] = (0.3, 0.2, 0.12)
    hdri: str = "interior"
    hdri_yaw: float = 0.0
    hdri_strength: float = 1.0
    lamp: tuple[float, float, float, float, float] | None = None  # x, y, z, size, power (W)
    lamp_warmth: float = 0.0  # -1 cool .. 1 warm
    exposure: float = 0.0
    fstop: float | None = None  # depth of field focused on the first die (close-ups), None: all sharp


def make_camera(rng: np.random.Generator, width: int, height: int, px_per_mm: float,
                off_vertical: float | None = None) -> Camera:
    """A camera looking down at the table from off_vertical degrees, image kept level within MAX_ROLL."""
    if off_vertical is None:
        off_vertical = rng.uniform(0, 25) if rng.random() < 0.3 else rng.uniform(20, MAX_OFF_VERTICAL)
    off_vertical = float(np.clip(off_vertical, 0, MAX_OFF_VERTICAL))
    fovy = np.radians(rng.uniform(38, 60))
    focal = height / 2 / np.tan(fovy / 2)
    dist = focal / px_per_mm
    az = rng.uniform(0, 2 * np.pi)
    target = np.array([rng.uniform(-40, 40), rng.uniform(-40, 40), 0.0])
    el = np.radians(90 - off_vertical)
    back = np.array([np.cos(az), np.sin(az), 0.0])  # from the target towards the camera, on the table
    eye = target + dist * (np.cos(el) * back + np.array([0, 0, np.sin(el)]))
    # Image "up" is away from the camera along the table ("up" in a level photo of a table).
    up = -back
    roll = float(np.clip(rng.normal(0, MAX_ROLL / 2.5), -MAX_ROLL, MAX_ROLL))
    fwd = (target - eye) / dist
    up = geometry.axis_angle(fwd, np.radians(roll)) @ up
    return Camera(eye, target, up, float(fovy), width, height, off_vertical, roll)


def support(points: np.ndarray, d: np.ndarray) -> float:
    """How far a shape reaches along unit direction d from its centre."""
    return float((points @ d).max())


def _placed(kind: str, style: str, R: np.ndarray, scale: float) -> np.ndarray:
    return (geometry.build(kind, style).vertices @ R.T) * scale


def _apart(a: Die, b_pts: np.ndarray, b_xy: np.ndarray, gap: float = 0.3) -> bool:
    """Separating axis along the line between centres: the two dice do not overlap."""
    d = np.r_[b_xy - a.pos[:2], 0.0]
    n = np.linalg.norm(d)
    if n < 1e-6:
        return False
    d /= n
    return support(_placed(a.kind, a.style, a.R, a.scale), d) + support(b_pts, -d) + gap <= n


def _n_weights() -> np.ndarray:
    w = np.array([14, 14, 12, 10, 9, 8, 6, 5, 4, 3, 3, 3], float)
    return w / w.sum()


def sample_scene(rng: np.random.Generator, kinds: Sequence[str], width: int, height: int,
                 fonts: tuple[str, ...] = (), n_dice: int | None = None,
                 off_vertical: float | None = None, closeup: bool | None = None, in_turn: bool = False) -> Scene:
    """closeup: one to three dice, each about a third of the frame high (None: one scene in five).
    in_turn: the dice are of `kinds` in turn (a given table of mixed dice) rather than drawn from them."""
    draw = rng.random() < 0.2
    closeup = draw if closeup is None else closeup
    if n_dice is not None:
        n = int(n_dice)
    else:
        n = int(rng.integers(1, 4)) if closeup else int(rng.choice(np.arange(1, 13), p=_n_weights()))
    if closeup:  # one die fills about a third of the frame
        px_die = float(min(height, width) * rng.uniform(0.28, 0.42))
    else:
        fit = np.sqrt(0.3 * width * height / max(n, 1))
        hi = max(PX_RANGE[0] + 1, min(PX_RANGE[1], fit, 0.5 * min(width, height)))
        px_die = float(np.exp(rng.uniform(np.log(PX_RANGE[0]), np.log(hi))))
    cam = make_camera(rng, width, height, px_die / 20.0, off_vertical)
    one_set = rng.random() < 0.4
    set_look = sample_look(rng, fonts)
    dice: list[Die] = []
    for i in range(n):
        kind = kinds[i % len(kinds)] if in_turn else str(rng.choice(list(kinds)))
        look = set_look if one_set else sample_look(rng, fonts)
        style = style_for(kind, look)
        mesh = geometry.build(kind, style)
        scale = DIE_RADIUS[kind] * rng.uniform(0.9, 1.15)
        face_down = int(rng.integers(len(mesh.faces)))
        R = geometry.resting_rotation(mesh, face_down, rng.uniform(0, 2 * np.pi))
        cocked = False
        for _ in range(40):
            R_try, lean = R, None
            touch = bool(dice) and rng.random() < 0.3
            if touch:
                other = dice[int(rng.integers(len(dice)))]
                ang = rng.uniform(0, 2 * np.pi)
                d = np.array([np.cos(ang), np.sin(ang), 0.0])
                if rng.random() < 0.2:  # cocked: leaning on its neighbour
                    R_try = geometry.axis_angle([d[1], -d[0], 0.0], rng.uniform(0.3, 0.6)) @ R
                    lean = other
                pts = _placed(kind, style, R_try, scale)
                reach = support(_placed(other.kind, other.style, other.R, other.scale), d) + support(pts, -d)
                xy = other.pos[:2] + d[:2] * (reach + (-0.8 if lean is not None else rng.uniform(0.2, 2.0)))
            else:
                edge = rng.random() < 0.12  # a die cut by the image edge
                lo = -0.3 * px_die if edge else 0.6 * px_die
                if closeup and not edge:
                    lo = min(width, height) * 0.3
                u = rng.uniform(lo, width - lo)
                v = rng.uniform(lo, height - lo)
                xy = cam.unproject_to_table(u, v)[:2]
                pts = _placed(kind, style, R_try, scale)
            uv, _ = cam.project(pts + np.r_[xy, scale])
            span = float((uv.max(0) - uv.min(0)).max())
            # Perspective shrinks far dice: keep every die inside the sizes people film.
            if not 0.8 * PX_RANGE[0] <= span <= (2 if closeup else 1.2) * PX_RANGE[1]:
                continue
            if all(_apart(o, pts, xy) for o in dice if o is not lean):
                break
        else:
            continue
        if lean is not None:
            cocked = True
        z = geometry.rest_height(mesh, R_try, scale)
        dice.append(Die(kind, style, look, R_try, np.array([xy[0], xy[1], z]), scale,
                        geometry.value_up(mesh, R_try), cocked))
    scene = Scene(width=width, height=height, camera=cam, dice=dice)
    _dress_table(rng, scene, px_die)
    return scene


def _dress_table(rng: np.random.Generator, scene: Scene, px_die: float) -> None:
    scene.surface = int(rng.integers(N_SURFACES))
    scene.surface_mm = float(rng.uniform(120, 450))
    scene.surface_yaw = float(rng.uniform(0, 2 * np.pi))
    scene.surface_tint = tuple(float(x) for x in np.clip(np.exp(rng.normal(0, 0.08, 3)), 0.5, 1.5))
    if scene.dice and rng.random() < 0.15:
        scene.surface = SURFACES.index("tray") * PER_KIND + int(rng.integers(PER_KIND))
        walls, colour = _tray(rng, scene.dice)
        # A low rim: tall walls would stand between an oblique camera and the dice behind them.
        rim = float(rng.uniform(3, 6))
        scene.walls = [((c[0], c[1], rim), (h[0], h[1], rim)) for c, h in walls]
        scene.wall_colour = tuple(float(c) for c in np.asarray(colour) ** 2.2)
        if rng.random() < 0.35:  # a die leaning on the tray's wall: cocked, labelled from its pose
            _lean_on_wall(rng, scene.dice, scene.walls)
    scene.hdri = str(rng.choice(HDRIS, p=HDRI_P))
    scene.hdri_yaw = float(rng.uniform(0, 2 * np.pi))
    scene.hdri_strength = float(rng.uniform(0.5, 1.3))
    if rng.random() < 0.75:  # a ceiling lamp or window: soft speculars and shadows
        t = scene.camera.target
        r = rng.uniform(150, 900)
        a = rng.uniform(0, 2 * np.pi)
        z = rng.uniform(300, 1200)
        scene.lamp = (float(t[0] + r * np.cos(a)), float(t[1] + r * np.sin(a)), float(z),
                      float(rng.uniform(150, 900)), float(rng.uniform(0.5, 2.0) * (z / 500) ** 2))
        scene.lamp_warmth = float(rng.uniform(-1, 1))
    scene.exposure = float(rng.normal(0, 0.35))
    if px_die > 0.25 * min(scene.width, scene.height) and rng.random() < 0.5:
        scene.fstop = float(rng.uniform(8, 22))  # a phone's close-up (full-frame equivalent): the table behind goes soft
    if rng.random() < 0.65:
        scene.props = sample_props(rng, scene, px_die)


PROPS = ("cable", "laptop", "pen", "coin", "mini", "card", "token")
PROP_P = (0.2, 0.1, 0.17, 0.15, 0.12, 0.14, 0.12)


def sample_props(rng: np.random.Generator, scene: Scene, px_die: float) -> list[Prop]:
    cam = scene.camera
    W, H = scene.width, scene.height
    out: list[Prop] = []
    for _ in range(int(rng.integers(1, 5))):
        name = str(rng.choice(PROPS, p=PROP_P))
        yaw = float(rng.uniform(0, 2 * np.pi))
        colour = tuple(float(x) for x in rng.uniform(0.01, 0.7, 3) ** 1.5)
        path = None
        if name == "laptop":
            # A laptop's front edge reaching into the frame from one side.
            side = int(rng.integers(4))
            uv = [(W / 2, -5), (W + 5, H / 2), (W / 2, H + 5), (-5, H / 2)][side]
            inner = [(W / 2, H * 0.2), (W * 0.8, H / 2), (W / 2, H * 0.8), (W * 0.2, H / 2)][side]
            p_edge = cam.unproject_to_table(*uv)
            p_in = cam.unproject_to_table(*inner)
            out_dir = p_edge - p_in
            out_dir[2] = 0
            out_dir /= np.linalg.norm(out_dir)
            size = np.array([rng.uniform(140, 180), rng.uniform(100, 130), rng.uniform(7, 10)])
            reach = rng.uniform(0.15, 0.6) * np.linalg.norm((p_edge - p_in)[:2])
            pos = p_edge + out_dir * (size[1] - reach)
            yaw = float(np.arctan2(out_dir[1], out_dir[0]) - np.pi / 2)
            colour = tuple(float(x) for x in np.full(3, rng.choice([0.02, 0.05, 0.3, 0.55])))
        else:
            u, v = rng.uniform(-0.1 * W, 1.1 * W), rng.uniform(-0.1 * H, 1.1 * H)
            pos = cam.unproject_to_table(u, v)
            size = {
                "cable": np.array([rng.uniform(1.5, 3.0)] * 3),
                "pen": np.array([rng.uniform(3.5, 5.0), rng.uniform(60, 75), rng.uniform(3.5, 5.0)]),
                "coin": np.array([rng.uniform(8, 14)] * 2 + [rng.uniform(0.8, 1.2)]),
                "mini": np.array([12.5, 12.5, rng.uniform(14, 22)]),
                "card": np.array([31.5, 44.0, 0.3]),
                "token": np.array([rng.uniform(8, 15)] * 2 + [rng.uniform(1.0, 2.5)]),
            }[name]
            if name == "coin":
                colour = tuple(float(x) for x in rng.choice([(0.8, 0.5, 0.2), (0.7, 0.7, 0.7), (0.6, 0.35, 0.2)]))
            if name == "card" and rng.random() < 0.6:
                colour = (0.8, 0.78, 0.72)
            if name == "cable":
                path = _cable_path(rng, cam)
        prop = Prop(name, np.asarray(pos, float), yaw, size, colour, path)
        if not _clear_of_dice(prop, scene.dice):
            continue
        if name in ("mini", "laptop") and _hides_a_die(prop, scene):
            continue
        out.append(prop)
    return out


def _cable_path(rng: np.random.Generator, cam: Camera) -> np.ndarray:
    """A cable across the frame: a smooth wander from one edge towards another."""
    W, H = cam.width, cam.height
    a = np.array([rng.uniform(-0.2, 1.2) * W, rng.choice([-0.15, 1.15]) * H])
    b = np.array([rng.uniform(-0.2, 1.2) * W, H - a[1]])
    if rng.random() < 0.5:
        a, b = a[::-1] * np.array([W / H, H / W]), b[::-1] * np.array([W / H, H / W])
    ts = np.linspace(0, 1, 6)
    bend = rng.normal(0, 0.15, (6, 2)) * np.array([W, H])
    bend[0] = bend[-1] = 0
    pts = [cam.unproject_to_table(*(a + (b - a) * t + e)) for t, e in zip(ts, bend)]
    return np.array(pts)


def prop_footprint(p: Prop) -> np.ndarray:
    """Points on the table the prop covers (for keeping it off the dice)."""
    if p.path is not None:
        seg = np.linspace(0, 1, 12)[:, None]
        return np.concatenate([a + (b - a) * seg for a, b in zip(p.path[:-1], p.path[1:])])[:, :2]
    c, s = np.cos(p.yaw), np.sin(p.yaw)
    gx, gy = np.meshgrid(np.linspace(-1, 1, 7), np.linspace(-1, 1, 7))
    local = np.c_[gx.ravel() * p.size[0], gy.ravel() * p.size[1]]
    return p.pos[:2] + local @ np.array([[c, s], [-s, c]])


def _clear_of_dice(p: Prop, dice: list[Die]) -> bool:
    pts = prop_footprint(p)
    pad = max(p.size[0], p.size[1]) / 3 if p.path is None else p.size[0]
    return all(np.linalg.norm(pts - d.pos[:2], axis=1).min() > d.scale + pad + 2 for d in dice)


def _hides_a_die(p: Prop, scene: Scene) -> bool:
    """A tall prop whose picture overlaps a die's: it may stand between the lens and the die."""
    c, s_ = np.cos(p.yaw), np.sin(p.yaw)
    corners = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (0, 2)], float) * p.size
    world = np.c_[corners[:, :2] @ np.array([[c, s_], [-s_, c]]), corners[:, 2]] + np.r_[p.pos[:2], 0.0]
    uv, w = scene.camera.project(world)
    if np.any(w <= 0):
        return True
    lo, hi = uv.min(0), uv.max(0)
    for d in scene.dice:
        box = die_box(scene, d, geometry.build(d.kind, d.style).vertices)
        if box is not None and lo[0] < box[2] and box[0] < hi[0] and lo[1] < box[3] and box[1] < hi[1]:
            return True
    return False


# ---------------------------------------------------------------- truth


def die_box(scene: Scene, d: Die, hull: np.ndarray) -> tuple[float, float, float, float] | None:
    """The die's pixel extent from its projected hull points (object space, circumradius 1),
    clipped to the frame; None when less than a sliver of it is in view."""
    pts = (hull @ d.R.T) * d.scale + d.pos
    uv, w = scene.camera.project(pts)
    if np.any(w <= 1e-6):
        return None
    x1, y1 = uv.min(0)
    x2, y2 = uv.max(0)
    cx1, cy1 = max(0.0, x1), max(0.0, y1)
    cx2, cy2 = min(float(scene.width), x2), min(float(scene.height), y2)
    if cx2 - cx1 < 3 or cy2 - cy1 < 3 or (cx2 - cx1) * (cy2 - cy1) < 16:
        return None
    return (float(cx1), float(cy1), float(cx2), float(cy2))


def truth(scene: Scene, name: str, hull: Callable[[str, str], np.ndarray] | None = None) -> ImageRead:
    """The read that is true for the scene. hull(kind, style): the object-space points whose
    projection bounds the die as rendered (the bevelled mesh); default the sharp polyhedron."""
    hull = hull or (lambda k, s: geometry.build(k, s).vertices)
    out = []
    for d in scene.dice:
        box = die_box(scene, d, hull(d.kind, d.style))
        if box is not None:
            out.append(DieReading(type=d.kind, value=d.value, box=box, colour=d.look.colour, cocked=d.cocked))
    return ImageRead(image=name, width=scene.width, height=scene.height, dice=reading_order(out))
