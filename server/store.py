"""The roll history: SQLite in WAL mode, append-only.

A correction never overwrites a roll: it is a new roll whose `amends` names the original,
so the history keeps what the camera saw and what the table decided. Corrections also
save the frame and the corrected labels as new training examples.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics.roll import Roll

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rolls (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    id      TEXT NOT NULL UNIQUE,
    ts      TEXT NOT NULL,
    source  TEXT NOT NULL,
    status  TEXT NOT NULL,
    system  TEXT NOT NULL,
    outcome TEXT,
    amends  TEXT,
    body    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rolls_amends ON rolls(amends);
CREATE TABLE IF NOT EXISTS die_names (
    key     TEXT PRIMARY KEY,
    name    TEXT NOT NULL
);
"""

CSV_COLUMNS = ("id", "ts", "source", "status", "system", "outcome", "dice", "summary", "amends", "follows", "reason")

class StoreError(RuntimeError):
    """The store file cannot be used (a newer schema, a corrupt file)."""


@dataclass(frozen=True)
class Page:
    items: list[Roll]
    total: int
    offset: int
    limit: int


class RollStore:
    """Thread-safe: the pipeline thread and the request threads share one connection under a lock."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema {version}; this dicecam knows up to {SCHEMA_VERSION}")
        self._db.executescript(_SCHEMA)
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing -------------------------------------------------------------
    def add(self, roll: Roll) -> Roll:
        """Append one roll; a duplicate id is refused, never replaced."""
        outcome = roll.adjudication.outcome if roll.adjudication else None
        row = (roll.id, roll.ts.isoformat(), roll.source, roll.status, roll.system, outcome, roll.amends,
               roll.model_dump_json())
        with self._lock:
            try:
                self._db.execute(
                    "INSERT INTO rolls(id, ts, source, status, system, outcome, amends, body) VALUES (?,?,?,?,?,?,?,?)",
                    row,
                )
            except sqlite3.IntegrityError:
                raise KeyError(f"roll {roll.id} is already stored") from None
        return roll

    def name_die(self, key: str, name: str | None) -> dict[str, str]:
        """Give the physical die `key` (TYPE:COLOUR) a name, or forget its name; returns every name."""
        with self._lock:
            if name:
                self._db.execute("INSERT INTO die_names(key, name) VALUES (?, ?) "
                                 "ON CONFLICT(key) DO UPDATE SET name=excluded.name", (key, name))
            else:
                self._db.execute("DELETE FROM die_names WHERE key=?", (key,))
        return self.die_names()

    # -- reading -------------------------------------------------------------
    def die_names(self) -> dict[str, str]:
        """The names players gave their dice, by TYPE:COLOUR key."""
        with self._lock:
            return dict(self._db.execute("SELECT key, name FROM die_names ORDER BY key").fetchall())

    def get(self, roll_id: str) -> Roll | None:
        with self._lock:
            row = self._db.execute("SELECT body FROM rolls WHERE id=?", (roll_id,)).fetchone()
        return Roll.model_validate_json(row[0]) if row else None

    def amendments(self, roll_id: str) -> list[Roll]:
        with self._lock:
            rows = self._db.execute("SELECT body FROM rolls WHERE amends=? ORDER BY seq", (roll_id,)).fetchall()
        return [Roll.model_validate_json(r[0]) for r in rows]

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM rolls").fetchone()[0]

    def page(self, offset: int = 0, limit: int = 50) -> Page:
        """Newest first."""
        with self._lock:
            total = self._db.execute("SELECT COUNT(*) FROM rolls").fetchone()[0]
            rows = self._db.execute(
                "SELECT body FROM rolls ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
            ).fetchall()
        return Page([Roll.model_validate_json(r[0]) for r in rows], total, offset, limit)

    def recent(self, n: int) -> list[Roll]:
        return self.page(0, n).items if n > 0 else []

    def iter_all(self, batch: int = 500) -> Iterable[Roll]:
        """Oldest first, in batches so an export never holds the lock for long."""
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT seq, body FROM rolls WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch)
                ).fetchall()
            if not rows:
                return
            for seq, body in rows:
                last = seq
                yield Roll.model_validate_json(body)

    # -- export --------------------------------------------------------------
    def export_json(self) -> Iterable[str]:
        yield "["
        first = True
        for roll in self.iter_all():
            yield ("" if first else ",") + "\n" + roll.model_dump_json()
            first = False
        yield "\n]\n"

    def export_csv(self) -> Iterable[str]:
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(CSV_COLUMNS)
        for roll in self.iter_all():
            adj = roll.adjudication
            writer.writerow([
                roll.id, roll.ts.isoformat(), roll.source, roll.status, roll.system, adj.outcome if adj else "",
                " ".join(f"{d.type.value}:{d.value}" + (f":{d.colour}" if d.colour else "") for d in roll.dice),
                adj.summary if adj else "", roll.amends or "", roll.follows or "", roll.reason or "",
            ])
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
        yield buf.getvalue()


def save_correction(
    folder: Path, roll: Roll, jpeg: bytes | None, width: int | None, height: int | None, original: Roll | None = None
) -> list[Path]:
    """Write the corrected labels (and the frame when we have it) as a training example.

    YOLO txt holds one line per boxed die (kind class, normalised centre and size); the JSON
    beside it keeps the full readings (values, colours) and the roll ids it came from.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    stem = folder / roll.id
    if jpeg is not None:
        stem.with_suffix(".jpg").write_bytes(jpeg)
        written.append(stem.with_suffix(".jpg"))
    meta = {
        "roll": roll.id,
        "amends": roll.amends,
        "frame_id": roll.frame_id,
        "width": width,
        "height": height,
        "image": stem.with_suffix(".jpg").name if jpeg is not None else None,
        "dice": [d.model_dump(mode="json") for d in roll.dice],
        "was": [d.model_dump(mode="json") for d in original.dice] if original else None,
    }
    stem.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    written.append(stem.with_suffix(".json"))
    if width and height:
        from dicecam.vision.crops import KINDS as CLASSES  # the format the training sets use
        from dicecam.vision.labels import yolo_lines

        boxed = ImageRead(image=meta["image"] or "", width=width, height=height, dice=[d for d in roll.dice if d.box])
        stem.with_suffix(".txt").write_text("".join(line + "\n" for line in yolo_lines(boxed)))
        written.append(stem.with_suffix(".txt"))
        classes = folder / "classes.txt"
        if not classes.exists():
            classes.write_text("\n".join(CLASSES) + "\n")
    return written
