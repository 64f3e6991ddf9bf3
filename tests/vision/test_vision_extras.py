"""Commands that need an install extra, run as on the README's plain install: each says which extra and
the pip command in one line and exits 2; `bench` runs the benchmarks it can and names those it skipped.

The extras are installed here, so each run hides their modules first (a None in sys.modules makes
`import` fail and `find_spec` answer None, as on a machine without them)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dicecam.mechanics.errors import MissingExtra
from dicecam.vision.extras import EXTRAS, as_missing_extra, require

HIDE = """
import sys
for m in {hidden!r}:
    sys.modules[m] = None
from dicecam.server.cli import main
sys.exit(main({argv!r}))
"""


def without(hidden, *argv, cwd=None):
    code = HIDE.format(hidden=list(hidden), argv=[str(a) for a in argv])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.parametrize(
    "hidden, argv, extra",
    [
        (("moderngl",), ["synth", "--out", "{tmp}/set", "--count", "1"], "synth"),
        (("moderngl",), ["contact-sheet", "--out", "{tmp}/sheet.png"], "synth"),
        (("torch", "ultralytics"), ["train", "--work", "{tmp}/train"], "train"),
        (("moderngl",), ["bench"], "synth"),  # the default benchmark renders its frames: nothing else to run
    ],
)
def test_a_command_without_its_extra_says_which_in_one_line(tmp_path, hidden, argv, extra):
    r = without(hidden, *[a.format(tmp=tmp_path) for a in argv])
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"the {extra} extra" in lines[0] and f"pip install '.[{extra}]'" in lines[0]
    assert lines[0].startswith(f"dicecam {argv[0]}: ")
    assert not (tmp_path / "set").exists() and not (tmp_path / "sheet.png").exists()


def test_bench_runs_what_it_can_and_names_what_it_skipped():
    r = without(("moderngl", "playwright"), "bench", "--odds", "--synth", "--overlay", "--quick")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert any("median_ms" in row for row in rows)  # the odds benchmark ran
    skipped = {row["bench"]: row["skipped"] for row in rows if "skipped" in row}
    assert set(skipped) == {"synth", "overlay"}
    assert "pip install '.[synth]'" in skipped["synth"] and "pip install '.[test]'" in skipped["overlay"]
    assert r.stderr.count("dicecam bench: skipped") == 2 and "Traceback" not in r.stderr


def test_contact_sheet_of_an_exported_folder_needs_no_renderer(tmp_path):
    (tmp_path / "empty").mkdir()
    r = without(("moderngl",), "contact-sheet", "--out", tmp_path / "s.png", "--from", tmp_path / "empty")
    assert "extra" not in r.stderr  # whatever it says about the empty folder, it is not the renderer


def test_require_and_the_module_map():
    require("synth", modules=("json",))  # present: no error
    with pytest.raises(MissingExtra, match=r"the synth extra \(no_such_mod_xyz is not installed\)"):
        require("synth", modules=("no_such_mod_xyz",))
    assert str(as_missing_extra(ModuleNotFoundError(name="moderngl.context"))).endswith("pip install '.[synth]'")
    assert as_missing_extra(ModuleNotFoundError(name="no_such_mod_xyz")) is None  # a bug, not an extra
    assert {"synth", "train", "openvino", "test"} == set(EXTRAS)


def test_every_named_extra_is_one_pyproject_offers():
    import tomllib
    from pathlib import Path

    offered = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert set(EXTRAS) <= set(offered["project"]["optional-dependencies"])
