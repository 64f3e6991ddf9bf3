"""Where a benchmark ran: the same code reads several times faster on one CPU than on another (the reader's
10-dice frame took ~330 ms on the AVX2 hosts of earlier stops and ~120 ms on an AVX-512 one, 2 cores each), so
every `dicecam bench` run names its machine first and its figures are compared only with the same machine's."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

# The vector extensions the inference runtimes choose their kernels by, as /proc/cpuinfo names them.
VECTOR_FLAGS = ("avx2", "avx512f", "avx_vnni", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8", "asimd", "sve")
RUNTIMES = ("onnxruntime", "openvino", "numpy", "opencv-python-headless")


def _cpuinfo() -> tuple[str, set[str]]:
    """(model name, flags) from /proc/cpuinfo; ("", set()) where there is none (not Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return "", set()
    name, flags = "", set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "hardware") and not name:
            name = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    return name, flags


def host_row() -> dict:
    name, flags = _cpuinfo()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    versions = {}
    for package in RUNTIMES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return {"bench": "host", "cpu": name or platform.processor() or platform.machine(), "cores": cores,
            "vector": [f for f in VECTOR_FLAGS if f in flags], "python": platform.python_version(),
            "versions": versions}
