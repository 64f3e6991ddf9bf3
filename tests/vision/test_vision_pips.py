"""Whether a die shows pips: round filled dots of a pip's size, not a numeral's strokes."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dicecam.vision.pips import JUDGED_FROM_PX, die_view, pip_count, show_no_pips

BOX = (100.0, 80.0, 260.0, 240.0)  # a die 160 px across


def table(body=(40, 40, 40), ground=(200, 205, 210)) -> np.ndarray:
    frame = np.full((320, 360, 3), ground, np.uint8)
    x1, y1, x2, y2 = (int(v) for v in BOX)
    cv2.rectangle(frame, (x1, y1), (x2, y2), body, -1)
    return frame


def with_pips(frame: np.ndarray, count: int, colour=(40, 40, 220), across: float = 0.14) -> np.ndarray:
    x1, y1, x2, y2 = BOX
    side = x2 - x1
    spots = [(0.5, 0.5), (0.25, 0.25), (0.75, 0.75), (0.75, 0.25), (0.25, 0.75), (0.25, 0.5)][:count]
    for u, v in spots:
        cv2.circle(frame, (int(x1 + u * side), int(y1 + v * side)), int(across * side / 2), colour, -1, cv2.LINE_AA)
    return frame


def with_numeral(frame: np.ndarray, text: str, colour=(235, 235, 235)) -> np.ndarray:
    x1, y1, x2, y2 = BOX
    cv2.putText(frame, text, (int(x1 + 40), int(y2 - 45)), cv2.FONT_HERSHEY_SIMPLEX, 3.0, colour, 9, cv2.LINE_AA)
    return frame


@pytest.mark.parametrize("count", [1, 2, 5])
def test_red_pips_on_a_dark_die_are_seen(count):
    assert pip_count(die_view(with_pips(table(), count), BOX)) >= 1


def test_a_glint_inside_a_glossy_pip_does_not_hide_it():
    frame = with_pips(table(), 1, across=0.2)
    cx, cy = int((BOX[0] + BOX[2]) / 2), int((BOX[1] + BOX[3]) / 2)
    cv2.circle(frame, (cx, cy), 4, (255, 255, 255), -1)
    assert pip_count(die_view(frame, BOX)) == 1


@pytest.mark.parametrize("text", ["4", "2", "3", "5", "1"])
def test_a_numeral_is_no_pip(text):
    assert pip_count(die_view(with_numeral(table(body=(60, 90, 200)), text), BOX)) == 0


def test_a_plain_face_shows_no_pips_and_a_six_mark_is_too_small_for_one():
    assert pip_count(die_view(table(), BOX)) == 0
    frame = with_numeral(table(), "6")
    x1, y1, x2, y2 = BOX
    cv2.circle(frame, (int(x1 + 125), int(y2 - 50)), 3, (235, 235, 235), -1)  # the 6's dot, a pixel or three across
    assert pip_count(die_view(frame, BOX)) == 0


def test_only_the_dice_asked_about_and_big_enough_are_judged():
    frame = with_numeral(table(), "4")
    small = (10.0, 10.0, 10.0 + JUDGED_FROM_PX - 1, 10.0 + JUDGED_FROM_PX - 1)
    boxes = np.array([BOX, BOX, small])
    assert show_no_pips(frame, boxes, np.array([True, False, True])).tolist() == [True, False, False]
    pips = with_pips(table(), 3)
    assert show_no_pips(pips, np.array([BOX]), np.array([True])).tolist() == [False]


def test_a_die_whose_marks_are_not_inked_is_not_judged():
    # Pips or numerals pressed into an unpainted die show as faint marks: no dot found there says nothing.
    faint = with_numeral(table(body=(200, 200, 200), ground=(90, 90, 90)), "4", colour=(175, 175, 175))
    assert show_no_pips(faint, np.array([BOX]), np.array([True])).tolist() == [False]
    inked = with_numeral(table(body=(200, 200, 200), ground=(90, 90, 90)), "4", colour=(30, 30, 30))
    assert show_no_pips(inked, np.array([BOX]), np.array([True])).tolist() == [True]


def test_a_six_crowded_with_big_pips_shows_them():
    # Big dark pips cover much of the middle, so the middle's typical colour is theirs, not the body's.
    x1, y1, x2, y2 = BOX
    side = x2 - x1
    frame = table(body=(60, 140, 190))
    for u in (0.3, 0.7):
        for v in (0.22, 0.5, 0.78):
            cv2.circle(frame, (int(x1 + u * side), int(y1 + v * side)), int(0.13 * side), (25, 25, 25), -1, cv2.LINE_AA)
    assert pip_count(die_view(frame, BOX)) >= 2
    assert show_no_pips(frame, np.array([BOX]), np.array([True])).tolist() == [False]
