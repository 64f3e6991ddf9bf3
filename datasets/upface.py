"""Where a die's value is printed, in the reader's crop: labels for the up-face finder.

The value numeral of a die is the one on the face pointing up, but in a crop the clearest
numeral is often a neighbour's; which one counts, and which way it is turned, is pure geometry
here. For every rendered die this module projects the value glyph into the same square
crop the face reader sees (vision/crops.py: the die's box plus CROP_MARGIN on each side) and
returns it as the finder's regression target.

Target, per die (all in the crop frame, image axes: x right, y down):
- (u, v): the value numeral's centre relative to the crop centre, in crop sides (-0.5..0.5 is
  inside the crop).
- (cos, sin) of theta, the numeral's clockwise turn from upright on screen: its top points
  along (sin theta, -cos theta) in image coordinates; 0 = upright.
- facing: the dot of the printed face's normal with the unit vector towards the camera
  (1 = seen square on, 0 = edge on): how foreshortened the numeral is.

Which glyph is "the value numeral":
- d6 pips: the up face's centre; its angle is stored but flagged unknown (pips look the same
  turned by 90 degrees), and the loss must ignore it.
- d4 vertex style: the value is printed at the up vertex on each of the three faces that meet
  there; the target is the copy on the one of those faces that faces the camera most (the
  clearest), its top towards the vertex.
- d4 base style: the value is printed along the bottom edge of each standing face; again the
  copy on the standing face that faces the camera most.
- every other die: the single numeral of the face pointing up.

`generate(out_dir, count, seed)` renders `count` scenes into an .npz of crops and targets;
the crop box is the die's visible-pixel box, jittered as an imperfect detector's would be.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import cv2
import numpy as np

from dicecam.vision.crops import CROP_MARGIN, CROP_SIZE, KINDS, square_crop

from . import effects as fx
from . import geometry
from .render import DieSpec, Renderer
from .scene import Camera, die_windows, sample_scene

# The target's columns, in order (vision/upface.py returns the first five the same way).
COLUMNS = ("u", "v", "cos", "sin", "facing")
BOX_JITTER = 0.08  # a detector's box is off by up to this fraction of its side, in place and size
# Below this facing a numeral is nearly edge on: its projected "up" is noise, so no angle is given.
MIN_FACING_FOR_ANGLE = 0.15


@dataclass(frozen=True)
class ValueGlyph:
    """The printed value of one posed die, in world space (mm)."""

    center: np.ndarray
    up: np.ndarray  # unit, in the face plane: the numeral's top
    normal: np.ndarray  # of the face it is printed on
    size: float  # numeral height in mm
    angle_known: bool  # False for pip faces (90-degree symmetric)


def value_glyph(die: DieSpec, eye: np.ndarray) -> ValueGlyph:
    """The glyph that names `die`'s value, seen from a camera at `eye` (see the module notes)."""
    mesh = geometry.build(die.kind, die.style)
    R = die.R
    normals = mesh.normals @ R.T
    world = lambda p: R @ p * die.scale + die.pos  # noqa: E731 (object point -> world)

    def towards_eye(face: geometry.Face) -> float:
        c = world(face.center)
        return float((R @ face.normal) @ ((eye - c) / np.linalg.norm(eye - c)))

    if mesh.kind == "d4":
        down = int(np.argmin(normals[:, 2]))
        value = mesh.faces[down].value
        # Vertex style: the faces meeting at the up vertex are all but the one on the table;
        # base style: the standing faces are the same three. Each prints the value once.
        standing = [f for i, f in enumerate(mesh.faces) if i != down]
        face = max(standing, key=towards_eye)
        glyph = next(g for g in face.glyphs if g.text == str(value))
        return ValueGlyph(world(glyph.center), R @ glyph.up, R @ face.normal, glyph.size * die.scale, True)
    face = mesh.faces[int(np.argmax(normals[:, 2]))]
    if mesh.style == "pips":
        return ValueGlyph(world(face.center), R @ face.up, R @ face.normal,
                          geometry._inradius(mesh.vertices, face.verts, face.center) * die.scale, False)
    glyph = face.glyphs[0]
    return ValueGlyph(world(glyph.center), R @ glyph.up, R @ face.normal, glyph.size * die.scale, True)


