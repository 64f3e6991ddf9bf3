"""Which Chromium the page tests drive (server/browser.py): DICECAM_CHROMIUM when set, else a system one,
never Ubuntu's apt chromium-browser, a script that only starts a snap (a container cannot run it). Also
run as a script by tests/run.sh with the system's python3, which reads its exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dicecam.server import browser

SCRIPT = Path(browser.__file__)
# The head of Ubuntu 24.04's /usr/bin/chromium-browser (package chromium-browser 2:1snap1-0ubuntu2).
SNAP_STUB = """#!/bin/sh
if ! [ -x /snap/bin/chromium ]; then
    echo "" >&2
    echo "Command '$0' requires the chromium snap to be installed." >&2
    exit 1
fi
exec /snap/bin/chromium "$@"
"""
# Debian's /usr/bin/chromium is a launcher script too, and a real browser.
DEBIAN_LAUNCHER = """#!/bin/sh
# Chromium launcher
LIBDIR=/usr/lib/chromium
exec $LIBDIR/chromium $CHROMIUM_FLAGS "$@"
"""


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def system(tmp_path, monkeypatch):
    """An empty set of system browser paths and an empty PATH, for a test to fill."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    paths: list[str] = []
    monkeypatch.setattr(browser, "CHROMIUM_PATHS", paths)
    monkeypatch.setenv("PATH", str(bin_))
    monkeypatch.delenv(browser.ENV, raising=False)
    return tmp_path, paths


def test_a_snap_stub_is_passed_over_for_a_real_browser(system):
    tmp, paths = system
    stub = executable(tmp / "chromium-browser", SNAP_STUB)
    paths.append(str(stub))
    assert browser.is_snap_stub(stub)
    assert browser.find_chromium() is None, "Ubuntu's stub is no browser"

    real = executable(tmp / "chromium", DEBIAN_LAUNCHER)
    paths.append(str(real))
    assert not browser.is_snap_stub(real)
    assert browser.find_chromium() == str(real)


def test_chromium_on_path_counts_unless_it_is_a_stub(system):
    tmp, _ = system
    on_path = executable(tmp / "bin" / "chromium", SNAP_STUB)
    assert browser.find_chromium() is None
    executable(on_path, "\x7fELF not really, but no script\n")
    assert browser.find_chromium() == str(on_path)


def test_dicecam_chromium_comes_first_and_a_bad_one_is_one_clear_error(system, monkeypatch):
    tmp, paths = system
    paths.append(str(executable(tmp / "chromium", DEBIAN_LAUNCHER)))
    named = executable(tmp / "headless_shell", "\x7fELF\n")
    monkeypatch.setenv(browser.ENV, str(named))
    assert browser.find_chromium() == str(named)

    for bad, says in ((tmp / "nowhere", "is not an executable file"),
                      (executable(tmp / "stub", SNAP_STUB), "only starts the chromium snap")):
        monkeypatch.setenv(browser.ENV, str(bad))
        with pytest.raises(browser.BrowserError) as e:
            browser.find_chromium()
        assert str(e.value) == f"{browser.ENV}={bad} {says}" + ("; name a Chromium binary" if "snap" in says else "")
    (tmp / "plain").write_text("not executable")
    monkeypatch.setenv(browser.ENV, str(tmp / "plain"))
    with pytest.raises(browser.BrowserError, match="is not an executable file"):
        browser.find_chromium()


@pytest.mark.parametrize("named, code", [("real", 0), ("nowhere", 2)])
def test_run_sh_reads_the_script_by_its_output_and_exit_code(tmp_path, named, code):
    """0 prints the path; 2 is a bad DICECAM_CHROMIUM, told in one line (run.sh stops there)."""
    real = executable(tmp_path / "real", "\x7fELF\n")
    env = {"PATH": str(tmp_path), browser.ENV: str(tmp_path / named)}
    # The file run as a script, as run.sh does with the system's python3, before any venv exists.
    r = subprocess.run([sys.executable, "-I", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30,
                       cwd=tmp_path)
    assert r.returncode == code, r.stderr
    assert r.stdout == (f"{real}\n" if code == 0 else "")
    assert r.stderr.splitlines() == ([] if code == 0 else
                                     [f"dicecam: {browser.ENV}={tmp_path / 'nowhere'} is not an executable file"])


def test_no_browser_is_exit_1_and_says_nothing(system, capsys):
    """run.sh then installs one: apt's chromium where it is a browser, else npm's."""
    tmp, paths = system
    paths.append(str(executable(tmp / "chromium-browser", SNAP_STUB)))
    assert browser.main() == 1
    assert capsys.readouterr() == ("", "")
    paths.append(str(executable(tmp / "chromium", DEBIAN_LAUNCHER)))
    assert browser.main() == 0
    assert capsys.readouterr().out == f"{tmp / 'chromium'}\n"
