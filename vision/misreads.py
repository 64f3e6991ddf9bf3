"""The dice `dicecam eval` read wrong, listed and drawn on one sheet to look at (`dicecam eval --misreads DIR`).

A figure says how often a reader is wrong; only the dice themselves say why (a neighbour's numeral read, a 7 taken
for a 1, a die seen from the side). `misreads.jsonl` lists every die read wrong, one JSON line each (`Misread`);
`misreads.jpg` draws up to `MOST` of them, those read without a doubt flag first (the worst answer a reader gives),
each a crop round its box captioned "truth > read".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from dicecam.mechanics.errors import DicecamError

from .crops import square_crop
from .evaluate import Misread

MOST = 48  # dice drawn on the sheet; the list holds every one
TILE = 160  # px, a die's crop on the sheet
CAPTION = 36  # px under each crop
COLUMNS = 8
MARGIN = 0.3  # of the box's side, kept round it: a die's neighbourhood shows why it was misread
SURE_RED = (40, 40, 230)  # BGR: a die read wrong without a doubt flag
DOUBTED = (200, 200, 200)


def ordered(misreads: Sequence[Misread]) -> list[Misread]:
    """The dice read wrong without a doubt flag first, each group in reading order."""
    return [m for m in misreads if m.sure] + [m for m in misreads if not m.sure]


def _tile(image: np.ndarray | None, m: Misread) -> np.ndarray:
    tile = np.full((TILE + CAPTION, TILE, 3), 32, np.uint8)
    if image is not None:
        box = m.box if m.box is not None else (0.0, 0.0, float(image.shape[1]), float(image.shape[0]))
        tile[:TILE] = square_crop(image, box, MARGIN, TILE)
    colour = SURE_RED if m.sure else DOUBTED
    cv2.putText(tile, f"{m.truth} > {m.read}", (3, TILE + 15), cv2.FONT_HERSHEY_SIMPLEX, 0.42, colour, 1, cv2.LINE_AA)
    tag = ("SURE " if m.sure else "") + Path(m.image).stem
    cv2.putText(tile, tag[:26], (3, TILE + 31), cv2.FONT_HERSHEY_SIMPLEX, 0.36, colour, 1, cv2.LINE_AA)
    return tile


def sheet(misreads: Sequence[Misread], most: int = MOST) -> np.ndarray | None:
    """The contact sheet of up to `most` misread dice (`ordered`), or None when there is none."""
    chosen = ordered(misreads)[:most]
    if not chosen:
        return None
    tiles, shown, image = [], None, None
    for m in chosen:
        if m.image != shown:  # one photo decoded at a time: a set of phone photos holds tens of MB each
            shown, image = m.image, cv2.imread(m.image) if m.image else None
        tiles.append(_tile(image, m))
    cols = min(COLUMNS, len(tiles))
    tiles += [np.zeros_like(tiles[0])] * (-len(tiles) % cols)
    return np.vstack([np.hstack(tiles[i:i + cols]) for i in range(0, len(tiles), cols)])


def usable(folder: Path) -> Path:
    """`folder`, refused where it names a file (the check `dicecam eval` makes before it reads a photo)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise DicecamError(f"--misreads {folder}: is a file, not a folder")
    return folder


def write_misreads(misreads: Sequence[Misread], folder: Path, most: int = MOST) -> list[Path]:
    """`folder`/misreads.jsonl (every die read wrong) and, where there is one, `folder`/misreads.jpg (`sheet`); the
    paths written. The folder is made where it is missing; an earlier run's sheet goes where this run draws none, and
    nothing else in it is touched."""
    folder = usable(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        listed = folder / "misreads.jsonl"
        listed.write_text("".join(json.dumps(m.to_json()) + "\n" for m in ordered(misreads)))
    except OSError as e:
        raise DicecamError(f"--misreads {folder}: cannot write there ({e.strerror or e})") from None
    written = [listed]
    drawn, out = sheet(misreads, most), folder / "misreads.jpg"
    if drawn is None:
        out.unlink(missing_ok=True)  # an earlier run's sheet would show dice this one read right
    else:
        if not cv2.imwrite(str(out), drawn, [cv2.IMWRITE_JPEG_QUALITY, 90]):
            raise DicecamError(f"--misreads {folder}: cannot write {out.name}")
        written.append(out)
    return written
