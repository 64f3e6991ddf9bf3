"""Inference backends for the shipped ONNX files: ONNX Runtime (always installed) and OpenVINO
(optional extra). OpenVINO reads the same .onnx file, so one set of weights serves both.

Each runtime is imported when a session opens: the one not chosen (or not installed) is never
loaded, and neither slows a command that reads no dice."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path
from typing import Callable

import numpy as np

from dicecam.mechanics.errors import DicecamError

BACKENDS = ("onnxruntime", "openvino")
Session = Callable[[np.ndarray], list[np.ndarray]]


def installed() -> list[str]:
    return [b for b in BACKENDS if find_spec(b) is not None]


def default_backend() -> str:
    """OpenVINO when installed (about twice as fast on a laptop CPU), else ONNX Runtime."""
    return "openvino" if "openvino" in installed() else "onnxruntime"


# OpenVINO computes in bfloat16 by default on a CPU that has it (AVX-512 BF16, AMX), in float32 elsewhere. The
# reader's doubt thresholds were set on float32 reads, and on such a CPU bfloat16 moved dice both ways on every
# shared set (models/MODEL_CARD.md, eleventh stop): a die must read the same on every machine, so float32 it is.
OPENVINO_CONFIG = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}


def compile_openvino(path: Path, threads: int):
    """The ONNX file compiled by OpenVINO for this machine's CPU, in float32."""
    import openvino as ov

    return ov.Core().compile_model(str(path), "CPU", {"INFERENCE_NUM_THREADS": threads, **OPENVINO_CONFIG})


def open_session(path: Path, backend: str = "auto", threads: int | None = None) -> Session:
    """A callable from one input batch to the model's outputs, in the ONNX output order."""
    backend = default_backend() if backend == "auto" else backend
    if backend not in BACKENDS:
        raise DicecamError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if backend not in installed():
        raise DicecamError(f"backend {backend} is not installed (pip install {backend})")
    threads = threads or min(4, os.cpu_count() or 1)
    if backend == "openvino":
        compiled = compile_openvino(path, threads)
        request = compiled.create_infer_request()
        outputs = compiled.outputs

        def run_ov(x: np.ndarray) -> list[np.ndarray]:
            res = request.infer({0: x})
            return [np.asarray(res[o]) for o in outputs]

        return run_ov
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    # The detector and the face reader each have a thread pool; spinning pools on two cores steal
    # each other's time (measured: 75 -> 52 ms per frame with 10 dice when they sleep instead).
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name

    def run_ort(x: np.ndarray) -> list[np.ndarray]:
        return sess.run(None, {name: x})

    return run_ort
