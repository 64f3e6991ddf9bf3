"""Random tables of dice: sample a scene from a seed, render it, read its truth off the geometry.

`render_image(seed, renderer=r)` is the public entry point: a BGR image and the `ImageRead` that
is true for it, drawn by a `render.Renderer` the caller opens once for a batch. Every die's value comes from `geometry.value_up` on the pose it was rendered in;
its box is tight around its visible pixels (from the renderer's id buffer).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading, ImageRead, reading_order
from dicecam.mechanics.errors import DiceError, LimitError

from . import effects as fx
from . import geometry
from .render import BOWL_INNER, BODY_COLOURS, FONTS, INK_COLOURS, DieSpec, Light, Renderer, SceneSpec, look_at, perspective
from .surfaces import N_SURFACES, PER_KIND, SURFACES

# Circumradius in mm of a typical die of each kind (a 16 mm d6 has 13.9 mm).
DIE_RADIUS = {"d4": 12.0, "d6": 13.0, "d8": 11.0, "d10": 11.0, "d00": 11.0, "d12": 12.0, "d20": 12.5}
MAX_PIXELS = 4096 * 4096
COLOUR_NAMES = tuple(BODY_COLOURS)


def parse_kinds(kinds: Sequence[str] | str | None) -> tuple[str, ...]:
    if kinds is None:
        return geometry.KINDS
    if isinstance(kinds, str):
        kinds = [k for k in kinds.split(",") if k.strip()]
    out = []
    for k in kinds:
        k = str(getattr(k, "value", k)).strip().lower()
        if k not in geometry.KINDS:
            raise DiceError(f"unknown die kind {k!r} (known: {', '.join(geometry.KINDS)})")
        out.append(k)
    if not out:
        raise DiceError("no die kinds given")
    return tuple(dict.fromkeys(out))


def check_size(width: int, height: int) -> None:
    if width < 32 or height < 32:
        raise LimitError(f"image size {width}x{height} is too small (at least 32x32)")
    if width * height > MAX_PIXELS:
        raise LimitError(f"image size {width}x{height} is over the cap of {MAX_PIXELS} pixels")



def table_point(inv_vp: np.ndarray, width: int, height: int, u: float, v: float) -> np.ndarray:
    """Where the ray through pixel (u, v) meets the table (z = 0), given the inverse view-projection."""
    ndc = np.array([2 * u / width - 1, 1 - 2 * v / height])
    a = inv_vp @ np.array([ndc[0], ndc[1], -1, 1.0])
    b = inv_vp @ np.array([ndc[0], ndc[1], 1, 1.0])
    a, b = a[:3] / a[3], b[:3] / b[3]
    t = a[2] / (a[2] - b[2])
    return a + t * (b - a)

@dataclass
class Camera:
    view: np.ndarray
    proj: np.ndarray
    eye: np.ndarray
    width: int
    height: int

    @property
    def vp(self) -> np.ndarray:
        return self.proj @ self.view

    def unproject_to_table(self, u: float, v: float) -> np.ndarray:
        inv = self.__dict__.get("_inv_vp")
        if inv is None:  # the camera never changes after it is made
            inv = self.__dict__["_inv_vp"] = np.linalg.inv(self.vp)
        return table_point(inv, self.width, self.height, u, v)

    def project(self, pts: np.ndarray) -> np.ndarray:
        h = np.c_[pts, np.ones(len(pts))] @ self.vp.T
        ndc = h[:, :2] / h[:, 3:4]
        return np.c_[(ndc[:, 0] + 1) * self.width / 2, (1 - ndc[:, 1]) * self.height / 2]


def make_camera(rng: np.random.Generator, width: int, height: int, px_per_mm: float, elevation: float | None = None) -> Camera:
    # Webcams look down at 0-65 degrees off vertical; phones are held level (the roll below is small).
    el = np.radians(elevation if elevation is not None else (rng.uniform(75, 90) if rng.random() < 0.3 else rng.uniform(25, 78)))
    az = rng.uniform(0, 2 * np.pi)
    fovy = np.radians(rng.uniform(40, 62))
    focal = height / 2 / np.tan(fovy / 2)
    dist = focal / px_per_mm
    target = np.array([rng.uniform(-50, 50), rng.uniform(-50, 50), 0.0])
    eye = target + dist * np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    up = np.array([-np.cos(az), -np.sin(az), 0.0])
    roll = rng.normal(0, 0.06)
    f = (target - eye) / dist
    up = geometry.axis_angle(f, roll) @ up
    view = look_at(eye, target, up)
    proj = perspective(fovy, width / height, max(1.0, dist * 0.05), dist * 6 + 500)
    return Camera(view, proj, eye, width, height)


def _colour_jitter(rgb, rng, amount=0.08):
    c = np.array(rgb) * np.exp(rng.normal(0, amount, 3))
    return tuple(float(x) for x in np.clip(c, 0, 1))


def sample_look(rng: np.random.Generator, kind: str, fonts: int | None = None) -> dict:
    """Body colour, material, ink, font and print style of one die (or one matching set);
    `fonts` limits the font to the first ones of FONTS (the bundled ones, for the same look everywhere)."""
    colour = str(rng.choice(COLOUR_NAMES))
    if colour == "clear":
        material = "translucent"
    else:
        material = str(rng.choice(["solid", "marbled", "speckled", "metallic", "translucent"], p=[0.5, 0.14, 0.1, 0.1, 0.16]))
    body = _colour_jitter(BODY_COLOURS[colour], rng)
    lum = 0.3 * body[0] + 0.59 * body[1] + 0.11 * body[2]
    if lum > 0.45:
        ink_name = str(rng.choice(["black", "black", "black", "silver"] if colour != "white" else ["black", "black", "gold"]))
    else:
        ink_name = str(rng.choice(["white", "white", "gold", "silver"]))
    if material == "marbled":
        other = rng.choice([(0.95, 0.95, 0.95), (0.02, 0.02, 0.02), BODY_COLOURS[str(rng.choice(COLOUR_NAMES))]])
        body2 = tuple(float(x) for x in np.array(body) * 0.45 + np.array(other) * 0.55)
    elif material == "speckled":
        body2 = (0.9, 0.9, 0.9) if lum < 0.4 else (0.05, 0.05, 0.05)
    else:
        body2 = body
    alpha = float(rng.uniform(0.35, 0.55) if colour == "clear" else rng.uniform(0.55, 0.85))
    return dict(
        colour=colour,
        material=material,
        body=body,
        body2=body2,
        ink=_colour_jitter(INK_COLOURS[ink_name], rng, 0.04),
        font=int(rng.integers(0, max(1, fonts or len(FONTS)))),
        engraved=bool(rng.random() < 0.35),
        alpha=alpha,
        pips=bool(rng.random() < 0.65),
        d4_vertex=bool(rng.random() < 0.7),
    )


def style_for(kind: str, look: dict) -> str:
    if kind == "d6":
        return "pips" if look["pips"] else "num"
    if kind == "d4":
        return "vertex" if look["d4_vertex"] else "base"
    return "num"


def place_die(kind: str, look: dict, rng: np.random.Generator, xy: np.ndarray, scale: float,
              lean_towards: np.ndarray | None = None) -> DieSpec:
    style = style_for(kind, look)
    mesh = geometry.build(kind, style)
    face_down = int(rng.integers(len(mesh.faces)))
    R = geometry.resting_rotation(mesh, face_down, rng.uniform(0, 2 * np.pi))
    cocked = False
    if lean_towards is not None:
        d = lean_towards[:2] - xy[:2]
        d = d / max(np.linalg.norm(d), 1e-6)
        R = geometry.axis_angle([-d[1], d[0], 0.0], rng.uniform(0.3, 0.6)) @ R
        cocked = True
    z = geometry.rest_height(mesh, R, scale)
    pos = np.array([xy[0], xy[1], z])
    return DieSpec(
        kind=kind, style=style, font=look["font"], engraved=look["engraved"], R=R, pos=pos, scale=scale,
        colour=look["colour"], body=look["body"], body2=look["body2"], ink=look["ink"], material=look["material"],
        alpha=look["alpha"], value=geometry.value_up(mesh, R), cocked=cocked,
    )


def sample_lighting(rng: np.random.Generator) -> tuple[list[Light], tuple, float]:
    n = int(rng.choice([1, 1, 2, 2, 3]))
    warm = rng.uniform(-1, 1)  # -1 cool daylight .. +1 warm tungsten
    base = np.array([1.0 + 0.12 * warm, 1.0, 1.0 - 0.25 * warm])
    lights = []
    total = rng.uniform(0.7, 1.15)
    for i in range(n):
        el = np.radians(rng.uniform(35, 85))
        az = rng.uniform(0, 2 * np.pi)
        d = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
        share = total * (0.75 if i == 0 else 0.35 / n)
        col = base * share * np.exp(rng.normal(0, 0.05, 3))
        lights.append(Light(d, tuple(float(x) for x in col), float(rng.choice([1.5, 4.0, 10.0, 18.0]))))
    amb = base * rng.uniform(0.22, 0.45)
    return lights, tuple(float(x) for x in amb), float(rng.uniform(0.35, 0.75))


@dataclass
class Layout:
    camera: Camera
    scene: SceneSpec


def sample_scene(rng: np.random.Generator, kinds: Sequence[str], width: int, height: int,
                 n_dice: int | None = None, px_range: tuple[float, float] = (20, 200),
                 elevation: float | None = None) -> Layout:
    n = int(n_dice) if n_dice is not None else int(rng.choice(np.arange(1, 13), p=_n_weights()))
    # Die size on screen: as large as a crowded table allows.
    fit = np.sqrt(0.35 * width * height / max(n, 1)) / 1.3
    hi = max(px_range[0] + 1, min(px_range[1], fit, 0.6 * min(width, height)))
    lo = min(px_range[0], hi - 1)
    px_die = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    cam = make_camera(rng, width, height, px_die / 22.0, elevation)
    one_set = rng.random() < 0.5
    set_look = sample_look(rng, "")
    dice: list[DieSpec] = []
    margin = px_die * 0.8
    for i in range(n):
        kind = str(rng.choice(list(kinds)))
        look = set_look if one_set else sample_look(rng, kind)
        scale = DIE_RADIUS[kind] * rng.uniform(0.88, 1.15)
        lean = None
        for _ in range(40):
            cocked = bool(dice) and rng.random() < 0.07
            if cocked:
                other = dice[int(rng.integers(len(dice)))]
                ang = rng.uniform(0, 2 * np.pi)
                gap = (other.scale + scale) * 0.78
                xy = other.pos[:2] + gap * np.array([np.cos(ang), np.sin(ang)])
                lean = other.pos
            else:
                u, v = rng.uniform(margin, width - margin), rng.uniform(margin, height - margin)
                xy = cam.unproject_to_table(u, v)[:2]
                lean = None
            ok = all(np.linalg.norm(d.pos[:2] - xy) >= (d.scale + scale) * (0.74 if cocked and d.pos is lean else 0.84) for d in dice)
            if ok and cocked:
                uv = cam.project(np.array([[xy[0], xy[1], 0.0]]))[0]
                ok = margin * 0.5 < uv[0] < width - margin * 0.5 and margin * 0.5 < uv[1] < height - margin * 0.5
            if ok:
                break
        else:
            continue
        dice.append(place_die(kind, look, rng, np.array([xy[0], xy[1], 0.0]), scale, lean))
    lights, amb, shadow_k = sample_lighting(rng)
    n_surf = N_SURFACES
    surface = int(rng.integers(n_surf))
    walls, wall_colour = [], (0.3, 0.2, 0.12)
    if dice and rng.random() < 0.2:
        # A dice tray: walls around the dice; a die beside a wall may lean on it (cocked).
        surface = SURFACES.index("tray") * PER_KIND + int(rng.integers(PER_KIND))
        walls, wall_colour = _tray(rng, dice)
        if rng.random() < 0.35:
            _lean_on_wall(rng, dice, walls)
    per = rng.uniform(90, 420)
    th = rng.uniform(0, 2 * np.pi)
    c, s = np.cos(th) / per, np.sin(th) / per
    uv = np.array([[c, -s, rng.random()], [s, c, rng.random()]])
    props = _props(rng, cam, dice, width, height) if rng.random() < 0.35 else []
    tgt = cam.unproject_to_table(width / 2, height / 2)
    spot = (tgt[0] + rng.normal(0, 80), tgt[1] + rng.normal(0, 80), rng.uniform(150, 600))
    # Round clutter comes from a generator of its own, seeded by what this table already drew, so that every
    # scene keeps the draws it had before there was any (the bundled sample and demo, the benches' tables).
    own = np.random.default_rng(np.frombuffer(np.asarray(spot, np.float64).tobytes(), np.uint32))
    if dice and own.random() < 0.35:
        props = props + _round_props(own, cam, dice, width, height)
    # Domes draw after everything else this table drew, from the same generator: older scenes keep every draw.
    domes = _dome(own, dice, walls, props) if dice and own.random() < DOME_CHANCE else []
    if dice and own.random() < HOLDER_CHANCE:
        props = props + _holder(own, dice, walls, props, domes)
    if dice and own.random() < HAND_CHANCE:
        props = props + _hand(own, cam, dice, props, domes, width, height)
    scene = SceneSpec(
        width=width, height=height, view=cam.view, proj=cam.proj, cam_pos=cam.eye,
        surface=surface, surface_uv=uv, walls=walls, wall_colour=wall_colour, props=props, domes=domes,
        surface_tint=_colour_jitter((1, 1, 1), rng, 0.06), lights=lights, ambient=amb, spot=spot,
        dice=dice, shadow_strength=shadow_k,
    )
    return Layout(cam, scene)


PROPS = {  # half sizes in mm of table clutter a detector must learn to ignore
    "card": (31.5, 44.0, 0.4),
    "eraser": (10.0, 20.0, 5.0),
    "token": (9.0, 9.0, 1.5),
    "block": (7.0, 7.0, 7.0),  # a plain cube the size of a die, with no numbers
    "pencil": (3.5, 80.0, 3.5),
}


def _props(rng: np.random.Generator, cam: Camera, dice: list[DieSpec], width: int, height: int):
    out = []
    for _ in range(int(rng.integers(1, 4))):
        name = str(rng.choice(list(PROPS)))
        hs = np.array(PROPS[name]) * rng.uniform(0.8, 1.2)
        u, v = rng.uniform(0, width), rng.uniform(0, height)
        xy = cam.unproject_to_table(u, v)[:2]
        reach = float(np.hypot(hs[0], hs[1]))
        if any(np.linalg.norm(d.pos[:2] - xy) < reach + d.scale for d in dice):
            continue
        yaw = rng.uniform(0, 2 * np.pi)
        M = np.eye(4)
        M[:3, :3] = geometry.axis_angle([0, 0, 1], yaw) @ np.diag(hs)
        M[:3, 3] = (xy[0], xy[1], hs[2])
        colour = (0.92, 0.9, 0.85) if name == "card" and rng.random() < 0.5 else tuple(float(x) for x in rng.uniform(0.05, 0.9, 3))
        out.append((M, colour, "box"))
    return out


ROUND_PROPS = {  # half sizes in mm (radius, radius, half height) of round clutter, drawn as cylinders
    # What a detector that saw boxes alone took for dice on real tables (a light box's knobs, model card).
    "coin": (11.0, 11.0, 1.0),
    "counter": (9.0, 9.0, 2.5),
    "knob": (7.0, 7.0, 4.0),
    "cup": (36.0, 36.0, 45.0),
}
METALS = ((0.78, 0.62, 0.3), (0.72, 0.72, 0.7), (0.62, 0.38, 0.22))  # a coin's gold, silver, copper


def _round_props(rng: np.random.Generator, cam: Camera, dice: list[DieSpec], width: int, height: int):
    out = []
    for _ in range(int(rng.integers(1, 4))):
        name = str(rng.choice(list(ROUND_PROPS)))
        r, _, h = np.array(ROUND_PROPS[name]) * rng.uniform(0.8, 1.2, 3)
        xy = cam.unproject_to_table(rng.uniform(0, width), rng.uniform(0, height))[:2]
        if any(np.linalg.norm(d.pos[:2] - xy) < r + d.scale for d in dice):
            continue
        M = np.diag([r, r, h, 1.0])
        M[:3, 3] = (xy[0], xy[1], h)
        tone = rng.uniform(0.05, 0.9, 3)
        if name == "coin":
            colour = _colour_jitter(METALS[int(tone[0] * len(METALS) / 0.9) % len(METALS)], rng)
        elif name == "knob":
            colour = (float(tone[0]),) * 3
        else:
            colour = tuple(float(x) for x in tone)
        out.append((M, colour, "cylinder"))
    return out


def _reach(M: np.ndarray) -> float:
    """How far a prop (its 4x4 model of a unit shape) reaches from its centre across the table."""
    return float(np.linalg.norm(M[:2, :2], axis=0).max())


def _clear_of(props, at: np.ndarray, reach: float) -> bool:
    """Whether nothing in `props` stands within `reach` of the table spot `at` (each by its own reach too)."""
    return all(np.linalg.norm(M[:2, 3] - at) >= reach + _reach(M) for M, _, _ in props)


# A glass dome over a die (a dice tower's dome, a dice jail): the real photo the detector failed on was of a die
# under one, boxed as the dome. Tried on DOME_CHANCE of the tables, kept where it fits: about one table in ten.
DOME_CHANCE = 0.2
DOME_TINTS = ((0.92, 0.94, 0.96), (0.75, 0.78, 0.8), (0.7, 0.85, 0.95), (0.95, 0.85, 0.7))  # clear, smoke, blue, amber


def _dome(rng: np.random.Generator, dice: list[DieSpec], walls, props) -> list:
    """A dome over one die, wholly around it and cutting no other die, wall or prop; none where it would."""
    d = dice[int(rng.integers(len(dice)))]
    r = d.scale * rng.uniform(1.8, 3.2)
    off = rng.normal(0, 0.3, 2) * (r - 1.2 * d.scale)
    centre = d.pos[:2] + np.clip(off, -(r - 1.2 * d.scale), r - 1.2 * d.scale)
    height = r * rng.uniform(0.8, 1.4)  # a hemisphere, or a taller bell
    for other in dice:
        gap = np.linalg.norm(other.pos[:2] - centre)
        if abs(gap - r) < other.scale * 1.1 or (other is d and gap + d.scale > r):
            return []
    for c, hs in walls:
        if max(abs(centre[0] - c[0]) - hs[0], abs(centre[1] - c[1]) - hs[1]) < r:
            return []
    if not _clear_of(props, centre, r):
        return []
    M = np.diag([r, r, height, 1.0])
    M[:3, 3] = (centre[0], centre[1], 0.0)
    tint = _colour_jitter(DOME_TINTS[int(rng.integers(len(DOME_TINTS)))], rng, 0.03)
    return [(M, tint, float(rng.uniform(0.04, 0.16)))]


# What else holds dice on a table: a dice tower standing at a tray's end, or a bowl the dice lie in. Tried on
# HOLDER_CHANCE of the tables (a tower where there is a tray, a bowl where there is none), kept where it fits.
HOLDER_CHANCE = 0.25
HOLDER_COLOURS = ((0.35, 0.2, 0.1), (0.08, 0.08, 0.08), (0.55, 0.4, 0.25), (0.85, 0.82, 0.75), (0.2, 0.25, 0.45))


def _holder(rng: np.random.Generator, dice: list[DieSpec], walls, props, domes) -> list:
    """A tower beside the tray, or a bowl around the dice; none where it would stand on anything else."""
    colour = _colour_jitter(HOLDER_COLOURS[int(rng.integers(len(HOLDER_COLOURS)))], rng)
    if walls:
        # A tower: a tall box against the outside of one of the tray's walls, as wide as a tower is.
        (cx, cy, _), (hx, hy, _) = walls[int(rng.integers(len(walls)))]
        half = rng.uniform(25, 45, 2)
        tall = rng.uniform(60, 140)
        outward = np.array([0.0, np.sign(cy - np.mean([d.pos[1] for d in dice]))]) if hx > hy else \
            np.array([np.sign(cx - np.mean([d.pos[0] for d in dice])), 0.0])
        centre = np.array([cx, cy]) + outward * (np.array([hx, hy]) + half)
        M = np.diag([half[0], half[1], tall, 1.0])
        M[:3, 3] = (centre[0], centre[1], tall)
        holder, reach = (M, colour, "box"), float(np.hypot(*half))
    elif domes:
        return []
    else:
        # A bowl around every die, its wall clear of them; none where the dice lie too far apart for one.
        xy = np.array([d.pos[:2] for d in dice])
        centre = xy.mean(0) + rng.normal(0, 5, 2)
        r = max(np.linalg.norm(p - centre) + d.scale for p, d in zip(xy, dice)) / BOWL_INNER + rng.uniform(5, 40)
        if r > 160:
            return []
        M = np.diag([r, r, rng.uniform(12, 40), 1.0])
        M[:3, 3] = (centre[0], centre[1], 0.0)
        holder, reach = (M, colour, "bowl"), r
    return [holder] if _clear_of(props, centre, reach) else []  # nothing else on the table stands where it does


# A player's hand resting on the table beside the dice: palm, fingers, thumb and wrist as ellipsoids in mm (centre
# x, y, z; half sizes; turn in degrees), the fingers pointing along +x. Tried on HAND_CHANCE of the tables.
HAND_CHANCE = 0.12
HAND = (((0, 0, 14), (45, 40, 14), 0), ((-95, 0, 22), (70, 34, 22), 0), ((18, 46, 10), (30, 11, 10), 40),
        *(((85, y, 9), (40, 9.5, 9), a) for y, a in ((-28, -8), (-9, -2), (10, 2), (28, 7))))
SKIN = ((0.93, 0.76, 0.65), (0.8, 0.6, 0.45), (0.55, 0.37, 0.25), (0.35, 0.23, 0.16))


def _hand(rng: np.random.Generator, cam: Camera, dice: list[DieSpec], props, domes, width: int, height: int) -> list:
    """A hand flat on the table, clear of every die, dome and prop; none where it would not fit."""
    size = rng.uniform(0.85, 1.15)
    xy = cam.unproject_to_table(rng.uniform(0, width), rng.uniform(0, height))[:2]
    turn = geometry.axis_angle([0, 0, 1], rng.uniform(0, 2 * np.pi))
    skin = _colour_jitter(SKIN[int(rng.integers(len(SKIN)))], rng, 0.05)
    others = [(d.pos[:2], d.scale) for d in dice] + [(M[:2, 3], _reach(M)) for M, _, _ in list(domes) + list(props)]
    out = []
    for centre, half, angle in HAND:
        M = np.eye(4)
        M[:3, :3] = turn @ geometry.axis_angle([0, 0, 1], np.radians(angle)) @ np.diag(half) * size
        M[:3, 3] = (*(turn[:2, :2] @ np.array(centre[:2]) * size + xy), centre[2] * size)
        if any(np.linalg.norm(at - M[:2, 3]) < extent + max(half) * size for at, extent in others):
            return []  # every part clear of every die and everything else on the table
        out.append((M, skin, "ball"))
    return out


def _tray(rng: np.random.Generator, dice: list[DieSpec]):
    xy = np.array([d.pos[:2] for d in dice])
    r = max(d.scale for d in dice)
    lo, hi = xy.min(0) - r * rng.uniform(1.1, 2.5), xy.max(0) + r * rng.uniform(1.1, 2.5)
    t, h = rng.uniform(5, 10), rng.uniform(12, 30)
    cx, cy = (lo + hi) / 2
    wx, wy = (hi - lo) / 2
    walls = [
        ((cx, lo[1] - t, h / 2), (wx + 2 * t, t, h / 2)),
        ((cx, hi[1] + t, h / 2), (wx + 2 * t, t, h / 2)),
        ((lo[0] - t, cy, h / 2), (t, wy, h / 2)),
        ((hi[0] + t, cy, h / 2), (t, wy, h / 2)),
    ]
    colour = _colour_jitter(rng.choice([(0.35, 0.2, 0.1), (0.08, 0.08, 0.08), (0.55, 0.4, 0.25), (0.3, 0.05, 0.05)]), rng)
    return walls, colour


def _lean_on_wall(rng: np.random.Generator, dice: list[DieSpec], walls) -> None:
    """Move the die nearest a wall against it and tilt it onto the wall."""
    best = None
    for i, d in enumerate(dice):
        for (c, hs) in walls:
            axis = 0 if hs[0] < hs[1] else 1
            inner = c[axis] - np.sign(c[axis] - d.pos[axis]) * hs[axis]
            gap = abs(inner - d.pos[axis])
            if best is None or gap < best[0]:
                best = (gap, i, axis, inner)
    _, i, axis, inner = best
    d = dice[i]
    mesh = geometry.build(d.kind, d.style)
    toward = np.zeros(3)
    toward[axis] = np.sign(inner - d.pos[axis])
    R = geometry.axis_angle([-toward[1], toward[0], 0.0], rng.uniform(0.3, 0.55)) @ d.R
    pts = (mesh.vertices @ R.T) * d.scale
    pos = d.pos.copy()
    pos[axis] = inner - (pts[:, axis].max() if toward[axis] > 0 else pts[:, axis].min())  # touching the wall
    pos[2] = -pts[:, 2].min()
    d.R, d.pos, d.value, d.cocked = R, pos, geometry.value_up(mesh, R), True


def _n_weights() -> np.ndarray:
    w = np.array([10, 12, 12, 10, 9, 8, 6, 5, 4, 3, 3, 3], float)
    return w / w.sum()


def truth_from_ids(scene: SceneSpec, ids: np.ndarray, name: str, min_pixels: int = 12,
                   windows: list[tuple[int, int, int, int]] | None = None) -> ImageRead:
    """Readings with boxes tight around each die's visible pixels.

    `windows` (x0, y0, x1, y1 per die, from `die_windows`) bound where each die can appear,
    so only those pixels are searched; without them the whole id map is."""
    readings = []
    H, W = ids.shape[:2]
    for k, d in enumerate(scene.dice, start=1):
        x0, y0, x1, y1 = windows[k - 1] if windows is not None else (0, 0, W, H)
        if x1 <= x0 or y1 <= y0:
            continue
        m = cv2.compare(ids[y0:y1, x0:x1], k, cv2.CMP_EQ)
        if cv2.countNonZero(m) < min_pixels:
            continue
        bx, by, bw, bh = cv2.boundingRect(m)
        box = (float(x0 + bx), float(y0 + by), float(x0 + bx + bw), float(y0 + by + bh))
        readings.append(DieReading(type=d.kind, value=d.value, box=box, colour=d.colour, cocked=d.cocked))
    return ImageRead(image=name, width=scene.width, height=scene.height, dice=reading_order(readings))


def die_windows(scene: SceneSpec, distortion: float = 0.0, pad: int = 3) -> list[tuple[int, int, int, int]]:
    """Pixel rectangle that holds each die's projection (after lens distortion), padded."""
    vp = scene.proj @ scene.view
    out = []
    for d in scene.dice:
        pts = (geometry.build(d.kind, d.style).vertices * d.scale) @ d.R.T + d.pos
        h = np.c_[pts, np.ones(len(pts))] @ vp.T
        if np.any(h[:, 3] <= 1e-6):  # behind the camera: search everywhere
            out.append((0, 0, scene.width, scene.height))
            continue
        uv = np.c_[(h[:, 0] / h[:, 3] + 1) * scene.width / 2, (1 - h[:, 1] / h[:, 3]) * scene.height / 2]
        if distortion:
            uv = fx.distort_points(uv, scene.width, scene.height, round(distortion, 2))
        lo = np.floor(uv.min(0)).astype(int) - pad
        hi = np.ceil(uv.max(0)).astype(int) + pad + 1
        out.append((max(0, int(lo[0])), max(0, int(lo[1])), min(scene.width, int(hi[0])), min(scene.height, int(hi[1]))))
    return out


