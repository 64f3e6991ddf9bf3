"""Every `dicecam bench` run names the machine its figures come from, first."""

from __future__ import annotations

import json
import subprocess
import sys

from dicecam.server.benchmarks import host
from dicecam.server.benchmarks.host import VECTOR_FLAGS, host_row


def test_the_host_row_names_the_cpu_its_usable_cores_its_vector_extensions_and_the_runtimes():
    row = host_row()
    assert row["bench"] == "host" and row["cpu"]
    assert 1 <= row["cores"]
    assert set(row["vector"]) <= set(VECTOR_FLAGS)
    assert "onnxruntime" in row["versions"] and "numpy" in row["versions"]


def test_the_cpu_and_its_extensions_are_read_from_cpuinfo(tmp_path, monkeypatch):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Example CPU 9000\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n\n"
                    "processor\t: 1\nmodel name\t: Example CPU 9000\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n")
    monkeypatch.setattr(host, "Path", lambda _: info)
    row = host_row()
    assert row["cpu"] == "Example CPU 9000"
    assert row["vector"] == ["avx2", "avx512f", "avx512_bf16"]


def test_bench_prints_the_host_before_its_figures():
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "bench", "--odds", "--quick"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows[0]["bench"] == "host" and all("median_ms" in row for row in rows[1:])
