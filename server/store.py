"""The roll history: SQLite in WAL mode, append-only.

A correction never overwrites a roll: it is a new roll whose `amends` names the original,
so the history keeps what the camera saw and what the table decided. Corrections also
save the frame and the corrected labels as new training examples.

Each camera or photo roll keeps the picture it was read from (its dice boxed, as JPEG) in `frames`,
written in the roll's own transaction so a crash never keeps one without the other. Only the newest
`frames_kept` pictures stay; the rolls themselves are never dropped.

Demo rolls (source "demo", read from the bundled demo clip) are the one exception: they are not the
table's, so the first roll of the table's own (camera, typed or photo) clears them in its transaction,
and `drop_demo()` clears them when the server starts on a real camera. They are never exported, and
fairness reads `iter_all(demo=False)`.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from pydantic import Field

from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics.roll import Roll

# 2: the frames table. A version-1 file opens and gains the table (CREATE ... IF NOT EXISTS), rolls kept.
SCHEMA_VERSION = 2

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
CREATE TABLE IF NOT EXISTS frames (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    roll_id TEXT NOT NULL UNIQUE REFERENCES rolls(id),
    width   INTEGER NOT NULL,
    height  INTEGER NOT NULL,
    jpeg    BLOB NOT NULL
);
"""

log = logging.getLogger("dicecam.server")

CSV_COLUMNS = ("id", "ts", "source", "status", "system", "outcome", "dice", "summary", "amends", "follows", "reason")

class StoreError(RuntimeError):
    """The store file cannot be used (a newer schema, a corrupt file)."""


@dataclass(frozen=True)
class Frame:
    """A roll's picture as stored: JPEG bytes and their size in pixels."""

    jpeg: bytes
    width: int
    height: int


