"""Which Chromium the page tests and the overlay benchmark drive: the one place that decides.

DICECAM_CHROMIUM names it when set (tests/run.sh sets it: Debian's apt chromium, or on Ubuntu the
headless Chromium it unpacks from npm into the clone's .cache). Otherwise a system Chromium, but never
Ubuntu's /usr/bin/chromium-browser: apt installs it there as a shell script that only starts the snap,
which a container or a machine without snapd cannot run, and Playwright would fail to launch it.

Standard library only: tests/run.sh runs this file with the system's python3 (`python3 server/browser.py`
prints the path; exits 1 when there is none, 2 for a bad DICECAM_CHROMIUM) before the test venv exists.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

try:
    from dicecam.mechanics.errors import DicecamError as _UserError
except ImportError:  # run as a script by tests/run.sh, before this clone is installed anywhere
    _UserError = ValueError

ENV = "DICECAM_CHROMIUM"
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


class BrowserError(_UserError):
    """DICECAM_CHROMIUM names no browser that can run (the CLI prints it as one line)."""


def is_snap_stub(path: str | os.PathLike) -> bool:
    """A launcher script that hands over to a snap (Ubuntu's apt chromium-browser), not a browser."""
    try:
        with open(path, "rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return False
    # A browser is an ELF binary; Debian's /usr/bin/chromium is a script too, but it never mentions snap.
    return head.startswith(b"#!") and b"/snap/" in head


def find_chromium() -> str | None:
    """The Chromium to drive, or None when this machine has none; BrowserError for a bad DICECAM_CHROMIUM."""
    named = os.environ.get(ENV, "").strip()
    if named:
        p = Path(named)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise BrowserError(f"{ENV}={named} is not an executable file")
        if is_snap_stub(p):
            raise BrowserError(f"{ENV}={named} only starts the chromium snap; name a Chromium binary")
        return str(p)
    which = shutil.which("chromium")
    for p in (*CHROMIUM_PATHS, *([which] if which else [])):
        if Path(p).is_file() and os.access(p, os.X_OK) and not is_snap_stub(p):
            return p
    return None


def main() -> int:
    try:
        exe = find_chromium()
    except BrowserError as e:
        print(f"dicecam: {e}", file=sys.stderr)
        return 2
    if exe is None:
        return 1
    print(exe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