def crop_frame(box: Sequence[float], margin: float = CROP_MARGIN) -> tuple[float, float, float]:
    """(centre x, centre y, side) of the square crop `square_crop` cuts around `box`."""
    x1, y1, x2, y2 = (float(v) for v in box)
    return (x1 + x2) / 2, (y1 + y2) / 2, max(x2 - x1, y2 - y1, 1.0) * (1 + 2 * margin)


def image_target(camera: Camera, die: DieSpec, distortion: float = 0.0) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """(numeral centre in pixels, unit image direction of its top, facing, angle known)."""
    def project(pts: np.ndarray) -> np.ndarray:
        px = camera.project(pts)
        return fx.distort_points(px, camera.width, camera.height, round(distortion, 2)) if distortion else px
    return glyph_target(project, camera.eye, die)


def glyph_target(project: Callable[[np.ndarray], np.ndarray], eye: np.ndarray, die: DieSpec
                 ) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """`image_target` for any camera: `project` maps world points (N, 3) to pixels (N, 2), `eye` is its
    centre. Any die with kind, style, R, pos and scale will do (the photoreal renderer's too)."""
    g = value_glyph(die, eye)
    # A step of a fifth of the numeral's height: long enough to be well above rounding, short
    # enough that perspective does not bend it.
    pts = project(np.stack([g.center, g.center + g.up * g.size * 0.2]))
    to_eye = (eye - g.center) / np.linalg.norm(eye - g.center)
    facing = float(g.normal @ to_eye)
    d = pts[1] - pts[0]
    n = float(np.linalg.norm(d))
    known = g.angle_known and facing >= MIN_FACING_FOR_ANGLE and n > 1e-6
    return pts[0], (d / n if n > 1e-6 else np.array([0.0, -1.0])), facing, known


def crop_target(point: np.ndarray, top: np.ndarray, facing: float, box: Sequence[float]) -> np.ndarray:
    """The 5 target numbers (COLUMNS) of a numeral at pixel `point` for the crop of `box`."""
    cx, cy, side = crop_frame(box)
    # A square crop scales x and y alike, so the direction on screen is the direction in the crop.
    return np.array([(point[0] - cx) / side, (point[1] - cy) / side, -top[1], top[0], facing], np.float32)


def jitter_box(box: Sequence[float], rng: np.random.Generator, amount: float = BOX_JITTER) -> np.ndarray:
    """The box as a detector might return it: centre and each side off by up to `amount` of the side."""
    x1, y1, x2, y2 = (float(v) for v in box)
    w, h = x2 - x1, y2 - y1
    cx = (x1 + x2) / 2 + rng.uniform(-amount, amount) * w
    cy = (y1 + y2) / 2 + rng.uniform(-amount, amount) * h
    w *= 1 + rng.uniform(-amount, amount)
    h *= 1 + rng.uniform(-amount, amount)
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], np.float32)


@dataclass
class DieSample:
    box: np.ndarray  # the die's tight visible-pixel box (x1, y1, x2, y2)
    target: np.ndarray  # (5,) COLUMNS for a crop of `box` itself
    point: np.ndarray  # numeral centre in pixels
    top: np.ndarray  # unit image direction of the numeral's top
    facing: float
    angle_known: bool
    kind: str


