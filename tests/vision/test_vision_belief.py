"""The joint belief: which reader a die is read by, and how sure the answer is allowed to be."""

from __future__ import annotations

import numpy as np
import pytest

from dicecam.mechanics.dice import DieType
from dicecam.vision.belief import (FEATURES, PICTURE_FOREIGN, PICTURE_UP, Doubt, Trees, combine, decide,
                                  plainly_pips, readings, shows_picture)
from dicecam.vision.crops import FACE_CLASSES, FACE_INDEX, KINDS, face_label
from dicecam.vision.read import models_dir

F = len(FACE_CLASSES)


def prior(**p: float) -> np.ndarray:
    out = np.full((1, len(KINDS)), 1e-6)
    for k, v in p.items():
        out[0, KINDS.index(k)] = v
    return out


def network_saying(kind: str, value: int, p: float = 0.95) -> np.ndarray:
    out = np.full((1, F), (1 - p) / (F - 1))
    out[0, FACE_INDEX[(kind, value)]] = p
    return out


def numerals_reading(kind: str, value: int, looks: int = 3, ll: float = 0.0) -> np.ndarray:
    out = np.full((1, looks, F), -25.0)
    out[0, :, FACE_INDEX[(kind, value)]] = ll
    return out


def test_without_a_doubt_model_a_legible_numeral_is_read_and_otherwise_the_network():
    b = combine(prior(d20=1.0), network_saying("d20", 3), numerals_reading("d20", 17))
    assert FACE_CLASSES[b.best[0]] == ("d20", 17)
    blank = np.full((1, 3, F), -25.0)
    b = combine(prior(d6=1.0), network_saying("d6", 5), blank)
    assert FACE_CLASSES[b.best[0]] == ("d6", 5)


def test_a_reader_without_numerals_is_the_network_alone():
    b = combine(prior(d6=1.0), network_saying("d6", 4, 0.97))
    assert FACE_CLASSES[b.best[0]] == ("d6", 4) and 0.97 <= b.confidence[0] <= 1.0


def test_the_answer_is_always_a_face_of_the_kind_it_names():
    rng = np.random.default_rng(1)
    for _ in range(50):
        b = combine(rng.random((1, len(KINDS))), rng.dirichlet(np.ones(F))[None], rng.normal(-5, 4, (1, 3, F)))
        kind, value = FACE_CLASSES[b.best[0]]
        assert value in DieType(kind).faces


@pytest.fixture(scope="module")
def shipped() -> Doubt:
    return Doubt.load(models_dir() / "doubt.json")


def seen(numeral, network, looks_ll, side=120.0):
    return readings(prior(d20=0.5, d12=0.5), network, looks_ll, np.array([side]))


def features(**set_: float) -> np.ndarray:
    """One die's measures, numerals and network alike: sure, legible, 120 px, d20 certain, its up face square on
    near the crop's centre; `set_` overrides."""
    row = dict(log_p=0.0, numeral_share=1.0, looks_agree=1.0, centre_agrees=1.0, readers_agree=1.0, readers_twins=0.0,
               log_kind_prior=0.0, log_side_px=np.log(120.0), foreign_text=0.0, facing=0.9, up_offset=0.05)
    row.update(set_)
    x = np.array([row[f] for f in FEATURES])
    return np.stack([x, x])[None]


def test_the_shipped_doubt_model_trusts_readers_that_agree_more_than_readers_that_do_not(shipped):
    _, agree = shipped.choose(features(readers_agree=1.0))
    _, disagree = shipped.choose(features(readers_agree=0.0))
    assert agree[0] > disagree[0]


def test_the_shipped_doubt_model_trusts_a_sure_reader_more_than_a_torn_one(shipped):
    _, sure = shipped.choose(features(log_p=0.0))
    _, torn = shipped.choose(features(log_p=np.log(0.3)))
    assert sure[0] > torn[0]


def test_a_plain_numeral_both_readers_agree_on_is_read_without_doubt(shipped):
    b = decide(seen(None, network_saying("d20", 17), numerals_reading("d20", 17)), shipped)
    assert FACE_CLASSES[b.best[0]] == ("d20", 17) and not b.uncertain[0] and b.doubt(0) is None


