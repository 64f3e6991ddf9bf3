"""Both backends read the shipped ONNX files alike, on any CPU: a die must not read differently on a machine whose
CPU computes in bfloat16 (OpenVINO's own default there)."""

import numpy as np
import pytest

from dicecam.vision.backends import compile_openvino, installed, open_session
from dicecam.vision.numerals import MODEL, wheel_file

pytestmark = pytest.mark.skipif("openvino" not in installed(), reason="OpenVINO is an optional extra")


def test_openvino_computes_in_float32_whatever_the_cpu_has():
    import openvino as ov

    compiled = compile_openvino(wheel_file(MODEL), 1)
    assert compiled.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32


def test_the_recogniser_gives_the_same_scores_on_both_backends():
    # Windows with strokes in them, not flat noise: the outputs must agree where the recogniser is sure as well.
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (24, 3, 48, 48)).astype(np.float32)
    x[:, :, 10:38, 20:26] = 1.0
    ort_out = open_session(wheel_file(MODEL), "onnxruntime", 1)(x)[0]
    ov_out = open_session(wheel_file(MODEL), "openvino", 1)(x)[0]
    # float32 on both agrees to rounding; OpenVINO's bfloat16 was 0.2 off here (measured on an AVX-512 BF16 CPU).
    assert np.abs(ort_out - ov_out).max() < 1e-3