def scene_samples(renderer: Renderer, seed: int, kinds: Sequence[str] = KINDS, width: int = 640,
                  height: int = 480, n_dice: int | None = None, effects_strength: float = 1.0,
                  px_range: tuple[float, float] = (24, 200), elevation: float | None = None,
                  ) -> tuple[np.ndarray, list[DieSample]]:
    """One random table (as `scene.render_image` draws it) and a sample per usable die.

    A die is left out when its box touches the frame (cut off: its crop is not a die's crop),
    when its value numeral's centre is hidden behind another die, or when the printed face
    turns away from the camera (a die cocked against a wall): there is nothing to find."""
    rng = np.random.default_rng(seed)
    layout = sample_scene(rng, kinds, width, height, n_dice, px_range=px_range, elevation=elevation)
    eff = fx.sample_effects(rng, effects_strength) if effects_strength > 0 else None
    img, ids = renderer.render(layout.scene)
    k1 = 0.0
    if eff is not None:
        img = fx.apply(img, eff)
        if eff.distortion:
            k1 = eff.distortion
            ids = fx.distort_ids(ids, k1)
    out: list[DieSample] = []
    for k, (d, (x0, y0, x1, y1)) in enumerate(zip(layout.scene.dice, die_windows(layout.scene, k1)), start=1):
        if x1 <= x0 or y1 <= y0:
            continue
        m = cv2.compare(ids[y0:y1, x0:x1], k, cv2.CMP_EQ)
        if cv2.countNonZero(m) < 12:
            continue
        bx, by, bw, bh = cv2.boundingRect(m)
        box = np.array([x0 + bx, y0 + by, x0 + bx + bw, y0 + by + bh], np.float32)
        if box[0] <= 0 or box[1] <= 0 or box[2] >= width or box[3] >= height:
            continue
        point, top, facing, known = image_target(layout.camera, d, k1)
        px, py = int(round(point[0])), int(round(point[1]))
        if facing <= 0 or not (0 <= px < width and 0 <= py < height) or ids[py, px] != k:
            continue
        out.append(DieSample(box, crop_target(point, top, facing, box), point, top, facing, known, d.kind))
    return img, out


def generate(out_dir: Path, count: int, seed: int, *, crops_per_die: int = 2, size: int = CROP_SIZE,
             minutes: float | None = None, progress: bool = True) -> Path:
    """Render `count` scenes into out_dir/upface.npz; returns its path.

    Arrays: crops (N, size, size, 3) uint8 BGR (the face reader's framing; 64 px is its own size, a
    larger one shows a small die's numeral strokes); targets (N, 5) float32 (COLUMNS); angle_known (N,)
    bool; kind (N,) int8 index into KINDS; scene (N,) int32, the scene a crop came from (hold
    out whole scenes for validation: crops of one die are near copies); side (N,) float32, the
    crop's side in frame pixels (how many pixels the die really had). Each die is cut
    `crops_per_die` times with independent box jitter, which costs no rendering. With `minutes`, it
    stops after that long with the scenes rendered so far (a lent GPU's time is counted)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x0F1D]))
    rows = FinderRows()
    t0 = time.perf_counter()
    with Renderer() as r:
        for i in range(count):
            s = int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
            img, samples = scene_samples(r, s)
            for smp in samples:
                rows.add(img, smp.box, smp.point, smp.top, smp.facing, smp.angle_known, smp.kind, i, rng,
                         crops_per_die, size)
            if minutes is not None and time.perf_counter() - t0 > minutes * 60:
                count = i + 1
                break
            if progress and (i + 1) % 200 == 0:
                dt = time.perf_counter() - t0
                print(f"{i + 1}/{count} scenes, {len(rows)} crops, {len(rows) / dt:.1f} crops/s", flush=True)
    dt = time.perf_counter() - t0
    path = rows.save(out_dir / "upface.npz")
    meta = {"scenes": count, "seed": seed, "crops": len(rows), "crops_per_die": crops_per_die,
            "seconds": round(dt, 1), "dice_per_s": round(len(rows) / crops_per_die / dt, 1),
            "columns": list(COLUMNS), "kinds": list(KINDS), "box_jitter": BOX_JITTER,
            "margin": CROP_MARGIN, "size": size}
    (out_dir / "upface.json").write_text(json.dumps(meta, indent=1) + "\n")
    return path


@dataclass
class FinderRows:
    """The finder's training set as it is gathered, one row per crop; `save` writes it as `generate` describes
    (one .npz, what train_upface loads). Both renderers' labels fill it (datasets/photoreal/finder.py)."""

    crops: list = field(default_factory=list)
    targets: list = field(default_factory=list)
    known: list = field(default_factory=list)
    kind: list = field(default_factory=list)
    scene: list = field(default_factory=list)
    side: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.crops)

    def add(self, img: np.ndarray, box: Sequence[float], point: np.ndarray, top: np.ndarray, facing: float,
            known: bool, kind: str, scene: int, rng: np.random.Generator, crops_per_die: int, size: int) -> None:
        """One die of `img`, cut `crops_per_die` times with independent box jitter (which costs no rendering)."""
        for _ in range(crops_per_die):
            cut = jitter_box(box, rng)
            self.crops.append(square_crop(img, cut, CROP_MARGIN, size))
            self.targets.append(crop_target(point, top, facing, cut))
            self.known.append(known)
            self.kind.append(KINDS.index(kind))
            self.scene.append(scene)
            self.side.append(crop_frame(cut)[2])

    def save(self, path: Path) -> Path:
        np.savez(path, crops=np.stack(self.crops), targets=np.stack(self.targets),
                 angle_known=np.array(self.known, bool), kind=np.array(self.kind, np.int8),
                 scene=np.array(self.scene, np.int64), side=np.array(self.side, np.float32))
        return Path(path)


