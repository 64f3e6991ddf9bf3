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
