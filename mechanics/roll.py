"""A roll as the product stores and shows it, and the event envelope that carries it.

Pure data: ids and timestamps are made by the caller (the pipeline, the server), never here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .adjudication import Adjudication
from .dice import DieReading

RollStatus = Literal["settled", "uncertain"]
RollSource = Literal["camera", "manual", "upload"]
EventType = Literal[
    "snapshot",
    "roll.settled",
    "roll.amended",
    "roll.uncertain",
    "camera.status",
    "config.changed",
]


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
    adjudication: dict[str, Any] | None = Field(
        default=None, title="The resolver's verdict (Adjudication.model_dump()); None if it could not be resolved"
    )
    amends: str | None = Field(default=None, title="Id of the roll this corrects")
    follows: str | None = Field(default=None, title="Id of the roll this continues (luck die, re-roll, explosion, pool)")

    @staticmethod
    def verdict(adjudication: Adjudication) -> dict[str, Any]:
        return adjudication.model_dump(mode="json")


class Event(BaseModel):
    """The envelope every page, WebSocket/SSE client and webhook receives."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    type: EventType
    id: str = Field(title="Event id (uuid)")
    ts: datetime
    data: dict[str, Any] = Field(default_factory=dict)