class ExportedRoll(Roll):
    """A roll in the JSON export, with where its picture is served (the API's path, or null)."""

    frame: str | None = Field(default=None, title="Path of the picture the roll was read from; null when none is kept")


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
        # Whether demo rolls may be stored: the first roll of the table's own then clears them.
        self._has_demo = self._db.execute("SELECT EXISTS(SELECT 1 FROM rolls WHERE source='demo')").fetchone()[0] == 1

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing -------------------------------------------------------------
    def add(self, roll: Roll, frame: Frame | None = None, frames_kept: int = 500) -> Roll:
        """Append one roll, with its picture when it has one; a duplicate id is refused, never replaced.

        Roll and picture commit together, and the oldest pictures beyond `frames_kept` go in the same
        transaction, so the store never holds more than the cap, even after a crash. A roll of the table's
        own (any source but "demo") clears the demo rolls in that transaction too."""
        outcome = roll.adjudication.outcome if roll.adjudication else None
        row = (roll.id, roll.ts.isoformat(), roll.source, roll.status, roll.system, outcome, roll.amends,
               roll.model_dump_json())
        demo = roll.source == "demo"
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            dropped = 0
            try:
                if not demo and self._has_demo:
                    dropped = self._drop_demo()
                self._db.execute(
                    "INSERT INTO rolls(id, ts, source, status, system, outcome, amends, body) VALUES (?,?,?,?,?,?,?,?)",
                    row,
                )
                if frame is not None and frames_kept > 0:
                    self._db.execute("INSERT INTO frames(roll_id, width, height, jpeg) VALUES (?,?,?,?)",
                                     (roll.id, frame.width, frame.height, frame.jpeg))
                    self._drop_old_frames(frames_kept)
            except sqlite3.IntegrityError:
                self._db.execute("ROLLBACK")
                raise KeyError(f"roll {roll.id} is already stored") from None
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._has_demo = demo  # a roll of the table's own has just cleared them all
        if dropped:
            log.info("the table's first roll of its own: %d demo rolls cleared from the history", dropped)
        return roll

    def _drop_demo(self) -> int:
        """Under the lock, in a transaction: delete the demo rolls and their pictures; returns how many rolls."""
        self._db.execute("DELETE FROM frames WHERE roll_id IN (SELECT id FROM rolls WHERE source='demo')")
        return self._db.execute("DELETE FROM rolls WHERE source='demo'").rowcount

    def drop_demo(self) -> int:
        """Delete every demo roll and its picture (the server starts on a real camera); returns how many rolls."""
        with self._lock:
            if not self._has_demo:
                return 0
            self._db.execute("BEGIN IMMEDIATE")
            try:
                dropped = self._drop_demo()
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._has_demo = False
        return dropped

    def demo_count(self) -> int:
        """Demo rolls stored (left out of fairness and the exports)."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM rolls WHERE source='demo'").fetchone()[0]

    def name_die(self, key: str, name: str | None) -> dict[str, str]:
        """Give the physical die `key` (TYPE:COLOUR) a name, or forget its name; returns every name."""
        with self._lock:
            if name:
                self._db.execute("INSERT INTO die_names(key, name) VALUES (?, ?) "
                                 "ON CONFLICT(key) DO UPDATE SET name=excluded.name", (key, name))
            else:
                self._db.execute("DELETE FROM die_names WHERE key=?", (key,))
        return self.die_names()

    def _drop_old_frames(self, keep: int) -> None:
        """Under the lock: the oldest pictures beyond the newest `keep` go (`keep` 0: all of them)."""
        self._db.execute("DELETE FROM frames WHERE seq <= (SELECT seq FROM frames ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                         (max(keep, 0),))

    def keep_frames(self, keep: int) -> int:
        """Drop the oldest pictures beyond the newest `keep` (a cap lowered since the last start);
        returns how many went. The rolls stay."""
        with self._lock:
            before = self._db.execute("SELECT COUNT(*) FROM frames").fetchone()[0]
            self._drop_old_frames(keep)
            return before - self._db.execute("SELECT COUNT(*) FROM frames").fetchone()[0]

    # -- reading -------------------------------------------------------------
    def die_names(self) -> dict[str, str]:
        """The names players gave their dice, by TYPE:COLOUR key."""
        with self._lock:
            return dict(self._db.execute("SELECT key, name FROM die_names ORDER BY key").fetchall())

    def get(self, roll_id: str) -> Roll | None:
        with self._lock:
            row = self._db.execute("SELECT body FROM rolls WHERE id=?", (roll_id,)).fetchone()
        return Roll.model_validate_json(row[0]) if row else None

    def frame(self, roll_id: str) -> Frame | None:
        """The picture stored with this very roll (a correction has none of its own: see `frame_owner`)."""
        with self._lock:
            row = self._db.execute("SELECT jpeg, width, height FROM frames WHERE roll_id=?", (roll_id,)).fetchone()
        return Frame(bytes(row[0]), row[1], row[2]) if row else None

    def frame_owner(self, roll: Roll) -> str | None:
        """The id of the roll whose picture shows `roll`: itself, or for a correction the roll it corrects
        (followed back through corrections of corrections), when that picture is still kept."""
        seen: set[str] = set()
        current: Roll | None = roll
        while current is not None and current.id not in seen:
            seen.add(current.id)
            with self._lock:
                found = self._db.execute("SELECT 1 FROM frames WHERE roll_id=?", (current.id,)).fetchone()
            if found:
                return current.id
            current = self.get(current.amends) if current.amends else None
        return None

    def frame_count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM frames").fetchone()[0]

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

    def iter_all(self, batch: int = 500, *, demo: bool = True) -> Iterable[Roll]:
        """Oldest first, in batches so an export never holds the lock for long; `demo=False` leaves
        the demo rolls out (the table's own record: exports, fairness)."""
        last = 0
        where = "" if demo else " AND source != 'demo'"
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT seq, body FROM rolls WHERE seq > ?{where} ORDER BY seq LIMIT ?", (last, batch)
                ).fetchall()
            if not rows:
                return
            for seq, body in rows:
                last = seq
                yield Roll.model_validate_json(body)

    # -- export --------------------------------------------------------------
    def export_json(self, frame_path: Callable[[str], str] | None = None) -> Iterable[str]:
        """Every roll of the table's own (demo rolls left out), oldest first; with `frame_path(roll id)`,
        each names where its picture is served."""
        with self._lock:
            framed = {r[0] for r in self._db.execute("SELECT roll_id FROM frames")}
        pictured: set[str] = set()  # rolls with a picture: their own, or the one of the roll they correct
        yield "["
        first = True
        for roll in self.iter_all(demo=False):
            if roll.id in framed or (roll.amends is not None and roll.amends in pictured):
                pictured.add(roll.id)
            ref = frame_path(roll.id) if frame_path is not None and roll.id in pictured else None
            yield ("" if first else ",") + "\n" + ExportedRoll(**dict(roll), frame=ref).model_dump_json()
            first = False
        yield "\n]\n"

    def export_csv(self) -> Iterable[str]:
        """Every roll of the table's own (demo rolls left out), oldest first, one a row."""
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(CSV_COLUMNS)
        for roll in self.iter_all(demo=False):
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
