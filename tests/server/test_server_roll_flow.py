"""One roll-building path for every source: rolls entered by hand join the roll they follow as camera
rolls do, and every event and response the server sends is one of the typed shapes."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dicecam.server.events import parse_event
from dicecam.server.app import create_app
from dicecam.server.rulebook import load_rules
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore


@pytest.fixture
def table(tmp_path):
    """A server with the real rules engine and no camera."""
    def open_with(system: str, options: dict | None = None):
        s = ServerSettings(data_dir=tmp_path / "data", allowed_hosts=["testserver"], system=system,
                           options=options or {})
        store = RollStore(s.db_path)
        return TestClient(create_app(s, store, rules=load_rules())), store
    return open_with


def enter(client, *dice, **body):
    r = client.post("/api/rolls", json={"dice": list(dice), **body})
    assert r.status_code == 201, r.text
    return r.json()


def test_a_luck_die_entered_by_hand_joins_the_check_before_it(table):
    client, store = table("contingency", {"target": 9})
    with client:
        check = enter(client, "d6:3", "d8:5", "d10:7")
        assert check["adjudication"]["success"] is False  # the middle die 5 against 9
        luck = enter(client, "d8:6")
        assert luck["follows"] == check["id"] and luck["options"]["luck"] == "d8:6"
        assert luck["adjudication"]["total"] == 11 and luck["adjudication"]["success"] is True
        assert [d["value"] for d in luck["dice"]] == [3, 5, 7, 6]  # the check's dice, then its luck die
        assert store.get(luck["id"]).follows == check["id"]
        # One luck die per check: the next single die is a check of its own, and it is refused as one.
        assert client.post("/api/rolls", json={"dice": ["d8:2"]}).status_code == 400


def test_a_wyrd_reroll_entered_by_hand_rerolls_the_base(table):
    client, store = table("emergence")
    with client:
        wyrd = enter(client, "d10:0", "d10:4", "d10:6")
        assert wyrd["adjudication"]["outcome"] == "reroll"
        again = enter(client, "d10:7")
        assert again["follows"] == wyrd["id"] and again["options"]["rerolls"] == [7]
        assert again["adjudication"]["result"] == 7 and again["status"] == "settled"


def test_a_roll_for_another_system_than_the_tables_follows_nothing(table):
    client, store = table("contingency")
    with client:
        enter(client, "d6:3", "d8:5", "d10:7")
        other = enter(client, "d6:5:red", "d6:2:white", system="futile-kingdoms", options={})
        assert other["follows"] is None and other["system"] == "futile-kingdoms"


def test_every_event_on_the_stream_is_one_of_the_typed_shapes(table):
    client, store = table("futile-kingdoms")
    with client, client.websocket_connect("/api/events/ws") as ws:
        snap = parse_event(ws.receive_json())
        assert snap.type == "snapshot" and snap.data.config.system == "futile-kingdoms"
        roll = enter(client, "d6:6:red", "d6:5:white")
        ev = parse_event(ws.receive_json())
        assert ev.type == "roll.settled" and ev.data.adjudication.may_explode and ev.data.id == roll["id"]
        fixed = client.post(f"/api/rolls/{roll['id']}/amend", json={"dice": ["d6:4:red", "d6:5:white"]}).json()
        ev = parse_event(ws.receive_json())
        assert ev.type == "roll.amended" and ev.data.amends == roll["id"] and ev.data.adjudication.red == 4
        assert fixed["id"] == ev.data.id
        client.put("/api/config", json={"system": "percentile", "options": {}})
        ev = parse_event(ws.receive_json())
        assert ev.type == "config.changed" and ev.data.pool == ["d00", "d10"]


def test_every_api_answer_has_a_response_model(table):
    """A route that streams (CSV, JSON export, video, events) or answers a picture declares its media type instead."""
    client, _ = table("contingency")
    streamed = {"/api/export.csv", "/api/export.json", "/api/frame.jpg", "/api/video.mjpg", "/api/events",
                "/api/memory/export", "/api/rolls/{roll_id}/frame.jpg"}
    with client:
        spec = client.get("/openapi.json").json()
    missing = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            ok = [c for c in op["responses"] if c.startswith("2")]
            content = op["responses"][ok[0]].get("content", {}) if ok else {}
            schema = content.get("application/json", {}).get("schema")
            if path not in streamed and ok[0] != "204" and not schema:
                missing.append(f"{method.upper()} {path}")
    assert not missing


def test_config_odds_systems_and_health_answer_in_their_documented_shapes(table):
    client, _ = table("house-games", {"difficulty": 7})
    with client:
        cfg = client.get("/api/config").json()
        assert set(cfg) == {"system", "options", "pool", "systems", "token_required"}
        assert cfg["options"]["difficulty"] == 7
        odds = client.get("/api/odds").json()
        assert odds["system"] == "house-games" and abs(sum(o["probability"] for o in odds["outcomes"]) - 1) < 1e-9
        systems = client.get("/api/systems").json()
        assert {s["name"] for s in systems} >= {"contingency", "house-games", "table"}
        assert all(set(s) == {"name", "title", "schema"} for s in systems)
        health = client.get("/api/health").json()
        assert health["camera"] == {"status": "none", "message": "No live camera: enter rolls by hand or upload a photo."}