def render_scene(renderer: Renderer, scene: SceneSpec, eff: fx.Effects | None, name: str,
                 jpeg: bool = True) -> tuple[np.ndarray, ImageRead]:
    """Render with `renderer`, apply webcam effects, read the truth. jpeg=False: see `effects.apply`."""
    img, ids = renderer.render(scene)
    k1 = 0.0
    if eff is not None:
        img = fx.apply(img, eff, jpeg=jpeg)
        if eff.distortion:
            k1 = eff.distortion
            ids = fx.distort_ids(ids, k1)
    return img, truth_from_ids(scene, ids, name, windows=die_windows(scene, k1))


def one_die_rolls(seed: int, kind: str, rolls: int, *, renderer: Renderer, width: int = 640, height: int = 480,
                  px_range: tuple[float, float] = (45, 90)) -> Iterator[tuple[np.ndarray, ImageRead]]:
    """One physical die rolled again and again on one table under one webcam: its look, the camera, the
    light, the surface and the webcam's character stay; each roll gives it a new pose and place near the
    middle of the view (and the sensor its own noise). What teaching a table its own dice is measured on:
    taught from some rolls, read in the others. Roll i is the same image for the same arguments."""
    check_size(width, height)
    if kind not in DIE_RADIUS:
        raise DiceError(f"unknown die kind {kind!r}")
    rng = np.random.default_rng(seed)
    look = sample_look(rng, kind)
    px_die = float(np.exp(rng.uniform(*np.log(px_range))))
    cam, base = _rolls_table(rng, width, height, px_die)
    eff = fx.sample_effects(rng, 0.6)
    scale = DIE_RADIUS[kind] * rng.uniform(0.88, 1.15)
    for i in range(rolls):
        roll = np.random.default_rng([seed, i])
        (xy,) = spread(roll, cam.unproject_to_table, [scale], width, height, ONE_DIE_SPREAD)
        die = place_die(kind, look, roll, np.array([xy[0], xy[1], 0.0]), scale)
        scene = replace(base, dice=[die])
        yield render_scene(renderer, scene, replace(eff, noise_seed=int(roll.integers(2**31))), f"die-{seed}-{i}")


