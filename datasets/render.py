"""The OpenGL renderer: one headless EGL context, glyph atlases, table, shadows, dice.

A `Renderer` owns the context and everything uploaded to it (shaders, die meshes, atlases,
surface textures) so that rendering a scene costs a few draw calls and one read-back.
The scene itself (what to draw, where) is a plain `SceneSpec` built by scene.py.

moderngl and Pillow (the synth extra) are imported where a context opens or a glyph is drawn, so
the scene types and the colour tables load without them.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from . import geometry
from .surfaces import N_SURFACES, SIZE, surface

FONT_DIR = Path(__file__).parent / "assets" / "fonts"
# Real dice use many typefaces. The bundled fonts always render, and are all a default render uses,
# so the same seed draws the same dice on every machine. With DICECAM_SYSTEM_FONTS=1 (set by
# `dicecam train` and `dicecam synth --system-fonts`, and inherited by render workers) the bold faces
# of Debian's font packages join them where installed (`apt-get install fonts-urw-base35
# fonts-roboto ...`, see models/MODEL_CARD.md): training sees many more without the repo shipping them.
SYSTEM_FONTS_ENV = "DICECAM_SYSTEM_FONTS"
SYSTEM_FONT_GLOBS = (
    "/usr/share/fonts/opentype/urw-base35/*-Bold.otf", "/usr/share/fonts/truetype/dejavu/DejaVuSans*-Bold.ttf",
    "/usr/share/fonts/truetype/freefont/Free*Bold.ttf", "/usr/share/fonts/truetype/roboto/unhinted/Roboto*-Bold.ttf",
    "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf", "/usr/share/fonts/truetype/open-sans/*Bold.ttf",
    "/usr/share/fonts/truetype/lato/Lato-Bold.ttf", "/usr/share/fonts/truetype/crosextra/Carlito-Bold.ttf",
    "/usr/share/fonts/truetype/comfortaa/Comfortaa-Bold.ttf", "/usr/share/fonts/truetype/oxygen/Oxygen-Sans-Bold.ttf",
    "/usr/share/fonts/truetype/hack/Hack-Bold.ttf", "/usr/share/fonts/opentype/cantarell/Cantarell-ExtraBold.otf",
    "/usr/share/fonts/opentype/league-spartan/LeagueSpartan-Bold.otf", "/usr/share/fonts/opentype/junicode/JunicodeTwoBeta-Bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyre*-bold.otf",
    "/usr/share/fonts/truetype/linuxlibertine/LinBiolinum_RB*.ttf", "/usr/share/fonts/opentype/linux-libertine/LinLibertine_RB.otf",
)


def _font_paths() -> list[str]:
    bundled = sorted(str(p) for p in FONT_DIR.glob("*.ttf"))
    if os.environ.get(SYSTEM_FONTS_ENV) != "1":
        return bundled
    system = sorted({f for g in SYSTEM_FONT_GLOBS for f in glob.glob(g)} - set(bundled))
    return bundled + [f for f in system if "mono" not in f.lower() and "cursor" not in f.lower()]


FONTS = _font_paths()
# The bundled fonts come first in FONTS: a font index below this renders the same on every machine.
N_BUNDLED_FONTS = len(list(FONT_DIR.glob("*.ttf")))

def atlas_layout(n_faces: int) -> tuple[int, int, int]:
    """(tile px, columns, rows): big tiles so close-up dice keep crisp numerals and round pips."""
    cols = int(np.ceil(np.sqrt(n_faces)))
    rows = int(np.ceil(n_faces / cols))
    return (256 if n_faces <= 12 else 192), cols, rows

BODY_COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.70, 0.05, 0.06),
    "white": (0.90, 0.90, 0.88),
    "black": (0.04, 0.04, 0.05),
    "blue": (0.05, 0.18, 0.62),
    "green": (0.05, 0.45, 0.15),
    "purple": (0.35, 0.08, 0.50),
    "yellow": (0.90, 0.75, 0.05),
    "orange": (0.92, 0.38, 0.04),
    "grey": (0.40, 0.40, 0.42),
    "pink": (0.92, 0.45, 0.62),
    "clear": (0.85, 0.88, 0.90),
}
INK_COLOURS: dict[str, tuple[float, float, float]] = {
    "white": (0.95, 0.95, 0.93),
    "black": (0.03, 0.03, 0.03),
    "gold": (0.85, 0.65, 0.20),
    "silver": (0.75, 0.76, 0.78),
}
# Dual-source blend factors (core since GL 3.3; moderngl has no names for them).
GL_SRC1_ALPHA, GL_ONE_MINUS_SRC1_ALPHA = 0x8589, 0x88FB

MATERIALS = ("solid", "marbled", "speckled", "metallic", "translucent")
MATERIAL_ID = {m: i for i, m in enumerate(MATERIALS)}
GLASS = len(MATERIALS)  # the die shader's material for a dome's glass: no die is made of it


@dataclass
class DieSpec:
    kind: str
    style: str
    font: int
    engraved: bool
    R: np.ndarray  # 3x3 object -> world
    pos: np.ndarray  # world translation (mm)
    scale: float  # circumradius in mm
    colour: str
    body: tuple[float, float, float]
    body2: tuple[float, float, float]
    ink: tuple[float, float, float]
    material: str
    alpha: float = 1.0
    value: int = 0
    cocked: bool = False


@dataclass
class Light:
    direction: np.ndarray  # unit, pointing from the scene towards the light
    colour: tuple[float, float, float]
    softness: float  # shadow blur in pixels


@dataclass
class SceneSpec:
    width: int
    height: int
    view: np.ndarray  # 4x4
    proj: np.ndarray  # 4x4
    cam_pos: np.ndarray
    surface: int  # index into the surface pool
    surface_uv: np.ndarray  # 2x3 affine: world mm -> uv
    surface_tint: tuple[float, float, float]
    lights: list[Light]
    ambient: tuple[float, float, float]
    spot: tuple[float, float, float]  # (x, y, radius) in mm of a brighter pool of light
    dice: list[DieSpec] = field(default_factory=list)
    shadow_strength: float = 0.6
    # Dice-tray walls: boxes (centre xyz, half sizes xyz) in mm, drawn in wall_colour.
    walls: list[tuple[tuple[float, float, float], tuple[float, float, float]]] = field(default_factory=list)
    wall_colour: tuple[float, float, float] = (0.3, 0.2, 0.12)
    # Clutter that is not a die (cards, erasers, coins, knobs, cups, a tower, a bowl, a hand's parts): (4x4 model of
    # the unit shape, colour, shape), the shape one of PROP_SHAPES (a unit cube, or a cylinder, bowl or ball).
    props: list[tuple[np.ndarray, tuple[float, float, float], str]] = field(default_factory=list)
    # Glass domes over dice (a dice tower's dome, a dice jail): (4x4 model of the unit dome, tint, alpha where
    # the glass faces the camera). Drawn last and see-through: a die under one keeps its pixels in the id map.
    domes: list[tuple[np.ndarray, tuple[float, float, float], float]] = field(default_factory=list)


VS_DIE = """
#version 330
uniform mat4 mvp; uniform mat4 model;
in vec3 in_pos; in vec3 in_nrm; in vec2 in_uv; in vec3 in_tan; in vec3 in_bit;
out vec3 v_world; out vec3 v_nrm; out vec3 v_tan; out vec3 v_bit; out vec2 v_uv; out vec3 v_obj;
void main(){
  vec4 w = model * vec4(in_pos, 1.0);
  v_world = w.xyz; v_obj = in_pos;
  mat3 m = mat3(model);
  v_nrm = normalize(m * in_nrm); v_tan = normalize(m * in_tan); v_bit = normalize(m * in_bit);
  v_uv = in_uv;
  gl_Position = mvp * vec4(in_pos, 1.0);
}
"""

FS_DIE = """
#version 330
uniform sampler2D atlas;
uniform vec3 body; uniform vec3 body2; uniform vec3 ink; uniform int material; uniform float body_alpha;
uniform float engraved; uniform float die_id; uniform float seed;
uniform vec3 light_dir[3]; uniform vec3 light_col[3]; uniform vec3 ambient;
uniform vec3 cam_pos;
in vec3 v_world; in vec3 v_nrm; in vec3 v_tan; in vec3 v_bit; in vec2 v_uv; in vec3 v_obj;
// One colour target whose alpha holds the die id (a second render target costs llvmpipe
// ~1 ms a frame); see-through dice blend through the second (dual-source) output instead.
layout(location=0, index=0) out vec4 f_col; layout(location=0, index=1) out vec4 f_cov;
float hash(vec3 p){ p = fract(p*0.3183099 + seed); p *= 17.0; return fract(p.x*p.y*p.z*(p.x+p.y+p.z)); }
float vnoise(vec3 x){ vec3 i = floor(x); vec3 f = fract(x); f = f*f*(3.0-2.0*f);
  return mix(mix(mix(hash(i), hash(i+vec3(1,0,0)), f.x), mix(hash(i+vec3(0,1,0)), hash(i+vec3(1,1,0)), f.x), f.y),
             mix(mix(hash(i+vec3(0,0,1)), hash(i+vec3(1,0,1)), f.x), mix(hash(i+vec3(0,1,1)), hash(i+vec3(1,1,1)), f.x), f.y), f.z); }
