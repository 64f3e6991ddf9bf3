"""Whether a rendered die's numerals stand out in its picture: the measure on drawn pictures, and on a tiny
Cycles render of one die painted to be read and one painted black on black (skipped where bpy is not installed)."""

import dataclasses

import cv2
import numpy as np
import pytest

from dicecam.datasets.photoreal import bpy_problem, fonts, looks
from dicecam.datasets.photoreal import sample as ps
from dicecam.datasets.photoreal.legibility import LEGIBLE, every_die_legible, numeral_contrast

needs_bpy = pytest.mark.skipif(bpy_problem() is not None, reason=bpy_problem() or "")


def _die(body: int, paint: int, background: int = 128) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A drawn die (a disc of grey `body` on `background`) with a "7" painted in grey `paint`: picture, ink, cover."""
    img = np.full((120, 120, 3), background, np.uint8)
    cover = np.zeros((120, 120), np.uint8)
    cv2.circle(cover, (60, 60), 40, 255, -1)
    ink = np.zeros((120, 120), np.uint8)
    cv2.putText(ink, "7", (45, 78), cv2.FONT_HERSHEY_SIMPLEX, 1.5, 255, 5)
    ink = ink.astype(np.float32) / 255
    img[cover > 0] = body
    img[ink > 0.5] = paint
    return img, ink, cover


def test_white_numerals_on_a_black_die_stand_out_and_black_on_black_do_not():
    assert numeral_contrast(*_die(body=20, paint=235)) > 0.8
    assert numeral_contrast(*_die(body=235, paint=20)) > 0.8
    assert numeral_contrast(*_die(body=20, paint=30)) < LEGIBLE


def test_the_body_is_judged_around_each_numeral_not_across_the_whole_die():
    img, ink, cover = _die(body=40, paint=200)
    img[(cover > 0) & (np.arange(120)[None, :] > 100)] = 220  # a pale swirl far from the numeral
    assert numeral_contrast(img, ink, cover) > 0.5


def test_a_table_is_legible_only_when_every_die_on_it_is():
    clear, faint = _die(body=20, paint=235), _die(body=20, paint=30)
    table = [np.hstack([a, b]) for a, b in zip(clear, faint)]
    left, right = (0, 0, 120, 120), (120, 0, 240, 120)
    assert every_die_legible(*table, [left])
    assert not every_die_legible(*table, [left, right]), "the faint die on the right"
    assert every_die_legible(*table, []), "no die in view: nothing to judge"
    assert numeral_contrast(*table) > LEGIBLE, "judged as a whole, the clear die hides the faint one"


def test_a_die_with_no_paint_in_view_cannot_be_judged():
    img, ink, cover = _die(body=40, paint=200)
    assert numeral_contrast(img, np.zeros_like(ink), cover) is None


@needs_bpy
def test_the_camera_sees_paint_where_the_numerals_are_and_black_paint_vanishes_in_a_black_die():
    from dicecam.datasets.photoreal.run import stage

    st = stage(samples=4)
    scene = ps.sample_scene(np.random.default_rng(5), ["d20"], 160, 120, fonts.system_fonts(), n_dice=1, closeup=True)
    scene.props, scene.walls = [], []
    black = looks.srgb_to_linear((0.05, 0.05, 0.05))
    contrast = {}
    for paint in ("white", "black"):
        look = dataclasses.replace(scene.dice[0].look, material="solid", body=tuple(black), body2=tuple(black),
                                   body3=tuple(black), paint=paint, paint_rgb=looks.PAINTS[paint][0],
                                   font=fonts.system_fonts()[0], weight=0.06, engrave=0.0)
        painted = dataclasses.replace(scene, dice=[dataclasses.replace(scene.dice[0], look=look)])
        ink, cover = st.ink_and_cover(painted)
        assert (ink > 0.5).sum() > 20 and (cover[ink > 0.5] > 200).mean() > 0.95, "the paint lies on the die"
        contrast[paint] = numeral_contrast(st.render(painted), ink, cover)
    assert contrast["white"] >= LEGIBLE > contrast["black"]