def test_a_die_with_nothing_legible_and_a_torn_network_is_uncertain_and_says_why(shipped):
    torn = np.full((1, F), 1.0 / F)
    b = decide(readings(prior(d20=1.0), torn, np.full((1, 3, F), -25.0), np.array([80.0])), shipped)
    assert b.uncertain[0]
    assert b.doubt(0) == "no legible numeral or pips"


def test_a_doubt_model_round_trips_and_refuses_other_measures_and_an_older_gate(shipped):
    again = Doubt.from_json(shipped.to_json())
    x = np.random.default_rng(3).normal(0, 1, (40, 2, len(FEATURES)))
    for a, b in zip(again.choose(x), shipped.choose(x)):
        np.testing.assert_allclose(a, b)
    bad = {**shipped.to_json(), "features": list(FEATURES[:-1])}
    with pytest.raises(ValueError, match="other measures"):
        Doubt.from_json(bad)
    linear = {**shipped.to_json(), "gate": {"coef": [0.0] * 11, "bias": 0.0}}
    with pytest.raises(ValueError, match="older kind"):
        Doubt.from_json(linear)


def test_boosted_trees_send_a_value_at_the_threshold_left_and_add_their_leaves():
    # Two trees: the first splits on measure 1 at 0.5 (left leaf -1, right leaf +2), the second is one leaf of 0.5.
    trees = Trees(feature=np.array([[1, -1, -1], [-1, -1, -1]]), threshold=np.array([[0.5, 0, 0], [0, 0, 0]]),
                  left=np.array([[1, 0, 0], [0, 0, 0]]), right=np.array([[2, 0, 0], [0, 0, 0]]),
                  value=np.array([[0.0, -1.0, 2.0], [0.5, 0, 0]]), init=0.25, rate=0.1)
    x = np.array([[9.0, 0.5], [9.0, 0.51], [-9.0, -3.0]])
    np.testing.assert_allclose(trees.log_odds(x), [0.25 + 0.1 * (-1 + 0.5), 0.25 + 0.1 * (2 + 0.5), 0.25 + 0.1 * (-1 + 0.5)])


def test_pips_the_network_is_sure_of_are_its_to_read_though_the_recogniser_writes_a_digit(shipped):
    # A pip face: the network at 0.999, the recogniser fairly sure of another face, its looks not agreeing.
    x = features(readers_agree=0.0, looks_agree=0.0, centre_agrees=0.0, foreign_text=0.05, log_kind_prior=np.log(0.9),
                 log_side_px=np.log(160.0))
    x[0, 0, FEATURES.index("log_p")] = np.log(0.8)
    x[0, 1, FEATURES.index("log_p")] = np.log(0.999)
    pick, _ = shipped.choose(x)
    assert pick[0] == 1, "the network reads the pips"


def test_the_doubt_model_weighs_how_squarely_the_up_face_looks_and_how_far_off_centre_it_lies():
    ll = np.full((2, 3, F), -20.0)
    up = np.array([[0.0, -0.3, 1.0, 0.0, 0.4], [0.0, 0.0, 1.0, 0.0, 1.0]])  # tilted and oblique; top-down
    got = readings(np.repeat(prior(d20=1.0), 2, 0), np.full((2, F), 1 / F), ll, np.full(2, 90.0),
                   up=up).features
    facing, offset = FEATURES.index("facing"), FEATURES.index("up_offset")
    np.testing.assert_allclose(got[:, 0, [facing, offset]], [[0.4, 0.3], [1.0, 0.0]])
    without = readings(prior(d20=1.0), np.full((1, F), 1 / F), ll[:1], np.full(1, 90.0))
    np.testing.assert_allclose(without.features[0][:, [facing, offset]], [[1.0, 0.0], [1.0, 0.0]])  # both readers


def test_a_d6_face_the_network_reads_plainly_where_the_kind_prior_says_d6_needs_no_numerals():
    sure, torn = network_saying("d6", 4, 0.97), network_saying("d6", 4, 0.9)
    assert plainly_pips(sure, np.array([0.85])).tolist() == [True]
    assert plainly_pips(sure, np.array([0.5])).tolist() == [False], "the kind prior doubts it is a d6"
    assert plainly_pips(torn, np.array([1.0])).tolist() == [False], "the network is not sure enough"
    assert plainly_pips(network_saying("d20", 4, 0.99), np.array([1.0])).tolist() == [False], "no d6 face"


