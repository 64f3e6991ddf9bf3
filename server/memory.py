"""The table's dice memory on the server: what the pages teach, forget, export and import.

One `TableMemory` per app, around the reader's `DiceMemory` (vision/memory.py), which the live
pipeline votes with on its own thread. Every change is saved at once (an atomic file write), so
the memory survives a restart; a bad import is checked in full before anything changes.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import numpy as np
from pydantic import BaseModel, Field

from dicecam.mechanics.dice import FACES, DieReading, DieType
from dicecam.mechanics.errors import DicecamError
from dicecam.mechanics.roll import Roll
from dicecam.vision.memory import DiceMemory, Taught
from dicecam.vision.teach import open_memory

from .settings import ServerSettings

log = logging.getLogger("dicecam.server")
NOTES_KEPT = 64


class MemoryUnavailable(DicecamError):
    """The server has no memory to teach (no reader, older weights, or --memory none)."""


# -- response models ---------------------------------------------------------------------
class KnownDie(BaseModel):
    die: str = Field(title="The die's name in listings: its given name, else colour and kind")
    kind: DieType
    colour: str | None = None
    named: bool = Field(title="Whether a player gave it a name")
    faces: dict[int, int] = Field(title="Face value -> examples taught")
    examples: int
    missing: list[int] = Field(title="Faces not taught yet")
    known: bool = Field(title="Every face taught")


def _kinds() -> dict[str, list[int]]:
    return {t.value: list(v) for t, v in FACES.items()}


class MemoryState(BaseModel):
    available: bool = Field(title="Whether this server reads with a dice memory and can learn")
    kinds: dict[str, list[int]] = Field(default_factory=_kinds, title="Each kind's faces, for a page that teaches")
    reason: str | None = Field(default=None, title="Why not, when not")
    examples: int = 0
    dice: list[KnownDie] = Field(default_factory=list)
    camera_dice: int = Field(default=0, title="Taught numeral dice that said where this table's camera shows up faces")
    camera_seen: int = Field(default=0, title="Numeral dice the live camera read without a doubt flag that said so too",
                             description="The last 200 at most; 0 without a live camera")
    camera_learnt: bool = Field(default=False, title="Whether they taught the reader to avoid a look that missed them")


class TeachResult(BaseModel):
    learnt: bool
    reason: str | None = Field(default=None, title="Why it was not learnt")
    kind: DieType
    value: int
    die: KnownDie | None = Field(default=None, title="What is now known of that die")


class Forgotten(BaseModel):
    forgotten: int = Field(title="Examples forgotten")
    memory: MemoryState


class Imported(BaseModel):
    learnt: int = Field(title="Examples added")
    flagged: int = Field(title="Examples left out: they contradict this table's memory")
    memory: MemoryState


class TaughtNote(BaseModel):
    roll_id: str = Field(title="The correction (amending roll) that taught")
    message: str = Field(title="What the correction taught, in a sentence")
    corrected: int
    confirmed: int
    flagged: int


# -- the memory -------------------------------------------------------------------------------
class TableMemory:
    def __init__(self, reader, memory: DiceMemory | None, reason: str | None = None):
        self.reader, self.memory, self.reason = reader, memory, reason
        self._write = threading.Lock()  # one change (and its save) at a time
        self._notes: OrderedDict[str, TaughtNote] = OrderedDict()

    @classmethod
    def open(cls, settings: ServerSettings, reader) -> "TableMemory":
        if not settings.use_memory:
            return cls(reader, None, "the server was started with --memory none")
        if reader is None:
            return cls(None, None, "no dice reader is loaded")
        try:
            memory = open_memory(reader, settings.memory_folder)
        except DicecamError as e:
            return cls(reader, None, str(e))
        reader.use_memory(memory)
        return cls(reader, memory)

    # -- reading -------------------------------------------------------------------------
    def state(self) -> MemoryState:
        if self.memory is None:
            return MemoryState(available=False, reason=self.reason)
        live = getattr(self.reader, "live_camera", None)
        return MemoryState(available=True, examples=len(self.memory), dice=[KnownDie(**d) for d in self.memory.dice()],
                           camera_dice=self.memory.taught_looks()[1], camera_seen=live.counts()[1] if live else 0,
                           camera_learnt=bool(self.reader.camera_bias(live).any()))

    def _need(self) -> DiceMemory:
        if self.memory is None:
            raise MemoryUnavailable(f"no dice memory on this server: {self.reason}")
        return self.memory

    def known(self, name: str) -> KnownDie | None:
        return next((KnownDie(**d) for d in self._need().dice() if d["die"] == name), None)

    def note(self, roll_id: str) -> TaughtNote | None:
        return self._notes.get(roll_id)

    def export(self) -> bytes:
        return self._need().to_bytes()

    # -- changes -------------------------------------------------------------------------
    def forget(self, name: str | None) -> int:
        memory = self._need()
        with self._write:
            gone = memory.forget(name)
            if gone:
                memory.save()
        return gone

    def import_file(self, data: bytes) -> tuple[int, int]:
        memory = self._need()
        other = DiceMemory.from_bytes(data, memory.crop_size, memory.model_id, embed=self.reader.embed)
        with self._write:
            got = memory.merge(other)
            if got[0]:
                memory.save()
        return got

    def teach_box(self, frame: np.ndarray, box, kind: str, value: int, *, colour: str | None = None,
                  die: str | None = None, source: str = "teach", force: bool = False) -> Taught:
        """Learn the die inside `box` of `frame` as (kind, value)."""
        memory = self._need()
        seen = self.reader.learnable(frame, np.asarray(box, np.float32)[None], [str(kind).lower()])
        with self._write:
            got = memory.teach(seen.crops[0], seen.features[0], kind, value, colour=colour, die=die, source=source,
                               force=force, numerals=seen.scores(0), network=seen.face_p(0),
                               looks=seen.look_scores(0))
            if got.learnt:
                memory.save()
        return got

    def correction(self, roll: Roll, original: Roll, frame: np.ndarray | None) -> TaughtNote | None:
        """A correction teaches: the corrected dice their corrected faces (the player's word beats an
        earlier example), and the dice left as read are confirmed (flagged, not forced, on a clash).
        Needs the roll's frame; dice without a box (a missed die added by hand) teach nothing."""
        if self.memory is None or frame is None:
            return None
        boxed = [(i, d) for i, d in enumerate(roll.dice) if d.box is not None]
        if not boxed:
            return None
        seen = self.reader.learnable(frame, np.array([d.box for _, d in boxed], np.float32),
                                     [d.type.value for _, d in boxed])
        corrected = confirmed = flagged = 0
        taught = []
        with self._write:
            for k, (i, d) in enumerate(boxed):
                old = original.dice[i] if i < len(original.dice) else None
                as_read = _same(d, old)
                got = self.memory.teach(seen.crops[k], seen.features[k], d.type.value, d.value, colour=d.colour,
                                        source="confirmed" if as_read else "correction", force=not as_read,
                                        numerals=seen.scores(k), network=seen.face_p(k),
                                        looks=seen.look_scores(k))
                if not got.learnt:
                    flagged += 1
                elif as_read:
                    confirmed += 1
                else:
                    corrected += 1
                    taught.append(f"the {d.colour + ' ' if d.colour else ''}{d.type.value} as {d.value}")
            if corrected or confirmed:
                self.memory.save()
        note = TaughtNote(roll_id=roll.id, message=_sentence(taught, confirmed, flagged),
                          corrected=corrected, confirmed=confirmed, flagged=flagged)
        self._notes[roll.id] = note
        while len(self._notes) > NOTES_KEPT:
            self._notes.popitem(last=False)
        return note


def _same(new: DieReading, old: DieReading | None) -> bool:
    return old is not None and old.type is new.type and old.value == new.value


def _sentence(taught: list[str], confirmed: int, flagged: int) -> str:
    parts = []
    if taught:
        parts.append("Learnt from your correction: " + ", ".join(taught) + ".")
    if confirmed:
        parts.append(f"{confirmed} other {'die' if confirmed == 1 else 'dice'} confirmed as read.")
    if flagged:
        parts.append(f"{flagged} {'die was' if flagged == 1 else 'dice were'} not learnt: "
                     "too like an example taught with another face.")
    return " ".join(parts) or "Nothing learnt from this correction."

