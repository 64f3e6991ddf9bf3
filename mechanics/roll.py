"""A roll as the product stores and shows it, and the typed events that carry it.

Pure data: ids and timestamps are made by the caller (the pipeline, the server), never here.
An event is one of a few shapes told apart by `type`; JSON is made from them once, at the edge
(the API, the event stream, the webhook, the CLI's --json).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_serializer

from .dice import DieReading
from .registry import AnyAdjudication

RollStatus = Literal["settled", "uncertain"]
# "demo": read from the bundled demo clip, not the table's dice (never counted, exported or kept once the
# table has rolls of its own).
RollSource = Literal["camera", "manual", "upload", "demo"]
RollEventType = Literal["roll.settled", "roll.amended", "roll.uncertain"]
EventType = Literal["snapshot", "roll.settled", "roll.amended", "roll.uncertain", "camera.status", "config.changed"]


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


class TableConfig(BaseModel):
    """The table's configured system, its options (as checked) and the pool the odds are shown for."""

    model_config = ConfigDict(extra="forbid")

    system: str = Field(title="System name")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")
    pool: list[str] = Field(default_factory=list, title="Die types of the roll the odds are for")
    systems: list[str] = Field(default_factory=list, title="Systems offered on the page (empty: all)")
    token_required: bool = Field(default=False, title="Changes need the access token")


class Snapshot(BaseModel):
    """What a page receives first on connecting."""

    model_config = ConfigDict(extra="forbid")

    rolls: list[Roll] = Field(default_factory=list, title="Recent rolls, newest first")
    config: TableConfig
    camera: CameraStatus
    notices: list[str] = Field(default_factory=list, title="Start-up problems the page should show")


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = 1
    type: str  # each event's own Literal below; declared here to keep the envelope's field order
    id: str = Field(title="Event id (uuid)")
    ts: datetime


class RollEvent(_Event):
    type: RollEventType
    data: Roll


class CameraEvent(_Event):
    type: Literal["camera.status"]
    data: CameraStatus


class ConfigEvent(_Event):
    type: Literal["config.changed"]
    data: TableConfig


class SnapshotEvent(_Event):
    type: Literal["snapshot"]
    data: Snapshot


# The envelope every page, WebSocket/SSE client and webhook receives.
Event = Annotated[Union[RollEvent, CameraEvent, ConfigEvent, SnapshotEvent], Field(discriminator="type")]
_EVENT = TypeAdapter(Event)


def event_of(type_: str, data: Any, *, id: str, ts: datetime) -> Event:
    """The typed event of `type_` carrying `data` (a model, or its JSON-shaped dict)."""
    return _EVENT.validate_python({"type": type_, "id": id, "ts": ts, "data": data})


def parse_event(obj: Any) -> Event:
    """An event from its JSON object (a client, a test, a stored line)."""
    return _EVENT.validate_python(obj)
