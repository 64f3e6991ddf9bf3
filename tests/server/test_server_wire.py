"""The wire format is pinned byte for byte: the API document (/openapi.json) and the JSON of every kind of
event (a roll of each system, amended and uncertain rolls, camera status, config change, snapshot).

Moving a type between folders or splitting the routes must not change a byte a client sees. The golden
files were written from the code before such a move; regenerate only after a deliberate change to the
wire format, with DICECAM_UPDATE_GOLDEN=1, and review the diff.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.roll import Roll
from dicecam.server.app import create_app
from dicecam.server.events import make_event
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore

GOLDEN = Path(__file__).parent / "golden"
TS = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
THROWS = [
    ("contingency", ["d6:3", "d8:1", "d10:9"], {"target": 5, "luck": "d6:4"}),
    ("contingency-action", ["d8:7", "d8:3", "d6:6", "d6:2"], {}),
    ("house-games", ["d10:9", "d10:1", "d10:0", "d10:4", "d10:9", "d10:2"], {"difficulty": 8, "modifier": 4, "pool": 6}),
    ("emergence", ["d10:0", "d10:4", "d10:0", "d10:7"], {"rerolls": [3]}),
    ("futile-kingdoms", ["d6:6:red", "d6:5:white"], {"modifier": -1}),
    ("percentile", ["d00:30", "d10:7"], {}),
]


def _matches(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("DICECAM_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed"


def _rolls() -> list[Roll]:
    rolls = []
    for i, (system, dice, options) in enumerate(THROWS):
        read = parse_dice(dice)
        rolls.append(Roll(id=f"r{i}", ts=TS, source="camera", status="settled", frame_id=10 + i, system=system,
                          options=options, dice=read, adjudication=registry.resolve(system, read, options)))
    rolls.append(Roll(id="u", ts=TS, source="upload", status="uncertain", reason="the d6 is cocked — re-roll it",
                      system="contingency", dice=parse_dice(["d6:3", "d8:1", "d10:9"])))
    return rolls


def _event_lines() -> str:
    rolls = _rolls()
    events = [make_event(f"roll.{r.status}", r) for r in rolls]
    events.append(make_event("roll.amended", rolls[0].model_copy(update={"id": "a", "amends": "r0"})))
    events.append(make_event("camera.status", {"status": "retrying", "message": "Camera lost: retrying.",
                                               "source": "0", "skipped_frames": 3}))
    events.append(make_event("camera.status", {"status": "none"}))
    config = {"system": "house-games", "options": {"difficulty": 7}, "pool": ["d10"] * 5, "systems": [],
              "token_required": True}
    events.append(make_event("config.changed", config))
    events.append(make_event("snapshot", {"rolls": [r.model_dump(mode="json") for r in rolls[:2]], "config": config,
                                          "camera": {"status": "running"}, "notices": ["a notice"]}))
    lines = []
    for i, ev in enumerate(events):
        fixed = ev.model_copy(update={"id": f"e{i}", "ts": TS})
        lines.append(fixed.model_dump_json())
    return "\n".join(lines) + "\n"


def test_every_kind_of_event_serialises_as_before():
    _matches("events.jsonl", _event_lines())


def test_the_api_document_is_as_before(tmp_path):
    settings = ServerSettings(data_dir=tmp_path / "data", allowed_hosts=["testserver"])
    store = RollStore(settings.db_path)
    try:
        with TestClient(create_app(settings, store)) as client:
            body = client.get("/openapi.json").content.decode("utf-8")
    finally:
        store.close()
    _matches("openapi.json", body)


def test_an_event_is_typed_by_its_type():
    from dicecam.server.events import parse_event

    roll = _rolls()[4].model_dump(mode="json")
    ev = parse_event({"v": 1, "type": "roll.settled", "id": "e1", "ts": "2026-11-23T00:00:00Z", "data": roll})
    assert ev.data.adjudication.dr == _rolls()[4].adjudication.dr
    cam = parse_event({"type": "camera.status", "id": "e2", "ts": "2026-11-23T00:00:00Z", "data": {"status": "lost"}})
    assert cam.data.status == "lost" and cam.model_dump(mode="json")["data"] == {"status": "lost"}
    with pytest.raises(ValueError):  # a camera event carrying a roll is not a camera event
        parse_event({"type": "camera.status", "id": "e3", "ts": "2026-11-23T00:00:00Z", "data": roll})