def test_a_die_whose_numerals_were_not_read_is_measured_as_in_a_frame_where_none_were():
    # Two dice: a d20 whose numerals were read, and a d6 whose were not (every look at the floor).
    ll = np.concatenate([numerals_reading("d20", 17), np.full((1, 3, F), -1e30)])
    kind_prior = np.concatenate([prior(d20=1.0), prior(d6=1.0)])
    face_p = np.concatenate([network_saying("d20", 17), network_saying("d6", 4, 0.97)])
    mixed = readings(kind_prior, face_p, ll, np.full(2, 90.0))
    alone = readings(kind_prior[1:], face_p[1:], None, np.full(1, 90.0))
    np.testing.assert_allclose(mixed.features[1], alone.features[0])
    np.testing.assert_allclose(mixed.numeral[1], alone.numeral[0])
    assert FACE_CLASSES[mixed.numeral[0].argmax()] == ("d20", 17), "the read die keeps its numerals"


def as_the_recogniser_scores(*numerals: int, ll: float = -0.1) -> np.ndarray:
    """Each look reading one numeral, as the recogniser scores it: alike for every kind that has that face."""
    out = np.full((1, len(numerals), F), -25.0)
    for g, v in enumerate(numerals):
        for i, (kind, value) in enumerate(FACE_CLASSES):
            if face_label(kind, value) == str(v):  # a d00's "20" too
                out[0, g, i] = ll
    return out


def test_the_looks_agree_on_a_numeral_only_the_answers_kind_has_the_measure_the_doubt_model_was_fitted_on():
    measure = lambda name, r: r.features[0, 0, FEATURES.index(name)]  # noqa: E731 (the numerals' measures)
    r = readings(prior(d20=1.0), network_saying("d20", 18), as_the_recogniser_scores(17, 17, 17), np.array([120.0]))
    assert FACE_CLASSES[r.answers[0, 0]] == ("d20", 17)
    assert measure("looks_agree", r) == 1.0 and measure("centre_agrees", r) == 1.0
    r = readings(prior(d20=1.0), network_saying("d20", 18), as_the_recogniser_scores(18, 17, 17), np.array([120.0]))
    assert measure("looks_agree", r) == pytest.approx(2 / 3) and measure("centre_agrees", r) == 0.0
    # A "5" is a d6's ... d12's face too, a "20" a d00's: the looks name the first kind's, and do not agree.
    r = readings(prior(d20=1.0), network_saying("d20", 18), as_the_recogniser_scores(5, 5, 5), np.array([120.0]))
    assert FACE_CLASSES[r.answers[0, 0]] == ("d20", 5)
    assert measure("looks_agree", r) == 0.0 and measure("centre_agrees", r) == 0.0
    r = readings(prior(d20=1.0), network_saying("d20", 18), as_the_recogniser_scores(20, 20, 20), np.array([120.0]))
    assert FACE_CLASSES[r.answers[0, 0]] == ("d20", 20) and measure("looks_agree", r) == 0.0


def test_a_numeral_read_where_the_window_writes_mostly_no_digit_is_a_picture_and_uncertain_however_sure(shipped):
    # An ornate d20's 20 is a dagger: the recogniser reads it as a plain "7" and writes the laurel as other characters.
    # The face network, torn, leaves the die to the numerals.
    seen = readings(prior(d20=1.0), network_saying("d20", 13, 0.3), numerals_reading("d20", 7), np.array([120.0]),
                    foreign=np.array([0.6]))
    b = decide(seen, shipped)
    assert FACE_CLASSES[b.best[0]] == ("d20", 7) and b.confidence[0] >= np.max(b.below)  # the doubt model is sure
    assert b.uncertain[0] and b.doubt(0) == "a picture or writing where its numeral should be"
    plain = decide(readings(prior(d20=1.0), network_saying("d20", 7), numerals_reading("d20", 7), np.array([120.0]),
                            foreign=np.array([0.02])), shipped)
    assert not plain.uncertain[0] and plain.doubt(0) is None


