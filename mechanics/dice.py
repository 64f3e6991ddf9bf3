"""Die kinds and the one reading type that travels from camera to page.

A `DieReading` is what the reader saw on one die; the resolvers accept a list of them in
reading order, and the pages show them. The JSON shape is the read format every command, page and
API shares: {"type": "d8", "value": 7, "box": [x1, y1, x2, y2], "confidence": 0.98, "colour": "red"}.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer, model_validator

from .errors import DiceError, first_problem


class DieType(StrEnum):
    d4 = "d4"
    d6 = "d6"
    d8 = "d8"
    d10 = "d10"
    d00 = "d00"
    d12 = "d12"
    d20 = "d20"

    @property
    def faces(self) -> tuple[int, ...]:
        """Every value the die can show, as the resolvers see it."""
        return FACES[self]

    @property
    def sides(self) -> int:
        return len(FACES[self])


FACES: dict[DieType, tuple[int, ...]] = {
    DieType.d4: (1, 2, 3, 4),
    DieType.d6: tuple(range(1, 7)),
    DieType.d8: tuple(range(1, 9)),
    # A d10's "0" face is value 0; a resolver that counts it as 10 says so.
    DieType.d10: tuple(range(0, 10)),
    # The tens die of a percentile pair.
    DieType.d00: tuple(range(0, 100, 10)),
    DieType.d12: tuple(range(1, 13)),
    DieType.d20: tuple(range(1, 21)),
}

Box = Annotated[tuple[float, float, float, float], Field(title="Box x1, y1, x2, y2 in source pixels")]


def parse_type(text: str) -> DieType:
    try:
        return DieType(text.strip().lower())
    except ValueError:
        kinds = ", ".join(t.value for t in DieType)
        raise DiceError(f"unknown die type {text!r} (known: {kinds})") from None


class DieReading(BaseModel):
    """One die as read: kind, face value, and where and how sure."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: DieType = Field(title="Die kind")
    value: int = Field(title="Face value (d10: 0-9, d00: 0-90)")
    box: Box | None = Field(default=None, title="Box in source pixels")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, title="Reader confidence")
    colour: str | None = Field(default=None, max_length=32, title="Body colour name")
    # Set by the reader when a die leans on something or its face is unreadable; a roll
    # holding such a die is reported as uncertain instead of adjudicated with confidence.
    cocked: bool = Field(default=False, title="Die is cocked")
    uncertain: bool = Field(default=False, title="Reading is not trustworthy")
    # Why an uncertain die was not trusted ("reads as 6 or 9"), for the player; left out when None,
    # so a reading without doubt keeps its JSON shape.
    doubt: str | None = Field(default=None, max_length=80, title="Why the reading is uncertain")

    @model_serializer(mode="wrap")
    def _without_empty_doubt(self, handler):
        data = handler(self)
        if isinstance(data, dict) and data.get("doubt", "") is None:
            del data["doubt"]
        return data

    @field_validator("colour")
    @classmethod
    def _plain_colour(cls, v: str | None) -> str | None:
        return v.strip().lower() or None if v is not None else None

    @model_validator(mode="before")
    @classmethod
    def _d00_hundred(cls, data):
        # A percentile die that prints "100" on its zero face reads as 0 (the seed's rule).
        if isinstance(data, dict) and str(data.get("type", "")).lower() == "d00" and data.get("value") == 100:
            return {**data, "value": 0}
        return data

    @model_validator(mode="after")
    def _face_exists(self) -> "DieReading":
        if self.value not in FACES[self.type]:
            lo, hi = FACES[self.type][0], FACES[self.type][-1]
            step = " in tens" if self.type is DieType.d00 else ""
            raise ValueError(f"a {self.type.value} has no face {self.value} (faces {lo}-{hi}{step})")
        return self

    @classmethod
    def parse(cls, spec: str) -> "DieReading":
        """`TYPE:VALUE[:COLOUR]` as typed on the command line: d6:3, d10:0, d6:5:red."""
        parts = spec.split(":")
        shown = repr(spec) if len(spec) <= 40 else repr(spec[:30]) + "…"
        if len(parts) not in (2, 3) or not parts[1].strip().lstrip("-").isdigit():
            raise DiceError(f"bad die {shown}: write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red")
        if len(parts[1].strip().lstrip("-")) > 3:  # no die has a face of four digits; int() of 5000 would fail
            raise DiceError(f"bad die {shown}: no die has a face {parts[1].strip()[:10]}{'…' if len(parts[1]) > 10 else ''}")
        kind = parse_type(parts[0])
        colour = parts[2] if len(parts) == 3 else None
        return cls.make(kind, int(parts[1]), colour=colour)

    @classmethod
    def make(cls, kind: DieType | str, value: int, **fields) -> "DieReading":
        """Build a reading, turning a validation failure into a one-line DiceError."""
        try:
            return cls(type=kind, value=value, **fields)
        except ValidationError as e:
            raise DiceError(first_problem(e)[1]) from None

    def label(self) -> str:
        """Short human label, e.g. 'd00 30' or 'red d6 5'."""
        face = f"{self.value:02d}" if self.type is DieType.d00 else str(self.value)
        return f"{self.colour + ' ' if self.colour else ''}{self.type.value} {face}"


class ImageRead(BaseModel):
    """The read of one image: the dice on it in reading order."""

    model_config = ConfigDict(extra="forbid")

    image: str = Field(title="Image path or frame name")
    width: int = Field(ge=0, title="Width in pixels")
    height: int = Field(ge=0, title="Height in pixels")
    dice: list[DieReading] = Field(default_factory=list, title="Dice in reading order")


def reading_order(dice: Iterable[DieReading]) -> list[DieReading]:
    """Row-major order: top row first, left to right; rows grouped by box centre.

    Two dice share a row when their centres are closer vertically than half the smaller
    die's height, so a slightly lower die to the left still reads first in its row.
    Dice without a box keep their given order after the boxed ones.
    """
    boxed = [d for d in dice if d.box is not None]
    loose = [d for d in dice if d.box is None]
    boxed.sort(key=lambda d: (d.box[1] + d.box[3]) / 2)
    rows: list[list[DieReading]] = []
    for die in boxed:
        cy = (die.box[1] + die.box[3]) / 2
        h = die.box[3] - die.box[1]
        if rows:
            last = rows[-1]
            ref = sum((d.box[1] + d.box[3]) / 2 for d in last) / len(last)
            href = min(min(d.box[3] - d.box[1] for d in last), h)
            if abs(cy - ref) < href / 2:
                last.append(die)
                continue
        rows.append([die])
    ordered = [d for row in rows for d in sorted(row, key=lambda d: (d.box[0] + d.box[2]) / 2)]
    return ordered + loose


def parse_dice(specs: Sequence[str]) -> list[DieReading]:
    return [DieReading.parse(s) for s in specs]

