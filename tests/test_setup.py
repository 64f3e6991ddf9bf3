"""The README's two set-up commands (issue 22): their shape, and what the test command really runs.

The Run command must work on a stock Debian/Ubuntu Python, which refuses `pip install` outside a virtual
environment (PEP 668) and ships without `venv` until python3-venv is installed: it installs python3-venv,
makes a venv, installs the package through it and starts `dicecam serve` from it. The test command is
`bash tests/run.sh`, which must never reinstall the package into the user's Python or into the Run
command's venv (that pulled the files from under a running server: every page answered 500). It is run
here with a stand-in `python3` on PATH that records each call and makes a stand-in venv, so what it would
run is checked without installing anything.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RUN_SH = ROOT / "tests" / "run.sh"


def setup_commands() -> dict[str, str]:
    """The section's command lines by the word their comment starts with: {"Run": ..., "Test": ...}."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^## Set-up: two commands\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, "the README has no '## Set-up: two commands' section"
    out: dict[str, str] = {}
    for block in re.findall(r"^```(?:sh|bash)?\n(.*?)^```", m.group(1), re.S | re.M):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        comments = [ln for ln in lines if ln.startswith("#")]
        commands = [ln for ln in lines if not ln.startswith("#")]
        assert len(commands) == 1, f"each set-up block holds one command line: {block!r}"
        assert comments, f"each set-up block says what it is in a comment: {block!r}"
        out[comments[0].lstrip("# ").split(":")[0]] = commands[0]
    assert set(out) == {"Run", "Test"}, f"the set-up section has a Run and a Test command, found {sorted(out)}"
    return out


def steps(line: str) -> list[list[str]]:
    """The `&&` chain's commands, each as its words."""
    words = shlex.split(line, comments=True)
    assert not {";", "||", "|", "&"} & set(words), f"the command is a plain && chain: {line}"
    out: list[list[str]] = [[]]
    for w in words:
        if w == "&&":
            out.append([])
        else:
            out[-1].append(w)
    assert all(out), f"an empty step in {line}"
    return out


def run_venv() -> str:
    """The folder the Run command makes its venv in."""
    made = [s[-1] for s in steps(setup_commands()["Run"]) if s[:3] == ["python3", "-m", "venv"]]
    assert len(made) == 1, "the Run command makes one virtual environment with `python3 -m venv DIR`"
    return made[0]


def test_run_command_installs_python3_venv_then_uses_a_venv():
    line = setup_commands()["Run"]
    chain = steps(line)
    venv = run_venv()
    assert not Path(venv).is_absolute() and ".." not in Path(venv).parts, "the venv is made in the clone"
    made = next(i for i, s in enumerate(chain) if s[:3] == ["python3", "-m", "venv"])
    apt = [i for i, s in enumerate(chain) if "apt-get" in s and "install" in s]
    assert apt and "python3-venv" in chain[apt[0]], "a stock Debian/Ubuntu python3 needs python3-venv from apt"
    assert apt[0] < made, "python3-venv is installed before the venv is made"
    assert any("update" in s and "apt-get" in s for s in chain[:apt[0]]), "a fresh image has no apt lists: update first"

    # After the venv is made, pip and dicecam are the venv's: through `. VENV/bin/activate` or by path.
    activated = False
    pip_steps = serve_steps = 0
    for s in chain[made + 1:]:
        if s[0] in (".", "source"):
            assert s[1:] == [f"{venv}/bin/activate"], f"activates another venv: {s}"
            activated = True
        elif "pip" in " ".join(s):
            own = s[0] in (f"{venv}/bin/pip", f"{venv}/bin/python") or (activated and s[0] in ("pip", "python", "python3"))
            assert own, f"pip runs outside the venv: {shlex.join(s)}"
            assert "install" in s and "." in s, f"installs the package from the clone: {shlex.join(s)}"
            pip_steps += 1
        elif s[-1] == "serve":
            assert s[0] == f"{venv}/bin/dicecam" or (activated and s[0] == "dicecam"), f"serves from outside the venv: {s}"
            serve_steps += 1
    assert pip_steps == 1 and serve_steps == 1 and chain[-1][-1] == "serve", "installs once, then ends serving"
    for bad in ("--break-system-packages", "--user", "-e", "--editable"):
        assert bad not in line.split(), f"the Run command must not use {bad}"
    assert not any(s[:3] == ["python3", "-m", "pip"] for s in chain), "pip of the system's python3 (PEP 668 refuses it)"