void main(){
  vec4 t = texture(atlas, v_uv);
  float inkm = t.r; float ao = t.g;
  vec2 tilt = (t.ba * 2.0 - 1.0) * 1.6;
  vec3 n = normalize(normalize(v_nrm) + tilt.x * v_tan + tilt.y * v_bit);
  vec3 base = body;
  if (material == 1) { float m = vnoise(v_obj*2.5) + 0.5*vnoise(v_obj*5.0);
      float s = 0.5 + 0.5*sin(v_obj.x*5.0 + m*6.0); base = mix(body, body2, smoothstep(0.35, 0.75, s)); }
  if (material == 2) { float h = vnoise(v_obj*38.0); base = mix(body, body2, step(0.86, h)); }
  vec3 col = mix(base, ink * mix(1.0, 0.7, engraved), inkm);
  vec3 V = normalize(cam_pos - v_world);
  float shin = material == 3 ? 24.0 : 60.0;
  float ks = material == 3 ? 0.9 : (material == 4 ? 0.7 : 0.45);
  vec3 diff = ambient * (0.65 + 0.35 * n.z);
  vec3 spec = vec3(0.0);
  #define LIGHT(i) diff += light_col[i] * max(dot(n, light_dir[i]), 0.0); \
    spec += light_col[i] * pow(max(dot(n, normalize(light_dir[i] + V)), 0.0), shin);
  LIGHT(0) LIGHT(1) LIGHT(2)
  vec3 outc = col * diff * ao;
  if (material == 3) {  // metallic: coloured specular plus a fake environment
    vec3 R = reflect(-V, n);
    vec3 env = mix(ambient * 0.4, ambient * 1.6, 0.5 + 0.5 * R.z);
    outc = mix(outc, base * env * 1.2, 0.5 * (1.0 - inkm)) + spec * mix(base, vec3(1.0), 0.3) * ks;
  } else {
    outc += spec * ks * (1.0 - 0.5 * inkm);
  }
  if (material == 4) { outc += base * 0.25 * (1.0 - inkm); }
  float a = material == 4 ? mix(body_alpha, 1.0, inkm) : 1.0;
  if (material == 5) {  // glass: clear where it faces the camera, a bright rim where it is seen edge on
    float edge = pow(1.0 - abs(dot(n, V)), 3.0);
    outc = base * (ambient + 0.3 * diff) + spec * 1.5 + base * 0.6 * edge;
    a = mix(body_alpha, 0.85, edge);
  }
  f_col = vec4(outc, die_id);
  f_cov = vec4(a);
}
"""

VS_PLANE = """
#version 330
uniform mat4 vp; uniform mat3 uvm;
in vec2 in_xy; in vec4 in_light;
out vec2 v_uv; out vec4 v_light;
void main(){ v_uv = (uvm * vec3(in_xy, 1.0)).xy; v_light = in_light; gl_Position = vp * vec4(in_xy, 0.0, 1.0); }
"""

FS_PLANE = """
#version 330
uniform sampler2D surf; uniform vec3 tint_lit; uniform vec3 glare_col;
in vec2 v_uv; in vec4 v_light;
layout(location=0) out vec4 f_col;
void main(){
  // The pool of light (x) and the main light's glare (y) vary slowly, so they come per
  // vertex of a screen-filling grid: llvmpipe pays per pixel for every texture fetch and
  // instruction here, and this pass covers most of the frame. Shadows come later, only
  // where there are any (FS_SHADE).
  f_col = vec4(texture(surf, v_uv).rgb * tint_lit * v_light.x + glare_col * v_light.y, 0.0);  // alpha: id 0
}
"""

VS_SHADE = """
#version 330
in vec2 in_ndc;
void main(){ gl_Position = vec4(in_ndc, 0.0, 1.0); }
"""

FS_SHADE = """
#version 330
uniform sampler2D shade; uniform vec2 screen;
out vec4 f;
void main(){ float s = texture(shade, gl_FragCoord.xy / screen).r; f = vec4(s, s, s, 1.0); }
"""

VS_SHADOW = """
#version 330
uniform mat4 vp; uniform mat4 model; uniform vec3 ldir; uniform float grow;
in vec3 in_pos;
void main(){
  vec3 w = (model * vec4(in_pos * grow, 1.0)).xyz;
  w = w - ldir * (w.z / max(ldir.z, 0.15));
  gl_Position = vp * vec4(w.xy, 0.0, 1.0);
}
"""

FS_SHADOW = """
#version 330
uniform vec4 chan; out vec4 f; void main(){ f = chan; }
"""


@lru_cache(maxsize=32)
def _font(idx: int, px: int):
    from PIL import ImageFont

    if FONTS:
        return ImageFont.truetype(FONTS[idx % len(FONTS)], px)
    return ImageFont.load_default(size=px)


def _glyph_image(text: str, height_px: float, font_idx: int, underline: bool, max_w: float):
    """A grey glyph image (uint8) whose digit height is height_px, plus its centre offset."""
    from PIL import Image, ImageDraw

    px = 160
    font = _font(font_idx, px)
    l, t, r, b = font.getbbox(text)
    w, h = r - l, b - t
    pad = 8
    bar = underline
    img = Image.new("L", (w + 2 * pad, h + 2 * pad + (int(h * 0.22) if bar else 0)), 0)
    d = ImageDraw.Draw(img)
    d.text((pad - l, pad - t), text, font=font, fill=255)
    if bar:
        y0 = pad + h + int(h * 0.08)
        d.rectangle([pad + w * 0.1, y0, pad + w * 0.9, y0 + max(2, int(h * 0.1))], fill=255)
    scale = height_px / h
    if w * scale > max_w:
        scale = max_w / w
    arr = np.asarray(img)
    new = (max(1, int(round(arr.shape[1] * scale))), max(1, int(round(arr.shape[0] * scale))))
    arr = cv2.resize(arr, new, interpolation=cv2.INTER_AREA)
    # Offset so the digits (not the bar) are centred on the glyph point.
    cy_digits = (pad + h / 2) * scale
    return arr, (arr.shape[1] / 2, cy_digits)


def _emblem_image(height_px: float, variant: int) -> tuple[np.ndarray, tuple[float, float]]:
    """A grey emblem (uint8) about height_px tall, plus its centre: what an ornate set prints where a face's
    numeral would be (the "picture" style). Three designs, by variant: a star in a ring, a dagger crossed with
    a sprig, a shield with a cross. Drawn, not lettered: nothing in it is a digit."""
    n = 256
    img = np.zeros((n, n), np.uint8)
    c, r = n // 2, n * 0.42
    w = max(3, n // 28)
    design = variant % 3
    if design == 0:
        cv2.circle(img, (c, c), int(r), 255, w, cv2.LINE_AA)
        ang = np.pi / 2 + np.arange(10) * np.pi / 5
        rad = np.where(np.arange(10) % 2 == 0, r * 0.8, r * 0.33)
        star = np.stack([c + rad * np.cos(ang), c - rad * np.sin(ang)], 1)
        cv2.fillPoly(img, [np.round(star * 4).astype(np.int32)], 255, cv2.LINE_AA, shift=2)
    elif design == 1:
        blade = np.array([[c, c - r], [c + r * 0.17, c + r * 0.2], [c - r * 0.17, c + r * 0.2]])
        cv2.fillPoly(img, [np.round(blade * 4).astype(np.int32)], 255, cv2.LINE_AA, shift=2)
        cv2.line(img, (int(c - r * 0.45), int(c + r * 0.3)), (int(c + r * 0.45), int(c + r * 0.3)), 255, 2 * w,
                 cv2.LINE_AA)
        cv2.line(img, (c, int(c + r * 0.3)), (c, int(c + r * 0.8)), 255, 3 * w, cv2.LINE_AA)
        for k in range(5):  # the sprig's leaves, crossing the blade
            y = c + r * (0.6 - 0.3 * k)
            x = c - r * (0.65 - 0.3 * k)
            cv2.ellipse(img, (int(x), int(y)), (int(r * 0.22), int(r * 0.1)), -35, 0, 360, 255, -1, cv2.LINE_AA)
    else:
        shield = np.array([[c - r * 0.7, c - r * 0.8], [c + r * 0.7, c - r * 0.8], [c + r * 0.7, c],
                           [c, c + r * 0.9], [c - r * 0.7, c]])
        cv2.polylines(img, [np.round(shield * 4).astype(np.int32)], True, 255, w, cv2.LINE_AA, shift=2)
        cv2.line(img, (c, int(c - r * 0.6)), (c, int(c + r * 0.55)), 255, w, cv2.LINE_AA)
        cv2.line(img, (int(c - r * 0.5), int(c - r * 0.2)), (int(c + r * 0.5), int(c - r * 0.2)), 255, w, cv2.LINE_AA)
    scale = height_px / (2 * r)
    out = cv2.resize(img, (max(1, round(n * scale)), max(1, round(n * scale))), interpolation=cv2.INTER_AREA)
    return out, (out.shape[1] / 2, out.shape[0] / 2)


def _face_frame(mesh: geometry.DieMesh):
    """Tile size, layout and the px-per-unit scale shared by every face of an atlas."""
    v = mesh.vertices
    rad = max(float(np.linalg.norm(v[f.verts] - f.center, axis=1).max()) for f in mesh.faces)
    TILE, cols, rows = atlas_layout(len(mesh.faces))
    return TILE, cols, rows, (TILE / 2 - 8) / rad


def _to_px(f: geometry.Face, p: np.ndarray, TILE: int, s: float) -> tuple[float, float]:
    right = np.cross(f.up, f.normal)
    d = p - f.center
    return (TILE / 2 + s * (d @ right), TILE / 2 - s * (d @ f.up))


@lru_cache(maxsize=None)
def _face_relief(kind: str, style: str, fi: int):
    """What every atlas of this face shares, whatever its font: the face polygon (px), its
    inside mask, the rounded-edge height field and occlusion (float32)."""
    mesh = geometry.build(kind, style)
    f = mesh.faces[fi]
    v = mesh.vertices
    TILE, _, _, s = _face_frame(mesh)
    poly = np.array([_to_px(f, v[m], TILE, s) for m in f.verts], np.float32)
    mask = np.zeros((TILE, TILE), np.uint8)
    cv2.fillPoly(mask, [np.round(poly * 4).astype(np.int32)], 255, lineType=cv2.LINE_AA, shift=2)
    inside = (mask > 127).astype(np.uint8)
    dist = cv2.distanceTransform(inside, cv2.DIST_L2, 3)
    ir = geometry._inradius(v, f.verts, f.center) * s
    bevel_px = max(2.0, mesh.bevel * ir)
    x = np.minimum(dist * np.float32(1 / bevel_px), 1)
    h = np.sqrt(1 - (1 - x) ** 2) * np.float32(bevel_px * 0.6)  # rounded edge profile
    ao = 0.82 + 0.18 * x
    return poly, inside, h, ao


@lru_cache(maxsize=256)
def _face_ink(kind: str, style: str, fi: int, font_idx: int) -> np.ndarray:
    """Ink coverage of one face in one font (float32 in [0, 1])."""
    mesh = geometry.build(kind, style)
    f = mesh.faces[fi]
    v = mesh.vertices
    TILE, _, _, s = _face_frame(mesh)
    right = np.cross(f.up, f.normal)
    ink = np.zeros((TILE, TILE), np.float32)
    ir = geometry._inradius(v, f.verts, f.center) * s
    for g in f.glyphs:
        cx, cy = _to_px(f, g.center, TILE, s)
        ux, uy = g.up @ right, g.up @ f.up
        ang = np.degrees(np.arctan2(-ux, uy))
        if g.text == "pip":
            r = g.size * s / 2
            cv2.circle(ink, (int(round(cx * 4)), int(round(cy * 4))), int(round(r * 4)), 1.0, -1, cv2.LINE_AA, shift=2)
            continue
        if g.text == geometry.PICTURE:  # the emblem's design follows the font: a set's look chooses both
            gi, (gx, gy) = _emblem_image(min(g.size * s * 0.9, ir * 1.5), font_idx)
        else:
            gi, (gx, gy) = _glyph_image(g.text, g.size * s * 0.62, font_idx, g.underline,
                                        ir * (1.3 if mesh.kind in ("d4",) else 1.5))
        M = cv2.getRotationMatrix2D((gx, gy), ang, 1.0)
        M[0, 2] += cx - gx
        M[1, 2] += cy - gy
        warped = cv2.warpAffine(gi, M, (TILE, TILE), flags=cv2.INTER_LINEAR)
        ink = np.maximum(ink, warped.astype(np.float32) * np.float32(1 / 255))
    return ink


def _tilt_u8(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Surface tilt (right, up) from a height field, as uint8 around 128."""
    gx = cv2.Sobel(h, cv2.CV_32F, 1, 0, ksize=3, scale=-1 / 8 / 1.6 * 127.5, delta=127.5)
    gy = cv2.Sobel(h, cv2.CV_32F, 0, 1, ksize=3, scale=1 / 8 / 1.6 * 127.5, delta=127.5)
    return (np.clip(gx, 0, 255, out=gx).astype(np.uint8), np.clip(gy, 0, 255, out=gy).astype(np.uint8))


