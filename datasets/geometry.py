"""Die meshes with numbered faces, and the rule that reads a value from a pose.

Every die is a convex polyhedron scaled to circumradius 1. Each face carries the glyphs
printed on it (text, centre and up direction in the face plane) so the renderer draws
numerals oriented like real dice. The value of a posed die is never stored beside the
pose: `value_up(mesh, R)` derives it from the geometry.

Conventions (where the issue was silent):
- d4 "vertex" style: each face shows three numbers, one near each corner, its top towards
  that corner; the value is the number at the vertex pointing up.
- d4 "base" style: each face shows three numbers, one along each edge, upright when that
  edge is at the bottom. The number along an edge is the value of the face on the other
  side of that edge, so when a face lies on the table all three standing faces show the
  SAME number, upright, along their bottom edges: that number is the value (the face
  pointing down names it).
- d10 faces 0-9 (opposite faces sum to 9), d00 faces 00-90 (sum to 90); 6/9 (d00: 60/90)
  carry an underline bar, as do 6/9 on d8, d12 and d20; d6 numerals underline 6 and 9 too.
- "picture" style (any kind but the d4): numbered, but the face of the kind's highest value shows a
  picture instead of its numeral, as ornate sets print a logo on their 20 (or 1, or 6); its glyph's
  text is PICTURE, which the renderer draws as an emblem.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from dicecam.vision.crops import KINDS, face_label  # noqa: F401 (the die kinds and face labels, named once)
PHI = (1 + 5**0.5) / 2
PICTURE = "picture"  # the glyph text of a face printed with a picture (the "picture" style)


@dataclass(frozen=True)
class Glyph:
    text: str  # a number, "pip" for one d6 pip, or PICTURE for a picture printed where a numeral would be
    center: np.ndarray  # 3D point on the face plane (object space)
    up: np.ndarray  # unit vector in the face plane: the top of the glyph
    size: float  # glyph height in object units
    underline: bool = False


@dataclass
class Face:
    verts: list[int]  # counter-clockwise seen from outside
    normal: np.ndarray
    center: np.ndarray
    up: np.ndarray  # the face's reading direction (in plane)
    value: int  # the value this face reads as when it points up (d4: face down, see value_up)
    glyphs: list[Glyph] = field(default_factory=list)


@dataclass
class DieMesh:
    kind: str
    style: str  # "num", "pips" (d6), "vertex"/"base" (d4)
    vertices: np.ndarray  # (V, 3), circumradius 1
    faces: list[Face]
    bevel: float  # rounded-edge radius as a fraction of the face's inradius

    @property
    def normals(self) -> np.ndarray:
        if getattr(self, "_normals", None) is None:  # meshes are built once and never edited
            self._normals = np.array([f.normal for f in self.faces])
        return self._normals

    @property
    def values(self) -> list[int]:
        return [f.value for f in self.faces]


# ---------------------------------------------------------------- polyhedra


def _hull_faces(v: np.ndarray) -> list[list[int]]:
    """Faces of the convex hull of a small point set, each ordered CCW from outside."""
    faces: dict[tuple, list[int]] = {}
    n = len(v)
    for i, j, k in itertools.combinations(range(n), 3):
        nrm = np.cross(v[j] - v[i], v[k] - v[i])
        ln = np.linalg.norm(nrm)
        if ln < 1e-9:
            continue
        nrm = nrm / ln
        d = v @ nrm - v[i] @ nrm
        if np.all(d <= 1e-6):
            pass
        elif np.all(d >= -1e-6):
            nrm = -nrm
        else:
            continue
        key = tuple(np.round(nrm, 4))
        if key in faces:
            continue
        on = [m for m in range(n) if abs((v[m] - v[i]) @ nrm) < 1e-6]
        c = v[on].mean(axis=0)
        a = v[on[0]] - c
        a /= np.linalg.norm(a)
        b = np.cross(nrm, a)
        ang = [np.arctan2((v[m] - c) @ b, (v[m] - c) @ a) for m in on]
        faces[key] = [on[m] for m in np.argsort(ang)]
    return list(faces.values())


def _trapezohedron(h: float = 1.05) -> np.ndarray:
    # Planar kites need the rings at +-z0 with z0 = h(1-cos36)/(1+cos36) (ring radius 1).
    c36 = np.cos(np.pi / 5)
    z0 = h * (1 - c36) / (1 + c36)
    pts = [(0, 0, h), (0, 0, -h)]
    for k in range(5):
        a = 2 * np.pi * k / 5
        pts.append((np.cos(a), np.sin(a), z0))
        a2 = a + np.pi / 5
        pts.append((np.cos(a2), np.sin(a2), -z0))
    return np.array(pts, float)


def _base_vertices(kind: str) -> np.ndarray:
    if kind == "d4":
        v = np.array([(1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)], float)
    elif kind == "d6":
        v = np.array(list(itertools.product((-1, 1), repeat=3)), float)
    elif kind == "d8":
        v = np.array([(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)], float)
    elif kind in ("d10", "d00"):
        v = _trapezohedron()
    elif kind == "d12":
        p = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
        for a in (-1 / PHI, 1 / PHI):
            for b in (-PHI, PHI):
                p += [(0, a, b), (a, b, 0), (b, 0, a)]
        v = np.array(p, float)
    elif kind == "d20":
        p = []
        for a in (-1, 1):
            for b in (-PHI, PHI):
                p += [(0, a, b), (a, b, 0), (b, 0, a)]
        v = np.array(p, float)
    else:
        raise ValueError(kind)
    return v / np.linalg.norm(v, axis=1).max()


# ---------------------------------------------------------------- numbering


def _pair_opposites(normals: np.ndarray) -> list[tuple[int, int]]:
    pairs, used = [], set()
    for i in range(len(normals)):
        if i in used:
            continue
        j = int(np.argmin(normals @ normals[i]))
        assert normals[i] @ normals[j] < -0.999, "die is not centrally symmetric"
        pairs.append((i, j))
        used |= {i, j}
    return pairs


def _assign_opposite(normals: np.ndarray, total: int, low: list[int]) -> list[int]:
    """Values so that opposite faces sum to `total`; `low` are the values given, in a fixed
    scattered order, to the first face of each pair."""
    pairs = _pair_opposites(normals)
    vals = [0] * len(normals)
    for (i, j), v in zip(pairs, low):
        vals[i], vals[j] = v, total - v
    return vals


def _needs_bar(kind: str, value: int) -> bool:
    if kind == "d00":
        return value in (60, 90)
    if kind == "d4":
        return False
    return value in (6, 9)


PIPS = {
    1: [(0, 0)],
    2: [(-1, 1), (1, -1)],
    3: [(-1, 1), (0, 0), (1, -1)],
    4: [(-1, 1), (1, 1), (-1, -1), (1, -1)],
    5: [(-1, 1), (1, 1), (0, 0), (-1, -1), (1, -1)],
    6: [(-1, 1), (1, 1), (-1, 0), (1, 0), (-1, -1), (1, -1)],
}


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)


def _inradius(v: np.ndarray, face: list[int], c: np.ndarray) -> float:
    r = np.inf
    for a, b in zip(face, face[1:] + face[:1]):
        e = _unit(v[b] - v[a])
        p = c - v[a]
        r = min(r, np.linalg.norm(p - (p @ e) * e))
    return float(r)


@lru_cache(maxsize=None)
def build(kind: str, style: str | None = None) -> DieMesh:
    """The mesh of one die kind; style: d6 "num"/"pips", d4 "vertex"/"base", any kind but the d4 "picture"."""
    if kind not in KINDS:
        raise ValueError(f"unknown die kind {kind!r}")
    if style == "picture" and kind == "d4":
        raise ValueError("a d4 shows three numerals a face: it has no picture style")
    style = style or {"d6": "pips", "d4": "vertex"}.get(kind, "num")
    v = _base_vertices(kind)
    vert_lists = _hull_faces(v)
    normals = []
    centers = []
    for f in vert_lists:
        c = v[f].mean(axis=0)
        n = _unit(np.cross(v[f[1]] - v[f[0]], v[f[2]] - v[f[0]]))
        if n @ c < 0:  # keep CCW-from-outside
            f.reverse()
            n = -n
        normals.append(n)
        centers.append(c)
    normals = np.array(normals)
    nf = len(vert_lists)
    # Faces in a fixed order (by normal) so numbering does not depend on hull search order.
    order = sorted(range(nf), key=lambda i: tuple(np.round(-normals[i], 3)))
    vert_lists = [vert_lists[i] for i in order]
    normals = normals[order]
    centers = [centers[i] for i in order]

    if kind == "d4":
        values = [0] * 4  # filled per style below
    elif kind == "d6":
        values = _assign_opposite(normals, 7, [1, 2, 3])
    elif kind == "d8":
        values = _assign_opposite(normals, 9, [1, 3, 2, 4])
    elif kind in ("d10", "d00"):
        # Faces of one pole get odd values, the other even: 1/8, 3/6, 5/4, 7/2, 9/0 pairs.
        values = [0] * 10
        top = [i for i in range(10) if normals[i][2] > 0]
        top.sort(key=lambda i: np.arctan2(normals[i][1], normals[i][0]))
        for i, val in zip(top, (1, 7, 3, 9, 5)):
            values[i] = val
            j = int(np.argmin(normals @ normals[i]))
            values[j] = 9 - val
        if kind == "d00":
            values = [10 * x for x in values]
    elif kind == "d12":
        values = _assign_opposite(normals, 13, [1, 5, 9, 3, 11, 7])
    else:  # d20
        values = _assign_opposite(normals, 21, [1, 7, 13, 19, 3, 17, 9, 5, 15, 11])

    faces: list[Face] = []
    for fi, (f, n, c) in enumerate(zip(vert_lists, normals, centers)):
        if kind in ("d10", "d00"):
            pole = max(f, key=lambda m: abs(v[m][2]))
            up = _unit((v[pole] - c) - ((v[pole] - c) @ n) * n)
        elif kind == "d6":
            mid = (v[f[0]] + v[f[1]]) / 2
            up = _unit(mid - c)
        else:
            up = _unit(v[f[0]] - c)
        faces.append(Face(verts=list(f), normal=n, center=c, up=up, value=values[fi]))

    if kind == "d4":
        _number_d4(v, faces, style)
    else:
        pictured = max(values) if style == "picture" else None  # the face printed with a picture, if any
        for face in faces:
            ir = _inradius(v, face.verts, face.center)
            if kind == "d6" and style == "pips":
                right = np.cross(face.up, face.normal)
                step = ir * 0.52
                for px, py in PIPS[face.value]:
                    pc = face.center + right * px * step + face.up * py * step
                    size = ir * (0.42 if face.value == 1 else 0.30)
                    face.glyphs.append(Glyph("pip", pc, face.up, size))
                continue
            text = PICTURE if face.value == pictured else face_label(kind, face.value)
            size = {"d6": 1.15, "d8": 1.2, "d10": 0.0, "d00": 0.0, "d12": 0.95, "d20": 1.05}[kind] * ir
            ctr = face.center
            if kind in ("d10", "d00"):
                # The numeral sits in the wide part of the kite, near the equator.
                size = (0.95 if kind == "d10" else 0.85) * ir
                ctr = face.center - face.up * ir * 0.15
            face.glyphs.append(Glyph(text, ctr, face.up, size, text != PICTURE and _needs_bar(kind, face.value)))
    bevel = {"d6": 0.22}.get(kind, 0.10)
    return DieMesh(kind=kind, style=style, vertices=v, faces=faces, bevel=bevel)


def _number_d4(v: np.ndarray, faces: list[Face], style: str) -> None:
    # Vertex i carries value i+1; the face opposite vertex i is the face without it.
    vert_val = {i: i + 1 for i in range(4)}
    for face in faces:
        missing = next(i for i in range(4) if i not in face.verts)
        ir = _inradius(v, face.verts, face.center)
        if style == "vertex":
            # This face rests on the table when `missing` vertex is up: value = that vertex.
            face.value = vert_val[missing]
            for m in face.verts:
                d = v[m] - face.center
                up = _unit(d - (d @ face.normal) * face.normal)
                pc = face.center + up * np.linalg.norm(d) * 0.52
                face.glyphs.append(Glyph(str(vert_val[m]), pc, up, ir * 0.8))
        else:
            face.value = vert_val[missing]
    if style == "base":
        # Along the edge shared with face G, print G's value, upright when G is on the table.
        for face in faces:
            for a, b in zip(face.verts, face.verts[1:] + face.verts[:1]):
                other = next(g for g in faces if g is not face and a in g.verts and b in g.verts)
                mid = (v[a] + v[b]) / 2
                inward = _unit(face.center - mid)
                pc = mid + inward * np.linalg.norm(face.center - mid) * 0.42
                face.glyphs.append(Glyph(str(other.value), pc, inward, ir * 0.62))


# ---------------------------------------------------------------- poses


def value_up(mesh: DieMesh, R: np.ndarray) -> int:
    """The value a die shows when rotated by R (object -> world, z up)."""
    nz = (mesh.normals @ R.T)[:, 2]
    if mesh.kind == "d4":
        # Both styles: the face pointing down names the value (vertex style: its opposite
        # vertex is the one pointing up; base style: its number is along every bottom edge).
        return mesh.faces[int(np.argmin(nz))].value
    return mesh.faces[int(np.argmax(nz))].value


def _cross3(a, b) -> np.ndarray:
    # np.cross costs ~20 us of argument handling per call; scenes call this thousands of times.
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rot_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation taking unit vector a onto unit vector b."""
    a, b = _unit(a), _unit(b)
    v = _cross3(a, b)
    c = float(a @ b)
    if c < -0.999999:
        axis = _unit(_cross3(a, [1, 0, 0]) if abs(a[0]) < 0.9 else _cross3(a, [0, 1, 0]))
        return axis_angle(axis, np.pi)
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + vx + vx @ vx / (1 + c)


def axis_angle(axis, angle: float) -> np.ndarray:
    x, y, z = _unit(np.asarray(axis, float))
    c, s = np.cos(angle), np.sin(angle)
    C = 1 - c
    return np.array(
        [
            [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
        ]
    )


def rest_height(mesh: DieMesh, R: np.ndarray, scale: float) -> float:
    """Height of the die's centre when its lowest point, turned by R, touches the table."""
    return -float((mesh.vertices @ R.T)[:, 2].min()) * scale


def resting_rotation(mesh: DieMesh, face_down: int, yaw: float) -> np.ndarray:
    """Rotation that lays `face_down` on the table, turned by `yaw` radians."""
    R = rot_between(mesh.faces[face_down].normal, np.array([0.0, 0.0, -1.0]))
    return axis_angle([0, 0, 1], yaw) @ R


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
