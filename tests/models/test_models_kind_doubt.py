"""The kind head and the doubt model cannot rot: both fit on a few renders with the shipped detector and
reader, and the runtime reader loads what they write."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dicecam.vision.belief import FEATURES, Doubt
from dicecam.vision.crops import KINDS
from dicecam.vision.memory import model_fingerprint
from dicecam.vision.read import Reader, models_dir


def test_the_kind_head_fits_on_renders_and_the_reader_loads_it(renders, shipped_copy):
    pytest.importorskip("onnx")
    from dicecam.models.train_kind import train_kind_head

    meta = train_kind_head(None, renders, shipped_copy, reader_folder=shipped_copy, log=lambda m: None)
    assert meta["kinds"] == list(KINDS) and meta["fitted_on"]["synthetic"] > 10
    assert meta["reader"] == model_fingerprint(shipped_copy / "reader.onnx")
    reader = Reader.load(shipped_copy, backend="onnxruntime")
    assert reader.kind_head is not None


def test_photoreal_renders_are_one_folder_or_a_folder_of_chunks(tmp_path):
    from dicecam.mechanics.errors import DicecamError
    from dicecam.models.train_kind import photoreal_folders

    assert photoreal_folders(None) == []
    for seed in ("s2", "s1"):
        (tmp_path / "chunks" / seed).mkdir(parents=True)
        (tmp_path / "chunks" / seed / "reads.jsonl").write_text("")
    (tmp_path / "chunks" / "notes").mkdir()
    assert photoreal_folders(tmp_path / "chunks") == [tmp_path / "chunks" / "s1", tmp_path / "chunks" / "s2"]
    assert photoreal_folders(tmp_path / "chunks" / "s1") == [tmp_path / "chunks" / "s1"]
    with pytest.raises(DicecamError, match="no photoreal renders"):
        photoreal_folders(tmp_path / "chunks" / "notes")


def test_the_kind_head_learns_photoreal_renders_beside_the_others(renders, shipped_copy):
    pytest.importorskip("onnx")
    from dicecam.models.train_kind import train_kind_head

    # Any read-format folder stands in for photoreal renders here.
    meta = train_kind_head(None, renders, shipped_copy, reader_folder=shipped_copy, photoreal=renders,
                           log=lambda m: None)
    assert meta["fitted_on"]["photoreal"] == meta["fitted_on"]["synthetic"] > 10


def test_the_doubt_fit_refuses_a_kind_head_whose_photoreal_renders_it_is_not_given(renders, shipped_copy):
    """Its cross-fit of the kind head must learn what the head learnt, or the doubt model trusts the wrong head."""
    from dicecam.mechanics.errors import DicecamError
    from dicecam.models.train_doubt import train_doubt

    (shipped_copy / "kind.onnx").write_bytes((models_dir() / "kind.onnx").read_bytes())
    meta = json.loads((models_dir() / "kind.json").read_text())
    (shipped_copy / "kind.json").write_text(json.dumps({**meta, "fitted_on": {**meta["fitted_on"], "photoreal": 9}}))
    with pytest.raises(DicecamError, match="photoreal"):
        train_doubt(None, renders, shipped_copy, reader_folder=shipped_copy, log=lambda m: None)


def test_the_doubt_fits_cross_fit_of_the_kind_head_learns_the_photoreal_renders_it_is_given(renders, shipped_copy,
                                                                                        monkeypatch):
    from dicecam.models import train_doubt as td

    (shipped_copy / "kind.onnx").write_bytes((models_dir() / "kind.onnx").read_bytes())
    meta = json.loads((models_dir() / "kind.json").read_text())
    (shipped_copy / "kind.json").write_text(json.dumps({**meta, "fitted_on": {**meta["fitted_on"], "photoreal": 9}}))
    given = []

    def harvest(reader, real, synthetic, log, photoreal=None):
        given.append(photoreal)
        return []

    class Measured(Exception):
        pass

    def measure(*args, **kwargs):
        raise Measured

    monkeypatch.setattr(td, "kind_harvest", harvest)
    monkeypatch.setattr(td, "_measure", measure)
    with pytest.raises(Measured):
        td.train_doubt(None, renders, shipped_copy, reader_folder=shipped_copy, photoreal=renders, log=lambda m: None)
    assert given == [renders]


def test_a_kind_head_fitted_on_another_face_reader_is_refused(shipped_copy):
    (shipped_copy / "kind.onnx").write_bytes((models_dir() / "kind.onnx").read_bytes())
    meta = json.loads((models_dir() / "kind.json").read_text())
    (shipped_copy / "kind.json").write_text(json.dumps({**meta, "reader": "not-this-reader"}))
    from dicecam.mechanics.errors import DicecamError

    with pytest.raises(DicecamError, match="another face reader"):
        Reader.load(shipped_copy, backend="onnxruntime")


def test_the_doubt_model_fits_on_measured_dice_and_round_trips(renders, shipped_copy, tmp_path):
    from dicecam.models.train_doubt import sources_over_the_bar, train_doubt

    meta = train_doubt(None, renders, shipped_copy, reader_folder=shipped_copy, cache=tmp_path / "d.npz",
                       log=lambda m: None)
    assert meta["features"] == list(FEATURES) and meta["cross_validated"]["synthetic"]["dice"] > 10 and all(0.5 <= b < 1 for b in meta["uncertain_below"])
    assert meta["over_the_bar"] == sources_over_the_bar(meta["cross_validated"])
    doubt = Doubt.load(shipped_copy / "doubt.json")
    pick, chance = doubt.choose(np.zeros((3, 2, len(FEATURES))))
    assert set(pick) <= {0, 1} and np.all((0 <= chance) & (chance <= 1))
    # The measured dice are kept: a refit reads no photo again.
    said: list[str] = []
    again = train_doubt(None, renders, shipped_copy, reader_folder=shipped_copy, cache=tmp_path / "d.npz",
                        log=said.append)
    assert again["cross_validated"] == meta["cross_validated"]
    assert not [m for m in said if "dice from" in m], said


def test_measured_dice_are_measured_again_after_the_reading_code_changes(renders, shipped_copy, tmp_path, monkeypatch):
    from dicecam.models import train_doubt as td

    td.train_doubt(None, renders, shipped_copy, reader_folder=shipped_copy, cache=tmp_path / "d.npz", log=lambda m: None)
    monkeypatch.setattr(td, "reading_code", lambda: "another window size")
    said: list[str] = []
    td.train_doubt(None, renders, shipped_copy, reader_folder=shipped_copy, cache=tmp_path / "d.npz", log=said.append)
    assert [m for m in said if "dice from" in m], said


@pytest.mark.parametrize("module", ["marks", "pips"])
def test_a_change_to_how_marks_or_pips_are_found_also_counts_as_a_change_of_the_reading_code(tmp_path, monkeypatch,
                                                                                             module):
    # The 6/9 marks found in the picture (vision/marks.py) and where no pip is seen (vision/pips.py, which decides
    # whether a die's numerals are read) change the measures as the windows do.
    import importlib
    from pathlib import Path

    from dicecam.models import train_doubt as td

    found = importlib.import_module(f"dicecam.vision.{module}")
    before = td.reading_code()
    changed = tmp_path / f"{module}.py"
    changed.write_text(Path(found.__file__).read_text() + "\n# another rule\n")
    monkeypatch.setattr(found, "__file__", str(changed))
    assert td.reading_code() != before


@pytest.fixture
def network_everywhere(monkeypatch):
    """train_doubt with a doubt model whose gate, in every fold, gives each die to the face network at 0.99 and
    trusts numerals at 0.6."""
    from dicecam.models import train_doubt as td

    class NetworkEverywhere:
        def __init__(self, *args):
            pass

        def choose(self, x):
            return np.ones(len(x), np.int64), np.full(len(x), 0.99)

        def chance_of(self, x, pick):
            return np.full(len(x), 0.6)

    monkeypatch.setattr(td, "Doubt", NetworkEverywhere)
    monkeypatch.setattr(td, "grow_gate", lambda x, y: None)
    monkeypatch.setattr(td, "fit_confidence", lambda x, y, gate: (None, None))
    monkeypatch.setattr(td, "out_of_fold_gate", lambda x, y, fold: None)
    return td


def test_the_cross_fit_turns_a_die_that_shows_no_pips_to_its_numerals_as_the_reader_does(network_everywhere):
    # Thresholds are chosen on the answers the reader gives: where it sees no pips on a die the gate hands to the face
    # network's d6 face, and the numerals legibly read another d6 face, the reader answers by the numerals.
    from dicecam.vision.crops import FACE_INDEX

    td = network_everywhere
    x = np.zeros((4, 2, len(FEATURES)))
    x[:, 0, FEATURES.index("numeral_share")] = 0.8
    four, two, eight = FACE_INDEX[("d6", 4)], FACE_INDEX[("d6", 2)], FACE_INDEX[("d8", 4)]
    answers = np.array([[four, two], [four, two], [eight, two], [two, two]])
    y = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], float)
    fold = np.array([0, 1, 0, 1])
    no_pips = np.array([True, False, True, True])
    pick, chance = td.cross_fitted(x, y, fold, answers, no_pips)
    assert pick.tolist() == [0, 1, 1, 1], "only the pipless die whose numerals name another d6 face turns"
    assert chance.tolist() == [0.6, 0.99, 0.99, 0.99], "with the numerals' own chance"
    assert td.cross_fitted(x, y, fold)[0].tolist() == [1, 1, 1, 1], "without where pips were seen, the gate's pick"


def test_the_cross_fit_turns_a_large_die_whose_numerals_contradict_the_network_as_the_reader_does(network_everywhere):
    from dicecam.vision.crops import FACE_INDEX

    td = network_everywhere
    x = np.zeros((2, 2, len(FEATURES)))
    x[:, 0, FEATURES.index("numeral_share")] = 0.99
    x[:, 0, FEATURES.index("log_side_px")] = np.log(200.0)
    x[:, 0, FEATURES.index("facing")] = 0.9
    answers = np.array([[FACE_INDEX[("d12", 2)], FACE_INDEX[("d12", 12)]]] * 2)
    y = np.array([[1, 0], [0, 1]], float)
    network_ll = np.array([-6.0, -1.0])  # the "12" unread at every look; read well at one
    pick, chance = td.cross_fitted(x, y, np.array([0, 1]), answers, None, network_ll)
    assert pick.tolist() == [0, 1] and chance.tolist() == [0.6, 0.99]


def test_the_kind_cross_fit_keeps_each_run_out_of_the_head_that_reads_it():
    from dicecam.models.train_kind import KindSample, cross_fit

    rng = np.random.default_rng(0)
    found = [KindSample(rng.normal(size=12) + k, k, "real", f"{run}/{i}.jpg", run)
             for run, k in (("a", 0), ("b", 1), ("c", 2), ("d", 0), ("e", 1), ("f", 2)) for i in range(10)]
    found += [KindSample(rng.normal(size=12) + k, k, "synthetic", f"render{k}-{i}.jpg", None)
              for k in range(3) for i in range(10)]
    heads = cross_fit(found, folds=3)
    assert len(heads) == 3
    held = [h.photos for h in heads]
    assert frozenset().union(*held) == {s.photo for s in found} and sum(map(len, held)) == len(found)
    for h in heads:  # a run's photos are all held by one head
        runs = {p.split("/")[0] for p in h.photos if "/" in p}
        assert all({s.photo for s in found if s.run == r} <= h.photos for r in runs)
    assert heads[0](np.zeros((2, 12), np.float32))[0].shape == (2, len(KINDS))


def test_the_doubt_fit_reads_a_photo_the_kind_head_learnt_with_the_head_that_did_not(tmp_path):
    from dicecam.models.train_doubt import _reader_of
    from dicecam.models.train_kind import KindFold
    from dicecam.vision.evaluate import TruthImage

    reader = Reader.load(backend="onnxruntime", doubt=False)
    shipped = reader.kind_head
    fold = KindFold(np.zeros((4, len(KINDS)), np.float32), np.zeros(len(KINDS), np.float32),
                    frozenset({str(tmp_path / "learnt.jpg")}))
    reader_of = _reader_of(reader, [], [fold])
    mine = reader_of(TruthImage(tmp_path / "learnt.jpg", [], meta={}))
    assert mine.kind_head is fold and mine.detector is reader.detector
    assert reader_of(TruthImage(tmp_path / "learnt.jpg", [], meta={})) is mine  # one copy, not one a photo
    assert reader_of(TruthImage(tmp_path / "new.jpg", [], meta={})) is reader
    assert reader.kind_head is shipped  # the shipped reader is left as it was


def test_a_lurig_types_die_is_judged_by_its_value_where_a_set_beside_it_labels_one(tmp_path, monkeypatch):
    from dicecam.models import train_doubt
    from dicecam.vision.crops import FACE_INDEX

    def lines(path, rows):
        path.mkdir(parents=True)
        (path / "truth.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    lines(tmp_path / "lurig-types", [{"image": "images/a.jpg", "dice": [{"type": "d4"}]},
                                     {"image": "images/b.jpg", "dice": [{"type": "d8"}]}])
    lines(tmp_path / "lurig-d4-values", [{"image": "../lurig-types/images/a.jpg", "dice": [{"type": "d4", "value": 3}]}])
    values = train_doubt.values_beside(tmp_path, "lurig-types")
    assert values == {"a.jpg": 3} and train_doubt.values_beside(tmp_path, "lurig-d20-values") == {}

    # Each photo's die read by the numerals as the first face and by the face network as the second.
    read_as = {"a.jpg": [("d4", 2), ("d4", 3)], "b.jpg": [("d8", 5), ("d6", 5)]}

    class Seen:
        def __init__(self, name):
            self.answers = np.array([[FACE_INDEX[f] for f in read_as[name]]])
            self.features = np.zeros((1, 2, len(FEATURES)))
            self.no_pips = self.foreign_up = self.network_ll = None

    class OneDieReader:
        def readings(self, img, name):
            return (Seen(name),)

    monkeypatch.setattr(train_doubt, "detected_photos",
                        lambda reader, items: ((t, None, t.path.name, [(t.dice[0], 0)]) for t in items))
    measured = train_doubt.samples(OneDieReader(), tmp_path / "lurig-types", lambda t: True,
                                   set_name="lurig-types", values=values)
    right, kinds = measured.right, measured.kinds
    assert kinds == ["d4", "d8"]
    assert right.tolist() == [[0.0, 1.0], [1.0, 0.0]]  # a d4 read as its wrong face is wrong; a d8 by its kind


def test_every_set_that_labels_lurig_types_photos_by_value_is_read_beside_it_but_a_picture_faced_die(tmp_path):
    from dicecam.models.train_doubt import PICTURE_FACED, picture_faced, values_beside
    from dicecam.vision.evaluate import LABELLED_BESIDE

    assert set(LABELLED_BESIDE["lurig-types"]) == {"lurig-d4-values", "lurig-top-values", "lurig-d8-values",
                                                   "lurig-d10-values", "lurig-d12-values", "lurig-d6-values",
                                                   "lurig-d20-logo-values"}
    assert PICTURE_FACED == ("lurig-d20-logo-values",)
    for n, name in enumerate(LABELLED_BESIDE["lurig-types"]):
        (tmp_path / name).mkdir()
        row = {"image": f"../lurig-types/images/{name}.jpg", "dice": [{"type": "d12", "value": n + 2}]}
        (tmp_path / name / "truth.jsonl").write_text(json.dumps(row) + "\n")
    assert values_beside(tmp_path, "lurig-types") == {f"{name}.jpg": n + 2 for n, name in
                                                      enumerate(LABELLED_BESIDE["lurig-types"])
                                                      if name not in PICTURE_FACED}
    assert picture_faced(tmp_path, "lurig-types") == {"lurig-d20-logo-values.jpg"}
    assert picture_faced(tmp_path, "lurig-d20-values") == set()


def test_the_doubt_fit_leaves_the_picture_faced_dice_out_and_keeps_each_readers_answer(tmp_path, monkeypatch):
    from dicecam.models import train_doubt
    from dicecam.vision.crops import FACE_INDEX

    (tmp_path / "lurig-types").mkdir()
    (tmp_path / "lurig-types" / "truth.jsonl").write_text("".join(
        json.dumps({"image": f"images/{n}.jpg", "dice": [{"type": "d20"}]}) + "\n" for n in ("plain", "logo")))
    (tmp_path / "lurig-d20-logo-values").mkdir()
    (tmp_path / "lurig-d20-logo-values" / "truth.jsonl").write_text(json.dumps(
        {"image": "../lurig-types/images/logo.jpg", "dice": [{"type": "d20", "value": 20}]}) + "\n")

    class Seen:
        answers = np.array([[FACE_INDEX[("d20", 17)], FACE_INDEX[("d20", 11)]]])
        features = np.zeros((1, 2, len(FEATURES)))
        no_pips = np.array([True])
        foreign_up = np.array([0.7])
        network_ll = np.array([-4.5])

    class OneDieReader:
        def readings(self, img, name):
            return (Seen(),)

    monkeypatch.setattr(train_doubt, "DOUBT_SETS", (("lurig-types", "all"),))
    monkeypatch.setattr(train_doubt, "detected_photos",
                        lambda reader, items: ((t, None, t.path.name, [(t.dice[0], 0)]) for t in items))
    parts = train_doubt._measure(OneDieReader(), tmp_path, None, lambda m: None)
    measured = parts["lurig-types"]
    assert len(measured.right) == 1, "the picture-faced die's photo is not measured"
    assert measured.answers.tolist() == [[FACE_INDEX[("d20", 17)], FACE_INDEX[("d20", 11)]]]
    assert (measured.no_pips.tolist(), measured.foreign_up.tolist(), measured.network_ll.tolist()) == (
        [True], [0.7], [-4.5]), "what the reader flags and turns by is kept"


def test_a_die_the_picture_rule_flags_counts_as_not_sure_when_the_thresholds_are_chosen():
    from dicecam.models.train_doubt import flagged_as_the_reader_flags
    from dicecam.vision.belief import PICTURE_FOREIGN
    from dicecam.vision.crops import FACE_INDEX

    x = np.zeros((4, 2, len(FEATURES)))
    x[:3, 0, FEATURES.index("foreign_text")] = PICTURE_FOREIGN + 0.1  # three dice whose clearest window is no numeral
    answers = np.array([[FACE_INDEX[("d20", 8)]] * 2, [FACE_INDEX[("d4", 3)]] * 2, [FACE_INDEX[("d20", 8)]] * 2,
                        [FACE_INDEX[("d20", 8)]] * 2])
    pick = np.array([0, 0, 1, 0])  # numerals, numerals (a d4), the face network, numerals (a plain window)
    chance = flagged_as_the_reader_flags(x, pick, answers, np.full(4, 0.97))
    assert chance.tolist() == [0.0, 0.97, 0.97, 0.97]


def test_a_doubt_fit_whose_thresholds_cannot_meet_the_bar_on_a_real_source_names_it():
    from dicecam.models.train_doubt import SURE_WRONG, sources_over_the_bar

    fine, over = {"sure_wrong": SURE_WRONG}, {"sure_wrong": SURE_WRONG + 0.01}
    assert sources_over_the_bar({"lurig-types": over, "nell": fine, "synthetic": over}) == ["lurig-types"]
    assert sources_over_the_bar({"lurig-types": fine, "synthetic": over}) == [], "renders are not what it is chosen for"
    assert sources_over_the_bar({"synthetic": over}) == ["synthetic"], "unless there is nothing else"


def _dice(source: str, chances_right: list[tuple[float, int]]):
    chance, right = zip(*chances_right)
    return np.array(right), np.array(chance), np.ones(len(right), np.int64), np.array([source] * len(right))


def _joined(*sources):
    return [np.concatenate(parts) for parts in zip(*sources)]


def test_the_thresholds_leave_the_most_dice_sure_with_at_most_the_bar_wrong_on_every_real_source():
    from dicecam.models.train_doubt import choose_threshold

    # 30 right dice at 0.95 and one wrong at 0.90 on each source (3 % of 31): the wrong one is flagged.
    a = _dice("nell", [(0.95, 1)] * 30 + [(0.90, 0)])
    b = _dice("lurig-d20-values", [(0.95, 1)] * 30 + [(0.90, 0)])
    renders = _dice("synthetic", [(0.97, 0)] * 30)  # renders are not what the thresholds are chosen for
    right, chance, pick, source = _joined(a, b, renders)
    assert choose_threshold(right, chance, pick, source)[1] == 0.91


def test_a_source_whose_wrong_dice_no_threshold_flags_does_not_flag_every_die():
    from dicecam.models.train_doubt import beyond_reach, choose_threshold, sources_over_the_bar, _figures

    # lurig-types has three dice read wrong at 0.995 (3 % of its sure dice at best): every pair of thresholds leaves
    # them sure. The strictest pair would flag all the rest as well; the fallback keeps the bar on what a threshold
    # can reach.
    types = _dice("lurig-types", [(0.995, 0)] * 3 + [(0.96, 1)] * 100 + [(0.80, 0)] * 10)
    nell = _dice("nell", [(0.96, 1)] * 100 + [(0.70, 0)] * 5)
    right, chance, pick, source = _joined(types, nell)
    assert beyond_reach(right, chance, source) == {"lurig-types": 3, "nell": 0}
    below = choose_threshold(right, chance, pick, source)
    assert below[1] == 0.81, "the dice at 0.96 stay sure, the wrong ones at 0.80 are flagged"
    mine = source == "lurig-types"
    figures = {"lurig-types": _figures(right[mine], chance[mine], below[1])}
    assert sources_over_the_bar(figures) == ["lurig-types"], "still named: its unreachable dice are over the bar"