def test_pips_and_a_d4s_turned_numerals_are_no_picture():
    # Pips write no digit either, but the network reads them; a d4's window holds its other numerals, turned.
    assert not shows_picture(features(foreign_text=0.8), np.array([1]), np.array([FACE_INDEX[("d6", 4)]]))[0]
    assert not shows_picture(features(foreign_text=0.8), np.array([0]), np.array([FACE_INDEX[("d4", 3)]]))[0]
    assert shows_picture(features(foreign_text=0.8), np.array([0]), np.array([FACE_INDEX[("d6", 4)]]))[0]
    assert not shows_picture(features(foreign_text=PICTURE_FOREIGN - 0.01), np.array([0]),
                             np.array([FACE_INDEX[("d20", 7)]]))[0]


def test_a_numeral_read_at_the_centre_where_the_up_faces_places_write_no_digit_is_a_picture(shipped):
    # The picture-faced d20 seen from the side: the centre's look reads a side face's "8" plainly, the looks where
    # the up face lies write its dagger and laurel as other characters.
    args = (prior(d20=1.0), network_saying("d20", 13, 0.3), numerals_reading("d20", 8), np.array([120.0]))
    b = decide(readings(*args, foreign=np.array([0.02]), foreign_up=np.array([0.9])), shipped)
    assert FACE_CLASSES[b.best[0]] == ("d20", 8) and b.confidence[0] >= np.max(b.below)
    assert b.uncertain[0] and b.doubt(0) == "a picture or writing where its numeral should be"
    assert b.rows(slice(0, 1)).uncertain[0]
    numeral_up = decide(readings(*args, foreign=np.array([0.02]), foreign_up=np.array([PICTURE_UP - 0.01])), shipped)
    assert not numeral_up.uncertain[0]


def test_where_the_up_face_writes_no_digit_pips_and_a_d4s_numerals_are_no_picture():
    up = np.array([0.9])
    assert not shows_picture(features(), np.array([1]), np.array([FACE_INDEX[("d6", 4)]]), up)[0]
    assert not shows_picture(features(), np.array([0]), np.array([FACE_INDEX[("d4", 3)]]), up)[0]
    assert shows_picture(features(), np.array([0]), np.array([FACE_INDEX[("d12", 4)]]), up)[0]
    assert not shows_picture(features(), np.array([0]), np.array([FACE_INDEX[("d12", 4)]]))[0]


def test_a_picture_die_stays_one_in_a_belief_of_some_of_its_dice(shipped):
    seen = readings(np.repeat(prior(d20=1.0), 2, 0), np.concatenate([network_saying("d20", 7),
                                                                     network_saying("d20", 13, 0.3)]),
                    np.repeat(numerals_reading("d20", 7), 2, 0), np.full(2, 120.0), foreign=np.array([0.0, 0.7]))
    b = decide(seen, shipped)
    assert b.uncertain.tolist() == [False, True] and b.rows(slice(1, 2)).uncertain.tolist() == [True]


def test_a_numbered_d6_the_network_reads_as_pips_is_read_by_its_numerals_where_no_pip_is_seen(shipped):
    # lurig-d6-values' orange "4": the network sure of two pips, the recogniser as sure of a "4" at every look.
    d6 = prior(d6=0.95, d8=0.05)
    args = (d6, network_saying("d6", 2, 0.99), numerals_reading("d6", 4, ll=-0.05), np.array([180.0]))
    assert FACE_CLASSES[decide(readings(*args), shipped).best[0]] == ("d6", 2), "the gate believes the network"
    pips_seen = decide(readings(*args, no_pips=np.array([False])), shipped)
    assert FACE_CLASSES[pips_seen.best[0]] == ("d6", 2), "pips were seen: the network reads them"
    no_pips = decide(readings(*args, no_pips=np.array([True])), shipped)
    assert FACE_CLASSES[no_pips.best[0]] == ("d6", 4)
    assert no_pips.confidence[0] < 1.0 and no_pips.joint[0].argmax() == no_pips.best[0]


