"""A 6 and a 9 told apart by where the mark sits: after or under a "6" it is a six, before its top or
over it a nine seen upside down; no mark, or a "6" that is part of a number, says nothing."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dicecam.vision.marks import NINE, SIX, UNSEEN, mark_side

FONT = Path(str(resources.files("dicecam.datasets"))) / "assets" / "fonts" / "LiberationSans-Bold.ttf"
FACES = {"light ink on a blue face": ((40, 60, 150), (230, 190, 60)),
         "dark ink on an orange face": ((230, 110, 40), (25, 20, 20))}


def window(text: str = "6", mark: str | None = None, face=(40, 60, 150), ink=(230, 190, 60),
           speckled: bool = False) -> np.ndarray:
    """A 96-px BGR view with `text` standing upright at its middle and `mark` beside it: "foot" (a
    dot after the foot), "top" (a dot before the top), "under" or "over" (a bar)."""
    img = Image.new("RGB", (96, 96), face)
    draw = ImageDraw.Draw(img)
    draw.text((48, 48), text, font=ImageFont.truetype(str(FONT), 40), fill=ink, anchor="mm")
    x0, y0, x1, y1 = draw.textbbox((48, 48), text, font=ImageFont.truetype(str(FONT), 40), anchor="mm")
    if mark == "foot":
        draw.ellipse((x1 + 2, y1 - 6, x1 + 7, y1 - 1), fill=ink)
    elif mark == "top":
        draw.ellipse((x0 - 7, y0 + 1, x0 - 2, y0 + 6), fill=ink)
    elif mark == "under":
        draw.rectangle((x0, y1 + 3, x1, y1 + 6), fill=ink)
    elif mark == "over":
        draw.rectangle((x0, y0 - 6, x1, y0 - 3), fill=ink)
    out = np.asarray(img)[:, :, ::-1].astype(np.float32)
    if speckled:
        out += np.random.default_rng(0).normal(0, 12, out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("colours", FACES.values(), ids=FACES.keys())
@pytest.mark.parametrize("mark, side", [("foot", SIX), ("under", SIX), ("top", NINE), ("over", NINE)])
def test_the_mark_says_which_face_by_where_it_sits(colours, mark, side):
    face, ink = colours
    assert mark_side(window("6", mark, face, ink)) == side
    assert mark_side(window("6", mark, face, ink, speckled=True)) == side


@pytest.mark.parametrize("colours", FACES.values(), ids=FACES.keys())
def test_a_bare_six_says_nothing(colours):
    assert mark_side(window("6", None, *colours)) == UNSEEN


def test_a_six_that_is_part_of_a_number_says_nothing():
    # The "1" of a 16 stands where a nine's dot would: it is a digit as tall as the 6, not a mark.
    assert mark_side(window("16", "foot")) == UNSEEN
    assert mark_side(window("61")) == UNSEEN


def test_a_view_with_no_numeral_says_nothing():
    assert mark_side(window("")) == UNSEEN
    assert mark_side(np.zeros((96, 96, 3), np.uint8)) == UNSEEN
    assert mark_side(window("8", "top")) == UNSEEN  # no single loop: not a 6
    assert mark_side(window("0", "top")) == UNSEEN  # its loop fills it
    assert mark_side(window("4", "foot")) == UNSEEN  # its loop is on top
    # A "9." standing upright is what the reader's clearest "6" window never shows: its loop is on top.
    assert mark_side(window("9", "foot")) == UNSEEN


@pytest.mark.parametrize("lean", [-25, 25])
def test_a_leaning_numeral_is_judged_square_to_itself(lean):
    # The reader's windows turn in steps of 30 degrees: the "6" it stands up may still lean, and a nine's
    # dot before its top then sits beside the top of its box, not above it.
    def leaning(img: np.ndarray) -> np.ndarray:
        m = cv2.getRotationMatrix2D((48, 48), lean, 1.0)
        return cv2.warpAffine(img, m, (96, 96), borderMode=cv2.BORDER_REPLICATE)

    assert mark_side(leaning(window("6", "top"))) == NINE
    assert mark_side(leaning(window("6", "foot"))) == SIX
    assert mark_side(leaning(window("6"))) == UNSEEN
