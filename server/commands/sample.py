"""CLI command `sample`: write the bundled sample photo (a d6, a d8 and a d10 on a table) to a file.

A newcomer with no camera and no photo of their own gets one the reader reads, to try the README's
examples on (`dicecam sample photo.jpg`, then `dicecam read photo.jpg | dicecam resolve contingency
--target 5`). The photo is rendered by our own renderer (`python -m dicecam.datasets.sample`) and ships
in the package as vision/assets/sample.jpg. register() imports nothing heavy.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from dicecam.mechanics.errors import DicecamError

ASSET = "sample.jpg"
DEFAULT = "sample.jpg"
WHAT = "a d6, a d8 and a d10 on a table"


def register(subparsers) -> None:
    """Add `sample`; see server/cli.py for the contract."""
    p = subparsers.add_parser(
        "sample", help="write a sample photo of three dice (a Contingency check) to try `read` on",
        description=f"Write the bundled sample photo ({WHAT}, 640x480 JPEG) to PATH, to try "
        "`dicecam read PATH` on. An existing file is never overwritten; a folder gets PATH/sample.jpg.")
    p.add_argument("path", nargs="?", default=DEFAULT, type=Path, metavar="PATH",
                   help=f"where to write it (default: {DEFAULT})")
    p.set_defaults(handler=_sample)


def sample_bytes() -> bytes:
    """The bundled sample photo's JPEG bytes."""
    asset = resources.files("dicecam.vision") / "assets" / ASSET
    try:
        return asset.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        raise DicecamError(f"the bundled sample photo (vision/assets/{ASSET}) is missing from this install") from None


def _sample(args) -> int:
    data = sample_bytes()
    path: Path = args.path
    if path.is_dir():
        path = path / DEFAULT
    try:
        with open(path, "xb") as f:  # exclusive: never overwrite a photo that is already there
            try:
                f.write(data)
            except BaseException:
                path.unlink(missing_ok=True)
                raise
    except FileExistsError:
        print(f"dicecam sample: {path} already exists: give another PATH, or remove it first", file=sys.stderr)
        return 1
    except OSError as e:  # no such folder, not allowed, read-only or full disk: one line, no traceback
        print(f"dicecam sample: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({WHAT}); try: dicecam read {path} | dicecam resolve contingency --target 5")
    return 0
