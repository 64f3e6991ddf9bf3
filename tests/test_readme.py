"""The README's "## Use" examples, as a newcomer meets them: fresh install, fresh working folder.

Every line of the section's code blocks is found here by itself (no list of examples): a line whose
command can run in a test is run as written, through bash, in an empty folder with an empty data
folder, in README order (`dicecam sample photo.jpg` first, then the lines that read it), and must exit
0 with sensible output and no traceback. The other lines are parsed by the real argument parser,
with each `[optional]` group and each `a|b` choice tried and the capitalised placeholders filled in.
A new README line is covered automatically: run, unless its command is in PARSE_ONLY (with why).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dicecam.mechanics.dice import ImageRead
from dicecam.server.cli import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"

# The README lines that are parsed, never run, here, by their command, and why:
PARSE_ONLY = {
    "serve": "a server: it runs until it is stopped",
    "fairness": "needs a roll history; a fresh install has none (it says so in one line)",
    "eval": "needs the user's labelled photos (TRUTH)",
    "bench": "minutes of timings, figures not checks (tests/server/test_server_bench*.py run the parts)",
    "synth": "a dataset of the user's size in the user's folder (tests/datasets run the renderer); photoreal needs Blender",
    "contact-sheet": "renders a table per sample, tens of seconds of CPU (tests/datasets check the sheet)",
    "train": "needs the train extra, the shared real sets and hours",
}
# ... and a `watch` (or any command) given a camera: there is none in a test.
WEBCAM = re.compile(r"^(\d+|/dev/video\d+)$")
# What the capitalised placeholders stand for, to parse the lines that hold them.
PLACEHOLDERS = {"DIR": "out", "N": "2", "S": "0", "TRUTH": "truth.jsonl", "PATH": "photo.jpg"}


def use_lines() -> list[str]:
    """Each command line of the code blocks in the README's "## Use" section, comments and all."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^## Use\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, "the README has no '## Use' section"
    blocks = re.findall(r"^```(?:sh|bash|console)?\n(.*?)^```", m.group(1), re.S | re.M)
    assert blocks, "the README's Use section has no code block"
    return [ln.strip() for b in blocks for ln in b.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def stages(line: str) -> list[list[str]]:
    """The line's pipeline: each stage's words, comment dropped."""
    words = shlex.split(line, comments=True)
    out = [list(g) for is_pipe, g in itertools.groupby(words, lambda w: w == "|") if not is_pipe]
    assert out and all(s[0] == "dicecam" for s in out), f"a README example runs something else than dicecam: {line}"
    return out


def why_parse_only(line: str) -> str | None:
    """Why this line is only parsed, or None when it is run."""
    for stage in stages(line):
        if stage[1] in PARSE_ONLY:
            return PARSE_ONLY[stage[1]]
        if any(a == "--source" and WEBCAM.match(b) for a, b in zip(stage, stage[1:])):
            return "needs a webcam"
    return None


def variants(words: list[str]) -> list[list[str]]:
    """The concrete command lines a usage line stands for: each `[...]` group left out, given whole and
    each of its options alone; each `a|b|c` word as each choice; placeholders filled in."""
    choices: list[list[list[str]]] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("["):
            j = i
            while not words[j].endswith("]"):
                j += 1
            group = [x.strip("[]") for x in words[i:j + 1]]
            options = [[group[0]]]
            for x in group[1:]:
                if x.startswith("-"):
                    options.append([x])
                else:
                    options[-1].append(x)
            choices.append([[], group] + (options if len(options) > 1 else []))
            i = j + 1
            continue
        if "|" in w:
            choices.append([[c] for c in w.split("|")])
        elif re.fullmatch(r"[A-Z]+", w):
            assert w in PLACEHOLDERS, f"a README placeholder this test does not know: {w} (add it to PLACEHOLDERS)"
            choices.append([[PLACEHOLDERS[w]]])
        else:
            choices.append([[w]])
        i += 1
    return [[w for part in pick for w in part] for pick in itertools.product(*choices)]


LINES = use_lines()
RUN = [ln for ln in LINES if why_parse_only(ln) is None]
PARSE = [ln for ln in LINES if why_parse_only(ln) is not None]
# The files the README's `dicecam sample [PATH]` lines write.
SAMPLES = {(s[2] if len(s) > 2 else "sample.jpg") for ln in RUN for s in stages(ln) if s[1] == "sample"}


def short(line: str) -> str:
    return line.split("#")[0].strip()[:70]


def test_the_use_section_starts_with_a_photo_to_read():
    """Issue 22: a newcomer has a photo that works before the first `read`."""
    first_read = next(i for i, ln in enumerate(LINES) if any(s[1] == "read" for s in stages(ln)))
    assert any(stages(ln)[0][1] == "sample" for ln in LINES[:first_read]), "`dicecam sample` comes before `read`"
    assert any(len(stages(ln)) > 1 and stages(ln)[-1][1] == "resolve" for ln in RUN), "a read | resolve pipeline is run"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """An empty working folder, an empty data folder and home, and `dicecam` on PATH for this Python."""
    root = tmp_path_factory.mktemp("newcomer")
    (work := root / "work").mkdir()
    (bin_ := root / "bin").mkdir()
    shim = bin_ / "dicecam"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dicecam.server.cli "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(root / "home"),
           "XDG_DATA_HOME": str(root / "data"), "PYTHONUNBUFFERED": "1"}
    return work, env, {}


