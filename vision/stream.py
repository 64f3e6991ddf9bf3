"""The live stream's types: the camera's state and the event envelope the pipeline publishes.

An event is one of a few shapes told apart by `type`. This module holds the envelope and the two the
camera makes (a roll read from the table, the camera's status); the server adds the shapes only it
serves (its configuration and the snapshot a page gets first, `server/events.py`). `make_event` is the
one place an event is made, whichever folder defines its shape: it finds the shape whose `type` names the
event's type among the envelope's subclasses.

A roll event also carries, outside its JSON, the frame the roll was read from, so whoever stores the
roll keeps its picture without asking the camera for it afterwards.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Literal, Union, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_serializer

from dicecam.mechanics.roll import Roll

RollEventType = Literal["roll.settled", "roll.amended", "roll.uncertain"]


class CameraStatus(BaseModel):
    """The camera's state as the pages show it; unset fields are left out of the JSON."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(title="running, starting, retrying, lost, stopped, none, demo or error")
    message: str | None = Field(default=None, title="What the page says about it")
    source: str | None = Field(default=None, title="The source spec (a device, a file, demo)")
    skipped_frames: int | None = Field(default=None, title="Junk frames the source skipped")

    @model_serializer(mode="wrap")
    def _set_only(self, handler):
        return {k: v for k, v in handler(self).items() if v is not None}


class Envelope(BaseModel):
    """What every event shares; a subclass declares `type` as the Literal of the types it carries, and `data`."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    type: str  # each event's own Literal in its shape; declared here to keep the envelope's field order
    id: str = Field(title="Event id (uuid)")
    ts: datetime

    @staticmethod
    def shapes() -> dict[str, type[Envelope]]:
        """Each event type and the shape that carries it (a shape defined in any folder)."""
        return {name: shape for shape in Envelope.__subclasses__()
                for name in get_args(shape.model_fields["type"].annotation)}


class RollEvent(Envelope):
    type: RollEventType
    data: Roll
    _frame: np.ndarray | None = PrivateAttr(default=None)

    @property
    def frame(self) -> np.ndarray | None:
        """The picture the roll was read from (None for a roll typed by hand); never part of the JSON."""
        return self._frame


class CameraEvent(Envelope):
    type: Literal["camera.status"]
    data: CameraStatus


# What the live pipeline publishes.
StreamEvent = Union[RollEvent, CameraEvent]


def make_event(type_: str, data: Any, *, frame: np.ndarray | None = None, id: str | None = None,
               ts: datetime | None = None) -> Envelope:
    """A new event of `type_` carrying `data` (a model, or its JSON-shaped dict); its id and time are made
    here unless given. `frame` is the picture a roll event was read from."""
    shapes = Envelope.shapes()
    shape = shapes.get(type_)
    if shape is None:
        raise ValueError(f"unknown event type {type_!r} (known: {', '.join(sorted(shapes))})")
    event = shape.model_validate({"type": type_, "id": id or str(uuid.uuid4()),
                                  "ts": ts or datetime.now(timezone.utc), "data": data})
    if frame is not None:
        if not isinstance(event, RollEvent):
            raise ValueError(f"a {type_} event carries no frame")
        event._frame = frame
    return event