def test_test_command_is_tests_run_sh_and_ci_calls_it():
    assert setup_commands()["Test"] == "bash tests/run.sh"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\s*(exec\s+)?bash tests/run\.sh\b", ci, re.M), ".ci/run calls the README's test command"


STUB = r"""#!/usr/bin/env bash
# A stand-in python3: records the call, makes a stand-in venv, answers the few questions run.sh asks.
printf '%s\t%s\t%s\t%s\n' "$0" "${PATH%%:*}" "${VIRTUAL_ENV:-}" "$*" >> "$STUB_LOG"
if [ "$1 $2" = "-m venv" ]; then
  dir=${@: -1}; mkdir -p "$dir/bin"; cp "$0" "$dir/bin/python"; exit 0
fi
if [ "$1" = "-c" ] && [[ $2 == *base_prefix* ]]; then echo "/stub 3 11"; fi
[ "$1" = "-" ] && cat > /dev/null
[ "$1 $2" = "-m pytest" ] && printf '%s' "${DICECAM_CHROMIUM-(unset)}" > "$STUB_LOG.browser"
# server/browser.py, which picks the page tests' Chromium: the one in $STUB_BROWSER, if any.
if [[ $1 == */browser.py ]]; then [ -s "$STUB_BROWSER" ] || exit 1; cat "$STUB_BROWSER"; fi
exit 0
"""


@pytest.fixture
def stub_clone(tmp_path):
    """A copy of what tests/run.sh reads, with stand-ins for python3, dpkg, apt-get, sudo and npm on PATH."""
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    shutil.copy(RUN_SH, clone / "tests" / "run.sh")
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    axe = clone / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
    axe.parent.mkdir(parents=True)
    axe.write_text("")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, body in {"python3": STUB, "dpkg": "#!/bin/sh\nexit 0\n",
                       "apt-get": '#!/bin/sh\necho "apt-get $*" >> "$STUB_LOG"\n',
                       "sudo": '#!/bin/sh\necho "sudo $*" >> "$STUB_LOG"\nexec "$@"\n',
                       "npm": '#!/bin/sh\necho "npm $*" >> "$STUB_LOG"\n'}.items():
        (bin_ / name).write_text(body)
        (bin_ / name).chmod(0o755)
    log = tmp_path / "calls.log"
    browser = tmp_path / "browser"
    browser.write_text("/usr/bin/chromium\n")
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "STUB_LOG": str(log),
           "STUB_BROWSER": str(browser)}
    env.pop("VIRTUAL_ENV", None)
    env.pop("DICECAM_CHROMIUM", None)
    return clone, bin_, log, env


def calls(log: Path) -> list[tuple[str, str, str, str]]:
    rows = [tuple(ln.split("\t")) for ln in log.read_text().splitlines()] if log.exists() else []
    assert all(len(r) == 4 for r in rows), f"only the stand-in python3 should run: {rows}"
    return rows