def test_no_pips_seen_hands_a_die_to_its_numerals_only_where_they_name_another_face_of_a_d6(shipped):
    d6 = prior(d6=0.5, d8=0.5)
    network = network_saying("d6", 2, 0.99)
    other_kind = readings(d6, network, numerals_reading("d8", 7, ll=-0.05), np.array([180.0]), no_pips=np.array([True]))
    assert FACE_CLASSES[decide(other_kind, shipped).best[0]] == ("d6", 2), "a d8's 7 is no numbered d6's face"
    blank = readings(d6, network, np.full((1, 3, F), -25.0), np.array([180.0]), no_pips=np.array([True]))
    assert FACE_CLASSES[decide(blank, shipped).best[0]] == ("d6", 2), "nothing legible: the network's"


class NetworkEverywhere:
    """A doubt model whose gate gives every die to the face network, at 0.99, and trusts numerals at 0.93."""

    below = (0.9, 0.9)

    def choose(self, features):
        return np.ones(len(features), np.int64), np.full(len(features), 0.99)

    def chance_of(self, features, pick):
        return np.full(len(features), 0.93)


def angled_d12(numeral: int = 2, network: int = 12, side: float = 200.0, facing: float = 0.9,
               network_ll: float = -6.0):
    """lurig-d12-values' angled "2": the recogniser reads it plainly at the centre, the other looks read neighbours,
    and the face network, taught on renders, is sure of a "12" the looks hardly read."""
    looks = np.full((1, 3, F), -25.0)
    looks[0, 0, FACE_INDEX[("d12", numeral)]] = -0.01
    looks[0, 1, FACE_INDEX[("d12", 5)]] = looks[0, 2, FACE_INDEX[("d12", 7)]] = -0.5
    looks[0, :, FACE_INDEX[("d12", network)]] = network_ll
    up = np.array([[0.0, 0.1, 0.0, 1.0, facing]])
    return readings(prior(d12=1.0), network_saying("d12", network, 0.95), looks, np.array([side]), up=up)


def test_a_large_die_square_to_the_camera_whose_clear_numerals_contradict_the_network_is_read_by_them():
    b = decide(angled_d12(), NetworkEverywhere())
    assert FACE_CLASSES[b.best[0]] == ("d12", 2)
    assert b.confidence[0] == 0.93 and not b.uncertain[0], "as sure as the doubt model is of the numerals"
    assert b.joint[0].argmax() == b.best[0]


@pytest.mark.parametrize("die, why", [
    (dict(side=100.0), "too small to read closely"),
    (dict(facing=0.5), "its up face seen obliquely, where the looks read neighbours"),
    (dict(network_ll=-2.0), "the network's face is legible at some look"),
    (dict(numeral=9, network=6), "a 6 and a 9 the recogniser cannot tell without the mark"),
])
def test_the_network_keeps_a_die_its_numerals_do_not_plainly_contradict(die, why):
    b = decide(angled_d12(**die), NetworkEverywhere())
    assert FACE_CLASSES[b.best[0]] == ("d12", die.get("network", 12)), why


def test_numerals_of_another_kind_pips_or_a_d4s_other_numerals_never_turn_the_network():
    d8_numeral = readings(prior(d12=0.5, d8=0.5), network_saying("d12", 12, 0.95),
                          numerals_reading("d8", 5, ll=-0.01), np.array([200.0]), up=np.array([[0, 0.1, 0, 1, 0.9]]))
    assert FACE_CLASSES[decide(d8_numeral, NetworkEverywhere()).best[0]] == ("d12", 12)
    pips = readings(prior(d6=1.0), network_saying("d6", 2, 0.95), numerals_reading("d6", 4, ll=-0.01),
                    np.array([200.0]), up=np.array([[0, 0.1, 0, 1, 0.9]]))
    assert FACE_CLASSES[decide(pips, NetworkEverywhere()).best[0]] == ("d6", 2), "a d6's pips stay the network's"
    d4 = readings(prior(d4=1.0), network_saying("d4", 3, 0.95), numerals_reading("d4", 1, ll=-0.01),
                  np.array([200.0]), up=np.array([[0, 0.1, 0, 1, 0.9]]))
    assert FACE_CLASSES[decide(d4, NetworkEverywhere()).best[0]] == ("d4", 3), "a d4 shows its other numerals too"