@lru_cache(maxsize=None)
def _flat_tilt(kind: str, style: str, fi: int) -> tuple[np.ndarray, np.ndarray]:
    return _tilt_u8(_face_relief(kind, style, fi)[2])


def build_atlas(mesh: geometry.DieMesh, font_idx: int, engraved: bool) -> tuple[np.ndarray, np.ndarray]:
    """RGBA atlas (R ink, G occlusion, B/A surface tilt) and per-face-vertex uvs (F lists).

    Every process builds the atlases its scenes use, so the parts that do not depend on the
    font or the print style are computed once per face and shared."""
    TILE, cols, rows, _ = _face_frame(mesh)
    AW, AH = cols * TILE, rows * TILE
    atlas = np.zeros((AH, AW, 4), np.uint8)
    uvs = []
    k = (mesh.kind, mesh.style)
    for fi in range(len(mesh.faces)):
        ox, oy = (fi % cols) * TILE, (fi // cols) * TILE
        poly, inside, h, ao = _face_relief(*k, fi)
        uvs.append([((ox + x) / AW, (oy + y) / AH) for x, y in poly])
        ink = _face_ink(*k, fi, font_idx)
        if engraved or mesh.style == "pips":  # pips are drilled, never flat paint
            soft = cv2.GaussianBlur(ink, (0, 0), TILE / 128)
            t_r, t_u = _tilt_u8(h - soft * np.float32(2.2 * TILE / 128))
            ao = ao * (1 - 0.35 * soft)
        else:
            t_r, t_u = _flat_tilt(*k, fi)
        ink_u8 = cv2.convertScaleAbs(ink * inside, alpha=255)
        ao_u8 = cv2.convertScaleAbs(ao, alpha=255)
        atlas[oy : oy + TILE, ox : ox + TILE] = cv2.merge([ink_u8, ao_u8, t_r, t_u])
    return atlas, uvs


def _mesh_arrays(mesh: geometry.DieMesh, uvs) -> np.ndarray:
    rows = []
    v = mesh.vertices
    for f, fuv in zip(mesh.faces, uvs):
        right = np.cross(f.up, f.normal)
        for k in range(1, len(f.verts) - 1):
            for m in (0, k, k + 1):
                rows.append([*v[f.verts[m]], *f.normal, *fuv[m], *right, *f.up])
    return np.array(rows, np.float32)


def _unit_cube() -> np.ndarray:
    """Vertex rows (position, normal, uv, tangent, bitangent) of the cube [-1, 1]^3."""
    rows = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            t = np.roll(n, 1) * sign
            b = np.cross(n, t)
            corners = [n + t * a + b * c for a, c in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            for k in (0, 1, 2, 0, 2, 3):
                rows.append([*corners[k], *n, 0.5, 0.5, *t, *b])
    return np.array(rows, np.float32)


def _unit_cylinder(sides: int = 32) -> np.ndarray:
    """Vertex rows of the cylinder of radius 1 from z = -1 to 1: a side smooth-shaded, two flat caps."""
    rows = []
    a = np.linspace(0, 2 * np.pi, sides + 1)
    up = np.array([0.0, 0.0, 1.0])
    for i in range(sides):
        c0, c1 = (np.array([np.cos(t), np.sin(t), 0.0]) for t in (a[i], a[i + 1]))
        quad = [(c0, -1), (c1, -1), (c1, 1), (c0, 1)]
        for k in (0, 1, 2, 0, 2, 3):
            n, z = quad[k]
            rows.append([n[0], n[1], z, *n, 0.5, 0.5, *np.cross(up, n), *up])
        for z in (-1.0, 1.0):  # caps: a fan from the centre, wound to face outwards
            tri = [(0.0, 0.0), tuple(c0[:2]), tuple(c1[:2])] if z > 0 else [(0.0, 0.0), tuple(c1[:2]), tuple(c0[:2])]
            for x, y in tri:
                rows.append([x, y, z, 0.0, 0.0, z, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0, z, 0.0])
    return np.array(rows, np.float32)


def _unit_dome(sides: int = 48, rings: int = 16, whole: bool = False) -> np.ndarray:
    """Vertex rows of the upper half of the unit sphere (z from 0 to 1), smooth-shaded, open at its foot; `whole`:
    the whole sphere."""
    def row(theta: float, phi: float) -> list[float]:
        n = np.array([np.cos(phi) * np.sin(theta), np.sin(phi) * np.sin(theta), np.cos(theta)])
        t = np.array([-np.sin(phi), np.cos(phi), 0.0])
        return [*n, *n, 0.5, 0.5, *t, *np.cross(n, t)]

    rows = []
    th = np.linspace(0, np.pi if whole else np.pi / 2, rings + 1)
    ph = np.linspace(0, 2 * np.pi, sides + 1)
    for i in range(rings):
        for j in range(sides):
            quad = [(th[i], ph[j]), (th[i + 1], ph[j]), (th[i + 1], ph[j + 1]), (th[i], ph[j + 1])]
            for k in (0, 1, 2, 0, 2, 3):  # wound to face outwards
                rows.append(row(*quad[k]))
    return np.array(rows, np.float32)


BOWL_INNER = 0.9  # a bowl's inner radius over its outer one


def _unit_bowl(sides: int = 48) -> np.ndarray:
    """Vertex rows of a round wall from z = 0 to 1, outer radius 1, inner BOWL_INNER, with its rim on top; the
    table is its floor. The inner face looks inwards, so the camera sees the far side's inside."""
    rows = []
    a = np.linspace(0, 2 * np.pi, sides + 1)
    up = np.array([0.0, 0.0, 1.0])
    for i in range(sides):
        c0, c1 = (np.array([np.cos(t), np.sin(t), 0.0]) for t in (a[i], a[i + 1]))
        for radius, sign in ((1.0, 1.0), (BOWL_INNER, -1.0)):
            quad = [(c0, 0.0), (c1, 0.0), (c1, 1.0), (c0, 1.0)]
            order = (0, 1, 2, 0, 2, 3) if sign > 0 else (0, 2, 1, 0, 3, 2)
            for k in order:
                c, z = quad[k]
                n = c * sign
                rows.append([c[0] * radius, c[1] * radius, z, *n, 0.5, 0.5, *np.cross(up, n), *up])
        rim = [(c0, 1.0), (c1, 1.0), (c1, BOWL_INNER), (c0, BOWL_INNER)]
        for k in (0, 1, 2, 0, 2, 3):
            c, radius = rim[k]
            rows.append([c[0] * radius, c[1] * radius, 1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    return np.array(rows, np.float32)


def _unit_ball() -> np.ndarray:
    """Vertex rows of the unit sphere, coarser than a dome: the parts of a hand are small on screen."""
    return _unit_dome(24, 16, whole=True)


# The shapes clutter is made of (`SceneSpec.props`), as vertex rows of a unit shape; and the domes'.
PROP_SHAPES = {"box": _unit_cube, "cylinder": _unit_cylinder, "bowl": _unit_bowl, "dome": _unit_dome, "ball": _unit_ball}


def look_at(eye, target, up) -> np.ndarray:
    f = target - eye
    f = f / np.linalg.norm(f)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    M = np.eye(4)
    M[0, :3], M[1, :3], M[2, :3] = s, u, -f
    M[:3, 3] = -M[:3, :3] @ eye
    return M


def perspective(fovy: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1 / np.tan(fovy / 2)
    M = np.zeros((4, 4))
    M[0, 0], M[1, 1] = f / aspect, f
    M[2, 2] = (far + near) / (near - far)
    M[2, 3] = 2 * far * near / (near - far)
    M[3, 2] = -1
    return M


def model_matrix(d: DieSpec) -> np.ndarray:
    M = np.eye(4)
    M[:3, :3] = d.R * d.scale
    M[:3, 3] = d.pos
    return M


class Renderer:
    """One GL context and its uploaded resources; not thread-safe. The caller owns it: open one for
    a batch of images (`with Renderer() as r:`), since each die's atlas is built and uploaded on
    first use, and close it when the batch is done."""

    # Surface textures are kept at a few pre-shrunk sizes; each scene binds the one whose
    # texels best match its pixels (mipmapping for the price of plain bilinear sampling).
    SURFACE_LEVELS = 4

    def __init__(self) -> None:
        import moderngl

        self.mgl = moderngl
        try:
            self.ctx = moderngl.create_standalone_context(backend="egl")
        except Exception:
            self.ctx = moderngl.create_standalone_context()
        ctx = self.ctx
        self.p_die = ctx.program(vertex_shader=VS_DIE, fragment_shader=FS_DIE)
        self.p_plane = ctx.program(vertex_shader=VS_PLANE, fragment_shader=FS_PLANE)
        self.p_shade = ctx.program(vertex_shader=VS_SHADE, fragment_shader=FS_SHADE)
        self.p_shadow = ctx.program(vertex_shader=VS_SHADOW, fragment_shader=FS_SHADOW)
        self._meshes: dict[tuple, tuple] = {}
        self._surfaces: dict[tuple[int, int], object] = {}
        self._fbos: dict[tuple, tuple] = {}

    def close(self) -> None:
        """Release the GL context and everything uploaded to it."""
        self.ctx.release()

    def __enter__(self) -> "Renderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ resources
    def surface_texture(self, index: int, level: int):
        """Surface `index` shrunk 2**level times, uploaded on first use."""
        key = (index % N_SURFACES, level)
        if key not in self._surfaces:
            img = surface(key[0])[1]
            for _ in range(level):
                img = cv2.resize(img, (img.shape[1] // 2, img.shape[0] // 2), interpolation=cv2.INTER_AREA)
            tex = self.ctx.texture((img.shape[1], img.shape[0]), 3, np.ascontiguousarray(img).tobytes())
            tex.repeat_x = tex.repeat_y = True
            tex.filter = (self.mgl.LINEAR, self.mgl.LINEAR)
            self._surfaces[key] = tex
        return self._surfaces[key]

    def die_resources(self, kind: str, style: str, font: int, engraved: bool):
        key = (kind, style, font, engraved)
        if key not in self._meshes:
            mesh = geometry.build(kind, style)
            atlas, uvs = build_atlas(mesh, font, engraved)
            tex = self.ctx.texture((atlas.shape[1], atlas.shape[0]), 4, atlas.tobytes())
            tex.build_mipmaps(max_level=3)
            tex.filter = (self.mgl.LINEAR_MIPMAP_LINEAR, self.mgl.LINEAR)
            data = _mesh_arrays(mesh, uvs)
            buf = self.ctx.buffer(data.tobytes())
            vao = self.ctx.vertex_array(self.p_die, [(buf, "3f 3f 2f 3f 3f", "in_pos", "in_nrm", "in_uv", "in_tan", "in_bit")])
            svao = self.ctx.vertex_array(self.p_shadow, [(buf, "3f 44x", "in_pos")])
            self._meshes[key] = (mesh, tex, vao, svao)
        return self._meshes[key]

    def _targets(self, w: int, h: int):
        """Framebuffers, the light-map texture and read-back buffers of one image size."""
        key = (w, h)
        if key not in self._fbos:
            ctx = self.ctx
            col = ctx.renderbuffer((w, h), 4)  # RGB colour, A die id
            depth = ctx.depth_renderbuffer((w, h))
            fbo = ctx.framebuffer([col], depth)
            sw, sh = max(1, w // 2), max(1, h // 2)
            sfbo = ctx.framebuffer([ctx.renderbuffer((sw, sh), 4)])
            shade = ctx.texture((sw, sh), 1)
            shade.filter = (self.mgl.LINEAR, self.mgl.LINEAR)
            shade.repeat_x = shade.repeat_y = False
            gx, gy = GRID
            plane_buf = ctx.buffer(reserve=(gx + 1) * (gy + 1) * 6 * 4)
            plane_idx = ctx.buffer(grid_indices(gx, gy).tobytes())
            plane_vao = ctx.vertex_array(self.p_plane, [(plane_buf, "2f 4f", "in_xy", "in_light")], plane_idx)
            ntiles = -(-sw // SHADE_TILE) * -(-sh // SHADE_TILE)
            tile_buf = ctx.buffer(reserve=ntiles * 6 * 2 * 4)
            tile_vao = ctx.vertex_array(self.p_shade, [(tile_buf, "2f", "in_ndc")])
            bufs = (np.empty((h, w, 4), np.uint8), None, np.empty((sh, sw, 4), np.uint8))
            self._fbos[key] = (fbo, sfbo, shade, (sw, sh), bufs, (plane_buf, plane_vao, tile_buf, tile_vao))
        return self._fbos[key]

    def prop_resources(self, shape: str):
        """A unit shape of PROP_SHAPES with a blank atlas (no ink, flat), scaled by its model matrix."""
        if shape not in PROP_SHAPES:
            raise ValueError(f"no prop shape {shape!r} (shapes: {', '.join(PROP_SHAPES)})")
        if not hasattr(self, "_prop_gl"):
            blank = np.zeros((4, 4, 4), np.uint8)
            blank[..., 1] = 255
            blank[..., 2:] = 128
            self._prop_gl = {"texture": self.ctx.texture((4, 4), 4, blank.tobytes())}
        if shape not in self._prop_gl:
            buf = self.ctx.buffer(PROP_SHAPES[shape]().tobytes())
            vao = self.ctx.vertex_array(self.p_die, [(buf, "3f 3f 2f 3f 3f", "in_pos", "in_nrm", "in_uv", "in_tan", "in_bit")])
            svao = self.ctx.vertex_array(self.p_shadow, [(buf, "3f 44x", "in_pos")])
            self._prop_gl[shape] = (None, self._prop_gl["texture"], vao, svao)
        return self._prop_gl[shape]

    # ------------------------------------------------------------ drawing
    def render(self, scene: SceneSpec) -> tuple[np.ndarray, np.ndarray]:
        """BGR uint8 image and a uint8 id map (0 = table, k = scene.dice[k-1])."""
        # GL draws into whichever context is current, and opening another renderer in this process (or one
        # that has opened and closed since) leaves its own current: this one's objects then drew nothing,
        # and the picture read back was what its framebuffer last held.
        with self.ctx:
            return self._render(scene)

    def _render(self, scene: SceneSpec) -> tuple[np.ndarray, np.ndarray]:
        ctx, mgl = self.ctx, self.mgl
        W, H = scene.width, scene.height
        fbo, sfbo, shade_tex, (sw, sh), (rgba, _, sbuf), (plane_buf, plane_vao, tile_buf, tile_vao) = self._targets(W, H)
        vp = (scene.proj @ scene.view).astype("f4")
        vpT = vp.T.copy()
        res = [self.die_resources(d.kind, d.style, d.font, d.engraved) for d in scene.dice]
        models = [model_matrix(d) for d in scene.dice]
        wall_models = []
        for c, hs in scene.walls:
            M = np.diag([hs[0], hs[1], hs[2], 1.0])
            M[:3, 3] = c
            wall_models.append(M)
        boxes = [(M, scene.wall_colour, "box") for M in wall_models] + list(scene.props)
        shadow_casters = list(zip(res, models)) + [(self.prop_resources(shape), M) for M, _, shape in boxes]
        shade = self._cast_shadows(scene, shadow_casters, sfbo, sbuf, vpT) if scene.dice else None
        plane_buf.write(table_grid(scene, vp).tobytes())

        # The table covers the whole frame, so only depth needs clearing (moderngl applies
        # a framebuffer's colour mask when it is bound).
        fbo.color_mask = (False, False, False, False)
        fbo.use()
        fbo.clear(depth=1.0)
        fbo.color_mask = (True, True, True, True)
        fbo.use()
        ctx.enable(mgl.DEPTH_TEST)
        ctx.disable(mgl.BLEND)
        self._light(scene)
        self._draw_table(scene, vpT, plane_vao)
        if shade is not None:
            self._darken_table(shade, shade_tex, tile_buf, tile_vao, W, H)
        ctx.enable(mgl.CULL_FACE)
        self.p_die["atlas"].value = 0
        if boxes:
            self._draw_boxes(boxes, vp)
        self._draw_dice(scene, res, models, vp)
        if scene.domes:
            self._draw_domes(scene.domes, vp, fbo)
        ctx.disable(mgl.CULL_FACE)
        ctx.blend_func = mgl.SRC_ALPHA, mgl.ONE_MINUS_SRC_ALPHA
        # RGBA reads are a plain copy in Mesa (RGB ones convert per pixel); GL rows run
        # bottom-up, so flip while converting.
        fbo.read_into(rgba, components=4, attachment=0)
        rgba = cv2.flip(rgba, 0)
        return cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGR), cv2.extractChannel(rgba, 3)

    def _cast_shadows(self, scene: SceneSpec, casters, sfbo, sbuf, vpT) -> np.ndarray:
        """Shadows: dice (and walls, props) flattened onto the table along each light (R, B) and straight
        down (G); the table's shading from them, bottom-up rows like the GL texture."""
        ctx, mgl = self.ctx, self.mgl
        sfbo.use()
        sfbo.clear(0, 0, 0, 0)
        ctx.disable(mgl.DEPTH_TEST)
        ctx.enable(mgl.BLEND)
        ctx.blend_equation = mgl.MAX
        self.p_shadow["vp"].write(vpT)
        shadow_jobs = [(0, (1, 0, 0, 0), 1.0), (None, (0, 1, 0, 0), 1.12)]
        if len(scene.lights) > 1:
            shadow_jobs.append((1, (0, 0, 1, 0), 1.0))
        for li, chan, grow in shadow_jobs:
            ldir = np.array([0, 0, 1.0]) if li is None else scene.lights[li].direction
            self.p_shadow["ldir"].value = tuple(float(x) for x in ldir)
            self.p_shadow["grow"].value = grow
            self.p_shadow["chan"].value = chan
            for (mesh, tex, vao, svao), M in casters:
                self.p_shadow["model"].write(M.T.astype("f4").copy())
                svao.render()
        ctx.blend_equation = mgl.FUNC_ADD
        ctx.disable(mgl.BLEND)
        sfbo.read_into(sbuf, components=4)
        return self._shade(scene, sbuf)

    def _light(self, scene: SceneSpec) -> None:
        """The scene's lights (up to three), ambient and camera, for the dice and walls."""
        n_l = min(3, len(scene.lights))
        ldirs = [tuple(float(x) for x in l.direction) for l in scene.lights[:3]] + [(0.0, 0.0, 1.0)] * (3 - n_l)
        lcols = [tuple(float(x) for x in l.colour) for l in scene.lights[:3]] + [(0.0, 0.0, 0.0)] * (3 - n_l)
        self.p_die["light_dir"].value = ldirs
        self.p_die["light_col"].value = lcols
        self.p_die["ambient"].value = tuple(np.array(scene.ambient, float))
        self.p_die["cam_pos"].value = tuple(float(x) for x in scene.cam_pos)

    def _draw_table(self, scene: SceneSpec, vpT, plane_vao) -> None:
        p = self.p_plane
        lit = np.array(scene.ambient, float) + sum(np.array(l.colour) * l.direction[2] for l in scene.lights)
        p["tint_lit"].value = tuple(float(x) for x in lit * np.array(scene.surface_tint))
        main = scene.lights[0].colour if scene.lights else (0.0, 0.0, 0.0)
        p["glare_col"].value = tuple(0.25 * float(x) for x in main)
        p["vp"].write(vpT)
        uvm = np.eye(3)
        uvm[:2, :] = scene.surface_uv
        p["uvm"].write(uvm.T.astype("f4").copy())
        p["surf"].value = 0
        self.surface_texture(scene.surface, surface_level(scene)).use(0)
        plane_vao.render(self.mgl.TRIANGLES)

    def _darken_table(self, shade: np.ndarray, shade_tex, tile_buf, tile_vao, W: int, H: int) -> None:
        """Darken the table under the tiles that hold shadow (before walls and dice are drawn, so they
        stay lit): framebuffer *= shade."""
        ctx, mgl = self.ctx, self.mgl
        tiles = shadow_tiles(shade)
        if not len(tiles):
            return
        tile_buf.write(tiles.tobytes())
        shade_tex.write(np.clip(shade * 255 + 0.5, 0, 255).astype(np.uint8).tobytes())
        shade_tex.use(0)
        self.p_shade["shade"].value = 0
        self.p_shade["screen"].value = (float(W), float(H))
        ctx.disable(mgl.DEPTH_TEST)
        ctx.enable(mgl.BLEND)
        ctx.blend_func = mgl.DST_COLOR, mgl.ZERO, mgl.ZERO, mgl.ONE
        tile_vao.render(mgl.TRIANGLES, vertices=len(tiles) // 2)
        ctx.disable(mgl.BLEND)
        ctx.enable(mgl.DEPTH_TEST)

    def _draw_boxes(self, boxes, vp) -> None:
        """Walls and props: plain shapes of one colour each, no ink, id 0 (the table's)."""
        pd = self.p_die
        _, blank, _, _ = self.prop_resources("box")  # every shape shares the one blank atlas
        pd["ink"].value = (0.0, 0.0, 0.0)
        pd["material"].value = 0
        pd["body_alpha"].value = 1.0
        pd["engraved"].value = 0.0
        pd["die_id"].value = 0.0
        pd["seed"].value = 0.0
        blank.use(0)
        for M, colour, shape in boxes:
            pd["body"].value = tuple(float(x) for x in colour)
            pd["body2"].value = tuple(float(x) for x in colour)
            pd["mvp"].write((vp @ M).T.astype("f4").copy())
            pd["model"].write(M.T.astype("f4").copy())
            self.prop_resources(shape)[2].render()

    def _draw_dice(self, scene: SceneSpec, res, models, vp) -> None:
        """The dice, translucent ones last (blended over what is behind them); die k writes id k."""
        ctx, mgl, pd = self.ctx, self.mgl, self.p_die
        order = sorted(range(len(scene.dice)), key=lambda i: scene.dice[i].material == "translucent")
        for i in order:
            d = scene.dice[i]
            mesh, tex, vao, svao = res[i]
            M = models[i]
            if d.material == "translucent":
                # Colour mixes by the second output's alpha; the id (alpha) is replaced.
                ctx.enable(mgl.BLEND)
                ctx.blend_func = GL_SRC1_ALPHA, GL_ONE_MINUS_SRC1_ALPHA, mgl.ONE, mgl.ZERO
            pd["mvp"].write((vp @ M).T.astype("f4").copy())
            pd["model"].write(M.T.astype("f4").copy())
            pd["body"].value = d.body
            pd["body2"].value = d.body2
            pd["ink"].value = d.ink
            pd["material"].value = MATERIAL_ID[d.material]
            pd["body_alpha"].value = float(d.alpha)
            pd["engraved"].value = 1.0 if d.engraved else 0.0
            pd["die_id"].value = (i + 1) / 255.0
            pd["seed"].value = float((i * 0.137) % 1.0)
            tex.use(0)
            vao.render()
            ctx.disable(mgl.BLEND)

    def _draw_domes(self, domes, vp, fbo) -> None:
        """Glass over what is drawn: colour blends by the glass's alpha, the id map (alpha) is kept, and the glass
        writes no depth, so nothing under it is hidden from what is drawn later."""
        ctx, mgl, pd = self.ctx, self.mgl, self.p_die
        _, blank, vao, _ = self.prop_resources("dome")
        blank.use(0)
        pd["ink"].value = (0.0, 0.0, 0.0)
        pd["material"].value = GLASS
        pd["engraved"].value = 0.0
        pd["die_id"].value = 0.0
        pd["seed"].value = 0.0
        ctx.enable(mgl.BLEND)
        ctx.blend_func = GL_SRC1_ALPHA, GL_ONE_MINUS_SRC1_ALPHA, mgl.ZERO, mgl.ONE
        fbo.depth_mask = False
        fbo.use()  # moderngl applies a framebuffer's masks when it is bound
        for M, tint, alpha in domes:
            pd["body"].value = tuple(float(x) for x in tint)
            pd["body2"].value = tuple(float(x) for x in tint)
            pd["body_alpha"].value = float(alpha)
            pd["mvp"].write((vp @ M).T.astype("f4").copy())
            pd["model"].write(M.T.astype("f4").copy())
            vao.render()
        fbo.depth_mask = True
        fbo.use()
        ctx.disable(mgl.BLEND)

    def _shade(self, scene: SceneSpec, raw: np.ndarray) -> np.ndarray:
        """Table shading in [0.05, 1] (float32, 1 = unshadowed) from the flattened-dice masks."""
        lights = scene.lights
        tot = float(sum(l.colour[1] * l.direction[2] for l in lights)) + scene.ambient[1] + 1e-6
        shade = np.ones(raw.shape[:2], np.float32)
        for c, li in ((0, 0), (2, 1)):
            if li < len(lights):
                s = _soft(raw[..., c], lights[li].softness / 2)
                share = lights[li].colour[1] * lights[li].direction[2] / tot
                shade -= np.float32(scene.shadow_strength * 1.4 * share) * s
        contact = _soft(raw[..., 1], 2.0)
        shade -= np.float32(0.45) * contact
        return np.clip(shade, 0.05, 1, out=shade)


def surface_level(scene: SceneSpec) -> int:
    """Which pre-shrunk surface texture matches the image: log2 of texels per pixel at the
    centre of view, so far-away, finely tiled tables do not alias into sparkle."""
    dist = float(np.linalg.norm(scene.cam_pos - np.array([*_view_target(scene), 0.0])))
    focal = scene.height / 2 * scene.proj[1, 1]
    mm_per_px = dist / focal
    uv_per_mm = float(np.hypot(scene.surface_uv[0, 0], scene.surface_uv[1, 0]))
    texels_per_px = mm_per_px * uv_per_mm * SIZE
    return int(np.clip(np.floor(np.log2(max(texels_per_px, 1e-6))), 0, Renderer.SURFACE_LEVELS - 1))


def _view_target(scene: SceneSpec) -> np.ndarray:
    """Where the optical axis meets the table (x, y)."""
    fwd = -scene.view[2, :3]
    t = -scene.cam_pos[2] / min(fwd[2], -1e-6)
    return (scene.cam_pos + t * fwd)[:2]


GRID = (10, 8)  # cells of the table's light grid: llvmpipe pays per triangle, and light varies slowly
SHADE_TILE = 16  # shadow tiles, in pixels of the half-resolution shade map


def grid_indices(gx: int, gy: int) -> np.ndarray:
    i = np.arange(gy)[:, None] * (gx + 1) + np.arange(gx)[None, :]
    quads = np.stack([i, i + 1, i + gx + 1, i + 1, i + gx + 2, i + gx + 1], -1)
    return quads.reshape(-1).astype(np.int32)


def table_grid(scene: SceneSpec, vp: np.ndarray) -> np.ndarray:
    """Vertices of the table as a grid over the screen: world x, y, then the pool-of-light
    factor and the glare strength (float32, GRID+1 points a side, rows bottom-up)."""
    gx, gy = GRID
    # The grid spans a little beyond the screen so its outer triangles are clipped, not short.
    nx, ny = np.meshgrid(np.linspace(-1.02, 1.02, gx + 1), np.linspace(-1.02, 1.02, gy + 1))
    # Table point under each ndc point: invert the plane's homography (world z = 0).
    Hm = vp[np.ix_([0, 1, 3], [0, 1, 3])].astype(float)
    pts = np.stack([nx, ny, np.ones_like(nx)], -1) @ np.linalg.inv(Hm).T
    w = pts[..., 2:3]
    # Rays at or above the horizon never meet the table: push those points far away.
    w = np.where(np.abs(w) < 1e-9, 1e-9, w)
    xy = pts[..., :2] / w
    xy = np.where(w > 0, xy, xy * -1e3)
    sx, sy, sr = scene.spot
    t = np.clip(np.hypot(xy[..., 0] - sx, xy[..., 1] - sy) / sr / 1.5, 0, 1)
    spot = 1.15 + (0.75 - 1.15) * t * t * (3 - 2 * t)
    if scene.lights:
        V = np.concatenate([scene.cam_pos[:2] - xy, np.full(xy.shape[:2] + (1,), scene.cam_pos[2])], -1)
        V /= np.linalg.norm(V, axis=-1, keepdims=True)
        h = V + scene.lights[0].direction
        glare = np.maximum(h[..., 2] / np.linalg.norm(h, axis=-1), 0) ** 60
    else:
        glare = np.zeros_like(spot)
    out = np.concatenate([xy, spot[..., None], glare[..., None], np.zeros_like(spot)[..., None, ], np.zeros_like(spot)[..., None]], -1)
    return out.astype(np.float32)


def shadow_tiles(shade: np.ndarray, tile: int = SHADE_TILE) -> np.ndarray:
    """NDC triangles (float32 x, y pairs) covering the tiles of `shade` with any shadow."""
    sh, sw = shade.shape
    ty, tx = -(-sh // tile), -(-sw // tile)
    # A tile is drawn if any of its pixels is darkened: max-pool the "dark" mask.
    dark = np.zeros((ty * tile, tx * tile), np.uint8)
    dark[:sh, :sw] = shade < 0.998
    dark = cv2.resize(cv2.dilate(dark, np.ones((tile, tile), np.uint8), anchor=(0, 0)), (tx, ty), interpolation=cv2.INTER_NEAREST)
    iy, ix = np.nonzero(dark)
    x0 = ix * tile / sw * 2 - 1
    x1 = np.minimum((ix + 1) * tile / sw, 1) * 2 - 1
    y0 = iy * tile / sh * 2 - 1
    y1 = np.minimum((iy + 1) * tile / sh, 1) * 2 - 1
    tri = np.stack([x0, y0, x1, y0, x1, y1, x0, y0, x1, y1, x0, y1], -1)
    return tri.reshape(-1).astype(np.float32)


def _soft(mask: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur in [0,1]; wide blurs run at a quarter of the pixels (same look, less work)."""
    if sigma > 3:
        h, w = mask.shape
        small = cv2.resize(mask, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (0, 0), sigma / 2)
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32) * np.float32(1 / 255)
    return cv2.GaussianBlur(mask, (0, 0), max(0.6, sigma)).astype(np.float32) * np.float32(1 / 255)


def egl_available() -> tuple[bool, str]:
    """Whether a GL context opens here, and if not, why."""
    try:
        with Renderer():
            return True, ""
    except Exception as e:  # noqa: BLE001 - the reason is reported to the caller
        return False, f"{type(e).__name__}: {e}"
