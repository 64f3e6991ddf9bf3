"""How one die (or one matching set) looks: body material and colours, paint, font, numeral style.

Colours are linear RGB (what Cycles shades with). `colour` is the label: the reader's name of
the dominant body colour (models/reader.json "colours").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..render import BODY_COLOURS
from .fonts import MIN_STROKE, stroke_ratio

MATERIALS = ("solid", "swirl2", "swirl3", "speckled", "pearl", "gem", "metal")
MATERIAL_P = (0.24, 0.18, 0.1, 0.12, 0.08, 0.16, 0.12)
METALS = {  # name: (linear base colour, label)
    "gold": ((0.83, 0.56, 0.20), "yellow"),
    "silver": ((0.80, 0.80, 0.82), "grey"),
    "copper": ((0.80, 0.38, 0.22), "orange"),
    "gunmetal": ((0.16, 0.16, 0.18), "grey"),
}
WEIGHTS = (0.0, 0.03, 0.06, 0.09)  # outlines added to a font's strokes (share of the glyph size), thinnest first
PAINTS = {  # name: (linear colour, metallic)
    "white": ((0.82, 0.82, 0.80), 0.0),
    "black": ((0.012, 0.012, 0.014), 0.0),
    "gold": ((0.80, 0.52, 0.14), 0.85),
    "silver": ((0.72, 0.72, 0.74), 0.85),
    "red": ((0.55, 0.02, 0.02), 0.0),
    "blue": ((0.02, 0.08, 0.45), 0.0),
    "green": ((0.03, 0.30, 0.06), 0.0),
    "yellow": ((0.80, 0.60, 0.02), 0.0),
}


def srgb_to_linear(c) -> np.ndarray:
    c = np.asarray(c, float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def luminance(c) -> float:
    c = np.asarray(c, float)
    return float(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])


@dataclass(frozen=True)
class Look:
    colour: str  # label: dominant body colour name
    material: str  # one of MATERIALS
    body: tuple[float, float, float]  # dominant colour (linear)
    body2: tuple[float, float, float]  # second swirl tone / speckles
    body3: tuple[float, float, float]  # third swirl tone
    swirl_scale: float
    swirl_sharp: float  # 0 soft blend .. 1 hard-edged bands
    seed: float  # texture offset (4-D noise W), so no two dice share a pattern
    roughness: float
    coat: float  # clear-coat weight
    paint: str  # name in PAINTS
    paint_rgb: tuple[float, float, float]
    font: str  # path of a TTF/OTF
    weight: float  # stroke width, fraction of the numeral height
    size: float  # numeral size factor (1 = the geometry's glyph size)
    mark: str  # how 6 and 9 (60, 90) are told apart: "bar" | "dot"
    engrave: float  # recess depth (0: printed flat)
    pips: bool  # d6: pips (True) or numerals
    pip_style: str  # "round" (painted dome) | "drilled" (deep cone, dark)
    d4_vertex: bool  # d4: numbers at the vertices (True) or along the base edges


def _jitter(rgb, rng: np.random.Generator, amount: float = 0.1) -> tuple[float, float, float]:
    c = np.asarray(rgb, float) * np.exp(rng.normal(0, amount, 3))
    return tuple(float(x) for x in np.clip(c, 0.002, 0.95))


def _named(rng: np.random.Generator, name: str) -> tuple[float, float, float]:
    return _jitter(srgb_to_linear(BODY_COLOURS[name]), rng, 0.12)


def pick_font(rng: np.random.Generator, fonts: tuple[str, ...]) -> str:
    """A font, families equally likely (Noto alone holds a quarter of the files)."""
    if not fonts:
        return ""
    fams: dict[str, list[str]] = {}
    for f in fonts:
        fams.setdefault(Path(f).parent.name, []).append(f)
    names = sorted(fams)
    fam = fams[names[int(rng.integers(len(names)))]]
    return fam[int(rng.integers(len(fam)))]


def sample_look(rng: np.random.Generator, fonts: tuple[str, ...], colours: tuple[str, ...] = tuple(BODY_COLOURS)) -> Look:
    material = str(rng.choice(MATERIALS, p=MATERIAL_P))
    plain = [c for c in colours if c != "clear"]
    name = str(rng.choice(plain))
    body = _named(rng, name)
    body2 = body3 = body
    roughness = float(rng.uniform(0.12, 0.4))
    coat = float(rng.uniform(0.3, 1.0))
    if material in ("swirl2", "swirl3"):
        other = str(rng.choice(["white", "black", *plain]))
        body2 = _named(rng, other) if other != name else _jitter(np.asarray(body) * 0.35, rng)
        body3 = _named(rng, str(rng.choice(plain))) if material == "swirl3" else body2
    elif material == "speckled":
        body2 = _jitter(rng.choice([(0.8, 0.8, 0.78), (0.01, 0.01, 0.01), (0.7, 0.45, 0.1)]), rng, 0.05)
        body3 = _jitter(np.asarray(body) * 0.55, rng)
    elif material == "pearl":
        body2 = _jitter(np.asarray(body) * 0.5 + 0.35, rng, 0.05)
        roughness = float(rng.uniform(0.2, 0.35))
    elif material == "gem":
        # Resin passes most light: a gem's colour is a tint, lighter than an opaque die's.
        body = tuple(float(c) ** 0.45 for c in body)
        if rng.random() < 0.25:
            name, body = "clear", _jitter((0.9, 0.92, 0.95), rng, 0.03)
        body2 = body3 = body
        roughness = float(rng.uniform(0.0, 0.08))
    elif material == "metal":
        metal = str(rng.choice(list(METALS)))
        rgb, name = METALS[metal]
        body = body2 = body3 = _jitter(rgb, rng, 0.05)
        roughness = float(rng.uniform(0.15, 0.4))
        coat = 0.0
    lum = luminance(body)
    if material == "metal":
        paint = "black" if lum > 0.3 else str(rng.choice(["white", "gold", "silver"]))
    elif material == "gem":
        # A gem shows the table and the light through itself, darker than its tint: dark paint vanishes in it.
        paint = str(rng.choice(["white", "white", "white", "gold", "silver"]))
    elif lum > 0.25:
        paint = str(rng.choice(["black", "black", "black", "blue", "red", "gold", "silver"]))
    else:
        paint = str(rng.choice(["white", "white", "white", "gold", "silver", "yellow", "red"]))
    # Dice are printed to be read: a paint too close to the body in lightness (silver on white,
    # yellow on orange) is replaced by black or white, whichever stands out.
    if material not in ("metal", "gem") and abs(np.log((luminance(PAINTS[paint][0]) + 0.02) / (lum + 0.02))) < 1.3:
        paint = "black" if lum > 0.12 else "white"
    paint_rgb = _jitter(PAINTS[paint][0], rng, 0.05)
    swirl_scale, swirl_sharp, seed = float(rng.uniform(1.2, 3.5)), float(rng.uniform(0.0, 1.0)), float(rng.uniform(0, 100))
    font = pick_font(rng, fonts)
    weight = float(rng.choice([0.0, 0.0, 0.03, 0.06]))
    # Nor are dice printed in hairlines: a thin face is drawn with an outline that makes its strokes a die's.
    while font and weight < WEIGHTS[-1] and stroke_ratio(font, weight) < MIN_STROKE:
        weight = next(w for w in WEIGHTS if w > weight)
    return Look(
        colour=name, material=material, body=body, body2=body2, body3=body3,
        swirl_scale=swirl_scale, swirl_sharp=swirl_sharp,
        seed=seed, roughness=roughness, coat=coat, paint=paint, paint_rgb=paint_rgb,
        font=font, weight=weight,
        size=float(rng.uniform(0.8, 1.12)), mark=str(rng.choice(["bar", "bar", "dot"])),
        engrave=float(rng.choice([0.0, 1.0, 1.0, 1.0]) * rng.uniform(0.5, 1.0)),
        pips=bool(rng.random() < 0.6), pip_style=str(rng.choice(["round", "drilled"])),
        d4_vertex=bool(rng.random() < 0.65),
    )


def style_for(kind: str, look: Look) -> str:
    if kind == "d6":
        return "pips" if look.pips else "num"
    if kind == "d4":
        return "vertex" if look.d4_vertex else "base"
    return "num"