MAX_TABLE_DICE = 16
ONE_DIE_SPREAD = (0.3, 0.7)  # where in the view (share of its width and height) one rolled die lands
TABLE_SPREAD = (0.15, 0.85)  # and where a table's dice do, clear of the frame's edges


def table_kinds(kinds: Sequence[str] | str | None, n_dice: int) -> list[str]:
    """The kinds of a table of `n_dice` mixed dice: the kinds in turn, so that each is there before any is twice."""
    if not 1 <= n_dice <= MAX_TABLE_DICE:
        raise LimitError(f"a table holds 1-{MAX_TABLE_DICE} dice, got {n_dice}")
    ks = parse_kinds(kinds)
    return [ks[i % len(ks)] for i in range(n_dice)]


def table_rolls(seed: int, n_dice: int, rolls: int, *, renderer: Renderer, kinds: Sequence[str] | None = None,
                width: int = 640, height: int = 480, px_range: tuple[float, float] = (35, 60)
                ) -> Iterator[tuple[np.ndarray, ImageRead]]:
    """A table of `n_dice` mixed dice rolled together again and again under one webcam: each die keeps its
    look, the table its camera, light and surface; each roll gives every die a new pose and place, none
    touching another. What teaching a table of mixed dice is measured on (`dicecam bench --teach-real`: photos
    taught until each face was seen three times, the others read). Roll i is the same image for the same
    arguments."""
    check_size(width, height)
    chosen = table_kinds(kinds, n_dice)
    rng = np.random.default_rng(seed)
    looks = [sample_look(rng, kind) for kind in chosen]
    px_die = float(np.exp(rng.uniform(*np.log(px_range))))
    cam, base = _rolls_table(rng, width, height, px_die)
    eff = fx.sample_effects(rng, 0.6)
    scales = [DIE_RADIUS[kind] * rng.uniform(0.88, 1.15) for kind in chosen]
    for i in range(rolls):
        roll = np.random.default_rng([seed, i])
        spots = spread(roll, cam.unproject_to_table, scales, width, height, TABLE_SPREAD)
        dice = [place_die(kind, look, roll, np.array([xy[0], xy[1], 0.0]), scale)
                for kind, look, xy, scale in zip(chosen, looks, spots, scales)]
        yield render_scene(renderer, replace(base, dice=dice), replace(eff, noise_seed=int(roll.integers(2**31))),
                           f"table-{seed}-{i}")


