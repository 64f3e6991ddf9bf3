"""The text recogniser's fine-tuning cannot rot: the wheel's network goes to torch and back unchanged,
a short fine-tune on a few renders writes a recogniser the reader loads in place of the wheel's, and a
doubt model fitted on another recogniser is refused."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from dicecam.mechanics.errors import DicecamError
from dicecam.vision.numerals import MODEL, WHEEL_RECOGNISER, TextRecogniser, wheel_file
from dicecam.vision.read import Reader, models_dir


@pytest.fixture(autouse=True)
def _can_convert():
    # Looked for when a test runs, not imported at collection: see train_recogniser.to_torch.
    if importlib.util.find_spec("onnx2torch") is None:
        pytest.skip("onnx2torch (the train extra) is not installed")


def windows(n: int = 6) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (n, 48, 48, 3), np.uint8)


def test_the_wheels_recogniser_goes_to_torch_and_back_unchanged(tmp_path):
    from dicecam.models.train_recogniser import export, to_torch

    export(to_torch(wheel_file(MODEL)).eval(), tmp_path / "recogniser.onnx")
    ours, wheels = TextRecogniser.load(path=tmp_path / "recogniser.onnx"), TextRecogniser.load()
    assert np.abs(np.exp(ours(windows())) - np.exp(wheels(windows()))).max() < 1e-4


def test_a_short_fine_tune_on_renders_writes_a_recogniser_the_reader_reads_with(renders, shipped_copy, tmp_path):
    from dicecam.models.train_recogniser import RecogniserTrainConfig, train_recogniser

    meta = train_recogniser(None, renders, shipped_copy, cache=tmp_path / "dice.npz",
                            cfg=RecogniserTrainConfig(epochs=1), log=lambda m: None)
    assert [row["epoch"] for row in meta["history"]] == [0, 1]
    assert all(0 <= row["rendered"] <= 1 for row in meta["history"])
    assert json.loads((shipped_copy / "recogniser.json").read_text())["dice"] == meta["dice"] > 0
    reader = Reader.load(shipped_copy, backend="onnxruntime")
    assert reader.numerals.source.startswith("sha256:") and reader.numerals.source != WHEEL_RECOGNISER
    assert not np.allclose(reader.numerals.recogniser(windows()), TextRecogniser.load()(windows()))


def test_a_doubt_model_fitted_on_another_recogniser_is_refused(shipped_copy):
    meta = json.loads((models_dir() / "doubt.json").read_text())
    (shipped_copy / "doubt.json").write_text(json.dumps({**meta, "recogniser": "sha256:not-this-one"}))
    with pytest.raises(DicecamError, match="another text recogniser"):
        Reader.load(shipped_copy, backend="onnxruntime")



def test_the_recipes_recogniser_stage_leaves_a_reader_folder_that_loads_whole(renders, tmp_path):
    # (`renders` skips this where there is no headless OpenGL: the stage renders its own images.)
    from dicecam.models.recipe import Recipe, run
    from dicecam.models.train_recogniser import RecogniserTrainConfig

    export = tmp_path / "export"
    run(Recipe(work=tmp_path / "work", export=export, stages=("recogniser",), recogniser_images=3,
               recogniser=RecogniserTrainConfig(epochs=1)), log=lambda m: None)
    reader = Reader.load(export, backend="onnxruntime")
    assert reader.numerals.source.startswith("sha256:") and reader.kind_head is not None


def test_the_cross_fit_splits_the_runs_so_every_part_holds_every_camera():
    from dicecam.models.train_recogniser import run_folds

    sizes = {"d20_top-1": 40, "d20_top-2": 30, "d20_top-3": 20, "d20_wood-1": 50, "d20_wood-2": 10, "d20_color-4": 25,
             "d20_color-5": 25}
    groups = np.array(["synthetic"] * 30 + [run for run, n in sizes.items() for _ in range(n)])
    parts = run_folds(groups, 2)
    assert sorted(sum(parts, [])) == sorted(sizes)  # every real run in one part, the renders in none
    assert all({run.rsplit("-", 1)[0] for run in part} == {"d20_top", "d20_wood", "d20_color"} for part in parts)
    dice = [sum(sizes[run] for run in part) for part in parts]
    assert abs(dice[0] - dice[1]) <= 40
    assert run_folds(groups, 2) == parts  # the same split every time: the doubt stage reads it again


def test_a_fold_recogniser_never_learns_its_own_runs_and_a_resumed_run_keeps_it(tmp_path, monkeypatch):
    from dicecam.models import train_recogniser as tr

    rng = np.random.default_rng(0)
    groups = np.array(["synthetic"] * 4 + ["cam-1"] * 3 + ["cam-2"] * 3)
    data = tr.DiceWindows(rng.integers(0, 256, (10, 36, 48, 48, 3), np.uint8), np.array(["d20"] * 10),
                          rng.integers(1, 21, 10), groups)
    taught = []

    def fake_fine_tune(onnx_path, train, out, cfg, *, val=None, log=print):
        taught.append((set(train.group), set(val["fold"].group)))
        out.write_bytes(b"weights")
        return {"history": [], "dice": len(train)}

    monkeypatch.setattr(tr, "fine_tune", fake_fine_tune)
    metas = [tr.fine_tune_fold(data, k, tmp_path, folds=2) for k in range(2)]
    for (learnt, measured), meta in zip(taught, metas):
        assert measured == set(meta["runs"]) and not learnt & measured
        assert "synthetic" in learnt
    assert {run for meta in metas for run in meta["runs"]} == {"cam-1", "cam-2"}
    tr.fine_tune_fold(data, 0, tmp_path, folds=2)  # both files there: nothing is fine-tuned again
    assert len(taught) == 2


def test_the_doubt_fit_reads_a_learnt_photo_with_the_fold_recogniser_that_did_not_learn_it(tmp_path):
    import shutil

    from dicecam.models.train_doubt import _fold_readers, _reader_of
    from dicecam.vision.evaluate import TruthImage

    shutil.copy(wheel_file(MODEL), tmp_path / "recogniser-fold0.onnx")
    (tmp_path / "recogniser-fold0.json").write_text(json.dumps({"file": "recogniser-fold0.onnx", "runs": ["top-1"]}))
    reader = Reader.load(backend="onnxruntime", doubt=False)
    shipped = reader.numerals
    folds = _fold_readers(reader, tmp_path)
    reader_of = _reader_of(reader, folds)
    fold_reader = reader_of(TruthImage(tmp_path / "a.jpg", [], meta={"sequence": "top-1"}))
    assert fold_reader is folds[0][0] and fold_reader.numerals.source.startswith("sha256:")
    assert fold_reader.detector is reader.detector  # the same dice found; only the numerals are read anew
    assert reader_of(TruthImage(tmp_path / "b.jpg", [], meta={"sequence": "top-2"})) is reader
    assert reader.numerals is shipped  # the shipped reader is left as it was
