"""A roll as the product stores and shows it: the dice read, the rules they were read under, the verdict.

Pure data: ids and timestamps are made by the caller (the pipeline, the server), never here. The events
that carry a roll to the pages are the stream's (`vision/stream.py`, `server/events.py`); JSON is made
once, at the edge (the API, the event stream, the webhook, the CLI's --json).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .dice import DieReading
from .registry import AnyAdjudication

RollStatus = Literal["settled", "uncertain"]
# "demo": read from the bundled demo clip, not the table's dice (never counted, exported or kept once the
# table has rolls of its own).
RollSource = Literal["camera", "manual", "upload", "demo"]


class Roll(BaseModel):
    """One throw of the dice: what was read, under which rules, and the verdict."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(title="Roll id (uuid)")
    ts: datetime = Field(title="When the dice settled or the roll was entered")
    source: RollSource = Field(title="Where the readings came from")
    status: RollStatus = Field(title="settled, or uncertain when a die could not be trusted")
    reason: str | None = Field(default=None, title="Why the roll is uncertain")
    frame_id: int | None = Field(default=None, title="Source frame the readings came from")
    system: str = Field(title="System name")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")
    dice: list[DieReading] = Field(default_factory=list, title="Readings in reading order")
    adjudication: AnyAdjudication | None = Field(
        default=None, title="The resolver's verdict, typed by its system; None if it could not be resolved"
    )
    amends: str | None = Field(default=None, title="Id of the roll this corrects")
    follows: str | None = Field(default=None, title="Id of the roll this continues (luck die, re-roll, explosion, pool)")