def _rolls_table(rng: np.random.Generator, width: int, height: int, px_die: float) -> tuple[Camera, SceneSpec]:
    """The camera and the bare table (surface, light) that dice are rolled on again and again."""
    cam = make_camera(rng, width, height, px_die / 22.0)
    lights, amb, shadow_k = sample_lighting(rng)
    centre = cam.unproject_to_table(width / 2, height / 2)
    th, per = rng.uniform(0, 2 * np.pi), rng.uniform(90, 420)
    c, s = np.cos(th) / per, np.sin(th) / per
    base = SceneSpec(
        width=width, height=height, view=cam.view, proj=cam.proj, cam_pos=cam.eye,
        surface=int(rng.integers(N_SURFACES)), surface_uv=np.array([[c, -s, rng.random()], [s, c, rng.random()]]),
        walls=[], wall_colour=(0.3, 0.2, 0.12), props=[], surface_tint=_colour_jitter((1, 1, 1), rng, 0.06),
        lights=lights, ambient=amb, spot=(float(centre[0]), float(centre[1]), float(rng.uniform(150, 600))),
        shadow_strength=shadow_k)
    return cam, base


def spread(rng: np.random.Generator, unproject, radii: Sequence[float], width: int, height: int,
           where: tuple[float, float]) -> list[np.ndarray]:
    """Table points (x, y; mm) for dice of these circumradii rolled anew: each under a random point of the
    view's middle (`where`: its share of the width and height), no two nearer than their radii together, so
    that no die touches another whatever its pose. `unproject(u, v)`: the table point under pixel (u, v)."""
    lo, hi = where
    spots: list[np.ndarray] = []
    for r in radii:
        for _ in range(500):
            xy = np.asarray(unproject(width * rng.uniform(lo, hi), height * rng.uniform(lo, hi))[:2], float)
            if all(np.linalg.norm(xy - p) >= r + q for p, q in zip(spots, radii)):
                break
        else:
            raise LimitError(f"{len(radii)} dice do not fit apart in this view; roll fewer")
        spots.append(xy)
    return spots