def sh(command: str, fresh) -> subprocess.CompletedProcess:
    """`command` through bash (a pipeline fails when any stage does), in the fresh folder."""
    work, env, _ = fresh
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def run(line: str, fresh) -> subprocess.CompletedProcess:
    """The README line's run, once, after every line before it (the sample is written before it is read)."""
    done = fresh[2]
    for earlier in RUN[:RUN.index(line) + 1]:
        if earlier not in done:
            done[earlier] = sh(earlier, fresh)
    return done[line]


@pytest.mark.parametrize("line", RUN, ids=short)
def test_readme_example_runs_as_written(line, fresh):
    work = fresh[0]
    r = run(line, fresh)
    assert r.returncode == 0, f"{line}\nexit {r.returncode}\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stdout.strip(), f"{line}: printed nothing"
    first, last = stages(line)[0], stages(line)[-1]
    if last[1] == "sample":
        written = work / (last[2] if len(last) > 2 else "sample.jpg")
        assert written.read_bytes()[:3] == b"\xff\xd8\xff", "the sample is a JPEG"
    if last[1] == "read":
        for out in r.stdout.splitlines():
            read = ImageRead.model_validate_json(out)
            assert read.dice, f"{line}: no dice read on {read.image}"
            if read.image in SAMPLES:
                # The bundled sample: a Contingency check's three dice, each read without doubt.
                assert sorted(d.type.value for d in read.dice) == ["d10", "d6", "d8"], read
                assert not any(d.uncertain or d.cocked for d in read.dice), read
    if last[1] == "resolve":
        assert not r.stdout.lower().startswith("uncertain"), r.stdout
        # The same line with the verdict as JSON: a verdict, and (after a read) of every die the read found.
        as_json = " | ".join(shlex.join(s) for s in stages(line)) + " --json"
        j = sh(as_json, fresh)
        assert j.returncode == 0, j.stderr
        verdict = json.loads(j.stdout.splitlines()[0])
        assert verdict.get("summary") and verdict.get("outcome"), verdict
        if first[1] == "read":
            read = ImageRead.model_validate_json(sh(shlex.join(first), fresh).stdout.splitlines()[0])
            assert [(d["type"], d["value"]) for d in verdict["dice"]] == [(d.type.value, d.value) for d in read.dice]
            assert len(verdict["dice"]) == 3 or verdict["system"] != "contingency"
    if last[1] == "watch":
        assert re.search(r"^\[frame \d+\]", r.stdout, re.M), r.stdout


@pytest.mark.parametrize("line", PARSE, ids=short)
def test_readme_example_parses(line):
    """A line that cannot run in a test (see PARSE_ONLY) names a real command with flags it takes."""
    parser = build_parser()
    for stage in stages(line):
        for argv in variants(stage[1:]):
            try:
                args = parser.parse_args(argv)
            except SystemExit as e:  # the one-line usage error is on stderr
                pytest.fail(f"{line}\n{shlex.join(argv)} does not parse (exit {e.code})")
            assert args.command == stage[1] and callable(getattr(args, "handler", None)), argv


def test_variants_cover_the_usage_notation():
    assert variants(["eval", "TRUTH", "[--held-out]"]) == [["eval", "truth.jsonl"], ["eval", "truth.jsonl", "--held-out"]]
    v = variants(["synth", "--format", "yolo|jsonl", "[--device", "gpu]"])
    assert ["synth", "--format", "jsonl", "--device", "gpu"] in v and ["synth", "--format", "yolo"] in v and len(v) == 4
    assert len(variants(["bench", "[--odds", "--all]"])) == 4  # none, both, each alone
    assert why_parse_only("dicecam watch --source 0 --system x") == "needs a webcam"
    assert why_parse_only("dicecam watch --source demo") is None
