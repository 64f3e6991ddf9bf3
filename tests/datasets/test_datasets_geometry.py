"""Die meshes: faces, normals, numbering, and the value read off a pose."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecam.datasets import geometry as g
from dicecam.mechanics.dice import DieType

FACE_COUNT = {"d4": 4, "d6": 6, "d8": 8, "d10": 10, "d00": 10, "d12": 12, "d20": 20}
OPPOSITE_SUM = {"d6": 7, "d8": 9, "d10": 9, "d00": 90, "d12": 13, "d20": 21}
STYLES = [("d4", "vertex"), ("d4", "base"), ("d6", "pips"), ("d6", "num"), ("d8", None), ("d10", None),
          ("d00", None), ("d12", None), ("d20", None)]


@pytest.mark.parametrize("kind,style", STYLES)
def test_faces_values_and_normals(kind, style):
    m = g.build(kind, style)
    assert len(m.faces) == FACE_COUNT[kind]
    assert sorted(m.values) == sorted(DieType(kind).faces)
    n = m.normals
    assert np.allclose(np.linalg.norm(n, axis=1), 1)
    for f in m.faces:
        # outward: every vertex lies on or behind the face plane
        assert np.all((m.vertices - f.center) @ f.normal <= 1e-6)
        assert f.normal @ f.center > 0
        assert abs(f.up @ f.normal) < 1e-9 and abs(np.linalg.norm(f.up) - 1) < 1e-9
        for v in f.verts:  # planar
            assert abs((m.vertices[v] - f.center) @ f.normal) < 1e-6
        for gl in f.glyphs:
            assert abs((gl.center - f.center) @ f.normal) < 1e-6


@pytest.mark.parametrize("kind", sorted(OPPOSITE_SUM))
def test_opposite_faces_sum(kind):
    m = g.build(kind)
    n = m.normals
    for i, f in enumerate(m.faces):
        j = int(np.argmin(n @ n[i]))
        assert n[i] @ n[j] < -0.999
        assert f.value + m.faces[j].value == OPPOSITE_SUM[kind]


@pytest.mark.parametrize("kind", ["d6", "d8", "d10", "d00", "d12", "d20"])
def test_six_and_nine_are_marked(kind):
    m = g.build(kind, "num")
    marked = {gl.text for f in m.faces for gl in f.glyphs if gl.underline}
    expect = {"60", "90"} if kind == "d00" else {t for t in ("6", "9") if int(t) <= len(m.faces)}
    assert marked == expect


def test_d4_styles_print_the_value_where_it_is_read():
    for style in ("vertex", "base"):
        m = g.build("d4", style)
        for down, face in enumerate(m.faces):
            R = g.resting_rotation(m, down, 0.3)
            value = g.value_up(m, R)
            assert value == face.value
            if style == "vertex":
                top = int(np.argmax((m.vertices @ R.T)[:, 2]))
                # the three standing faces each print `value` next to the top vertex
                near_top = [min(f.glyphs, key=lambda gl: np.linalg.norm(gl.center - m.vertices[top]))
                            for f in m.faces if top in f.verts]
            else:
                # each standing face prints `value` along its edge on the table
                bottom = set(face.verts)
                near_top = [min(f.glyphs, key=lambda gl: np.linalg.norm(gl.center - m.vertices[list(bottom & set(f.verts))].mean(0)))
                            for f in m.faces if f is not face]
            assert len(near_top) == 3 and all(gl.text == str(value) for gl in near_top)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(list(FACE_COUNT)), seed=st.integers(0, 2**31), yaw=st.floats(0, 6.28))
def test_value_is_the_face_pointing_up(kind, seed, yaw):
    rng = np.random.default_rng(seed)
    m = g.build(kind)
    down = int(rng.integers(len(m.faces)))
    R = g.resting_rotation(m, down, yaw)
    world_n = m.normals @ R.T
    assert np.isclose(world_n[down][2], -1)
    value = g.value_up(m, R)
    if kind == "d4":
        assert value == m.faces[down].value
    else:
        assert value == m.faces[int(np.argmax(world_n[:, 2]))].value
        # the labelled face's normal points closest to straight up
        up = next(i for i, f in enumerate(m.faces) if f.value == value)
        assert world_n[up][2] >= world_n[:, 2].max() - 1e-12
    # a random rotation too: the value is the max-z face
    R2 = g.random_rotation(rng)
    nz = (m.normals @ R2.T)[:, 2]
    if kind != "d4":
        assert g.value_up(m, R2) == m.faces[int(np.argmax(nz))].value


@pytest.mark.parametrize("kind", ["d6", "d8", "d10", "d00", "d12", "d20"])
def test_a_picture_style_die_prints_a_picture_on_its_highest_face_and_is_numbered_like_any_other(kind):
    plain, picture = g.build(kind, "num"), g.build(kind, "picture")
    top = max(picture.values)
    for a, b in zip(plain.faces, picture.faces):
        assert a.value == b.value and np.allclose(a.normal, b.normal)
        texts = [gl.text for gl in b.glyphs]
        assert texts == ([g.PICTURE] if b.value == top else [gl.text for gl in a.glyphs])
        assert not any(gl.underline for gl in b.glyphs if gl.text == g.PICTURE)
    R = g.resting_rotation(picture, int(np.argmin(picture.normals @ picture.faces[picture.values.index(top)].normal)),
                           0.4)
    assert g.value_up(picture, R) == top, "the picture's face reads its value as it always did"


def test_a_d4_has_no_picture_style():
    with pytest.raises(ValueError, match="no picture style"):
        g.build("d4", "picture")