def with_pictures(dice: list[DieSpec], share: float, seed: int) -> list[DieSpec]:
    """The dice with about `share` of them (no d4) printed in the "picture" style: their highest face shows a
    picture where its numeral would be, as ornate sets print a logo on their 20. Drawn from a generator of its own,
    so that a table rendered without pictures is the same table, die for die, as it always was."""
    if not 0 <= share <= 1:
        raise LimitError(f"the share of dice with a picture face must be 0-1, got {share}")
    rng = np.random.default_rng([seed, 0x9C7])
    return [replace(d, style="picture") if d.kind != "d4" and rng.random() < share else d for d in dice]


def render_image(seed: int, *, renderer: Renderer, kinds: Sequence[str] | None = None, width: int = 640,
                 height: int = 480, n_dice: int | None = None, effects_strength: float = 1.0, defer_jpeg: bool = False,
                 pictures: float = 0.0):
    """One random table of dice, drawn by `renderer`: BGR uint8 image and its truth (values from the poses).

    defer_jpeg=True returns (image, truth, jpeg quality or 0) with the webcam's JPEG
    compression left to the caller, who encodes the image at that quality. `pictures`: the share of dice (no d4)
    whose highest face is a picture (`with_pictures`)."""
    check_size(width, height)
    ks = parse_kinds(kinds)
    if n_dice is not None and not 0 <= n_dice <= 40:
        raise LimitError(f"n_dice must be 0-40, got {n_dice}")
    rng = np.random.default_rng(seed)
    layout = sample_scene(rng, ks, width, height, n_dice)
    eff = fx.sample_effects(rng, effects_strength) if effects_strength > 0 else None
    if pictures:
        layout.scene.dice = with_pictures(layout.scene.dice, pictures, seed)
    img, read = render_scene(renderer, layout.scene, eff, f"synth-{seed}", jpeg=not defer_jpeg)
    if defer_jpeg:
        return img, read, (eff.jpeg if eff is not None else 0)
    return img, read