def draw_target(crop: np.ndarray, target: np.ndarray, zoom: int = 3, colour=(0, 255, 0),
                angle: bool = True) -> np.ndarray:
    """The crop scaled up `zoom` times with the target's point and (when `angle`) an arrow
    towards the numeral's top; draw on the result again for a second target."""
    img = crop if crop.shape[0] > CROP_SIZE else cv2.resize(crop, None, fx=zoom, fy=zoom, interpolation=cv2.INTER_NEAREST)
    s = img.shape[0]
    u, v, c, sn = (float(x) for x in target[:4])
    p = np.array([(u + 0.5) * s, (v + 0.5) * s])
    cv2.circle(img, tuple(int(round(x)) for x in p), max(2, s // 60), colour, -1, cv2.LINE_AA)
    if angle:
        n = max(np.hypot(c, sn), 1e-6)
        q = p + np.array([sn, -c]) / n * s * 0.18
        cv2.arrowedLine(img, tuple(int(round(x)) for x in p), tuple(int(round(x)) for x in q), colour, 1,
                        cv2.LINE_AA, tipLength=0.3)
    return img


def contact_sheet(crops: np.ndarray, targets: np.ndarray, angle_known: np.ndarray, path: Path,
                  predicted: np.ndarray | None = None, cols: int = 8, zoom: int = 3) -> Path:
    """A grid of crops with the target (green) and, if given, a prediction (magenta) drawn on."""
    tiles = []
    for i in range(len(crops)):
        t = draw_target(crops[i].copy(), targets[i], zoom, (0, 255, 0), bool(angle_known[i]))
        if predicted is not None:
            t = draw_target(t, predicted[i], zoom, (255, 0, 255), bool(angle_known[i]))
        tiles.append(cv2.copyMakeBorder(t, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=(40, 40, 40)))
    while len(tiles) % cols:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + cols]) for i in range(0, len(tiles), cols)]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.vstack(rows))
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Render crops labelled with where the value numeral is (up-face finder data).")
    ap.add_argument("out", type=Path)
    ap.add_argument("--count", type=int, default=6000, help="scenes to render")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--crops-per-die", type=int, default=2)
    ap.add_argument("--size", type=int, default=CROP_SIZE, help="crop side in pixels (the finder's input)")
    ap.add_argument("--minutes", type=float, default=None, help="stop rendering after this long")
    ap.add_argument("--sheet", action="store_true", help="also write labels_sheet.png (64 crops)")
    a = ap.parse_args(argv)
    path = generate(a.out, a.count, a.seed, crops_per_die=a.crops_per_die, size=a.size, minutes=a.minutes)
    if a.sheet:
        z = np.load(path)
        idx = np.random.default_rng(1).choice(len(z["crops"]), min(64, len(z["crops"])), replace=False)
        contact_sheet(z["crops"][idx], z["targets"][idx], z["angle_known"][idx], a.out / "labels_sheet.png")
    print(json.loads((a.out / "upface.json").read_text()))


if __name__ == "__main__":
    main()