def test_run_sh_makes_its_own_venv_and_runs_pytest_with_its_python(stub_clone):
    clone, bin_, log, env = stub_clone
    r = subprocess.run(["bash", str(clone / "tests" / "run.sh"), "tests/test_layout.py", "-q"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    system, rows = str(bin_ / "python3"), calls(log)
    made = [shlex.split(a) for exe, _, _, a in rows if exe == system and a.startswith("-m venv")]
    assert len(made) == 1, f"run.sh makes one venv with python3 -m venv: {rows}"
    venv = Path(made[0][-1])
    assert "--system-site-packages" in made[0], "the test venv reuses system-wide packages (torch on CI images)"
    assert venv.parent.resolve() == clone.resolve(), "the test venv lives in the clone"
    assert venv.name != Path(run_venv()).name, "the test venv is not the Run command's venv"
    py = str(venv / "bin" / "python")

    # Nothing installs into, or runs tests with, the Python that made the venv: only the venv's does.
    for exe, _, _, args in rows:
        if exe == system:
            assert not re.match(r"-m (pip|pytest)\b", args), f"run.sh runs `python3 {args}` outside its venv"
    pips = [a for exe, _, _, a in rows if exe == py and a.startswith("-m pip install")]
    assert any("torch==" in a and "torchvision==" in a for a in pips), f"the pinned torch pair: {pips}"
    assert any(shlex.split(a)[-2:] == ["-e", ".[test,train,openvino]"] for a in pips), f"editable with extras: {pips}"
    last = rows[-1]
    assert last[0] == py and last[3] == "-m pytest tests/test_layout.py -q", f"pytest runs last, by the venv's Python: {last}"
    assert last[1] == str(venv / "bin") and last[2] == str(venv), "the venv's bin leads PATH for the suite's subprocesses"
    assert Path(f"{log}.browser").read_text() == "/usr/bin/chromium", "the page tests get the browser found"

    # A second run reuses the venv and, with pyproject.toml unchanged, installs nothing.
    log.unlink()
    r = subprocess.run(["bash", str(clone / "tests" / "run.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    again = calls(log)
    assert not [a for _, _, _, a in again if a.startswith(("-m venv", "-m pip"))], f"the second run reinstalled: {again}"
    assert again[-1][0] == py and again[-1][3] == "-m pytest"


# What run.sh does where no Chromium is found: `apt-cache show --no-all-versions chromium` as Debian 12
# answers it (a browser), and as Ubuntu 24.04 does (nothing: only its snap stub chromium-browser provides
# the name) or as a release whose chromium were itself a stub (it depends on snapd).
DEBIAN_SHOW = "Package: chromium\nVersion: 150.0.7871.100-1~deb12u1\nDepends: libc6 (>= 2.35), libnss3 (>= 2:3.35)\n"
SNAP_SHOWS = ["", "Package: chromium\nVersion: 2:1snap1-0ubuntu2\nPre-Depends: debconf, snapd\n"]
FAKE_CHROMIUM = "#!/bin/sh\necho Chromium 153.0.8010.0\n"


@pytest.fixture
def no_browser(stub_clone, tmp_path):
    """stub_clone on a machine without a Chromium, whose apt-get, apt-cache, dpkg and npm are stand-ins that
    record to sys.log: dpkg knows what the stand-in apt-get installed, and apt's chromium puts a browser
    where server/browser.py (the stand-in python3) finds it. npm pack gives a tarball laid out as
    @sparticuz/chromium's, with a script for its brotli-compressed browser."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node (npm's, which run.sh unpacks the browser with) is not installed")
    clone, bin_, log, env = stub_clone
    Path(env["STUB_BROWSER"]).write_text("")
    br = subprocess.run([node, "-e", 'process.stdout.write(require("zlib").brotliCompressSync(process.argv[1]))',
                         FAKE_CHROMIUM], capture_output=True, check=True, timeout=60).stdout
    pack = tmp_path / "pack"
    (pack / "package" / "bin").mkdir(parents=True)
    (pack / "package" / "bin" / "chromium.br").write_bytes(br)
    tgz = tmp_path / "sparticuz-chromium-153.0.0.tgz"
    subprocess.run(["tar", "-czf", str(tgz), "-C", str(pack), "package"], check=True)
    sys_log, installed, show = tmp_path / "sys.log", tmp_path / "installed", tmp_path / "apt-show"
    installed.write_text("")
    for name, body in {
        "dpkg": '#!/bin/bash\ncase $2 in chromium|libnss3|fontconfig-config) grep -qx "$2" "$STUB_INSTALLED";; esac\n',
        "apt-cache": '#!/bin/sh\necho "apt-cache $*" >> "$STUB_SYS_LOG"\ncat "$STUB_APT_SHOW"\n',
        "apt-get": '#!/bin/bash\necho "apt-get $*" >> "$STUB_SYS_LOG"\n[ "$1" = install ] || exit 0\n'
                   'for p in "$@"; do [[ $p == -* ]] || echo "$p" >> "$STUB_INSTALLED"; done\n'
                   'grep -qx chromium "$STUB_INSTALLED" && echo /usr/bin/chromium > "$STUB_BROWSER"\nexit 0\n',
        "npm": '#!/bin/sh\necho "npm $*" >> "$STUB_SYS_LOG"\n[ "$1" = pack ] && cp "$STUB_TGZ" .\nexit 0\n',
    }.items():
        (bin_ / name).write_text(body)
        (bin_ / name).chmod(0o755)
    env.update(STUB_SYS_LOG=str(sys_log), STUB_INSTALLED=str(installed), STUB_APT_SHOW=str(show), STUB_TGZ=str(tgz))
    return clone, log, sys_log, show, env


def run_sh(clone: Path, env: dict) -> subprocess.CompletedProcess:
    r = subprocess.run(["bash", str(clone / "tests" / "run.sh")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def installs(sys_log: Path) -> list[list[str]]:
    return [ln.split()[1:] for ln in sys_log.read_text().splitlines() if ln.startswith("apt-get install")]


@pytest.mark.parametrize("show", SNAP_SHOWS, ids=["ubuntu-24.04", "snapd-dependent"])
def test_where_apt_chromium_is_a_snap_stub_run_sh_unpacks_npm_s_once(no_browser, show):
    clone, log, sys_log, show_file, env = no_browser
    show_file.write_text(show)
    run_sh(clone, env)
    exe = clone / ".cache" / "chromium" / "153.0.0" / "chromium"
    assert exe.read_text() == FAKE_CHROMIUM and os.access(exe, os.X_OK), "the browser unpacked from the tarball"
    assert [p.name for p in exe.parent.iterdir()] == ["chromium"], "nothing of the unpacking is left beside it"
    (install,) = installs(sys_log)
    assert "chromium" not in install, f"installed the snap stub: {install}"
    assert {"libnss3", "fontconfig-config"} <= set(install), f"the unpacked browser's libraries: {install}"
    assert "npm pack --silent @sparticuz/chromium@153.0.0" in sys_log.read_text().splitlines()
    assert Path(f"{log}.browser").read_text() == str(exe), "the page tests are told which browser"

    # The next run reuses it: nothing fetched or installed, no apt lists read.
    sys_log.unlink()
    run_sh(clone, env)
    assert not sys_log.exists(), sys_log.read_text()
    assert Path(f"{log}.browser").read_text() == str(exe)


def test_where_apt_chromium_is_a_browser_run_sh_installs_it(no_browser):
    clone, log, sys_log, show_file, env = no_browser
    show_file.write_text(DEBIAN_SHOW)
    run_sh(clone, env)
    (install,) = installs(sys_log)
    assert "chromium" in install and "libnss3" not in install, install
    assert not [ln for ln in sys_log.read_text().splitlines() if ln.startswith("npm")], "nothing from npm"
    assert not (clone / ".cache" / "chromium").exists()
    assert Path(f"{log}.browser").read_text() == "/usr/bin/chromium"


def test_a_tarball_without_the_browser_stops_run_sh_with_one_clear_line(no_browser, tmp_path):
    clone, log, sys_log, show_file, env = no_browser
    show_file.write_text("")
    Path(env["STUB_TGZ"]).write_bytes(b"not a tarball")
    r = subprocess.run(["bash", str(clone / "tests" / "run.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == "tests/run.sh: could not fetch @sparticuz/chromium@153.0.0 from the npm registry"
    assert not (clone / ".cache" / "chromium" / "153.0.0" / "chromium").exists()
    assert not list((clone / ".cache" / "chromium" / "153.0.0").iterdir()), "the half-done unpacking is removed"
    assert not Path(f"{log}.browser").exists(), "pytest never ran"


def test_off_x86_64_run_sh_says_what_to_set_instead_of_fetching_a_browser_that_cannot_run(no_browser, tmp_path):
    clone, log, sys_log, show_file, env = no_browser
    show_file.write_text("")
    uname = Path(env["PATH"].split(os.pathsep)[0]) / "uname"
    uname.write_text('#!/bin/sh\necho aarch64\n')
    uname.chmod(0o755)
    r = subprocess.run(["bash", str(clone / "tests" / "run.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "tests/run.sh: apt's chromium here only starts a snap, and @sparticuz/chromium@153.0.0 is built for x86_64"
        " alone; set DICECAM_CHROMIUM to a Chromium for aarch64"]
    assert not installs(sys_log) and "npm" not in sys_log.read_text(), "nothing installed or fetched for it"
