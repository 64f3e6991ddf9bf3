"""The live stream's events: one `make_event` for every shape, typed by `type`; a roll event carries the frame
it was read from, outside its JSON."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest
from pydantic import ValidationError

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.roll import Roll
import dicecam.server.events  # noqa: F401  (the server's shapes: config.changed, snapshot)
from dicecam.vision.stream import CameraEvent, RollEvent, make_event

TS = datetime(2026, 11, 23, tzinfo=timezone.utc)


def roll() -> Roll:
    dice = parse_dice(["d6:5:red", "d6:2:white"])
    return Roll(id="r1", ts=TS, source="camera", status="settled", system="futile-kingdoms", dice=dice,
                adjudication=registry.resolve("futile-kingdoms", dice))


def test_an_event_is_made_of_its_type_id_time_and_data():
    r = roll()
    ev = make_event("roll.settled", r, id="e1", ts=TS)
    assert isinstance(ev, RollEvent)
    assert (ev.v, ev.type, ev.id, ev.ts, ev.data) == (1, "roll.settled", "e1", TS, r)
    cam = make_event("camera.status", {"status": "lost"}, id="e2", ts=TS)
    assert isinstance(cam, CameraEvent) and cam.data.status == "lost"
    with pytest.raises(ValidationError):  # a camera event carrying a roll is not a camera event
        make_event("camera.status", r, id="e3", ts=TS)
    with pytest.raises(ValueError) as refused:
        make_event("roll.lost", r)
    assert str(refused.value) == ("unknown event type 'roll.lost' (known: camera.status, config.changed, "
                                  "roll.amended, roll.settled, roll.uncertain, snapshot)")


def test_ids_and_times_are_made_when_not_given():
    a, b = make_event("camera.status", {"status": "running"}), make_event("camera.status", {"status": "running"})
    assert a.id != b.id and a.ts.tzinfo is not None


def test_a_roll_event_carries_its_frame_outside_its_json():
    frame = np.zeros((4, 6, 3), np.uint8)
    with_frame = make_event("roll.settled", roll(), frame=frame, id="e1", ts=TS)
    bare = make_event("roll.settled", roll(), id="e1", ts=TS)
    assert with_frame.frame is frame and bare.frame is None
    assert with_frame.model_dump_json() == bare.model_dump_json()
    assert "frame" not in json.loads(with_frame.model_dump_json())
    assert with_frame.model_copy().frame is frame  # a copy (an event re-stamped) keeps it
    with pytest.raises(ValueError, match="carries no frame"):
        make_event("camera.status", {"status": "running"}, frame=frame)
